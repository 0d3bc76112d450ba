"""DP-SGD: noisy proximal stochastic gradient descent with Poisson subsampling.

Sources: Bassily, Smith & Thakurta 2014 (noisy SGD for private ERM); Abadi et al. 2016
(per-sample clipping, subsampling, moments accountant).

Step ``t``: every record joins the batch independently with probability ``q``; each
per-sample gradient ``f'(<w, x_i>, y_i) x_i`` is clipped to L2 norm ``C``; the clipped
gradients are summed and ``N(0, sigma^2 I)`` is added; the sum is divided by the
expected batch size ``q n``; then a proximal step on the penalty,
``w <- prox_{eta psi}(w - eta g)``.

Privacy (replace-one): one record's clipped term has norm at most ``C``, so each step is
a Poisson-subsampled Gaussian mechanism with contribution ``C`` and noise ``sigma``; the
``T`` steps are composed by the PLD accountant (``Ledger.poisson_gaussian``, replace-one
relation of dp-accounting). ``calibration="tight"`` finds the smallest ``sigma`` by
bisection. The sources give no closed-form constant for this schedule, so there is no
"paper" calibration.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import scipy.sparse as sp

from ..accounting import calibrate
from ..distributed import is_dask
from ._common import (
    SHARE,
    derivative_at_zero,
    ledger_after,
    private_unit_mean,
    row_norms,
    share_multiplier,
    unit_row_norm_sum,
)
from .base import Mechanism, Option, Plan, loss_capabilities, n_iter_option
from .direct import call_direct

__all__ = ["CLIPPING_OPTION", "MECHANISM", "STEP_OPTION", "auto_clipping_norm", "clipped_gradient_sum",
           "clipping_and_step", "dp_sgd", "noise_details", "run_clipping_norm"]


def clipped_gradient_sum(X, z, y, loss, clip, norms=None):
    """``sum_i clip_C(f'(z_i, y_i) x_i)``: per-sample gradients clipped to L2 norm ``clip``.

    Parameters
    ----------
    X : ndarray, CSR matrix or ShiftedSparse of shape (m, p)
        The batch.
    z : ndarray of shape (m,)
        Margins ``X w``.
    y : ndarray of shape (m,)
    loss : Datafit
    clip : float > 0
    norms : ndarray of shape (m,), optional
        The rows' norms ``||x_i||_2`` (``row_norms(X)``), when known.

    Returns
    -------
    ndarray of shape (p,)
    """
    d = loss.derivative(z, y)
    norms = np.abs(d) * (row_norms(X) if norms is None else norms)
    scale = np.minimum(1.0, clip / np.where(norms > 0, norms, 1.0))
    return np.asarray(X.T @ (d * scale)).ravel()


CLIPPING_OPTION = Option("clipping_norm", "float", "auto",
                         "per-sample clipping norm C; 'auto': |f'(0)| times the private mean of ||x_i|| (a release of "
                         "its own, 0.05 of the zCDP budget); in Python, None: sup|f'| times the row-norm bound (clips "
                         "no record within the bounds)", low=0.0, low_open=True, auto=True)
STEP_OPTION = Option("learning_rate", "float", None, "step size", low=0.0, low_open=True, high=1e6,
                     default_help="1 / (smoothness * row_norm^2)")


def clipping_and_step(info, name):
    """The per-sample clipping norm ``C`` and the step (default ``1 / (smoothness R^2)``) of a gradient method, from
    its options: ``C`` is ``"auto"`` (set privately at run time, ``auto_clipping_norm``), the option's number, or
    ``sup|f'| R`` (public: clips no record within the bounds) for ``None``.

    Raises
    ------
    ValueError
        No ``clipping_norm`` for a loss without a bound on its derivative.
    """
    o, R, loss = info.options, info.row_norm, info.loss
    C = o["clipping_norm"]
    if (C is None or C == "auto") and "Lipschitz" not in loss_capabilities(loss):
        raise ValueError(f"mechanism {name}: the {loss.name} loss has no bound on its derivative; set the "
                         "option clipping_norm (the per-sample clipping norm)")
    if C is None:
        C = float(loss.lipschitz) * R
    smooth = loss.smoothness if np.isfinite(loss.smoothness) else 1.0
    eta = 1.0 / (smooth * R**2) if o["learning_rate"] is None else o["learning_rate"]
    return C, eta


def auto_clipping_norm(X, R, loss, multiplier, noise):
    """The per-sample clipping norm of ``clipping_norm="auto"``: ``|f'(0)| R`` times the private mean of
    ``min(||x_i|| / R, 1)`` (``R`` the public row-norm bound).

    Each record's term lies in [0, 1], so their sum has replace-one sensitivity 1; it is released with Gaussian
    noise of ``multiplier`` (``private_unit_mean``). At the start model a record's gradient is
    ``f'(0, y_i) x_i``, of norm ``|f'(0, y_i)| ||x_i||``: the norm is the typical size of the per-sample gradients
    there, so the records far out in the box are clipped and the noise no longer pays for the box's corner (the
    automatic threshold's idea as in Andrew et al., "Differentially private learning with adaptive clipping",
    NeurIPS 2021, with one release at the start instead of one per step). Between 0.01 and 1 times
    ``|f'(0)| R``.

    Returns
    -------
    float
    """
    unit = private_unit_mean(unit_row_norm_sum(X, R), X.shape[0], multiplier, noise,
                             "mean ||x|| (automatic clipping)")
    return derivative_at_zero(loss) * R * unit


def _ledger(multiplier, n, m, n_iter, sampling, before=()):
    """DP-SGD's ``T`` steps at noise multiplier ``sigma / C``, after the Gaussian releases of noise multipliers
    ``before`` (the automatic clipping norm)."""
    ledger = ledger_after(before)
    if sampling == "poisson":
        return ledger.poisson_gaussian(m / n, multiplier, 1.0, n_iter)
    return ledger.replacement_gaussian(n, int(m), multiplier, 1.0, n_iter)


@functools.lru_cache(maxsize=256)
def _tight_sigma(n, m, n_iter, epsilon, delta, sampling, before=()):
    """Smallest noise multiplier ``sigma / C`` meeting (epsilon, delta) for ``T`` steps after ``before``."""
    return calibrate(lambda mult: _ledger(mult, n, m, n_iter, sampling, before), epsilon, delta,
                     start_multiplier(m / n, n_iter, epsilon, delta))


def start_multiplier(q, n_iter, epsilon, delta):
    """Where the calibration's search starts: ``q sqrt(8 T log(1/delta)) / epsilon``, the noise multiplier at which
    ``T`` Gaussian steps subsampled at rate ``q`` are about (epsilon, delta)-DP for small ``q`` (their Renyi DP
    ``2 q^2 alpha / sigma^2``, Mironov, Talwar & Zhang, "Renyi differential privacy of the sampled Gaussian
    mechanism", 2019, composed and converted at the best order; the form of Abadi et al. 2016, Theorem 1).
    A guess only: the accountant decides (within 4% of the calibrated multiplier at the benchmark's setting,
    where a start at 1 cost two more compositions)."""
    return q * math.sqrt(8.0 * n_iter * math.log(1.0 / delta)) / epsilon


@functools.lru_cache(maxsize=256)
def _accounted(multiplier, n, m, n_iter, sampling, delta, before=()):
    """The ledger, its epsilon at ``delta`` and the accountant: computed once per setting (public inputs)."""
    ledger = _ledger(multiplier, n, m, n_iter, sampling, before)
    return ledger, ledger.epsilon(delta), ledger.accountant


def _plan(info):
    o, n = info.options, info.n
    m = np.sqrt(n) if o["batch_size"] is None else o["batch_size"]
    if not 0 < m <= n:
        raise ValueError(f"mechanism dp-sgd: option batch_size must be in (0, n={n}], got {m!r}")
    if o["sampling"] == "replacement":
        m = float(max(1, round(m)))
    C, eta = clipping_and_step(info, "dp-sgd")
    m_auto = share_multiplier(info) if C == "auto" else None
    before = () if m_auto is None else (m_auto,)
    multiplier = _tight_sigma(n, m, o["n_iter"], info.epsilon, info.delta, o["sampling"], before)
    ledger, accountant_epsilon, accountant = _accounted(multiplier, n, m, o["n_iter"], o["sampling"], info.delta,
                                                        before)
    details = {"noise multiplier": multiplier, "clipping norm": C, "sampling rate": m / n,
               "sampling": o["sampling"], "learning rate": eta,
               **noise_details(multiplier, C, m_auto, 1.0, info.row_norm)}
    return Plan(ledger=ledger, accountant_epsilon=accountant_epsilon, accountant=accountant,
                iterations=o["n_iter"], details=details,
                params={"m": m, "C": C, "eta": eta, "multiplier": multiplier, "auto_multiplier": m_auto})


def noise_details(multiplier, C, m_auto, per_norm, R):
    """The noise lines of a gradient method's report: the Gaussian std on the sum (``per_norm`` x multiplier x
    ``C``: ``per_norm`` is 2 where a replaced record moves the sum by ``2 C``), or, with the automatic clipping
    norm, how it is set (``R`` the public row-norm bound)."""
    if m_auto is None:
        return {"gaussian std (sum)": per_norm * multiplier * C}
    return {"clipping norm": (f"automatic: |f'(0)| R times the private mean of min(||x_i|| / R, 1), R = {R:.4g} the "
                              "public bound on a record's norm, its intercept's 1 included where one is fitted (one "
                              f"Gaussian release of noise multiplier {m_auto:.4g}: {SHARE:g} of the zCDP budget), the "
                              "typical size of a record's gradient at the start"),
            "gaussian std (sum)": (f"{per_norm * multiplier:.4g} x the clipping norm (noise multiplier {multiplier:.4g}"
                                   f" of the steps x their sensitivity, {per_norm:g} x the clipping norm)")}


def run_clipping_norm(design, plan, noise):
    """The clipping norm of a run: the plan's, or released now (``auto_clipping_norm``) for ``"auto"``."""
    q, info = plan.params, plan.info
    if q["auto_multiplier"] is None:
        return q["C"]
    return plan.record("clipping norm", auto_clipping_norm(design.X, info.row_norm, info.loss, q["auto_multiplier"],
                                                           noise))


