"""DP-CD: differentially private randomized proximal coordinate descent.

Source: Mangold, Bellet, Salmon & Tommasi, "Differentially Private Coordinate Descent
for Composite Empirical Risk Minimization", ICML 2022 (PMLR 162; arXiv:2110.11688).

**Provenance of the constants.** The stored copies of public material reachable while
this module was written hold the paper's abstract only (arXiv listing, PMLR index), not
its body, so the algorithm and the privacy theorem below could not be checked against
the printed text. They are the paper's Algorithm 1 and privacy theorem (Theorem 3.1 of
the arXiv version, numbering unverified) as recalled:

    "Assume l(.; d) is L-component-Lipschitz for all d. Let epsilon <= 1 and
    delta < 1/3. If sigma_j^2 = 12 L_j^2 T K log(1/delta) / (n^2 epsilon^2) for all j,
    then DP-CD is (epsilon, delta)-differentially private."

The formula was re-derived here from the algorithm's structure and the derivation closes
under exactly those conditions (next paragraph), and the accountant confirms it on
every test case (``tests/test_mechanisms_dp_cd.py``): the paper calibration meets its
target. A "paper" run whose accountant epsilon misses the target (possible outside
``epsilon <= 1``) says so in a ``PrivacyCalibrationWarning``.

Derivation. Each update releases ``g_j + eta`` with ``eta ~ N(0, sigma_j^2)``; replacing
one record moves ``g_j`` by at most ``Delta_j = 2 L_j / n``. The Gaussian mechanism is
``(alpha, alpha Delta_j^2 / (2 sigma_j^2))``-RDP (Mironov 2017, Prop. 7); with the
sigma above that is ``alpha epsilon^2 / (6 T K log(1/delta))`` per update and
``alpha epsilon^2 / (6 log(1/delta))`` for the ``T K`` updates (RDP composition,
Prop. 1). The conversion ``eps_RDP + log(1/delta) / (alpha - 1)`` (Prop. 3) at
``alpha = 1 + 3 log(1/delta) / epsilon`` gives ``5 epsilon / 6 + epsilon^2 / (6
log(1/delta))``, which is ``<= epsilon`` when ``epsilon <= log(1/delta)``; ``epsilon
<= 1`` and ``delta < 1/3`` (``log 3 > 1``) ensure it.

Algorithm (Algorithm 1 of the paper, as recalled; ``T`` outer iterations of ``K``
inner updates)::

    w = 0
    for t in 1..T:                              # one "epoch" (n_iter = T)
        for k in 1..K:                          # K = updates_per_epoch (default p)
            j ~ Uniform{1..p}                   # data-independent, from noise.rng
            g_j = (1/n) sum_i clip_{C_j}(f'(<w, x_i>, y_i) x_ij)
            w_j = prox_{gamma_j psi_j}(w_j - gamma_j (g_j + eta)),  eta ~ N(0, sigma_j^2)
        (average=True: w = mean of the K inner iterates, the paper's convex variant;
         default: the last iterate, its strongly convex variant)

with ``gamma_j = 1 / M_j`` (``M_j`` the public coordinate smoothness). The per-sample
coordinate-wise clipping to ``[-C_j, C_j]`` (the paper's practical form, where ``C_j``
plays the role of ``L_j``) bounds ``Delta_j = 2 C_j / n`` whatever the data; the default
``C_j = sup|f'| * b_j = L_j`` clips no record that respects the public bounds.

Privacy (replace-one). ``sigma_j = m Delta_j`` with one noise multiplier ``m`` for every
coordinate, so all ``N = T K`` updates are Gaussian mechanisms with the same ``m``,
composed adaptively (the iterate at which ``g_j`` is evaluated is a post-processing of
earlier releases; ``j`` is drawn independently of the data and treated as public, so no
amplification by the random choice is claimed): ``Ledger().gaussian(m, 1, N)``. With
``clipping_norm="auto"`` every ``C_j`` is a threshold released first (``_common.auto_clip``: one
Gaussian release of sensitivity 1, ``SHARE`` of the zCDP budget) and the ledger holds that release
before the ``N`` updates (``ledger_after``); each update's noise is still ``m`` times its sensitivity.

- ``calibration="paper"``: ``sigma_j = sqrt(12 T K log(1/delta)) C_j / (n epsilon)``,
  i.e. ``m = sqrt(3 T K log(1/delta)) / epsilon``;
- ``calibration="tight"`` (default): the smallest ``m`` (bisection, ``calibrate``) for
  which the accountants (PLD, RDP) compose the ``N`` updates to (epsilon, delta).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import scipy.sparse as sp

from .._arrays import number_or_array
from ..accounting import calibrate
from ..affine import is_shifted
from ..distributed import is_dask, labels, row_sum
from ..noise import batched
from ._common import SHARE, check_auto_clip, column, ledger_after, run_threshold, share_multiplier
from .base import Mechanism, Option, Plan, n_iter_option
from .direct import call_direct

__all__ = ["CALIBRATIONS", "MECHANISM", "cd", "coordinate_gradient", "dp_cd", "noise_stds", "paper_multiplier"]

CALIBRATIONS = ("tight", "paper")
SOURCE = ("Mangold, Bellet, Salmon & Tommasi, 'Differentially private coordinate descent for composite empirical "
          "risk minimization', ICML 2022, Algorithm 1 (DP-CD) with per-coordinate clipping; the 'paper' calibration "
          "is its noise sigma_j^2 = 12 C_j^2 T K log(1/delta) / (n^2 epsilon^2); the tight one composes the Gaussian "
          "updates exactly (Dong, Roth & Su, 'Gaussian differential privacy', JRSS B 2022, Corollary 3.3)")


def paper_multiplier(n_updates, epsilon, delta):
    """The paper's noise over sensitivity: ``sigma_j / (2 C_j / n) = sqrt(3 N log(1/delta)) / epsilon``.

    ``N = T K`` coordinate updates; from ``sigma_j^2 = 12 C_j^2 T K log(1/delta) / (n^2 epsilon^2)``.
    """
    return math.sqrt(3.0 * n_updates * math.log(1.0 / delta)) / epsilon


def noise_stds(multiplier, clip, n):
    """Per-coordinate Gaussian standard deviations ``sigma_j = multiplier * 2 C_j / n``."""
    return multiplier * 2.0 * np.asarray(clip, dtype=float) / n


@functools.lru_cache(maxsize=256)
def _tight_multiplier(n_updates, epsilon, delta, rho=None, before=()):
    """Smallest noise multiplier whose ``n_updates`` Gaussian mechanisms compose to (epsilon, delta) after the
    Gaussian releases of noise multipliers ``before`` (the automatic clipping threshold)."""
    return calibrate(lambda m: ledger_after(before).gaussian(m, 1.0, n_updates), epsilon, delta,
                     paper_multiplier(n_updates, epsilon, delta), rho=rho)


def coordinate_gradient(X, z, y, derivative, j, clip_j):
    """``(1/n) sum_i clip_{C_j}(f'(z_i, y_i) x_ij)``: clipped coordinate gradient, O(nnz of column j).

    Parameters
    ----------
    X : ndarray, CSC matrix or ShiftedSparse of shape (n, p)
    z : ndarray of shape (n,)
        Margins ``X w``.
    y : ndarray of shape (n,)
    derivative : callable (z, y) -> f'(z, y)
    j : int
    clip_j : float > 0
        Per-sample threshold ``C_j``: every record's term lies in ``[-C_j, C_j]``, so the
        replace-one sensitivity is ``2 C_j / n``.

    Returns
    -------
    float
    """
    rows, vals = column(X, j)
    if np.size(vals) == 0:
        return 0.0
    terms = derivative(z[rows], y[rows]) * vals
    return float(np.sum(np.clip(terms, -clip_j, clip_j))) / X.shape[0]


def _dask_coordinate_gradient(X, y, derivative, w, j, clip_j):
    """``coordinate_gradient`` on a dask array: one pass over the chunks, the margins ``X w`` recomputed there
    (the chunks do not keep them between passes)."""
    w = w.copy()

    def part(xc, yc):
        return np.clip(derivative(xc @ w, yc) * xc[:, j], -clip_j, clip_j).sum()

    return float(row_sum(part, X, y, 1)[0]) / X.shape[0]


def cd(X, y, derivative, penalty, M, clip, n_epochs, n_inner, stds, noise, callback=None, average=False,
       kernel=None):
    """Randomized proximal coordinate descent with given noise (``stds = 0``: non-private).

    The margins ``z = X w`` are updated in O(nnz of column j) per update, so an epoch of
    ``p`` updates costs about one pass over the nonzeros of X. Coordinates (uniform) and
    each noisy coordinate gradient passes through ``noise.release``.

    Parameters
    ----------
    X : ndarray (Fortran order preferred), CSC matrix or dask array of shape (n, p)
        On a dask array every update is one pass over the chunks (``p`` passes an epoch of ``p`` updates), its
        noise drawn as in memory: the same model for the same seed.
    y : ndarray of shape (n,)
    derivative : callable (z, y) -> ndarray
        Per-sample derivative of the loss in the margin.
    penalty : separable Penalty
    M : ndarray of shape (p,)
        Step sizes are ``1 / M_j``.
    clip : ndarray of shape (p,)
        Per-sample coordinate-wise clipping thresholds ``C_j``.
    n_epochs, n_inner : int
        ``T`` outer iterations of ``K`` coordinate updates.
    stds : ndarray of shape (p,)
        Standard deviations ``sigma_j`` of the Gaussian noise on coordinate ``j``.
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
        Called after each epoch.
    average : bool
        Replace the iterate by the average of the ``K`` inner iterates at the end of each
        epoch (the paper's convex variant); False keeps the last iterate.
    kernel : (int, float) or None
        ``loss.derivative_kernel()``: with a plain ``NoiseSource`` (``noise.batched``) and a penalty
        with ``strengths``, each epoch runs compiled (``_kernels.cd_epoch``) on its noise drawn
        beforehand, the same draws in the same order (standard normals, times ``sigma_j`` in the
        kernel: numpy's ``normal(0, sigma_j)`` bit for bit); otherwise (the audit's noise sources, OpenDP's) every
        update goes through ``noise.release``.

    Returns
    -------
    w : ndarray of shape (p,)
    """
    n, p = X.shape
    dask = is_dask(X)
    w, z = np.zeros(p), None if dask else np.zeros(n)
    steps = 1.0 / np.asarray(M, dtype=float)
    clip = np.asarray(clip, dtype=float)
    stds = np.asarray(stds, dtype=float)
    sens = 2.0 * clip / n
    compiled = None if dask else _compiled_epoch(X, y, penalty, steps, clip, kernel, noise, average)
    if dask:
        y = labels(X, y)
    for t in range(n_epochs):
        coords = noise.rng.integers(p, size=n_inner)
        if average:  # lazy sum of the K inner iterates: coordinate j held w_j since iterate last[j]
            acc, last = np.zeros(p), np.zeros(p, dtype=np.int64)
        if compiled is not None:
            eta = noise.rng.standard_normal(n_inner) if np.any(stds > 0) else np.zeros(n_inner)
            compiled(z, w, coords, eta, stds, acc if average else None, last if average else None)
        for k in range(0 if compiled is not None else n_inner):
            j = int(coords[k])
            g = (_dask_coordinate_gradient(X, y, derivative, w, j, clip[j]) if dask else
                 coordinate_gradient(X, z, y, derivative, j, clip[j]))
            g = noise.release(g, "gaussian", stds[j], sensitivity=sens[j], name="coordinate gradient")
            new = penalty.prox_1d(w[j] - steps[j] * g, steps[j], j)
            step = new - w[j]
            if average:
                acc[j] += w[j] * (k - last[j])
                last[j] = k
            if step != 0.0:
                if not dask:
                    rows, vals = column(X, j)
                    z[rows] += step * vals
                w[j] = new
        if average:
            w = (acc + w * (n_inner - last)) / n_inner
            z = None if dask else np.asarray(X @ w).ravel()
        if callback is not None:
            callback(t, w)
    return w


def _compiled_epoch(X, y, penalty, steps, clip, kernel, noise, average):
    """The compiled epoch (``_kernels.cd_epoch``) bound to the data, or None where it does not apply."""
    if kernel is None or not batched(noise) or not callable(getattr(penalty, "strengths", None)):
        return None
    from .._kernels import cd_epoch

    n, p = X.shape
    zero, f = np.broadcast_to(0.0, (p,)), 1.0
    if is_shifted(X):  # X = S + f zero^T
        zero, f, X = X.c, number_or_array(X.f), X.S
    if sp.issparse(X):  # X is CSC (``_run``)
        indptr, indices, data = X.indptr, X.indices, X.data
    else:  # a Fortran-ordered array (``_run``), read by columns in place: no copy
        indptr, indices, data = n * np.arange(p + 1, dtype=np.int64), None, X.ravel(order="F")
    a, c = penalty.strengths(steps.shape[0])
    # one number where the same on every coordinate: no per-coordinate array to read at random
    thresholds, shrink = (number_or_array(v) for v in (steps * a, 1.0 / (1.0 + steps * c)))
    steps, clip = (number_or_array(v) for v in (steps, clip))
    code, kc = kernel

    def epoch(z, w, coords, eta, stds, acc, last):
        if not average:
            acc, last = np.zeros(1), np.zeros(1, dtype=np.int64)
        cd_epoch(indptr, indices, data, zero, f, z, y, w, np.asarray(coords, dtype=np.int64), eta,
                 number_or_array(stds), steps, clip, thresholds, shrink, int(code), float(kc), acc,
                 last, average)

    return epoch


def _derivative_and_clip(loss, clip, b):
    """Per-sample derivative and thresholds ``C_j`` (default ``sup|f'| b_j``).

    A loss with a public bound on ``|f'|`` uses its ``bounded_derivative`` (e.g. the
    squared loss with residual clipping); one without (``Squared()``) uses its raw
    derivative and needs explicit thresholds.
    """
    try:
        lipschitz = float(loss.lipschitz)
    except ValueError:
        lipschitz = None
    p = b.shape[0]
    if clip is None:
        if lipschitz is None:
            raise ValueError(f"DP-CD: the {loss.name} loss has no bound on its derivative; set clip "
                             "(per-sample coordinate-wise thresholds C_j) or use a loss with one")
        C = lipschitz * b
    else:
        C = np.asarray(clip, dtype=float)
        C = np.full(p, float(C)) if C.ndim == 0 else C
        if C.shape != (p,) or not np.all(np.isfinite(C)) or np.any(C <= 0):
            raise ValueError(f"clip must be a finite number > 0 or {p} of them, got {clip!r}")
    derivative = loss.bounded_derivative if lipschitz is not None else loss.derivative
    return derivative, C, loss.derivative_kernel(bounded=lipschitz is not None)


def _plan(info):
    o, n, p = info.options, info.n, info.p
    auto = isinstance(o["clipping_norm"], str)
    if auto:
        check_auto_clip("dp-cd", info)
    # with "auto", the plan at a nominal threshold of 1 on every column; the released one scales every noise
    derivative, C, kernel = _derivative_and_clip(info.loss, 1.0 if auto else o["clipping_norm"], info.feature_bounds)
    K = p if o["updates_per_epoch"] is None else o["updates_per_epoch"]
    n_updates = o["n_iter"] * K
    m_auto = share_multiplier(info) if auto else None
    before = () if m_auto is None else (m_auto,)
    m_paper = paper_multiplier(n_updates, info.epsilon, info.delta)
    m = m_paper if info.calibration == "paper" else _tight_multiplier(n_updates, info.epsilon, info.delta, info.zcdp,
                                                                      before)
    ledger = ledger_after(before).gaussian(m, 1.0, n_updates)
    stds = noise_stds(m, C, n)
    unit = " (per unit of the threshold)" if auto else ""
    details = {
        "update": "gaussian noise on the clipped coordinate gradient",
        "noise multiplier": float(m),
        f"noise std{unit}": float(stds.max()),
        f"paper noise std{unit}": float(noise_stds(m_paper, C, n).max()),
        "clipping threshold": ("automatic: |f'(0)| x the private mean of |x_ij| (Gaussian, multiplier "
                               f"{m_auto:.4g}, {SHARE:g} of the zCDP budget); each noise std is the one per unit of "
                               "the threshold times the released threshold") if auto else float(C.max()),
        "coordinate updates": n_updates,
        "updates per epoch": int(K),
        "coordinate choice": "uniform, independent of the data (no amplification claimed)",
        "iterate": "average of each epoch" if o["average"] else "last",
    }
    params = {"derivative": derivative, "kernel": kernel, "C": C, "K": K, "stds": stds, "auto_multiplier": m_auto,
              "M": info.loss.coordinate_smoothness(info.feature_bounds)}
    return Plan(ledger=ledger, accountant_epsilon=ledger.epsilon(info.delta), accountant=ledger.accountant,
                iterations=o["n_iter"], details=details, params=params,
                miss_reason=" (its theorem assumes epsilon <= 1 and delta < 1/3)")


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    X = design.X
    if not is_shifted(X) and not is_dask(X):
        X = X.tocsc() if sp.issparse(X) else np.asfortranarray(X, dtype=float)
    # with "auto" every threshold and noise std of the plan is for a threshold of 1
    scale = 1.0 if q["auto_multiplier"] is None else run_threshold(X, design, plan, noise)
    return cd(X, np.asarray(design.y, dtype=float), q["derivative"], info.penalty, q["M"], scale * q["C"],
              info.options["n_iter"], q["K"], scale * q["stds"], noise, callback, info.options["average"], q["kernel"])


MECHANISM = Mechanism(
    name="dp-cd",
    title="DP-CD, private randomized coordinate descent (Mangold et al. 2022)",
    citation=SOURCE,
    summary="randomized proximal coordinate descent with per-coordinate clipping (separable penalties)",
    options=(
        n_iter_option(20, "number of epochs T (each makes updates_per_epoch coordinate updates)"),
        Option("clipping_norm", "floats", None,
               "per-sample coordinate-wise clipping threshold C_j (one number, or in Python one per column); 'auto': "
               "|f'(0)| times the private mean of |x_ij| (a release of its own, 0.05 of the zCDP budget)",
               low=0.0, low_open=True, auto=True,
               default_help="'auto' in the estimators and the CLI for the logistic loss; else sup|f'| b_j, which "
                            "clips nothing"),
        Option("updates_per_epoch", "int", None, "coordinate updates per epoch K", low=1, high=10**7,
               default_help="p"),
        Option("average", "bool", False, "end each epoch at the average of its inner iterates (convex variant)"),
    ),
    calibrations=CALIBRATIONS,
    loss_needs=("smooth",),
    penalty_needs=("separable", "prox_1d"),
    plan=_plan, run=_run,
    zcdp_calibration=True,
    dask=True,  # one pass over the chunks per coordinate update (docs/scale.md)
)


def dp_cd(X, y, loss, penalty, feature_bounds, *, epsilon, delta, calibration="tight", noise, callback=None,
          row_norm=None, **options):
    """Differentially private proximal coordinate descent, DP-CD (module docstring).

    ``fit_mechanism`` on ``BoundedDesign.from_arrays(X, y, feature_bounds, row_norm)``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit
        Smooth (finite ``smoothness``): ``M_j = smoothness * b_j^2``.
    penalty : separable Penalty (L1, L2, elastic net)
    feature_bounds : ndarray of shape (p,) of floats > 0
    epsilon : float > 0
    delta : float in (0, 1)
    calibration : {"tight", "paper"}
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
        Called after each epoch.
    row_norm : float or None
    **options
        ``n_iter`` (epochs T, default 20), ``clipping_norm`` (C_j; None: ``sup|f'| b_j``),
        ``updates_per_epoch`` (K; None: p), ``average`` (bool).

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, calibration or option; a penalty that is not separable; a
        non-smooth loss; a loss with no bound on its derivative and no ``clip``.

    Warns
    -----
    PrivacyCalibrationWarning
        With ``calibration="paper"`` when the accountant finds the paper's noise short of
        the target (possible outside the theorem's ``epsilon <= 1``, ``delta < 1/3``).
    """
    return call_direct(MECHANISM, X, y, loss, penalty, feature_bounds, epsilon=epsilon, delta=delta,
                       calibration=calibration, noise=noise, callback=callback, row_norm=row_norm, options=options)
