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

import numpy as np
import scipy.sparse as sp

from ..accounting import Ledger, calibrate
from ..affine import is_shifted
from ..distributed import is_dask
from .base import Mechanism, Option, Plan, loss_capabilities, n_iter_option
from .direct import call_direct

__all__ = ["CLIPPING_OPTION", "MECHANISM", "STEP_OPTION", "clipped_gradient_sum", "clipping_and_step", "dp_sgd"]


def clipped_gradient_sum(X, z, y, loss, clip):
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

    Returns
    -------
    ndarray of shape (p,)
    """
    d = loss.derivative(z, y)
    if is_shifted(X):
        rows = X.row_norms()
    else:
        rows = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel()) if sp.issparse(X) else np.linalg.norm(X, axis=1)
    norms = np.abs(d) * rows
    scale = np.minimum(1.0, clip / np.where(norms > 0, norms, 1.0))
    return np.asarray(X.T @ (d * scale)).ravel()


CLIPPING_OPTION = Option("clipping_norm", "float", None, "per-sample clipping norm C", low=0.0, low_open=True,
                         default_help="sup|f'| times the row-norm bound: clips no record within the bounds")
STEP_OPTION = Option("learning_rate", "float", None, "step size", low=0.0, low_open=True, high=1e6,
                     default_help="1 / (smoothness * row_norm^2)")


def clipping_and_step(info, name):
    """The per-sample clipping norm ``C`` (default ``sup|f'| R``, public) and the step (default
    ``1 / (smoothness R^2)``) of a gradient method, from its options.

    Raises
    ------
    ValueError
        No ``clipping_norm`` for a loss without a bound on its derivative.
    """
    o, R, loss = info.options, info.row_norm, info.loss
    C = o["clipping_norm"]
    if C is None:
        if "Lipschitz" not in loss_capabilities(loss):
            raise ValueError(f"mechanism {name}: the {loss.name} loss has no bound on its derivative; set the "
                             "option clipping_norm (the per-sample clipping norm)")
        C = float(loss.lipschitz) * R
    smooth = loss.smoothness if np.isfinite(loss.smoothness) else 1.0
    eta = 1.0 / (smooth * R**2) if o["learning_rate"] is None else o["learning_rate"]
    return C, eta


def _ledger(multiplier, n, m, n_iter, sampling):
    if sampling == "poisson":
        return Ledger().poisson_gaussian(m / n, multiplier, 1.0, n_iter)
    return Ledger().replacement_gaussian(n, int(m), multiplier, 1.0, n_iter)


@functools.lru_cache(maxsize=256)
def _tight_sigma(n, m, n_iter, epsilon, delta, sampling):
    """Smallest noise multiplier ``sigma / C`` meeting (epsilon, delta) for ``T`` steps."""
    return calibrate(lambda mult: _ledger(mult, n, m, n_iter, sampling), epsilon, delta, 1.0)


@functools.lru_cache(maxsize=256)
def _accounted(multiplier, n, m, n_iter, sampling, delta):
    """The ledger, its epsilon at ``delta`` and the accountant: computed once per setting (public inputs)."""
    ledger = _ledger(multiplier, n, m, n_iter, sampling)
    return ledger, ledger.epsilon(delta), ledger.accountant


def _plan(info):
    o, n = info.options, info.n
    m = np.sqrt(n) if o["batch_size"] is None else o["batch_size"]
    if not 0 < m <= n:
        raise ValueError(f"mechanism dp-sgd: option batch_size must be in (0, n={n}], got {m!r}")
    if o["sampling"] == "replacement":
        m = float(max(1, round(m)))
    C, eta = clipping_and_step(info, "dp-sgd")
    multiplier = _tight_sigma(n, m, o["n_iter"], info.epsilon, info.delta, o["sampling"])
    ledger, accountant_epsilon, accountant = _accounted(multiplier, n, m, o["n_iter"], o["sampling"], info.delta)
    details = {"noise multiplier": multiplier, "clipping norm": C, "sampling rate": m / n,
               "sampling": o["sampling"], "gaussian std (sum)": multiplier * C, "learning rate": eta}
    return Plan(ledger=ledger, accountant_epsilon=accountant_epsilon, accountant=accountant,
                iterations=o["n_iter"], details=details,
                params={"m": m, "C": C, "eta": eta, "sigma": multiplier * C})


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
    m, C, eta, sigma = q["m"], q["C"], q["eta"], q["sigma"]
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
              "minimization: efficient algorithms and tight error bounds', FOCS 2014; composed by the privacy "
              "loss distribution of the Poisson-subsampled Gaussian, replace-one (dp-accounting)"),
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
        ``clipping_norm`` (C; default ``sup|f'| R``), ``learning_rate`` (default
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
