"""Frank-Wolfe on the dual, non-private and private (Kumar & Deisenroth 2019, Algorithms 1 and 2).

Source: Kumar & Deisenroth, "Differentially Private Empirical Risk Minimization with
Sparsity-Inducing Norms", 2019: Eq. 12-13 (dual and primal recovery), Eq. 21,
Algorithm 1 (Frank-Wolfe), Algorithm 2 (private Frank-Wolfe), Theorems 3-4; after
Bach 2013 (FW on the dual of a norm-regularized problem) and Talwar, Thakurta & Zhang
2015 (private FW over a polytope). The privacy derivation is in
``docs/mechanisms/dual_fw.md``.

Problem. ``min_w L(w) + alpha Omega(w)`` with ``L(w) = (1/n) sum_i f(<w, x_i>, y_i) +
(mu/2)||w||^2``, ``mu > 0``. Its dual (Eq. 12 / 21, with ``K = alpha |P|(F)``, the
paper's ``(lambda/n)|P|(F)``) is

    max_{s in K} D(s),    D(s) = -L*(-s) = min_w L(w) + <s, w> = L(w(s)) + <s, w(s)>,

whose gradient is the primal response ``w(s) = argmin_w L(w) + <s, w>`` (unique since
``mu > 0``). Frank-Wolfe (Algorithm 1) picks ``v_t = argmax_{v in K} <v, w(s_{t-1})>``
(the greedy vertex, ``alpha * penalty.lmo_dual_ball``) and sets
``s_t = (1 - rho_t) s_{t-1} + rho_t v_t`` with the paper's ``rho_t = 1/(t+2)`` (or the
standard ``2/(t+2)``). The primal is recovered by Eq. 13, ``w = w(s_T)``, and
``<v_t - s, w(s)> = alpha Omega(w(s)) - <s, w(s)>`` is both the FW gap and the exact
primal-dual gap ``P(w(s)) - D(s)``.

Private FW (Algorithm 2): the LMO becomes a private selection of the vertex. Replacing
one record moves ``w(s)`` by at most ``Delta_w = 2 L / (n mu)`` in L2 (``L = sup|f'| R``,
``R`` the public row-norm bound), so the vertex scores ``<v, w(s)>`` move by at most
``Delta_u = r_K Delta_w``, ``r_K = max_v ||v||_2``. Selections (``selection_structure``):

- ``"exponential"`` (where the vertex set is a product of "signed coordinate" factors:
  ``F = |A|`` (L_inf-ball K), ``F = min(|A|, 1)`` (L1-ball K, 2p vertices), disjoint
  ``GroupCount`` (a product of L1 balls)): the exponential mechanism over ALL vertices,
  ``P(v) ~ exp(<v, w> / beta)``, ``beta = m Delta_u``, sampled exactly by independent
  Gumbel-max draws in each factor (the law factorizes; ``product_probabilities``). One
  ``2 Delta_u / beta = 2 / m``-DP exponential mechanism per step.
- ``"gaussian"`` (any norm with ``lmo_dual_ball``): ``w(s) + N(0, (m Delta_w)^2 I)``, then
  the exact greedy LMO (post-processing). A Gaussian mechanism per step.
- ``"laplace"`` (``calibration="paper"``): the paper's report-noisy-min with Laplace noise on
  every vertex score, over an explicitly enumerated vertex set (at most ``MAX_ENUMERATED``).

Release. ``s_T`` is a post-processing of the selections, but the paper's primal recovery
``w(s_T)`` reads the data again: it is released as ``w(s_T) + N(0, (m Delta_w)^2 I)``, one
more Gaussian event in the ledger (``release="dual"`` returns ``s_T`` instead).

Calibration. ``"tight"``: the smallest multiplier ``m`` whose ``T`` selections and the
release compose to (epsilon, delta) (``accounting.calibrate``). ``"paper"``: Algorithm 2's
Laplace scale ``b = L Gamma_K sqrt(8 T log(1/delta)) / (n epsilon)`` (``Gamma_K = 2 r_K``,
the Euclidean diameter), accounted as a non-monotone report-noisy-max (``2 Delta_u / b``-DP
per step); it lacks the ``1/mu`` of ``Delta_w``, so for ``mu < 1`` it under-noises and
the report says so (``PrivacyCalibrationWarning``).

On a dask array (docs/scale.md) every primal response is found on the client by L-BFGS
(warm-started from the previous response), each evaluation one pass over the chunks, and
stops at the same certified ``||grad|| <= mu tol``; should it not certify, V-FISTA runs for
the public iteration count as in memory, one pass a step. The selections and the release
are drawn on the client as in memory.
"""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from .. import solvers
from ..accounting import Ledger, calibrate
from ..affine import gram
from ..distributed import MeanLoss, is_dask
from ..noise import argmax_per_factor
from ..norms import Cardinality, GroupCount, Nonempty, SubmodularNorm, require
from ._common import check_n_iter
from .base import Mechanism, Option, Plan, n_iter_option, penalty_capabilities
from .direct import call_direct
from .output_perturbation import zero_loss_bound

