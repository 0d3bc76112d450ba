"""AdaSSP: least squares from noisy sufficient statistics with an adaptive ridge.

Source: Yu-Xiang Wang, "Revisiting differentially private linear regression: optimal and
adaptive prediction & estimation in unbounded domain", UAI 2018, Algorithm 2 (AdaSSP).

On the bounded design (rows ``||x_i||_2 <= R``, the intercept column included; the labels mapped onto [-1, 1] and
clipped to ``[-B, B]``, ``B = min(1, clip)``, the squared loss's clipping threshold) it
releases three Gaussian mechanisms:

1. ``lambda_min(X^T X) + sigma_1 Z``: replace-one moves ``X^T X`` by ``x' x'^T - x x^T``, whose
   eigenvalues lie in ``[-R^2, R^2]``, so ``lambda_min`` moves by at most ``R^2`` (Weyl);
2. ``X^T X + sigma_2 W`` (``W`` symmetric, its upper triangle i.i.d. N(0, 1)): the upper
   triangle of ``x' x'^T - x x^T`` has L2 norm at most ``sqrt(2) R^2``;
3. ``X^T y + sigma_3 N(0, I)``: ``x' y' - x y`` has norm at most ``2 R B``.

Each ``sigma_k`` is the same noise multiplier ``m`` times its sensitivity; the three releases
compose exactly into one Gaussian mechanism (Dong, Roth & Su 2022), ``m`` the smallest that
meets (epsilon, delta) or the zCDP target. The ridge is then chosen from the released
``lambda_min`` as in Wang (2018): ``lambda = max(0, sigma_2 sqrt(d log(2 d^2 / rho)) -
lambda_min_low)`` with ``lambda_min_low = max(0, noisy lambda_min - sigma_1 sqrt(log(6 / delta)))``
and failure probability ``rho = 0.05``, and the model is ``(noisy X^T X + lambda I)^{-1}
noisy X^T y``: post-processing. Wang splits epsilon in three equal parts; the equal
multipliers here are the same split in the accountant's terms.

The penalty is not used (the ridge is AdaSSP's own); two-stage runs AdaSSP on the features
it selected.

``X^T X`` and ``X^T y`` are sums over rows: on a dask array (docs/scale.md) one pass over the chunks computes
both (``distributed.row_sum``, ``d^2 + d`` numbers a chunk), and the smallest eigenvalue, the noise and the ridge
follow on the client from the reduced sums, as in memory.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..accounting import Ledger, calibrate
from ..affine import gram
from ..distributed import is_dask, labels, row_sum
from ._common import row_norm_bound
from .base import Mechanism, Plan

SOURCE = ("Wang, 'Revisiting differentially private linear regression: optimal and adaptive prediction & "
          "estimation in unbounded domain', UAI 2018, Algorithm 2 (AdaSSP); composition: Dong, Roth & Su 2022 "
          "(dp-accounting)")
FAILURE = 0.05
"""Wang's ``rho``: the probability that the noisy Gram matrix's error exceeds the ridge."""


@functools.lru_cache(maxsize=256)
def _multiplier(epsilon, delta, rho=None):
    """Smallest noise multiplier whose three Gaussian releases meet (epsilon, delta), or zCDP ``rho``."""
    return calibrate(lambda m: Ledger().gaussian(m, 1.0, 3), epsilon, delta, 3.0 / epsilon, rho=rho)


def _plan(info):
    R = row_norm_bound(info.feature_bounds, info.row_norm, info.p)
    B = min(1.0, float(info.loss.clip or 1.0))
    m = _multiplier(info.epsilon, info.delta, info.zcdp)
    ledger = Ledger().gaussian(m, 1.0, 3)
    sigmas = (m * R**2, m * math.sqrt(2.0) * R**2, m * 2.0 * R * B)
    d = info.p
    details = {
        "release": "noisy X^T X, X^T y and smallest eigenvalue, then an adaptive ridge",
        "noise multiplier": float(m),
        "row norm bound R": float(R),
        "label bound B": float(B),
        "noise std: smallest eigenvalue, X^T X, X^T y": tuple(float(s) for s in sigmas),
    }
    params = {"sigmas": sigmas, "R": R, "B": B,
              "spread": math.sqrt(d * math.log(2.0 * d * d / FAILURE)),
              "shift": math.sqrt(math.log(6.0 / info.delta))}
    return Plan(ledger=ledger, accountant_epsilon=ledger.epsilon(info.delta), accountant=ledger.accountant,
                iterations=1, details=details, params=params)


def _symmetric_release(G, noise, sigma, sensitivity):
    """``G + sigma W``, ``W`` symmetric with i.i.d. N(0, 1) entries on and above the diagonal: one release of
    the upper triangle."""
    upper = np.triu_indices(G.shape[0])
    U = np.zeros_like(G)
    U[upper] = noise.release(G[upper], "gaussian", sigma, sensitivity=sensitivity, name="X^T X (upper triangle)")
    return U + np.triu(U, 1).T


def _statistics(X, y):
    """The sufficient statistics ``X^T X`` and ``X^T y``: in memory, or one pass over the chunks of a dask array.

    Parameters
    ----------
    X : ndarray, sparse matrix, ShiftedSparse or dask array (chunked by rows) of shape (n, d)
    y : ndarray of shape (n,)
        The clipped labels, on the client.

    Returns
    -------
    G : ndarray of shape (d, d)
    b : ndarray of shape (d,)
    """
    d = X.shape[1]

    def sums(xc, yc):
        return np.r_[gram(xc).ravel(), np.asarray(xc.T @ yc).ravel()]

    out = row_sum(sums, X, labels(X, y), d * d + d) if is_dask(X) else sums(X, y)
    return out[:d * d].reshape(d, d), out[d * d:]


def _run(design, plan, noise, callback):
    q = plan.params
    s1, s2, s3 = q["sigmas"]
    R, B = q["R"], q["B"]
    d = design.p
    G, Xty = _statistics(design.X, np.clip(design.y, -B, B))
    lam_min = float(noise.release(np.array([np.linalg.eigvalsh(G)[0]]), "gaussian", s1, sensitivity=R**2,
                                  name="smallest eigenvalue of X^T X")[0])
    lam_low = max(0.0, lam_min - s1 * q["shift"])
    G_noisy = _symmetric_release(G, noise, s2, math.sqrt(2.0) * R**2)
    b = noise.release(Xty, "gaussian", s3, sensitivity=2.0 * R * B, name="X^T y")
    ridge = max(0.0, s2 * q["spread"] - lam_low)
    A = G_noisy + ridge * np.eye(d)
    w = np.linalg.lstsq(A, b, rcond=None)[0]
    if callback is not None:
        callback(0, w)
    return w


MECHANISM = Mechanism(
    name="adassp",
    title="sufficient statistics perturbation with an adaptive ridge (AdaSSP, Wang 2018)",
    citation=SOURCE,
    summary="least squares from noisy X^T X and X^T y, the ridge set by a noisy smallest eigenvalue (small p)",
    options=(),
    calibrations=("tight",),
    loss_needs=("least-squares",),
    penalty_needs=(),
    plan=_plan, run=_run,
    zcdp_calibration=True,
    dask=True,
)
