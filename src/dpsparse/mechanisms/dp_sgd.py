"""DP-SGD: noisy proximal stochastic gradient descent with Poisson subsampling.

Sources: Bassily, Smith & Thakurta 2014 (noisy SGD for private ERM); Abadi et al. 2016
(per-sample clipping, subsampling, moments accountant). SPEC section 4.10.

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

from ..accounting import Ledger, PrivacyReport, calibrate, check_privacy_params
from ..norms import require
from ._common import check_n_iter, row_norm_bound

__all__ = ["dp_sgd", "clipped_gradient_sum"]


def clipped_gradient_sum(X, z, y, loss, clip):
    """``sum_i clip_C(f'(z_i, y_i) x_i)``: per-sample gradients clipped to L2 norm ``clip``.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (m, p)
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
    rows = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel()) if sp.issparse(X) else np.linalg.norm(X, axis=1)
    norms = np.abs(d) * rows
    scale = np.minimum(1.0, clip / np.where(norms > 0, norms, 1.0))
    return np.asarray(X.T @ (d * scale)).ravel()


def _ledger(multiplier, n, m, n_iter, sampling):
    if sampling == "poisson":
        return Ledger().poisson_gaussian(m / n, multiplier, 1.0, n_iter)
    return Ledger().replacement_gaussian(n, int(m), multiplier, 1.0, n_iter)


@functools.lru_cache(maxsize=256)
def _tight_sigma(n, m, n_iter, epsilon, delta, sampling):
    """Smallest noise multiplier ``sigma / C`` meeting (epsilon, delta) for ``T`` steps."""
    return calibrate(lambda mult: _ledger(mult, n, m, n_iter, sampling), epsilon, delta, 1.0)


def dp_sgd(X, y, loss, penalty, feature_bounds, *, epsilon, delta, n_iter=200, calibration="tight",
           noise, callback=None, batch_size=None, clip=None, learning_rate=None, row_norm=None,
           sampling="poisson"):
    """Differentially private proximal SGD with Poisson subsampling (module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
        Records within the public bounds.
    y : ndarray of shape (n,)
    loss : Datafit
    penalty : Penalty with ``prox`` (any penalty of ``dpsparse.norms``)
    feature_bounds : ndarray of shape (p,)
        Public bounds ``b_j`` on ``|x_j|``.
    epsilon : float > 0
    delta : float in (0, 1)
    n_iter : int >= 1
        Number of steps T.
    calibration : {"tight"}
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
    batch_size : float or None
        Expected batch size ``q n`` (None: ``sqrt(n)``).
    clip : float > 0 or None
        Per-sample clipping norm ``C`` (None: the public bound ``sup|f'| * row_norm``, so
        no record is clipped).
    learning_rate : float > 0 or None
        None: ``1 / (smoothness * row_norm^2)``, the inverse smoothness of the average
        loss (``1 / row_norm^2`` for non-smooth losses).
    row_norm : float or None
        Public bound on ``||x_i||_2`` (None: ``||feature_bounds||_2``).
    sampling : {"poisson", "replacement"}
        Poisson subsampling with rate ``batch_size / n`` (PLD accountant), or a batch of
        ``batch_size`` indices drawn uniformly with replacement (RDP bound of
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
    check_privacy_params(epsilon, delta)
    if calibration != "tight":
        raise ValueError("DP-SGD has no closed-form calibration in its sources: use calibration='tight'")
    check_n_iter(n_iter)
    require(penalty, ("prox",), "DP-SGD")
    n, p = X.shape
    R = row_norm_bound(feature_bounds, row_norm, p)
    m = np.sqrt(n) if batch_size is None else float(batch_size)
    if not 0 < m <= n:
        raise ValueError(f"batch_size must be in (0, n={n}], got {batch_size!r}")
    if sampling not in ("poisson", "replacement"):
        raise ValueError(f"unknown sampling {sampling!r}; allowed: ['poisson', 'replacement']")
    if sampling == "replacement":
        m = float(max(1, round(m)))
    q = m / n
    C = loss.lipschitz * R if clip is None else float(clip)
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"clip must be a finite number > 0, got {clip!r}")
    smooth = loss.smoothness if np.isfinite(loss.smoothness) else 1.0
    eta = 1.0 / (smooth * R**2) if learning_rate is None else float(learning_rate)

    multiplier = _tight_sigma(n, m, int(n_iter), float(epsilon), float(delta), sampling)
    ledger = _ledger(multiplier, n, m, n_iter, sampling)
    accounted = ledger.epsilon(delta)
    sigma = multiplier * C

    Xr = sp.csr_matrix(X) if sp.issparse(X) else X
    w = np.zeros(p)
    for t in range(n_iter):
        batch = np.flatnonzero(noise.rng.random(n) < q) if sampling == "poisson" else noise.rng.integers(n, size=int(m))
        Xb = Xr[batch]
        g = clipped_gradient_sum(Xb, Xb @ w, y[batch], loss, C) + noise.gaussian(sigma, p)
        w = penalty.prox(w - eta * g / m, eta)
        if callback is not None:
            callback(t, w)

    report = PrivacyReport(
        mechanism="dp-sgd (Poisson subsampling, per-sample clipping; Abadi et al. 2016)",
        calibration=calibration, epsilon=float(epsilon), delta=float(delta), accountant_epsilon=accounted,
        accountant=ledger.accountant, iterations=int(n_iter),
        noise={"noise multiplier": multiplier, "clipping norm": C, "sampling rate": q, "sampling": sampling,
               "gaussian std (sum)": sigma, "learning rate": eta,
               "source": "Abadi et al. 2016 Alg. 1; PLD of the Poisson-subsampled Gaussian (replace-one)"},
        noise_source=noise.describe(),
    )
    return w, report