__all__ = [
    "CALIBRATIONS",
    "MAX_ENUMERATED",
    "MECHANISM",
    "SELECTIONS",
    "STEPS",
    "DualFWResult",
    "PrimalResponse",
    "VertexStructure",
    "dual_frank_wolfe",
    "dual_fw",
    "enumerate_vertices",
    "paper_laplace_scale",
    "product_probabilities",
    "response_sensitivity",
    "sample_vertex",
    "score_sensitivity",
    "selection_structure",
    "theorem4_bound",
    "theorem4_iterations",
]

CALIBRATIONS = ("tight", "paper")
SELECTIONS = ("auto", "exponential", "gaussian")
STEPS = ("paper", "standard")
RELEASES = ("primal", "dual")
# Largest vertex set the "paper" calibration enumerates (Laplace noise on every vertex).
MAX_ENUMERATED = 4096
SOURCE = ("Kumar & Deisenroth, 'Differentially private empirical risk minimization with sparsity-inducing norms', "
          "2019, Algorithms 1-2, Eq. 12-13, 21, Theorems 3-4; sensitivity re-derived in docs/mechanisms/dual_fw.md; "
          "exponential mechanism (McSherry & Talwar, FOCS 2007) as eps^2/8-zCDP (Cesar & Rogers, ALT 2021); "
          "composed by PLD/RDP (dp-accounting)")


MU_OPTION = Option("mu", "float", 1e-2, "ridge strength (mu/2)||w||^2 that bounds the sensitivity of w(s)",
                   low=0.0, low_open=True)


def _check_penalty(penalty):
    require(penalty, ("lmo_dual_ball", "dual_norm", "value"), "Frank-Wolfe on the dual")
    alpha = getattr(penalty, "alpha", None)
    if alpha is None or not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"Frank-Wolfe on the dual needs a penalty strength alpha > 0, got {alpha!r}")
    return float(alpha)


def _check_smooth(loss):
    if not np.isfinite(loss.smoothness):
        raise ValueError(f"Frank-Wolfe on the dual needs a smooth loss (the primal response is computed by a "
                         f"smooth solver); the {loss.name} loss is not smooth")


def _step(rule, t):
    """``rho_t`` for ``t = 1, 2, ...``: the paper's ``1/(t+2)`` or the standard ``2/(t+2)``."""
    return 1.0 / (t + 2) if rule == "paper" else 2.0 / (t + 2)


# --------------------------------------------------------------------------- primal response


