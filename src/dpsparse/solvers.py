"""Exact non-private solvers: the reference optimum F* with a certified duality gap.

The problem is ``F(w) = (1/n) sum_i f(<w, x_i>, y_i) + psi(w)``. The
duality gap is computed from scratch from ``w`` (never from a solver's incremental
residuals) with the Fenchel dual

    D(u) = -(1/n) sum_i f*(u_i; y_i) - psi*(-X^T u / n),

at ``u = f'(Xw)`` made dual-feasible: its positive and negative parts are rescaled so
that ``sum_i u_i = 0`` when the penalty leaves a coordinate (the intercept) unpenalized,
then ``u`` is scaled into the domain of ``psi*``. Both rescalings are by factors in
(0, 1], so ``u`` stays in the domain of ``f*``. ``F(w) - F* <= F(w) - D(u)``.

With a ridge term ``(mu/2)||w||^2`` (``solve_prox``), the penalty is
``h = psi + (mu/2)||.||^2`` and ``h*(v) = min_z psi*(z) + ||v - z||^2 / (2 mu)`` is
finite everywhere: it is bounded above at ``z = v - mu prox_{psi/mu}(v/mu)`` (Moreau's
decomposition; exact when the prox is), scaled into the domain of ``psi*``. Any such ``z``
over-estimates ``h*``, so the gap stays certified even with an inexact prox.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import losses as _losses
from . import norms as _norms
from .affine import is_shifted

__all__ = [
    "SolverResult",
    "accelerated_proximal_gradient",
    "duality_gap",
    "linear_rate_iterations",
    "objective",
    "solve",
    "solve_prox",
]


def objective(X, y, w, loss, penalty, mu=0.0):
    """``F(w)``: average loss plus penalty (plus ``(mu/2)||w||^2``).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    w : ndarray of shape (p,)
    loss : Datafit
    penalty : Penalty
    mu : float >= 0
    """
    return _primal(_matvec(X, w), y, w, loss, penalty, mu)


def _primal(z, y, w, loss, penalty, mu=0.0):
    """``F(w)`` from the margins ``z = X w``."""
    return loss.objective(z, y) + penalty.value(w) + 0.5 * mu * float(w @ w)


def _matvec(X, w):
    """``X w`` from scratch, reading only the columns of the support of ``w`` where it is small."""
    if isinstance(X, np.ndarray) or (sp.issparse(X) and X.format == "csc"):
        support = np.flatnonzero(w)
        if 2 * support.size < w.size:
            return X[:, support] @ w[support]
    return X @ w


def _balance(u):
    """Scale the larger of the positive and negative parts of ``u`` so that ``sum u = 0``."""
    pos, neg = u[u > 0].sum(), -u[u < 0].sum()
    out = u.copy()
    if pos > neg:
        out[u > 0] *= neg / pos
    elif neg > pos:
        out[u < 0] *= pos / neg
    return out


def _intercept_column(X, penalty):
    """Index of the unpenalized all-ones column, or None."""
    free = getattr(penalty, "unpenalized", np.array([], dtype=int))
    if len(free) != 1:
        if len(free) > 1:
            raise ValueError("at most one unpenalized coordinate (the intercept column) is supported")
        return None
    j = int(free[0])
    col = X.column(j) if is_shifted(X) else X[:, j].toarray().ravel() if sp.issparse(X) else X[:, j]
    if not np.all(col == 1.0):
        raise ValueError("the unpenalized coordinate must be an intercept column of ones")
    return j


def _ridge_conjugate_bound(v, penalty, mu):
    """Upper bound on ``(psi + (mu/2)||.||^2)*(v)`` (module docstring)."""
    z = v - mu * penalty.prox(v / mu, 1.0 / mu)
    z = z * penalty.dual_scaling(z)
    return penalty.conjugate(z) + float((v - z) @ (v - z)) / (2.0 * mu)


def duality_gap(X, y, w, loss, penalty, mu=0.0):
    """Certified duality gap ``F(w) - D(u) >= F(w) - F*``, computed from scratch.

    ``mu > 0`` adds ``(mu/2)||w||^2`` to ``F`` (every coordinate, the intercept too).

    Returns
    -------
    gap : float
        Non-negative up to rounding; ``inf`` if no feasible dual point was found.
    """
    intercept = mu == 0 and _intercept_column(X, penalty) is not None
    return _certificate(X, y, w, loss, penalty, mu, intercept).gap


@dataclass
class _Certificate:
    """What one computation of the duality gap at ``w`` leaves behind.

    Attributes
    ----------
    objective, gap : float
        ``F(w)`` and the certified gap.
    z : ndarray of shape (n,)
        ``X w``, computed from scratch.
    u : ndarray of shape (n,)
        The loss derivatives ``f'(z)``.
    grad : ndarray of shape (p,)
        ``X^T u' / n`` at the dual point before its scaling into the domain of ``psi*``: ``u' = u`` (the
        gradient of the average loss), balanced when there is an intercept column (``mu = 0``).
    """

    objective: float
    gap: float
    z: np.ndarray
    u: np.ndarray
    grad: np.ndarray


def _certificate(X, y, w, loss, penalty, mu=0.0, intercept=False):
    """The duality gap at ``w`` (module docstring) with one product ``X w`` and one ``X^T u``."""
    z = _matvec(X, w)
    u = loss.derivative(z, y)
    primal = _primal(z, y, w, loss, penalty, mu)
    if mu > 0:
        grad = (X.T @ u) / X.shape[0]
        dual = -float(np.mean(loss.conjugate(u, y))) - _ridge_conjugate_bound(-grad, penalty, mu)
        return _Certificate(primal, primal - dual, z, u, grad)
    balanced = _balance(u) if intercept else u
    grad = (X.T @ balanced) / X.shape[0]
    s = penalty.dual_scaling(-grad)
    dual = -float(np.mean(loss.conjugate(s * balanced, y))) - penalty.conjugate(-s * grad)
    return _Certificate(primal, primal - dual, z, u, grad)


@dataclass
class SolverResult:
    """Solution of an exact solver.

    Attributes
    ----------
    coef : ndarray of shape (p,)
    objective : float
        ``F(coef)``.
    gap : float
        Certified duality gap at ``coef``: ``objective - F* <= gap``.
    """

    coef: np.ndarray
    objective: float
    gap: float


# Working sets of ``solve``: at least P0 features (below that the whole problem goes to skglm at once, whose
# own working sets on all columns cost less than our outer iterations), twice the support otherwise.
P0 = 500
# An inner solve on a working set that may still lack features stops at RELAX times the largest violation
# (later outer iterations correct it); the last one aims at SAFETY times the gap target (``_inner_tol``).
RELAX = 0.01
SAFETY = 0.5
# Outer iterations in a row that may fail to lower the smallest gap before ``solve`` stops: where rounding
# (skglm's residuals, updated in place, drift from X w) keeps the gap above a target too small for the data.
PATIENCE = 3


def _skglm_datafit(loss):
    from skglm import datafits

    if isinstance(loss, _losses.Logistic):
        return datafits.Logistic()
    if isinstance(loss, _losses.Huber):
        return datafits.Huber(loss.tau)
    if isinstance(loss, _losses.Squared):
        return datafits.Quadratic()
    raise ValueError(f"no exact solver for loss {type(loss).__name__}")


def _skglm_penalty(penalty, weights):
    """skglm's penalty on the features of per-feature ``weights``: weighted L1 (weight 0: the intercept) or
    L1 + L2 (uniform weights only)."""
    from skglm import penalties

    if penalty.l1_ratio == 1.0:
        return penalties.WeightedL1(penalty.alpha, weights)
    if not np.all(weights == 1.0):
        raise ValueError("the exact solver supports non-uniform weights for the L1 penalty only")
    return penalties.L1_plus_L2(penalty.alpha, penalty.l1_ratio)


def _skglm_solver(newton, tol, fit_intercept):
    """skglm's proximal Newton (L1-logistic: far faster once many features are active), or its
    Anderson-accelerated coordinate descent, warm-started."""
    from skglm.solvers import AndersonCD, ProxNewton

    if newton:
        return ProxNewton(tol=tol, fit_intercept=fit_intercept, warm_start=True)
    return AndersonCD(tol=tol, max_iter=20, max_epochs=1_000, fit_intercept=fit_intercept, warm_start=True)


@dataclass
class _Problem:
    """The problem ``solve`` hands to skglm, a working set at a time.

    Attributes
    ----------
    X : ndarray (Fortran order) or CSC matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss, penalty
    icol : int or None
        The intercept column.
    """

    X: object
    y: np.ndarray
    loss: object
    penalty: object
    icol: int | None

    def __post_init__(self):
        if not isinstance(self.penalty, _norms.ElasticNet):
            raise ValueError(f"no exact solver for penalty {type(self.penalty).__name__}")
        self.datafit = _skglm_datafit(self.loss)
        self.weights = self.penalty._w(self.X.shape[1])
        _skglm_penalty(self.penalty, self.weights[self._columns(None)])  # refuses what skglm lacks, before any work

    def _columns(self, ws):
        """The features handed to skglm for the working set ``ws`` (all when None)."""
        cols = np.arange(self.X.shape[1]) if ws is None else ws
        return cols[cols != self.icol] if self.skglm_intercept else cols

    @property
    def newton(self):
        """skglm's proximal Newton (the L1-logistic problem) rather than its coordinate descent."""
        return isinstance(self.loss, _losses.Logistic) and self.penalty.l1_ratio == 1.0

    @property
    def skglm_intercept(self):
        """The intercept column is dropped and fitted as skglm's intercept: its L1 + L2 penalty has no
        weights, so the column cannot stay with a weight 0 as it does in the weighted L1."""
        return self.icol is not None and self.penalty.l1_ratio < 1.0

    def certificate(self, w):
        return _certificate(self.X, self.y, w, self.loss, self.penalty, intercept=self.icol is not None)

    def violations(self, cert, w):
        """Per feature, the distance of ``-grad_j`` to the subdifferential of the penalty (the intercept's
        derivative for its column): the optimality score of skglm's working sets."""
        opt = self.penalty.subdiff_distance(cert.grad, w)
        if self.icol is not None:
            opt[self.icol] = abs(float(np.mean(cert.u)))
        return opt

    def inner_solve(self, w, z, ws, tol):
        """One warm-started skglm solve on the features ``ws`` (all when None) to its criterion ``tol``;
        the new ``w``."""
        p = w.shape[0]
        cols = self._columns(ws)
        X = self.X if cols.shape[0] == p else self.X[:, cols]
        start = np.r_[w[cols], w[self.icol]] if self.skglm_intercept else w[cols]
        from sklearn.exceptions import ConvergenceWarning

        solver = _skglm_solver(self.newton, tol, self.skglm_intercept)
        with warnings.catch_warnings():  # skglm's ConvergenceWarning: the certificate decides
            warnings.simplefilter("ignore", ConvergenceWarning)
            coef = solver.solve(X, self.y, self.datafit, _skglm_penalty(self.penalty, self.weights[cols]), start, z)[0]
        out = np.zeros(p)
        out[cols] = coef[: cols.shape[0]]
        if self.skglm_intercept:
            out[self.icol] = coef[-1]
        return out


