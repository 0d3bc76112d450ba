"""One-pass noisy projected SGD (Arora, Marinov & Ullah 2020, Algorithm 1).

Indices ``i_t`` are drawn uniformly with replacement. An index not seen before gives a
projected noisy (sub)gradient step ``w <- Proj_W(w - eta (f'(<w, x_i>, y_i) x_i + b))``;
an index already seen gives the noise-only step ``w <- Proj_W(w - eta b)``, with
``b ~ N(0, sigma^2 I)``. The run stops once ``ceil(n/2)`` distinct indices have been
seen, and the average iterate is released. ``W`` is the L2 ball of radius ``radius``; an
optional penalty is applied by its prox after each step (post-processing). Works for
non-smooth losses (hinge).

``geometry="l1"`` is the paper's mirror-descent variant for L1 geometry: the step is
taken on the mirror image ``theta = grad psi(w)`` of the potential
``psi(w) = ||w||_q^2 / 2`` with ``q = 1 + 1/ln p``, ``w = grad psi*(theta)`` with
``psi* = ||theta||_{q*}^2 / 2``, ``q* = q / (q - 1)``; ``W`` is the ``q``-norm ball of
radius ``radius`` (within a factor ``e`` of the L1 ball, since ``p^(1 - 1/q) <= e``),
reached by radial rescaling. The noise and its privacy are those of the Euclidean
variant: only the post-processing of the noisy gradient changes.

Privacy (``docs/privacy.md``, derived there because the paper's formulas were lost in
the copy we could read): the index sequence does not depend on the data, and on the neighbouring dataset
only record ``i*`` differs. Let ``E`` be the event that ``i*`` is drawn before the stop;
``P(E) = q = ceil(n/2) / n`` by exchangeability. Given ``E^c`` both runs have the same
law; given any index sequence in ``E`` they differ only by one Gaussian mechanism, at
the first draw of ``i*``, on a gradient of L2 sensitivity ``2 L`` (``L = sup|f'| R``,
``R`` the public row-norm bound). By joint convexity of the hockey-stick divergence the
algorithm is ``(epsilon, q delta_G(epsilon))``-DP for every epsilon, where ``delta_G`` is
that single Gaussian mechanism's. Calibration ("tight", the only one): the smallest
``sigma`` with ``delta_G(epsilon) <= delta / q`` (PLD accountant, bisection). This
amplifies delta only; it claims no amplification of epsilon.

On a dask array (docs/scale.md) the rows are read in blocks: the index draws do not depend
on the data, so a stand-in of the noise source (``NoiseSource.lookahead``) reads the next
ones ahead, and the rows not seen yet among them, at most a row chunk's worth, are gathered
onto the client in one computation; the steps then run as in memory, with the same draws.
About ``n / (2 m)`` such reads for row chunks of ``m`` rows; half the records pass through
the client over the fit, never more than a block at a time. Where the stand-in does not foresee
the draws (a noise source that draws otherwise), the rows are read one at a time: slower,
the same model.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import scipy.sparse as sp

from ..accounting import Ledger, calibrate
from ..affine import is_shifted
from ..distributed import is_dask
from .base import Mechanism, Option, Plan
from .direct import call_direct

__all__ = ["MECHANISM", "one_pass_sgd", "usage_probability"]


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
    """Mirror steps with ``psi = ||w||_q^2 / 2``, ``q = 1 + 1/ln p`` (Arora, Marinov & Ullah 2020)."""

    def __init__(self, radius, p):
        self.radius = radius
        self.q = 1.0 + 1.0 / math.log(max(p, 3))
        self.q_dual = self.q / (self.q - 1.0)

    def step(self, w, eta, direction):
        theta = _mirror(w, self.q) - eta * direction
        return _project(_mirror(theta, self.q_dual), self.radius, self.q)


GEOMETRIES = {"euclidean": _Euclidean, "l1": _L1Mirror}


def _plan(info):
    o, n, p = info.options, info.n, info.p
    L = float(info.loss.lipschitz) * info.row_norm
    q = usage_probability(n)
    multiplier = _tight_multiplier(info.epsilon, info.delta / q)
    sigma = multiplier * 2.0 * L
    ledger = Ledger().gaussian(multiplier, 1.0)
    eta = o["learning_rate"]
    if eta is None:
        eta = o["radius"] / math.sqrt(n * math.log(2) * (L**2 + p * sigma**2))
    details = {"gaussian std": sigma, "sensitivity (L2)": 2.0 * L, "usage probability": q,
               "delta of the Gaussian step": info.delta / q, "learning rate": eta, "radius": o["radius"],
               "geometry": o["geometry"]}
    return Plan(ledger=ledger, accountant_epsilon=ledger.epsilon(info.delta / q), accountant=ledger.accountant,
                iterations=None, details=details, params={"L": L, "sigma": sigma, "eta": eta, "q": q})


def _release(noise, grad, q):
    """The step's noisy gradient (the same call for the run and for its stand-in, ``_Prefetched``)."""
    return noise.release(grad, "gaussian", q["sigma"], sensitivity=2.0 * q["L"], name="per-sample gradient",
                         sampling=("disjoint", q["q"]))