class PrimalResponse:
    """``w(s) = argmin_w (1/n) sum_i f(<w, x_i>, y_i) + (mu/2)||w||^2 + <s, w>``.

    Squared loss (unclipped): the normal equations ``(X^T X/n + mu I) w = X^T y/n - s``
    with one cached Cholesky factorization. Otherwise (non-private) L-BFGS (scipy)
    warm-started from the previous response, stopped when ``||grad||_2 <= mu * tol``,
    which certifies ``||w - w(s)||_2 <= tol`` by strong convexity. Private fits
    (``smoothness`` given) use V-FISTA (``solvers.accelerated_proximal_gradient``) with the
    public step ``1 / smoothness`` for the public number of iterations after which its
    linear rate guarantees ``||w - w(s)|| <= tol`` (initial suboptimality at most
    ``max_y f(0, y) + ||s||^2 / (2 mu)``), stopping earlier once ``||grad|| <= mu tol``:
    no outcome of the solve depends on the data beyond ``w`` itself.

    Parameters
    ----------
    X, y, loss, mu
    tol : float > 0
        L2 distance to the exact response.
    private : bool
        Use the bounded per-sample derivative (``loss.bounded_datafit()``: a clipped
        squared loss is then the Huber loss with threshold ``clip``).
    smoothness : float or None
        Public bound on the smoothness of ``L`` (private fits).
    """

    def __init__(self, X, y, loss, mu, tol, private=False, smoothness=None):
        self.X, self.y, self.mu, self.tol = X, np.asarray(y, dtype=float), float(mu), float(tol)
        self.n, self.p = X.shape
        self.loss = loss.bounded_datafit() if private else loss
        self.smoothness = smoothness
        self.closed_form = self.loss.quadratic
        self.worst_gradient = 0.0
        self._w = np.zeros(self.p)
        if self.closed_form:
            from scipy.linalg import cho_factor  # here, as cho_solve and minimize: slow imports, rarely needed

            G = gram(X) / self.n
            self._chol = cho_factor(G + self.mu * np.eye(self.p))
            self._rhs = np.asarray(X.T @ self.y).ravel() / self.n

    def gradient(self, w, s):
        """Gradient of ``L(w) + <s, w>``."""
        return self.X.T @ self.loss.derivative(self.X @ w, self.y) / self.n + self.mu * w + s

    def value(self, w, s):
        """``L(w) + <s, w>``; at ``w = w(s)`` this is ``D(s) = -L*(-s)``."""
        return self.loss.objective(self.X @ w, self.y) + 0.5 * self.mu * float(w @ w) + float(s @ w)

    def __call__(self, s):
        s = np.asarray(s, dtype=float)
        if self.closed_form:
            from scipy.linalg import cho_solve

            w = cho_solve(self._chol, self._rhs - s)
        elif self.smoothness is not None:
            w = self._public_iterations(s)
        else:
            w = self._lbfgs(s)
        self._w = w
        return w.copy()

    def _iterations(self, s):
        """The public number of V-FISTA iterations after which ``||w - w(s)|| <= tol`` (class docstring)."""
        initial = 2.0 * (zero_loss_bound(self.loss) + float(s @ s) / (2.0 * self.mu))
        return solvers.linear_rate_iterations(self.smoothness, self.mu, initial, self.mu * self.tol**2 / 2.0)

    def _public_iterations(self, s):
        target = self.mu * self.tol
        w, _ = solvers.accelerated_proximal_gradient(
            lambda w: self.gradient(w, s), lambda v, step: v, np.zeros(self.p), 1.0 / self.smoothness,
            self._iterations(s), strong_convexity=self.mu,
            stop=lambda w: np.linalg.norm(self.gradient(w, s)) <= target)
        return w

    def _value_and_gradient(self, w, s):
        """``L(w) + <s, w>`` and its gradient, with one product by ``X`` and one by ``X^T``."""
        z = self.X @ w
        g = self.X.T @ self.loss.derivative(z, self.y) / self.n + self.mu * w + s
        return self.loss.objective(z, self.y) + 0.5 * self.mu * float(w @ w) + float(s @ w), g

    def _lbfgs(self, s, maxfun=15_000):
        from scipy.optimize import minimize

        target = self.mu * self.tol
        w = self._w
        for _ in range(5):  # restarts: L-BFGS-B may stop on a line-search failure near rounding level
            res = minimize(self._value_and_gradient, w, args=(s,), jac=True, method="L-BFGS-B",
                           options={"maxiter": 10_000, "maxfun": maxfun,
                                    "gtol": target / math.sqrt(self.p), "ftol": 0.0, "maxcor": 20})
            w = res.x
            gnorm = float(np.linalg.norm(self.gradient(w, s)))
            if gnorm <= target:
                break
        self.worst_gradient = max(self.worst_gradient, gnorm)
        return w


class _PassResponse(PrimalResponse):
    """``PrimalResponse`` of a private fit on a dask array: ``L`` and its gradient at a point from one pass over the
    chunks (``distributed.MeanLoss``); each response by L-BFGS from the previous one (each of its runs at most
    the public iteration count of evaluations), certified by ``||grad|| <= mu tol``, else the public iterations
    (module docstring)."""

    def __init__(self, X, y, loss, mu, tol, private=False, smoothness=None):
        super().__init__(X, y, loss, mu, tol, private, smoothness)
        self.mean_loss = MeanLoss(X, self.y, self.loss)

    def gradient(self, w, s):
        return self.mean_loss(w)[1] + self.mu * w + s

    def value(self, w, s):
        return self.mean_loss(w)[0] + 0.5 * self.mu * float(w @ w) + float(s @ w)

    def _value_and_gradient(self, w, s):
        return self.value(w, s), self.gradient(w, s)

    def _public_iterations(self, s):
        w = self._lbfgs(s, maxfun=self._iterations(s))
        if np.linalg.norm(self.gradient(w, s)) <= self.mu * self.tol:
            return w
        return super()._public_iterations(s)


# --------------------------------------------------------------------------- non-private Algorithm 1


