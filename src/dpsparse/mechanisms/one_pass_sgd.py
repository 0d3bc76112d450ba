"""One-pass noisy projected SGD (Arora, Marinov & Ullah 2020; seed 002, Algorithm 1).

Indices ``i_t`` are drawn uniformly with replacement. An index not seen before gives a
projected noisy (sub)gradient step ``w <- Proj_W(w - eta (f'(<w, x_i>, y_i) x_i + b))``;
an index already seen gives the noise-only step ``w <- Proj_W(w - eta b)``, with
``b ~ N(0, sigma^2 I)``. The run stops once ``ceil(n/2)`` distinct indices have been
seen, and the average iterate is released. ``W`` is the L2 ball of radius ``radius``; an
optional penalty is applied by its prox after each step (post-processing). Works for
non-smooth losses (hinge).

``geometry="l1"`` is the seed's mirror-descent variant for L1 geometry: the step is
taken on the mirror image ``theta = grad psi(w)`` of the potential
``psi(w) = ||w||_q^2 / 2`` with ``q = 1 + 1/ln p``, ``w = grad psi*(theta)`` with
``psi* = ||theta||_{q*}^2 / 2``, ``q* = q / (q - 1)``; ``W`` is the ``q``-norm ball of
radius ``radius`` (within a factor ``e`` of the L1 ball, since ``p^(1 - 1/q) <= e``),
reached by radial rescaling. The noise and its privacy are those of the Euclidean
variant: only the post-processing of the noisy gradient changes.

Privacy (``docs/privacy.md``, derived there because the seed's formulas were lost in its
text): the index sequence does not depend on the data, and on the neighbouring dataset
only record ``i*`` differs. Let ``E`` be the event that ``i*`` is drawn before the stop;
``P(E) = q = ceil(n/2) / n`` by exchangeability. Given ``E^c`` both runs have the same
law; given any index sequence in ``E`` they differ only by one Gaussian mechanism, at
the first draw of ``i*``, on a gradient of L2 sensitivity ``2 L`` (``L = sup|f'| R``,
``R`` the public row-norm bound). By joint convexity of the hockey-stick divergence the
algorithm is ``(epsilon, q delta_G(epsilon))``-DP for every epsilon, where ``delta_G`` is
that single Gaussian mechanism's. Calibration ("tight", the only one): the smallest
``sigma`` with ``delta_G(epsilon) <= delta / q`` (PLD accountant, bisection). This
amplifies delta only; it claims no amplification of epsilon.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import scipy.sparse as sp

from ..accounting import Ledger, PrivacyReport, calibrate, check_privacy_params
from ..norms import require
from ._common import row_norm_bound

__all__ = ["one_pass_sgd", "usage_probability"]


def usage_probability(n):
    """``q = ceil(n/2) / n``: probability that a given record's gradient is used."""
    return math.ceil(n / 2) / n


@functools.lru_cache(maxsize=256)
def _tight_multiplier(epsilon, delta_used):
    """Smallest ``sigma / sensitivity`` of one Gaussian mechanism that is (epsilon, delta_used)-DP."""
    return calibrate(lambda m: Ledger().gaussian(m, 1.0), epsilon, delta_used, 1.0)


def _project(w, radius, order=2.0):
    """Radial rescaling onto the ``order``-norm ball of radius ``radius``."""
    norm = np.linalg.norm(w, order)
    return w if norm <= radius else w * (radius / norm)


def _mirror(v, order):
    """``grad (||v||_order^2 / 2)``: ``sign(v) |v|^(order-1) ||v||_order^(2-order)``."""
    norm = np.linalg.norm(v, order)
    if norm == 0.0:
        return np.zeros_like(v)
    return np.sign(v) * np.abs(v) ** (order - 1.0) * norm ** (2.0 - order)


class _Euclidean:
    """Projected steps in the L2 ball."""

    def __init__(self, radius, p):
        self.radius = radius

    def step(self, w, eta, direction):
        return _project(w - eta * direction, self.radius)


class _L1Mirror:
    """Mirror steps with ``psi = ||w||_q^2 / 2``, ``q = 1 + 1/ln p`` (seed 002)."""

    def __init__(self, radius, p):
        self.radius = radius
        self.q = 1.0 + 1.0 / math.log(max(p, 3))
        self.q_dual = self.q / (self.q - 1.0)

    def step(self, w, eta, direction):
        theta = _mirror(w, self.q) - eta * direction
        return _project(_mirror(theta, self.q_dual), self.radius, self.q)


