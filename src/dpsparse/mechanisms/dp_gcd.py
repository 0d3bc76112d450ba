"""DP-GCD: differentially private greedy coordinate descent, and its proximal form.

Source: Mangold, Bellet, Salmon & Tommasi, "High-dimensional private empirical risk
minimization by greedy coordinate descent", AISTATS 2023 (Algorithm "Private Greedy
Coordinate Descent" and its "Proximal Variant").

Each of the ``T`` iterations releases two things:

1. **Selection** (report-noisy-max): ``j = argmax_j score_j(g) + chi_j`` over the rule's
   scores of the exact gradient ``g`` of the average loss; ``chi_j`` Laplace(``b_j``)
   (the paper) or Gumbel(``beta``) (the exponential mechanism).
2. **Update**: ``w_j <- prox_{psi_j / M_j}(w_j - (g_j + eta) / M_j)``, ``eta`` Laplace
   (the paper) or Gaussian, of scale ``lambda_j``.

Sensitivities (replace-one, ``|d f / d w_j| <= L_j`` per record): ``g_j`` has sensitivity
``2 L_j / n``. Every rule's score is ``phi_j(g_j) / sqrt(M_j)`` with ``phi_j``
1-Lipschitz in ``g_j`` (``docs/privacy.md``), so score ``j`` has sensitivity
``Delta_j = 2 L_j / (n sqrt(M_j))``.

Privacy per step (``docs/privacy.md`` derives each):

- update: a Laplace or Gaussian mechanism with noise over sensitivity ``lambda_j n / (2 L_j)``;
- Laplace selection: ``max_j (Delta_j + max_k Delta_k) / b_j``-DP. The scores are not
  monotone in the data, so the factor 2 of the general report-noisy-max (Dwork & Roth
  2014, section 3.3) is needed: the paper's Laplace(Delta/epsilon) argument holds only for
  monotone scores;
- Gumbel selection: the exponential mechanism, ``2 max_j Delta_j / beta``-DP and
  ``eps^2/8``-zCDP (Cesar & Rogers 2021).

Noise: ``lambda_j = s L_j``, ``b_j = lambda_j / sqrt(M_j)``, ``beta = s max_j L_j / sqrt(M_j)``
(the paper's gradient noise carried into score units). The normalized scale ``s`` is

- ``calibration="paper"``: ``s = 8 sqrt(T log(1/delta)) / (n epsilon)`` with Laplace noise
  in both steps (Mangold et al. 2023: both scales ``8 L_j sqrt(T log(1/delta)) / (n epsilon)``);
- ``calibration="tight"`` (default; Gumbel selection and Gaussian updates unless told
  otherwise): the smallest ``s`` for which the accountants compose the ``2 T`` steps
  to ``(epsilon, delta)``.

Either way the report gives the accountant's epsilon for the noise actually drawn, and a
"paper" run that misses its target says so in a warning.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import scipy.sparse as sp

from .._arrays import number_or_array, uniform_view
from ..accounting import calibrate
from ..affine import is_shifted
from ..distributed import is_dask, labels, row_sum
from ..noise import batched
from . import constant
from ._common import SHARE, check_auto_clip, column, ledger_after, run_threshold, share_multiplier
from .base import Mechanism, Option, Plan, n_iter_option
from .direct import call_direct

__all__ = [
    "MECHANISM",
    "RULES",
    "SELECTIONS",
    "UPDATES",
    "by_columns",
    "dp_gcd",
    "gcd",
    "paper_scale",
    "report_noisy_max",
    "selection_scores",
    "step_epsilons",
]

RULES = ("gs-r", "gs-s", "gs-q")
CALIBRATIONS = ("tight", "paper")
SELECTIONS = ("gumbel", "laplace")
UPDATES = ("gaussian", "laplace")
# Noise families of calibration="tight" when the caller names none: Gumbel selection (an
# exponential mechanism, composed as zCDP) and the update noise that gave the lower
# error on the benchmark problems (measurements in docs/privacy.md).
TIGHT_DEFAULT = ("gumbel", "gaussian")


def selection_scores(g, w, M, penalty, rule):
    """Greedy scores ``phi_j(g_j) / sqrt(M_j)`` of every coordinate.

    - ``gs-s``: ``dist(-g_j, d psi_j(w_j))``, the minimal subgradient;
    - ``gs-r``: ``M_j |d_j|`` with ``d_j = prox_{psi_j/M_j}(w_j - g_j/M_j) - w_j``, the step;
    - ``gs-q``: ``sqrt(-2 M_j q_j)`` with ``q_j = g_j d_j + M_j d_j^2/2 + psi_j(w_j+d_j) - psi_j(w_j)``,
      the decrease of the quadratic model.

    Without a penalty all three equal ``|g_j| / sqrt(M_j)``, the GS-r rule of Mangold et al. (2023).

    Parameters
    ----------
    g, w, M : ndarray of shape (p,)
        Gradient, iterate, coordinate smoothness constants.
    penalty : separable Penalty
    rule : {"gs-r", "gs-s", "gs-q"}

    Returns
    -------
    ndarray of shape (p,)
    """
    sqrt_m = np.sqrt(M)
    if rule == "gs-s":
        return penalty.subdiff_distance(g, w) / sqrt_m
    d = penalty.prox(w - g / M, 1.0 / M) - w
    if rule == "gs-r":
        return sqrt_m * np.abs(d)
    psi = penalty.coordinate_values
    neg_q = -(g * d + 0.5 * M * d**2 + psi(w + d) - psi(w))
    return np.sqrt(2.0 * np.maximum(neg_q, 0.0))


def report_noisy_max(scores, scales, noise, kind="laplace", sensitivity=None):
    """Index of the largest ``scores_j + noise_j``: Laplace(scales_j) (Dwork & Roth 2014,
    section 3.3) or Gumbel(scales) (the exponential mechanism, McSherry & Talwar 2007)."""
    return noise.select(scores, kind, scales, sensitivity=sensitivity, name="report-noisy-max")


def paper_scale(n, epsilon, delta, n_iter):
    """Mangold et al. (2023)'s normalized Laplace scale ``8 sqrt(T log(1/delta)) / (n epsilon)``."""
    return 8.0 * math.sqrt(n_iter * math.log(1.0 / delta)) / (n * epsilon)