@dataclass
class DualFWResult:
    """Result of ``dual_frank_wolfe``.

    Attributes
    ----------
    coef : ndarray of shape (p,)
        Primal recovery ``w(s_T)`` (Eq. 13).
    dual : ndarray of shape (p,)
        The dual iterate ``s_T`` in ``K``.
    gap : float
        ``alpha Omega(w(s_T)) - <s_T, w(s_T)>``: the primal-dual gap ``P(w(s_T)) - D(s_T)``
        (exact up to the accuracy of the primal response).
    dual_value : float
        ``D(s_T)``.
    gaps : list of float
        The gap at ``s_0, ..., s_T``.
    """

    coef: np.ndarray
    dual: np.ndarray
    gap: float
    dual_value: float
    gaps: list = field(default_factory=list)


def dual_frank_wolfe(X, y, loss, penalty, *, mu, n_iter=200, step="paper", tol=0.0, inner_tol=1e-10,
                     callback=None):
    """Frank-Wolfe on the dual ``max_{s in alpha |P|(F)} -L*(-s)`` (Kumar & Deisenroth 2019, Algorithm 1).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : smooth Datafit
    penalty : a norm with ``lmo_dual_ball`` and ``dual_norm`` (SubmodularNorm, GroupLasso)
    mu : float > 0
        Ridge term of ``L``.
    n_iter : int >= 1
    step : {"paper", "standard"}
        ``rho_t = 1/(t+2)`` (Algorithm 1 as printed; ``O(log T / T)``) or ``2/(t+2)``
        (Jaggi 2013; ``O(1/T)``).
    tol : float >= 0
        Stop early when the primal-dual gap is ``<= tol``.
    inner_tol : float > 0
        Certified L2 accuracy of the primal response (L-BFGS); unused for the squared loss.
    callback : callable (t, s, w) -> None, optional

    Returns
    -------
    DualFWResult
    """
    mu = MU_OPTION.check(mu, "dual-fw")
    alpha = _check_penalty(penalty)
    _check_smooth(loss)
    check_n_iter(n_iter)
    if step not in STEPS:
        raise ValueError(f"unknown step {step!r}; allowed: {list(STEPS)}")
    resp = PrimalResponse(X, y, loss, mu, inner_tol)
    s = np.zeros(X.shape[1])
    w = resp(s)
    gaps = [penalty.value(w) - float(s @ w)]
    for t in range(1, n_iter + 1):
        if gaps[-1] <= tol:
            break
        v = alpha * penalty.lmo_dual_ball(w)
        rho = _step(step, t)
        s = (1.0 - rho) * s + rho * v
        w = resp(s)
        gaps.append(penalty.value(w) - float(s @ w))
        if callback is not None:
            callback(t, s, w)
    return DualFWResult(w, s, gaps[-1], resp.value(w, s), gaps)


# --------------------------------------------------------------------------- vertex structures


@dataclass(frozen=True)
class VertexStructure:
    """Vertices of ``K`` as a product of factors of signed scaled unit vectors.

    Factor ``f`` holds the coordinates ``coords[factor == f]``; its vertices are
    ``+- radius[j] e_j`` for ``j`` in it, and a vertex of ``K`` takes one vertex from each
    factor (coordinates outside every factor are 0: unpenalized).

    Attributes
    ----------
    coords : ndarray of int
    factor : ndarray of int, same shape (factor index, 0..n_factors-1)
    radius : ndarray of float, same shape
    n_features : int
    kind : str
    """

    coords: np.ndarray
    factor: np.ndarray
    radius: np.ndarray
    n_features: int
    kind: str

    @property
    def n_factors(self):
        return int(self.factor.max()) + 1 if self.factor.size else 0

    @property
    def log_n_vertices(self):
        """``log |S|``: ``sum_f log(2 |f|)``."""
        return float(np.sum(np.log(2.0 * np.bincount(self.factor))))

    @property
    def max_norm(self):
        """``r_K = max_v ||v||_2 = sqrt(sum_f max_{j in f} radius_j^2)``."""
        best = np.zeros(self.n_factors)
        np.maximum.at(best, self.factor, self.radius)
        return float(np.sqrt(np.sum(best**2)))

    def max_score_change(self, d):
        """``max_v |<v, d>| = sum_f max_{j in f} radius_j |d_j|`` (exact, by the product form)."""
        best = np.zeros(self.n_factors)
        np.maximum.at(best, self.factor, self.radius * np.abs(np.asarray(d)[self.coords]))
        return float(best.sum())