class _Prefetched:
    """Rows of a dask array, gathered a block at a time in the order the run will read them (module docstring).

    Called with the index just drawn (``seen`` already marks it), it returns the row; on a miss it gathers that
    row and the unseen ones among the next draws of a stand-in of ``noise``, at most ``block`` in all. A miss
    while rows read ahead are left means the stand-in does not foresee the draws: one row at a time from then on.
    """

    def __init__(self, X, noise, q, seen):
        self.X, self.noise, self.q, self.seen = X, noise, q, seen
        self.block = max(X.chunks[0])
        self.rows = {}

    def __call__(self, i):
        if i not in self.rows:
            if self.rows:  # rows read ahead were not drawn: the stand-in does not foresee this source's draws
                self.rows, self.block = {}, 1
            self._gather(self._ahead(i))
        return self.rows.pop(i)

    def _ahead(self, i):
        """``i`` and the unseen indices among the next draws, in at most ``4 block`` steps."""
        stand_in, n, p = self.noise.lookahead(), self.X.shape[0], self.X.shape[1]
        wanted = {i}
        for _ in range(4 * self.block):
            if len(wanted) >= self.block:
                break
            _release(stand_in, np.zeros(p), self.q)  # the step of ``i``, then the next draw
            j = int(stand_in.rng.integers(n))
            if not self.seen[j]:
                wanted.add(j)
        return np.array(sorted(wanted))

    def _gather(self, indices):
        self.rows.update(zip(indices.tolist(), np.asarray(self.X[indices].compute())))


def _reader(X, noise, q, seen):
    """``i -> x_i`` as a dense row: in memory, or ``_Prefetched`` from a dask array."""
    if is_dask(X):
        return _Prefetched(X, noise, q, seen)
    if sp.issparse(X) or is_shifted(X):
        return lambda i: X[i].toarray().ravel()
    return lambda i: X[i]


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    n, p = design.n, design.p
    eta = q["eta"]
    steps = GEOMETRIES[info.options["geometry"]](info.options["radius"], p)
    X = sp.csr_matrix(design.X) if sp.issparse(design.X) else design.X
    y, loss, penalty = design.y, info.loss, info.penalty
    seen = np.zeros(n, dtype=bool)
    row = _reader(X, noise, q, seen)
    n_seen, target = 0, math.ceil(n / 2)
    w, total, t = np.zeros(p), np.zeros(p), 0
    while n_seen < target:
        i = int(noise.rng.integers(n))
        grad = np.zeros(p)
        if not seen[i]:
            seen[i], n_seen = True, n_seen + 1
            xi = row(i)
            grad = float(loss.bounded_derivative(np.array([xi @ w]), y[i:i + 1])[0]) * xi
        step = _release(noise, grad, q)
        w = steps.step(w, eta, step)
        if penalty is not None:
            w = penalty.prox(w, eta)
        total += w
        t += 1
        if callback is not None:
            callback(t - 1, w)
    plan.iterations = t  # random, independent of the data (the index sequence)
    return total / t


MECHANISM = Mechanism(
    name="one-pass-sgd",
    title="one-pass noisy SGD (Arora, Marinov & Ullah 2020, Algorithm 1)",
    citation=("Arora, Marinov & Ullah, 'Private stochastic convex optimization: efficient algorithms for "
              "non-smooth objectives', arXiv:2002.09609, 2020, Algorithm 1; privacy by joint convexity of the "
              "hockey-stick divergence (derived in docs/privacy.md)"),
    summary="one pass of noisy projected SGD; works for non-smooth losses (hinge); steps are random",
    options=(
        Option("radius", "float", 10.0, "radius of the ball of models W", low=0.0, low_open=True),
        Option("learning_rate", "float", None, "step size", low=0.0, low_open=True, high=1e6,
               default_help="radius / sqrt(n ln 2 (L^2 + p sigma^2)), the paper's Corollary 1"),
        Option("geometry", "choice", "euclidean", "projected SGD in the L2 ball, or L1 mirror descent",
               choices=tuple(GEOMETRIES)),
    ),
    calibrations=("tight",),
    loss_needs=("Lipschitz",),
    penalty_needs=("prox",),  # or None
    plan=_plan, run=_run,
    dask=True,
)


def one_pass_sgd(X, y, loss, penalty, feature_bounds, *, epsilon, delta, calibration="tight", noise,
                 callback=None, row_norm=None, **options):
    """One-pass noisy projected SGD of Arora, Marinov & Ullah 2020 (module docstring).

    ``fit_mechanism`` on ``BoundedDesign.from_arrays(X, y, feature_bounds, row_norm)``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit with a bounded derivative (hinge, logistic, Huber, clipped squared)
    penalty : Penalty with ``prox``
    feature_bounds : ndarray of shape (p,)
    epsilon : float > 0
    delta : float in (0, 1)
    calibration : {"tight"}
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
    row_norm : float or None
    **options
        ``radius`` (of W, default 10), ``learning_rate`` (default: the paper's
        Corollary 1 step), ``geometry`` ("euclidean" or "l1"). The number of steps is
        random (the stop rule).

    Returns
    -------
    w : ndarray of shape (p,)
        The average iterate.
    report : PrivacyReport
    """
    return call_direct(MECHANISM, X, y, loss, penalty, feature_bounds, epsilon=epsilon, delta=delta,
                       calibration=calibration, noise=noise, callback=callback, row_norm=row_norm, options=options)