def _working_set(opt, w, icol):
    """The ``max(P0, 2 |support|)`` features of largest violation, the support and the intercept always in;
    None when that is every feature."""
    size = max(P0, 2 * int(np.count_nonzero(w)))
    if size >= w.shape[0]:
        return None
    score = opt.copy()
    score[w != 0] = np.inf
    if icol is not None:
        score[icol] = np.inf
    return np.sort(np.argpartition(score, -size)[-size:])


def _inner_tol(cert, violation, tol, complete, start):
    """skglm's criterion (the largest violation) for the next inner solve.

    The gap and the largest violation fall together near the optimum: at their present ratio, ``SAFETY *
    tol`` of gap needs ``SAFETY * tol * violation / gap`` of violation. At the zero start (``start``) the gap
    is far the larger and that ratio would ask for far more than the optimum needs (madelon's Lasso was solved
    to 2.5e-10 for a target of 1e-8, 1.2x skglm's time), so the criterion is not below ``SAFETY * tol`` there;
    after a solve the ratio holds (news20's L1-logistic: a gap 176-178 times the violation at each of its
    certificates, which a floor at ``SAFETY * tol`` would miss by that factor, costing a solve more). It is
    always below ``SAFETY * violation``, so that a solve after a failed certificate moves. A working set that
    may still lack features (``complete`` False: a feature outside it violates optimality) is solved no further
    than ``RELAX * violation``.
    """
    ratio = violation / cert.gap
    target = SAFETY * min(tol * (max(ratio, 1.0) if start else ratio), violation)
    return target if complete else max(target, RELAX * violation)