def selection_structure(penalty):
    """The product structure of ``K = alpha |P|(F)`` for exact exponential sampling, or None.

    - ``F = |A|`` (L1 norm): ``K`` is the L_inf ball, one factor per coordinate, ``2^p`` vertices;
    - ``F = min(|A|, 1)`` (L_inf norm): ``K`` is the L1 ball, one factor, ``2p`` vertices;
    - disjoint ``GroupCount`` (L1/L_inf group norm): ``K = prod_g {||s_g||_1 <= alpha d_g}``,
      one factor per group;
    - anything else (overlapping groups, other submodular F, group Lasso): None.
    """
    if not isinstance(penalty, SubmodularNorm):
        return None
    F, alpha = penalty.F, penalty.alpha
    pen = np.setdiff1d(np.arange(penalty.n_features), penalty.unpenalized)
    if isinstance(F, Cardinality):
        return VertexStructure(pen, np.arange(F.p), np.full(F.p, alpha), penalty.n_features, "L_inf ball")
    if isinstance(F, Nonempty):
        return VertexStructure(pen, np.zeros(F.p, dtype=int), np.full(F.p, alpha), penalty.n_features, "L1 ball")
    if isinstance(F, GroupCount) and F.disjoint:
        factor = np.empty(F.p, dtype=int)
        radius = np.empty(F.p)
        for g, (idx, d) in enumerate(zip(F.groups, F.weights)):
            factor[idx], radius[idx] = g, alpha * d
        return VertexStructure(pen, factor, radius, penalty.n_features, "product of L1 balls (disjoint groups)")
    return None


def _candidate_scores(w, structure):
    """Scores ``radius_j * w_j`` of the ``+e_j`` candidates (the ``-e_j`` ones are the negatives)."""
    return structure.radius * np.asarray(w, dtype=float)[structure.coords]


def product_probabilities(w, structure, beta):
    """Per-factor law of the exponential mechanism ``P(v) ~ exp(<v, w> / beta)`` over all vertices.

    Since ``<v, w> = sum_f <v_f, w_f>``, ``P(v) = prod_f exp(<v_f, w_f>/beta) / Z_f``: the
    factors are independent, factor ``f`` picking ``sigma e_j`` (``j`` in ``f``,
    ``sigma = +-1``) with probability ``exp(sigma radius_j w_j / beta) / Z_f``.

    Returns
    -------
    plus, minus : ndarray (aligned with ``structure.coords``)
        Probability that factor ``factor[k]`` picks ``+e_{coords[k]}`` (resp. ``-``).
    """
    a = _candidate_scores(w, structure) / beta
    top = np.zeros(structure.n_factors)
    np.maximum.at(top, structure.factor, np.abs(a))
    plus, minus = np.exp(a - top[structure.factor]), np.exp(-a - top[structure.factor])
    Z = np.bincount(structure.factor, weights=plus + minus, minlength=structure.n_factors)
    return plus / Z[structure.factor], minus / Z[structure.factor]


def _vertex(structure, chosen, signs):
    v = np.zeros(structure.n_features)
    v[structure.coords[chosen]] = signs * structure.radius[chosen]
    return v


def sample_vertex(w, structure, beta, noise, sensitivity=None):
    """One draw of the exponential mechanism over all vertices, by Gumbel-max in each factor
    (``NoiseSource.select_product``).

    ``beta = 0`` gives the exact maximizer (the non-private LMO). ``sensitivity``: the
    declared bound on a vertex score's change (``score_sensitivity``), for the audit.

    Returns
    -------
    ndarray of shape (n_features,)
    """
    a = _candidate_scores(w, structure)
    m = a.size
    cand = np.concatenate([a, -a])
    fac = np.concatenate([structure.factor, structure.factor])
    if beta > 0:
        first = noise.select_product(cand, fac, beta, sensitivity=sensitivity, name="vertex selection")
    else:
        first = argmax_per_factor(cand, fac)
    chosen = first % m
    signs = np.where(first < m, 1.0, -1.0)
    return _vertex(structure, chosen, signs)


def enumerate_vertices(structure, limit=MAX_ENUMERATED):
    """All vertices of ``K`` as rows of an array, or ValueError past ``limit``."""
    if structure.log_n_vertices > math.log(limit) + 1e-9:
        raise ValueError(f"K has {math.exp(structure.log_n_vertices):.3g} vertices, more than the {limit} that "
                         "can be enumerated")
    per_factor = [[(k, sg) for k in np.flatnonzero(structure.factor == f) for sg in (1.0, -1.0)]
                  for f in range(structure.n_factors)]
    rows = []
    for combo in itertools.product(*per_factor):
        chosen = np.array([k for k, _ in combo], dtype=int)
        rows.append(_vertex(structure, chosen, np.array([sg for _, sg in combo])))
    return np.array(rows)