def _step_constants(L, M, n):
    """Per-step privacy at normalized scale ``s``: ``(c_laplace, c_gumbel, c_update)``.

    Laplace report-noisy-max is ``c_laplace / s``-DP, Gumbel report-noisy-max (common
    scale ``s max_j L_j / sqrt(M_j)``) is a ``c_gumbel / s``-DP exponential mechanism,
    and the update's noise over sensitivity is ``c_update * s``.
    """
    delta_score = 2.0 * L / (n * np.sqrt(M))
    c_laplace = float(np.max((delta_score + delta_score.max()) * np.sqrt(M) / L))
    c_gumbel = float(2.0 * delta_score.max() / np.max(L / np.sqrt(M)))
    return c_laplace, c_gumbel, n / 2.0


def step_epsilons(s, L, M, n):
    """Per-step privacy of DP-GCD at normalized scale ``s`` (module docstring).

    Returns
    -------
    eps_select : float
        The report-noisy-max step is ``eps_select``-DP.
    update_ratio : float
        Laplace scale over sensitivity of the update step, ``s n / 2``.
    """
    c_laplace, _, c_update = _step_constants(L, M, n)
    return c_laplace / s, c_update * s


def _ledger(s, constants, n_iter, selection, update, before=()):
    """The ``2 T`` events of DP-GCD at normalized scale ``s`` (``constants``: ``_step_constants``), after the
    Gaussian releases of noise multipliers ``before`` (the automatic clipping threshold, the warm start)."""
    c_laplace, c_gumbel, c_update = constants
    ledger = ledger_after(before)
    if selection == "laplace":
        ledger.pure(c_laplace / s, n_iter)
    else:
        ledger.exponential(c_gumbel / s, n_iter)
    if update == "laplace":
        return ledger.laplace(c_update * s, 1.0, n_iter)
    return ledger.gaussian(c_update * s, 1.0, n_iter)