def _column_major(X):
    """``X`` as skglm reads it and columns are sliced: Fortran order or CSC (no copy when it is already)."""
    if is_shifted(X):  # skglm reads explicit matrices (benchmarks' references; no fit calls this)
        X = X.toarray()
    return sp.csc_matrix(X) if sp.issparse(X) else np.asfortranarray(X, dtype=float)


def solve(X, y, loss, penalty, tol=1e-10, max_iter=50):
    """Minimize ``F`` to a certified duality gap ``tol``: skglm on working sets, our gap as the stopping rule.

    Each outer iteration computes the certificate at ``w`` (``duality_gap``: one ``X w`` from scratch, one
    ``X^T u``), stops when it is at most ``tol``, else selects a working set from the optimality violations
    the same ``X^T u`` gives (as skglm does: ``max(P0, 2 |support|)`` features, the support always in) and
    hands it to skglm (proximal Newton for the L1-logistic problem, Anderson-accelerated coordinate descent
    otherwise), warm-started, with a criterion set from the gap's present ratio to the largest violation
    (``_inner_tol``). With ``p <= P0`` the working set is every feature, and skglm's own working sets run: the
    first solve starts at zero with the criterion ``SAFETY * tol``, uncertified (a certificate there would choose
    nothing and cost a pass over X).

    An unpenalized all-ones column is the intercept (a feature of weight 0, or skglm's intercept for the
    elastic net).

    Parameters
    ----------
    X : ndarray, sparse matrix or ShiftedSparse of shape (n, p)
        A ``ShiftedSparse`` is made dense.
    y : ndarray of shape (n,)
    loss : Datafit
        Logistic, squared or Huber.
    penalty : ElasticNet (L1, L2, elastic net)
    tol : float
        Target of the certified duality gap (absolute).
    max_iter : int
        Outer iterations (certificates).

    Returns
    -------
    SolverResult
        The iterate of smallest certified gap: at most ``tol`` unless ``max_iter`` ran out or ``PATIENCE``
        outer iterations in a row did not lower it (rounding: ``tol`` too small for the scale of the data).
    """
    X = _column_major(X)
    icol = _intercept_column(X, penalty)
    problem = _Problem(X, np.asarray(y, dtype=float), loss, penalty, icol)
    w = np.zeros(X.shape[1])
    if X.shape[1] <= P0:  # every feature in the working set: the zero start's certificate would choose nothing
        w = problem.inner_solve(w, np.zeros(X.shape[0]), None, SAFETY * tol)
    cert = best = problem.certificate(w)
    coef, stalled = w, 0
    for _ in range(max_iter):
        if best.gap <= tol or stalled >= PATIENCE:
            break
        opt = problem.violations(cert, w)
        violation = float(np.max(opt))
        if violation == 0.0:  # optimal to rounding: the gap cannot fall further
            break
        ws = _working_set(opt, w, icol)
        complete = ws is None or not np.any(np.delete(opt, ws))  # no feature outside it violates optimality
        w = problem.inner_solve(w, cert.z, ws, _inner_tol(cert, violation, tol, complete, not np.any(w)))
        cert = problem.certificate(w)
        if cert.gap < best.gap:
            coef, best, stalled = w, cert, 0
        else:
            stalled += 1
    return SolverResult(coef, best.objective, best.gap)