# --------------------------------------------------------------------------- privacy constants


def response_sensitivity(lipschitz, row_norm, n, mu):
    """L2 sensitivity of ``w(s)`` under replace-one: ``2 sup|f'| R / (n mu)`` (docs/mechanisms/dual_fw.md)."""
    return 2.0 * lipschitz * row_norm / (n * mu)


def score_sensitivity(structure, delta_w):
    """Sensitivity of the scores ``<v, w(s)>``: ``max_v ||v||_2 * Delta_w`` (``r_K Delta_w``)."""
    return structure.max_norm * delta_w


def paper_laplace_scale(lipschitz_L, diameter, n, epsilon, delta, n_iter):
    """Algorithm 2's Laplace scale as printed: ``L Gamma_K sqrt(8 T log(1/delta)) / (n epsilon)``."""
    return lipschitz_L * diameter * math.sqrt(8.0 * n_iter * math.log(1.0 / delta)) / (n * epsilon)


def theorem4_iterations(n, epsilon, diameter, lipschitz_L, gaussian_width):
    """Kumar & Deisenroth (2019) Theorem 4: ``T = Gamma_K^{4/3} (n epsilon)^{2/3} / (L G_K)^{2/3}``, at least 1."""
    T = diameter ** (4.0 / 3.0) * (n * epsilon) ** (2.0 / 3.0) / (lipschitz_L * gaussian_width) ** (2.0 / 3.0)
    return max(1, int(math.ceil(T)))


def theorem4_bound(n, epsilon, delta, diameter, lipschitz_L, gaussian_width, log_n_vertices):
    """Kumar & Deisenroth (2019) Theorem 4's excess dual risk, its O(.) taken with constant 1:

    ``Gamma_K^{2/3} (L G_K)^{2/3} log(n |S|) sqrt(log(1/delta)) / (n epsilon)^{2/3}``
    (``log(n |S|) = log n + log |S|``; ``log |S| = p log 2`` for the L_inf ball). The theorem
    applies Talwar, Thakurta & Zhang's Theorem 5.5 to the dual; the constant is not given.
    """
    return (diameter ** (2.0 / 3.0) * (lipschitz_L * gaussian_width) ** (2.0 / 3.0)
            * (math.log(n) + log_n_vertices) * math.sqrt(math.log(1.0 / delta)) / (n * epsilon) ** (2.0 / 3.0))


def _ledger(m, kind, n_iter, release, c_laplace=None):
    """Events at noise multiplier ``m``: ``T`` selections, then the primal release.

    ``kind``: "exponential" (``2/m``-DP each), "gaussian" (noise/sensitivity ``m``) or
    "laplace" (report-noisy-max, ``c_laplace``-DP each, not scaled by ``m``).
    """
    ledger = Ledger()
    if kind == "gaussian":
        # k Gaussian mechanisms of multiplier m compose exactly into one of multiplier
        # m / sqrt(k) (mu-GDP composition, Dong, Roth & Su 2022, Cor. 3.3): one PLD, not k.
        k = n_iter + (release == "primal")
        return ledger.gaussian(m / math.sqrt(k), 1.0)
    if kind == "exponential":
        ledger.exponential(2.0 / m, n_iter)
    else:
        ledger.pure(c_laplace, n_iter)
    if release == "primal":
        ledger.gaussian(m, 1.0)
    return ledger


@functools.lru_cache(maxsize=256)
def _tight_multiplier(kind, n_iter, release, epsilon, delta, rho=None):
    m0 = math.sqrt(max(n_iter, 1)) / epsilon
    return calibrate(lambda m: _ledger(m, kind, n_iter, release), epsilon, delta, m0, rho=rho)


# --------------------------------------------------------------------------- private Algorithm 2


def l1_as_cardinality(penalty):
    """A weighted L1 penalty with unit weights as ``SubmodularNorm(Cardinality)``: the L1 norm
    is the norm of the cardinality function (Bach 2013), whose dual ball has an LMO."""
    caps = penalty_capabilities(penalty)
    if "lmo_dual_ball" in caps or "l1 ball" not in caps:
        return penalty
    d = np.asarray(penalty.weights, dtype=float) if penalty.weights is not None else None
    if d is None:
        raise ValueError("mechanism dual-fw: an L1 penalty needs its weights (n_features) to become the norm of "
                         "the cardinality function")
    pen = np.flatnonzero(d > 0)
    if not np.all(d[pen] == 1.0):
        raise ValueError("mechanism dual-fw: a weighted L1 penalty is not the norm of a cardinality function; "
                         "use unit weights")
    return SubmodularNorm(Cardinality(pen.size), penalty.alpha, unpenalized=np.flatnonzero(d == 0))