@functools.lru_cache(maxsize=256)
def _tight_scale(constants, n_iter, epsilon, delta, scale0, selection, update, rho=None, before=()):
    """Smallest normalized scale ``s`` whose ``2 T`` steps (after the releases ``before``) compose to
    (epsilon, delta)."""
    return calibrate(lambda s: _ledger(s, constants, n_iter, selection, update, before), epsilon, delta,
                     scale0, rho=rho)


def _noise_families(calibration, selection, update):
    if calibration == "paper":
        if (selection, update) not in ((None, None), ("laplace", "laplace")):
            raise ValueError("mechanism dp-gcd: calibration='paper' is the paper's Laplace noise for both steps; "
                             "leave selection and update_noise unset or 'laplace'")
        return "laplace", "laplace"
    return selection or TIGHT_DEFAULT[0], update or TIGHT_DEFAULT[1]


def clipped_gradient(X, d, clip):
    """``(1/n) sum_i clip_{C_j}(d_i x_ij)`` for every ``j``: the coordinate-wise clipped gradient
    (Mangold et al. 2022, per-coordinate thresholds), O(nnz of X).

    Parameters
    ----------
    X : ndarray, sparse matrix or ShiftedSparse of shape (n, p)
    d : ndarray of shape (n,)
        Per-sample derivatives ``f'(z_i, y_i)``.
    clip : ndarray of shape (p,)
        Thresholds ``C_j > 0``: every record's term lies in ``[-C_j, C_j]``.

    Returns
    -------
    ndarray of shape (p,)
    """
    return _gradient_sum(X, d, clip) / X.shape[0]


def _gradient_sum(X, d, clip, out=None):
    """``sum_i d_i x_i``, each term clipped coordinate-wise to ``[-clip_j, clip_j]`` unless ``clip`` is None;
    written into ``out`` (shape (p,)) where it is given and the sum is compiled."""
    if clip is None:
        return np.asarray(X.T @ d).ravel()
    if is_shifted(X):
        return X.clipped_gradient_sum(d, clip)
    from .._kernels import clipped_rmatvec, dense_clipped_rmatvec

    clip = _per_column(clip, X.shape[1])
    d = np.asarray(d, dtype=float)
    out = np.empty(X.shape[1]) if out is None else out
    if sp.issparse(X):
        X = X.tocsc()
        return clipped_rmatvec(X.indptr, X.indices, X.data, d, clip, out)
    return dense_clipped_rmatvec(np.asarray(X, dtype=float), d, clip, out)


def _per_column(clip, p):
    """Thresholds ``(p,)`` as the compiled sums take them: one float where they are the same on every column (or a
    float already), else the array."""
    return clip if isinstance(clip, float) else number_or_array(np.broadcast_to(np.asarray(clip, dtype=float), (p,)))


def by_columns(X):
    """``X`` as the coordinate loops read it: a sparse matrix as CSC, a ``ShiftedSparse`` whose shift is zero on
    every column as its stored part (the same matrix, without the shift's terms in each product), anything
    else (dense, dask) as it is."""
    if is_shifted(X) and not np.any(X.c):
        return X.S
    return X.tocsc() if sp.issparse(X) else X


def _derivative(loss):
    """``(z, y, out) -> out``, the per-sample derivatives ``loss.bounded_derivative(z, y)`` written into ``out``:
    compiled (``_kernels.derivatives``, 5 times numpy's speed: 7% of one ``X^T v`` on news20) where the loss has a
    kernel, else numpy's."""
    kernel = loss.derivative_kernel(bounded=True)
    if kernel is None:
        return lambda z, y, out: loss.bounded_derivative(z, y)
    from .._kernels import derivatives

    code, c = kernel
    return lambda z, y, out: derivatives(np.asarray(z, dtype=float), np.asarray(y), code, float(c), out)