def _poisson_batch(rng, n, q):
    """Poisson sampling in O(batch): each of the ``n`` records independently with probability ``q``.

    Its size is Binomial(n, q) and, given the size, every subset of that size is equally
    likely, which is how it is drawn (sorted row indices).
    """
    k = int(rng.binomial(n, q))
    return np.sort(rng.choice(n, size=k, replace=False))


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    n, p = design.n, design.p
    m, eta = q["m"], q["eta"]
    C = run_clipping_norm(design, plan, noise)
    sigma = q["multiplier"] * C
    X = sp.csr_matrix(design.X) if sp.issparse(design.X) else design.X
    y = design.y
    poisson = info.options["sampling"] == "poisson"
    w = np.zeros(p)
    for t in range(info.options["n_iter"]):
        batch = _poisson_batch(noise.rng, n, m / n) if poisson else noise.rng.integers(n, size=int(m))
        Xb = X[batch].compute() if is_dask(X) else X[batch]  # dask: the batch's rows gathered on the client
        g = noise.release(clipped_gradient_sum(Xb, Xb @ w, y[batch], info.loss, C), "gaussian", sigma,
                          sensitivity=2.0 * C, name="clipped gradient sum",
                          sampling=("poisson", m / n) if poisson else ("replacement", n, int(m)))
        w = info.penalty.prox(w - eta * g / m, eta)
        if callback is not None:
            callback(t, w)
    return w