def _spectral_norm_sq(X, n_iter=100, rtol=1e-10, seed=0):
    """``||X||_2^2`` by power iteration on ``X^T X`` (an estimate from below)."""
    v = np.random.default_rng(seed).standard_normal(X.shape[1])
    v /= np.linalg.norm(v)
    est = 0.0
    for _ in range(n_iter):
        u = X.T @ (X @ v)
        new = float(np.linalg.norm(u))
        if new == 0.0:
            return 0.0
        v = u / new
        if abs(new - est) <= rtol * new:
            break
        est = new
    return new


def accelerated_proximal_gradient(grad, prox, x0, step, max_iter, *, strong_convexity=0.0, stop=None,
                                  check_every=10):
    """The accelerated proximal gradient loop shared by every smooth solve of dpsparse.

    ``strong_convexity = 0``: FISTA (Beck & Teboulle 2009) with gradient-based adaptive
    restart (O'Donoghue & Candes 2015). ``strong_convexity = sigma > 0``: V-FISTA's
    constant momentum ``(1 - sqrt(q)) / (1 + sqrt(q))``, ``q = sigma * step`` (Beck,
    "First-Order Methods in Optimization", SIAM 2017, Theorem 10.42): with ``step <= 1/L``
    for an ``L``-smooth, ``sigma``-strongly convex smooth part,
    ``F(x_k) - F* <= (1 - sqrt(q))^k (F(x_0) - F* + sigma ||x_0 - x*||^2 / 2)``
    (``linear_rate_iterations`` turns this into a public iteration count).

    Parameters
    ----------
    grad : callable ndarray -> ndarray
        Gradient of the smooth part.
    prox : callable (v, step) -> ndarray
        Prox of the non-smooth part (or a projection).
    x0 : ndarray
    step : float > 0
        ``1 / L``.
    max_iter : int
    strong_convexity : float >= 0
    stop : callable ndarray -> bool, optional
        Checked every ``check_every`` iterations; True ends the loop.
    check_every : int

    Returns
    -------
    w : ndarray
    iterations : int
    """
    w = np.array(x0, dtype=float)
    z, t = w.copy(), 1.0
    q = strong_convexity * step
    momentum = (1.0 - np.sqrt(q)) / (1.0 + np.sqrt(q)) if strong_convexity > 0 else None
    it = 0
    for it in range(1, max_iter + 1):
        w_new = prox(z - step * grad(z), step)
        if momentum is None:
            if float((z - w_new) @ (w_new - w)) > 0:  # momentum points uphill: restart
                t = 1.0
            t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            beta, t = (t - 1.0) / t_new, t_new
        else:
            beta = momentum
        z = w_new + beta * (w_new - w)
        w = w_new
        if stop is not None and it % check_every == 0 and stop(w):
            break
    return w, it