def _gradient(X, y, loss, clip, work=None):
    """The gradient of the average loss at the iterate, ``(w, z) -> g`` (``z = X w`` the margins, None on dask):
    in memory from the margins, the derivatives written into ``work[:n]`` (a new buffer where None); on a dask
    array one pass over the chunks, the margins recomputed there."""
    n, p = X.shape
    derivative = _derivative(loss)
    if is_dask(X):
        y = labels(X, y)  # one pass over the chunks per step
        return lambda w, z: row_sum(lambda xc, yc: _gradient_sum(xc, derivative(xc @ w, yc, np.empty(len(yc))), clip),
                                    X, y, p) / n
    out, d = np.empty(p), np.empty(n) if work is None else work[:n]  # every step's gradient, its derivatives
    # each term divided by n inside the sum (the derivatives and the thresholds scaled): no pass over g a step
    clip = None if clip is None else _per_column(np.asarray(clip, dtype=float) / n, p)

    def gradient(w, z):
        return _gradient_sum(X, np.divide(derivative(z, y, d), n, out=d), clip, out)  # into d, whatever it returned

    return gradient


def _declared_steps(noise, M, penalty, rule, selection, select_scales, update, update_scales, select_sensitivity,
                    update_sensitivity):
    """The private choice of a step, ``(t, g, w) -> (j, noisy g_j)``, every draw through ``noise.select`` and
    ``noise.release`` with its declared sensitivity (what the audit replays)."""
    upd_sens = np.full(M.shape[0], np.nan) if update_sensitivity is None else update_sensitivity

    def choose(t, g, w):
        j = noise.select(selection_scores(g, w, M, penalty, rule), selection, select_scales,
                         sensitivity=select_sensitivity, name="coordinate selection")
        return j, noise.release(g[j], update, update_scales[j], sensitivity=upd_sens[j], name="coordinate gradient",
                                norm="l1" if update == "laplace" else "l2")  # one coordinate: the two norms agree

    return choose