def _plan(info):
    o, n = info.options, info.n
    penalty = l1_as_cardinality(info.penalty)
    caps = penalty_capabilities(penalty)
    if "lmo_dual_ball" not in caps:
        raise ValueError(f"mechanism dual-fw needs a norm with a linear maximization oracle on its dual ball "
                         f"(L1, L_inf, group norms, submodular norms); {type(info.penalty).__name__} has none")
    alpha = _check_penalty(penalty)
    mu, n_iter, release, R = o["mu"], o["n_iter"], o["release"], info.row_norm
    c = float(info.loss.lipschitz)
    delta_exact = response_sensitivity(c, R, n, mu)
    r_inner = 1e-4 * delta_exact if o["inner_tol"] is None else o["inner_tol"]
    solver_loss = info.loss.bounded_datafit()
    closed_form = solver_loss.quadratic
    delta_w = delta_exact + (0.0 if closed_form else 2.0 * r_inner)
    structure = selection_structure(penalty)
    if info.calibration == "paper":
        if structure is None:
            raise ValueError("mechanism dual-fw: calibration='paper' puts Laplace noise on every vertex score: it "
                             "needs an enumerable vertex set (L1, L_inf or disjoint group L_inf norms); use 'tight'")
        if structure.log_n_vertices > math.log(MAX_ENUMERATED) + 1e-9:
            raise ValueError(f"mechanism dual-fw: calibration='paper' enumerates the vertices of K, here "
                             f"{math.exp(structure.log_n_vertices):.3g}, more than {MAX_ENUMERATED}; use 'tight'")
        kind = "laplace"
        delta_u = score_sensitivity(structure, delta_w)
        b = paper_laplace_scale(c * R, 2.0 * structure.max_norm, n, info.epsilon, info.delta, n_iter)
        m = b / delta_u
        c_laplace = 2.0 * delta_u / b  # non-monotone report-noisy-max
        ledger = _ledger(m, kind, n_iter, release, c_laplace)
    else:
        if o["selection"] == "exponential" and structure is None:
            raise ValueError(f"mechanism dual-fw: exact exponential sampling needs a product vertex structure (L1, "
                             f"L_inf, disjoint group L_inf norms); {type(penalty).__name__} has none: use "
                             "selection='gaussian'")
        kind = "exponential" if (o["selection"] != "gaussian" and structure is not None) else "gaussian"
        m = _tight_multiplier(kind, n_iter, release, info.epsilon, info.delta, info.zcdp)
        ledger = _ledger(m, kind, n_iter, release)
        delta_u = score_sensitivity(structure, delta_w) if kind == "exponential" else None
        b = c_laplace = None
    sigma = m * delta_w
    details = {
        "selection": {"exponential": "exponential mechanism over all vertices (Gumbel-max per factor)",
                      "gaussian": "Gaussian noise on w(s), then the exact greedy LMO",
                      "laplace": "Laplace report-noisy-min over the enumerated vertices (the paper's Alg. 2)"}[kind],
        "vertex set": structure.kind if structure is not None else "not enumerable",
        "noise multiplier": float(m),
        "response sensitivity": float(delta_w),
        "mu": mu,
        "release": ("w(s_T) + Gaussian noise" if release == "primal" else "s_T (dual iterate)"),
        "release sigma": float(sigma) if release == "primal" else 0.0,
    }
    if kind == "exponential":
        details.update({"score sensitivity": float(delta_u), "gumbel scale": float(m * delta_u),
                        "epsilon of one selection": 2.0 / m})
    elif kind == "gaussian":
        details.update({"selection sigma": float(sigma)})
    else:
        details.update({"score sensitivity": float(delta_u), "laplace scale": float(b),
                        "epsilon of one selection": float(c_laplace)})
    params = {"penalty": penalty, "alpha": alpha, "kind": kind, "structure": structure, "m": m, "sigma": sigma,
              "delta_w": delta_w, "delta_u": delta_u, "b": b, "r_inner": r_inner,
              "smoothness": float(solver_loss.smoothness) * R**2 + mu}
    return Plan(ledger=ledger, accountant_epsilon=ledger.epsilon(info.delta), accountant=ledger.accountant,
                iterations=n_iter, details=details, params=params,
                miss_reason=f": its Laplace scale lacks the 1/mu (mu={mu:g}) of the sensitivity of w(s) and the "
                            "factor 2 of a non-monotone report-noisy-max")


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    o, p = info.options, design.p
    penalty, structure, kind, sigma = q["penalty"], q["structure"], q["kind"], q["sigma"]
    response = _PassResponse if is_dask(design.X) else PrimalResponse
    resp = response(design.X, design.y, info.loss, o["mu"], q["r_inner"], private=True, smoothness=q["smoothness"])
    vertices = enumerate_vertices(structure) if kind == "laplace" else None
    s = np.zeros(p)
    for t in range(1, o["n_iter"] + 1):
        w = noise.check(resp(s), sensitivity=q["delta_w"], name="primal response w(s)")
        if kind == "exponential":
            v = sample_vertex(w, structure, q["m"] * q["delta_u"], noise, q["delta_u"])
        elif kind == "gaussian":
            w = noise.release(w, "gaussian", sigma, sensitivity=q["delta_w"], name="primal response w(s)")
            v = q["alpha"] * penalty.lmo_dual_ball(w)
        else:
            v = vertices[noise.select(vertices @ w, "laplace", q["b"], sensitivity=q["delta_u"],
                                      name="vertex scores")]
        rho = _step(o["step"], t)
        s = (1.0 - rho) * s + rho * v
        if callback is not None:
            callback(t, s.copy())
    if o["release"] == "dual":
        return s.copy()
    return noise.release(resp(s), "gaussian", sigma, sensitivity=q["delta_w"], name="primal recovery w(s_T)")