def linear_rate_iterations(smoothness, strong_convexity, initial, tol):
    """Iterations after which V-FISTA's bound ``(1 - sqrt(sigma/L))^k * initial`` is ``<= tol``.

    Public when its arguments are (a smoothness bound from the public row norm, the ridge
    term, a public bound on the initial suboptimality): the number of iterations a private
    solve runs to reach ``F - F* <= tol`` whatever the data.
    """
    q = strong_convexity / smoothness
    if initial <= tol:
        return 1
    return int(np.ceil(np.log(initial / tol) / -np.log1p(-np.sqrt(q)))) + 1


def solve_prox(X, y, loss, penalty, mu=0.0, tol=1e-8, max_iter=20_000, check_every=10, smoothness=None):
    """Minimize ``(1/n) sum_i f(<w, x_i>, y_i) + psi(w) + (mu/2)||w||^2`` by accelerated proximal gradient.

    ``accelerated_proximal_gradient`` with step ``1/L``, ``L = smoothness * ||X||_2^2 / n
    + mu`` (``||X||_2^2`` by power iteration, with a 1% margin) unless ``smoothness`` gives a
    public bound on ``L``; V-FISTA's constant momentum when ``mu > 0`` and ``smoothness``
    is given, FISTA with restart otherwise. Works for any penalty with ``value``, ``prox``
    (scalar step), ``conjugate`` and ``dual_scaling``: separable penalties and structured
    norms. Stops when the certified duality gap (``duality_gap``, from scratch, every
    ``check_every`` iterations) is ``<= tol``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit
    penalty : Penalty
        At most one unpenalized coordinate, an all-ones intercept column (``mu = 0``).
    mu : float >= 0
    tol : float
        Target of the certified duality gap (absolute).
    max_iter : int
    check_every : int
    smoothness : float or None
        A bound on the smoothness ``L`` of the smooth part (e.g. ``f'' R^2 + mu`` from a
        public row-norm bound ``R``); None estimates it from ``X``.

    Returns
    -------
    SolverResult
        ``objective`` and ``gap`` include the ``mu`` term.
    """
    _norms.require(penalty, ("value", "prox", "conjugate", "dual_scaling"), "solve_prox")
    if not np.isfinite(mu) or mu < 0:
        raise ValueError(f"mu must be a finite number >= 0, got {mu!r}")
    n, p = X.shape
    y = np.asarray(y, dtype=float)
    L = 1.01 * loss.smoothness * _spectral_norm_sq(X) / n + mu if smoothness is None else float(smoothness)
    w, _ = accelerated_proximal_gradient(
        lambda z: X.T @ loss.derivative(X @ z, y) / n + mu * z, penalty.prox, np.zeros(p), 1.0 / L, max_iter,
        strong_convexity=mu if smoothness is not None else 0.0,
        stop=lambda w: duality_gap(X, y, w, loss, penalty, mu) <= tol, check_every=check_every)
    return SolverResult(w, objective(X, y, w, loss, penalty, mu), duality_gap(X, y, w, loss, penalty, mu))