MECHANISM = Mechanism(
    name="dp-sgd",
    title="DP-SGD, noisy proximal SGD with Poisson subsampling (Abadi et al. 2016)",
    citation=("Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar & Zhang, 'Deep learning with differential "
              "privacy', CCS 2016, Algorithm 1; Bassily, Smith & Thakurta, 'Private empirical risk "
              "minimization: efficient algorithms and tight error bounds', FOCS 2014; the automatic clipping norm: "
              "after Andrew et al., 'Differentially private learning with adaptive clipping', NeurIPS 2021; "
              "composed by the privacy loss distribution of the Poisson-subsampled Gaussian, replace-one "
              "(dp-accounting)"),
    summary="noisy proximal SGD with per-sample clipping (any penalty with a prox, any loss)",
    options=(
        n_iter_option(200, "number of steps T"),
        Option("batch_size", "float", None, "expected batch size", low=0.0, low_open=True,
               default_help="sqrt(n)"),
        CLIPPING_OPTION,
        STEP_OPTION,
        Option("sampling", "choice", "poisson", "batch sampling", choices=("poisson", "replacement")),
    ),
    calibrations=("tight",),
    loss_needs=(),
    penalty_needs=("prox",),
    plan=_plan, run=_run,
    dask=True,
    one_hot=True,
)


def dp_sgd(X, y, loss, penalty, feature_bounds, *, epsilon, delta, calibration="tight", noise, callback=None,
           row_norm=None, **options):
    """Differentially private proximal SGD with Poisson subsampling (module docstring).

    ``fit_mechanism`` on ``BoundedDesign.from_arrays(X, y, feature_bounds, row_norm)``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit
    penalty : Penalty with ``prox`` (any penalty of ``dpsparse.norms``)
    feature_bounds : ndarray of shape (p,)
    epsilon : float > 0
    delta : float in (0, 1)
    calibration : {"tight"}
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
    row_norm : float or None
        Public bound on ``||x_i||_2`` (None: ``||feature_bounds||_2``).
    **options
        ``n_iter`` (T, default 200), ``batch_size`` (expected, default ``sqrt(n)``),
        ``clipping_norm`` (C; default ``"auto"``, None: ``sup|f'| R``), ``learning_rate`` (default
        ``1 / (smoothness R^2)``), ``sampling`` ("poisson" or "replacement": a batch of
        ``batch_size`` indices drawn uniformly with replacement, RDP bound of
        ``Ledger.replacement_gaussian``).

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, options, or calibration other than "tight".
    """
    return call_direct(MECHANISM, X, y, loss, penalty, feature_bounds, epsilon=epsilon, delta=delta,
                       calibration=calibration, noise=noise, callback=callback, row_norm=row_norm, options=options)