MECHANISM = Mechanism(
    name="dual-fw",
    title="private Frank-Wolfe on the dual (Kumar & Deisenroth 2019, Algorithm 2)",
    citation=SOURCE,
    summary="Frank-Wolfe on the dual of a norm-regularized ridge problem (L1, L_inf, group and submodular norms)",
    options=(
        n_iter_option(20, "number of Frank-Wolfe steps T"),
        MU_OPTION,
        Option("selection", "choice", "auto", "private vertex selection", choices=SELECTIONS),
        Option("step", "choice", "paper", "step rho_t: the paper's 1/(t+2) or the standard 2/(t+2)",
               choices=STEPS),
        Option("release", "choice", "primal", "release w(s_T) + Gaussian noise, or the dual iterate s_T",
               choices=RELEASES),
        Option("inner_tol", "float", None, "L2 accuracy of the primal responses", low=0.0, low_open=True,
               default_help="1e-4 of the response sensitivity"),
    ),
    calibrations=CALIBRATIONS,
    loss_needs=("smooth", "Lipschitz"),
    penalty_needs=("value",),
    plan=_plan, run=_run,
    zcdp_calibration=True,
    dask=True,
)


def dual_fw(X, y, loss, penalty, feature_bounds, *, epsilon, delta, calibration="tight", noise, callback=None,
            row_norm=None, **options):
    """Private Frank-Wolfe on the dual (Kumar & Deisenroth 2019, Algorithm 2, Theorems 3-4; module docstring).

    ``fit_mechanism`` on ``BoundedDesign.from_arrays(X, y, feature_bounds, row_norm)``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : smooth Datafit with a bounded derivative (logistic, Huber, squared with ``clip``)
    penalty : a norm with ``lmo_dual_ball`` (SubmodularNorm, GroupLasso) or an L1 penalty
        (as the norm of the cardinality function)
    feature_bounds : ndarray of shape (p,)
    epsilon : float > 0
    delta : float in (0, 1)
    calibration : {"tight", "paper"}
    noise : NoiseSource
    callback : callable (t, s) -> None, optional
        Receives the private dual iterate ``s_t`` (never the non-private ``w(s_t)``).
    row_norm : float or None
    **options
        ``n_iter`` (T, default 20; ``theorem4_iterations`` gives the paper's choice),
        ``mu`` (default 1e-2), ``selection`` ("auto", "exponential", "gaussian"),
        ``step`` ("paper", "standard"), ``release`` ("primal", "dual"), ``inner_tol``.

    Returns
    -------
    w : ndarray of shape (p,)
        The private primal model (or ``s_T`` with ``release="dual"``).
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, calibration or option; a penalty without ``lmo_dual_ball``; a
        non-smooth loss or one without a bounded derivative; ``calibration="paper"`` on a
        vertex set that cannot be enumerated.
    """
    return call_direct(MECHANISM, X, y, loss, penalty, feature_bounds, epsilon=epsilon, delta=delta,
                       calibration=calibration, noise=noise, callback=callback, row_norm=row_norm, options=options)