def _compiled_selection(noise, n_iter, selection, scales, p):
    """Report-noisy-max over the scores, ``(t, scores) -> j`` (the scores overwritten): the exponential mechanism
    by inverse transform of one uniform a step, drawn up front (the law of Gumbel-max), or Laplace noise from one
    standard exponential and a random sign a coordinate (``_kernels.laplace_argmax``)."""
    from .._kernels import exp_mechanism, laplace_argmax

    if not np.any(np.asarray(scales) > 0):
        return lambda t, scores: int(np.argmax(scores))
    if selection == "gumbel":
        u = noise.rng.random(n_iter)
        return lambda t, scores: exp_mechanism(scores, float(scales), u[t])
    scales, e = number_or_array(np.broadcast_to(np.asarray(scales, dtype=float), (p,))), np.empty(p)

    def pick(t, scores):
        noise.rng.standard_exponential(out=e)
        return laplace_argmax(scores, scales, e, np.frombuffer(noise.rng.bytes(8 * (-(-p // 64))), dtype=np.int64))

    return pick


def _compiled_steps(noise, n_iter, M, penalty, rule, selection, select_scales, update, update_scales, work):
    """``_declared_steps`` compiled: the scores by ``_kernels.gcd_scores`` into ``work[:p]``, the selection by
    ``_compiled_selection``, the update noise as standard draws for every step up front, times the coordinate's
    scale. The same laws as ``_declared_steps``, from the stream in another order."""
    from .._kernels import gcd_scores

    p = M.shape[0]
    u, k = penalty.weight_entries(p)  # the strengths made in the loop from the weights: no vector of them
    a, c = penalty.alpha * penalty.l1_ratio, penalty.alpha * (1.0 - penalty.l1_ratio)
    M = number_or_array(M)  # one number where uniform: the scores' loop vectorizes
    scores, code = work[:p], RULES.index(rule)
    pick = _compiled_selection(noise, n_iter, selection, select_scales, p)
    eta = np.zeros(n_iter)
    if np.any(update_scales > 0):
        eta = noise.rng.standard_normal(n_iter) if update == "gaussian" else noise.rng.laplace(0.0, 1.0, n_iter)

    def choose(t, g, w):
        gcd_scores(g, w, M, u, k, a, c, code, scores)
        j = pick(t, scores)
        return j, g[j] + update_scales[j] * eta[t]

    return choose


def gcd(X, y, loss, penalty, M, n_iter, rule, select_scales, update_scales, noise, callback=None,
        selection="laplace", update="laplace", select_sensitivity=None, update_sensitivity=None, clip=None, w0=None):
    """Greedy coordinate descent with given noise scales (0 gives the non-private method).

    The margins ``z = X w`` are updated in O(nnz of a column) per step; the gradient
    ``X^T f'(z) / n`` costs one pass over the nonzeros of X. With a plain ``NoiseSource`` (``noise.batched``)
    and an elastic-net penalty the scores and the selection run compiled on noise drawn up front
    (``_compiled_steps``); otherwise every draw goes through ``noise.select`` and ``noise.release``.

    Parameters
    ----------
    X : ndarray, CSC matrix, ShiftedSparse or dask array of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit (its ``bounded_derivative`` is used)
    penalty : separable Penalty
    M : ndarray of shape (p,)
        Step sizes are ``1 / M_j``.
    n_iter : int
    rule : {"gs-r", "gs-s", "gs-q"}
    select_scales : float or ndarray of shape (p,)
    update_scales : ndarray of shape (p,)
        Scales of the selection noise (Laplace, or Gumbel with a common scale) and of
        the update noise (Laplace scale or Gaussian standard deviation).
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
    selection : {"laplace", "gumbel"}
    update : {"laplace", "gaussian"}
    select_sensitivity, update_sensitivity : ndarray of shape (p,) or None
        Declared sensitivities of the scores and of ``g_j`` (for the audit).
    clip : ndarray of shape (p,) or None
        Per-sample coordinate-wise clipping thresholds of the gradient (``clipped_gradient``);
        None: the plain gradient ``X^T f'(z) / n``.
    w0 : ndarray of shape (p,) or None
        The start (a public release, e.g. the warm start's intercept); None: zero.

    Returns
    -------
    w : ndarray of shape (p,)
    """
    n, p = X.shape
    X = by_columns(X)
    w = np.zeros(p) if w0 is None else np.array(w0, dtype=float)
    M, update_scales = np.asarray(M, dtype=float), np.asarray(update_scales, dtype=float)
    # one buffer for the derivatives and the scores: a step's derivatives are spent on its gradient before its
    # scores are computed (one vector fewer at the peak of a fit's memory)
    work = np.empty(p if is_dask(X) else max(n, p))  # on dask the derivatives live in each chunk's task
    gradient = _gradient(X, y, loss, clip, work)
    z = None if is_dask(X) else np.zeros(n) if not np.any(w) else np.asarray(X @ w).ravel()
    if batched(noise) and callable(getattr(penalty, "weight_entries", None)) and (
            selection != "gumbel" or np.ndim(select_scales) == 0):
        choose = _compiled_steps(noise, n_iter, M, penalty, rule, selection, select_scales, update, update_scales,
                                 work)
    else:
        choose = _declared_steps(noise, M, penalty, rule, selection, select_scales, update, update_scales,
                                 select_sensitivity, update_sensitivity)
    for t in range(n_iter):
        g = gradient(w, z)
        j, noisy_g = choose(t, g, w)
        step = penalty.prox_1d(w[j] - noisy_g / M[j], 1.0 / M[j], j) - w[j]
        if step != 0.0:
            if z is not None:
                rows, vals = column(X, j)
                z[rows] += step * vals
            w[j] += step
        if callback is not None:
            callback(t, w)
    return w


def _clip_thresholds(clipping_norm, L):
    """The thresholds ``C_j`` as a ``(p,)`` array, or None when none is below ``L_j`` (nothing to clip)."""
    if clipping_norm is None:
        return None
    C = np.broadcast_to(np.asarray(clipping_norm, dtype=float), L.shape) if np.ndim(clipping_norm) == 0 else \
        np.asarray(clipping_norm, dtype=float)
    if C.shape != L.shape:
        raise ValueError(f"mechanism dp-gcd: option clipping_norm must be one number or {L.size} (one per column, "
                         f"the intercept last), got {C.size}")
    return np.array(C) if np.any(C < L) else None


def _plan(info):
    o, n = info.options, info.n
    selection, update = _noise_families(info.calibration, o["selection"], o["update_noise"])
    L, M = (uniform_view(f(info.feature_bounds)) for f in (info.loss.coordinate_lipschitz,
                                                            info.loss.coordinate_smoothness))
    auto = isinstance(o["clipping_norm"], str)
    clip = None if auto else _clip_thresholds(o["clipping_norm"], L)
    if auto:  # the plan at a nominal threshold of 1 on every column; the released one scales every noise
        L = np.broadcast_to(1.0, L.shape)
    elif clip is not None:
        L = uniform_view(np.minimum(L, clip))  # each record's term of g_j lies in [-L_j, L_j]
    constants = _step_constants(L, M, n)
    n_iter = o["n_iter"]
    s_paper = paper_scale(n, info.epsilon, info.delta, n_iter)
    m_auto = share_multiplier(info) if auto else None
    m_warm = share_multiplier(info) if o["warm_start"] else None
    if auto:
        check_auto_clip("dp-gcd", info)
    if o["warm_start"] and info.calibration == "paper":
        raise ValueError("mechanism dp-gcd: warm_start is a release of its own, in the tight calibration only")
    before = tuple(m for m in (m_auto, m_warm) if m is not None)
    if info.calibration == "paper":
        s = s_paper
    else:
        s = _tight_scale(constants, n_iter, info.epsilon, info.delta, s_paper, selection, update, info.zcdp, before)
    ledger = _ledger(s, constants, n_iter, selection, update, before)
    update_scales = uniform_view(s * L)  # on the bounded design, one number a vector (as every vector below)
    ratio = L / np.sqrt(M)
    # one Gumbel scale for every coordinate: a scalar, so each selection draws p variates at one scale
    select_scales = uniform_view(update_scales / np.sqrt(M)) if selection == "laplace" else float(s * ratio.max())
    c_laplace, c_gumbel, c_update = constants
    unit = " (per unit of the threshold)" if auto else ""
    details = {
        "selection": f"{selection} report-noisy-max",
        "update": f"{update} noise",
        f"noise scale of each update{unit}": float(update_scales.max()),
        f"noise scale of each selection{unit}": float(np.max(select_scales)),
        "scale by the source's formula": float(s_paper * L.max()),
        "epsilon of one selection": (c_laplace if selection == "laplace" else c_gumbel) / s,
        "update noise / sensitivity": c_update * s,
    }
    params = {"L": L, "M": M, "select_scales": select_scales, "update_scales": update_scales,
              "selection": selection, "update": update,
              "select_sensitivity": uniform_view(2.0 * L / (n * np.sqrt(M))),
              "update_sensitivity": uniform_view(2.0 * L / n), "clip": uniform_view(clip),
              "auto_multiplier": m_auto, "warm_multiplier": m_warm}
    if auto:
        details["clipping"] = (f"automatic: |f'(0)| x the private mean of |x_ij| (Gaussian, multiplier "
                               f"{m_auto:.4g}, {SHARE:g} of the zCDP budget); each noise scale is the one per unit "
                               "of the threshold times the released threshold")
    if m_warm is not None:
        details["warm start"] = constant.warm_details(m_warm, SHARE)
    return Plan(ledger=ledger, accountant_epsilon=ledger.epsilon(info.delta), accountant=ledger.accountant,
                iterations=n_iter, details=details, params=params,
                miss_reason=" once the non-monotone report-noisy-max is accounted for")


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    o = info.options
    X = design.X.tocsc() if sp.issparse(design.X) else design.X
    scale, clip = 1.0, q["clip"]
    if q["auto_multiplier"] is not None:  # every scale and sensitivity of the plan is for a threshold of 1
        scale = run_threshold(X, design, plan, noise)
        clip = np.broadcast_to(scale, (design.p,))
    w0 = None if q["warm_multiplier"] is None else constant.warm_start(design, q["warm_multiplier"], info.loss, noise)
    select_scales, update_scales, select_sensitivity, update_sensitivity = (
        uniform_view(scale * q[k]) for k in ("select_scales", "update_scales", "select_sensitivity",
                                             "update_sensitivity"))
    return gcd(X, design.y, info.loss, info.penalty, q["M"], o["n_iter"], o["rule"], select_scales, update_scales,
               noise, callback, q["selection"], q["update"], select_sensitivity, update_sensitivity, clip, w0)


MECHANISM = Mechanism(
    name="dp-gcd",
    title="DP-GCD, private greedy coordinate descent (Mangold et al. 2023)",
    citation=("Mangold, Bellet, Salmon & Tommasi, 'High-dimensional private empirical risk minimization by "
              "greedy coordinate descent', AISTATS 2023, Algorithm DP-GCD and its proximal variant; "
              "report-noisy-max: Dwork & Roth, 'The Algorithmic Foundations of Differential Privacy', 2014, "
              "sec. 3.3; exponential mechanism as zCDP: Cesar & Rogers, 'Bounding, concentrating, and "
              "truncating: unifying privacy loss composition for data analytics', ALT 2021"),
    summary="greedy coordinate descent: picks the best coordinate privately each step (separable penalties)",
    options=(
        n_iter_option(50),
        Option("rule", "choice", "gs-r", "greedy selection rule", choices=RULES),
        Option("selection", "choice", None, "report-noisy-max noise (tight calibration)", choices=SELECTIONS,
               default_help="gumbel"),
        Option("update_noise", "choice", None, "noise of the coordinate update (tight calibration)",
               choices=UPDATES, default_help="gaussian"),
        Option("clipping_norm", "floats", None,
               "per-sample coordinate-wise clipping threshold C_j of the gradient (one number, or in Python one per "
               "column); 'auto': |f'(0)| times the private mean of |x_ij|",
               low=0.0, low_open=True, auto=True,
               default_help="'auto' in the estimators and the CLI for the logistic loss; else sup|f'| b_j, which "
                            "clips nothing"),
        constant.WARM_OPTION,
    ),
    calibrations=CALIBRATIONS,
    loss_needs=("smooth", "Lipschitz"),
    penalty_needs=("separable", "prox", "prox_1d", "coordinate_values", "subdiff_distance"),
    plan=_plan, run=_run,
    zcdp_calibration=True,
    dask=True,
)


def dp_gcd(X, y, loss, penalty, feature_bounds, *, epsilon, delta, calibration="tight", noise, callback=None,
           row_norm=None, **options):
    """Differentially private (proximal) greedy coordinate descent (Mangold et al. 2023).

    ``fit_mechanism`` on ``BoundedDesign.from_arrays(X, y, feature_bounds, row_norm)``:
    the bounds are enforced by clipping.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit
        Smooth with a bounded derivative: gives the public ``L_j`` and ``M_j``.
    penalty : separable Penalty (L1, L2, elastic net)
    feature_bounds : ndarray of shape (p,) of floats > 0
    epsilon : float > 0
    delta : float in (0, 1)
    calibration : {"tight", "paper"}
        "paper": the paper's Laplace noise for both steps, with its scale. "tight": the
        smallest scale that the accountants (PLD, RDP) compose to (epsilon, delta).
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
    row_norm : float or None
    **options
        ``n_iter`` (default 50), ``rule`` ("gs-r", "gs-s", "gs-q"), ``selection``
        ("gumbel", "laplace"), ``update_noise`` ("gaussian", "laplace").

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, option, calibration, bounds, a penalty that is not separable or
        a loss that is not smooth.

    Warns
    -----
    PrivacyCalibrationWarning
        With ``calibration="paper"`` when the accountant finds the paper's noise short
        of the target.
    """
    return call_direct(MECHANISM, X, y, loss, penalty, feature_bounds, epsilon=epsilon, delta=delta,
                       calibration=calibration, noise=noise, callback=callback, row_norm=row_norm, options=options)