GEOMETRIES = {"euclidean": _Euclidean, "l1": _L1Mirror}


def one_pass_sgd(X, y, loss, penalty, feature_bounds, *, epsilon, delta, n_iter=None, calibration="tight",
                 noise, callback=None, radius=10.0, learning_rate=None, row_norm=None, geometry="euclidean"):
    """Seed 002's one-pass noisy projected SGD (module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit (hinge, logistic, Huber, clipped squared)
    penalty : Penalty with ``prox``, or None
    feature_bounds : ndarray of shape (p,)
    epsilon : float > 0
    delta : float in (0, 1)
    n_iter : None
        The number of steps is random (the stop rule); any other value is refused.
    calibration : {"tight"}
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
    radius : float > 0
        Radius of the L2 ball ``W``.
    learning_rate : float > 0 or None
        None: ``radius / sqrt(T_e (L^2 + p sigma^2))`` with ``T_e = n ln 2`` the expected
        number of steps (the OSMD step of seed 002, Corollary 1).
    row_norm : float or None
        Public bound on ``||x_i||_2`` (None: ``||feature_bounds||_2``).
    geometry : {"euclidean", "l1"}
        Projected SGD in the L2 ball, or mirror descent for L1 geometry (module docstring).

    Returns
    -------
    w : ndarray of shape (p,)
        The average iterate.
    report : PrivacyReport
    """
    check_privacy_params(epsilon, delta)
    if calibration != "tight":
        raise ValueError("seed 002's formulas were lost in its text: use calibration='tight' (docs/privacy.md)")
    if n_iter is not None:
        raise ValueError("one-pass SGD stops after ceil(n/2) distinct records; leave n_iter unset")
    if penalty is not None:
        require(penalty, ("prox",), "one-pass SGD")
    if not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}")
    if geometry not in GEOMETRIES:
        raise ValueError(f"unknown geometry {geometry!r}; allowed: {sorted(GEOMETRIES)}")
    n, p = X.shape
    R = row_norm_bound(feature_bounds, row_norm, p)
    L = loss.lipschitz * R
    q = usage_probability(n)
    multiplier = _tight_multiplier(float(epsilon), float(delta) / q)
    sigma = multiplier * 2.0 * L
    ledger = Ledger().gaussian(multiplier, 1.0)
    accounted = ledger.epsilon(delta / q)
    eta = radius / math.sqrt(n * math.log(2) * (L**2 + p * sigma**2)) if learning_rate is None else learning_rate

    steps = GEOMETRIES[geometry](radius, p)
    Xr = sp.csr_matrix(X) if sp.issparse(X) else X
    seen = np.zeros(n, dtype=bool)
    n_seen, target = 0, math.ceil(n / 2)
    w, total, t = np.zeros(p), np.zeros(p), 0
    while n_seen < target:
        i = int(noise.rng.integers(n))
        step = noise.gaussian(sigma, p)
        if not seen[i]:
            seen[i], n_seen = True, n_seen + 1
            xi = Xr[i].toarray().ravel() if sp.issparse(Xr) else Xr[i]
            step += float(loss.bounded_derivative(np.array([xi @ w]), y[i:i + 1])[0]) * xi
        w = steps.step(w, eta, step)
        if penalty is not None:
            w = penalty.prox(w, eta)
        total += w
        t += 1
        if callback is not None:
            callback(t - 1, w)

    report = PrivacyReport(
        mechanism="one-pass-sgd (noisy projected SGD, Arora, Marinov & Ullah 2020, Alg. 1)",
        calibration=calibration, epsilon=float(epsilon), delta=float(delta), accountant_epsilon=accounted,
        accountant=ledger.accountant, iterations=t,
        noise={"gaussian std": sigma, "sensitivity (L2)": 2.0 * L, "usage probability": q,
               "delta of the Gaussian step": delta / q, "learning rate": eta, "radius": radius,
               "geometry": geometry,
               "source": "seed 002 Alg. 1; privacy by joint convexity (docs/privacy.md)"},
        noise_source=noise.describe(),
    )
    return total / t, report
