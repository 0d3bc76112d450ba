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
    return loss.objective(X @ w, y) + penalty.value(w) + 0.5 * mu * float(w @ w)


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
    n = X.shape[0]
    z = X @ w
    u = loss.derivative(z, y)
    if mu > 0:
        v = -(X.T @ u) / n
        dual = -float(np.mean(loss.conjugate(u, y))) - _ridge_conjugate_bound(v, penalty, mu)
        return objective(X, y, w, loss, penalty, mu) - dual
    if _intercept_column(X, penalty) is not None:
        u = _balance(u)
    v = -(X.T @ u) / n
    s = penalty.dual_scaling(v)
    u, v = s * u, s * v
    dual = -float(np.mean(loss.conjugate(u, y))) - penalty.conjugate(v)
    return objective(X, y, w, loss, penalty) - dual


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


def _skglm_datafit(loss):
    from skglm import datafits

    if isinstance(loss, _losses.Logistic):
        return datafits.Logistic()
    if isinstance(loss, _losses.Huber):
        return datafits.Huber(loss.tau)
    if isinstance(loss, _losses.Squared):
        return datafits.Quadratic()
    raise ValueError(f"no exact solver for loss {type(loss).__name__}")


def _skglm_penalty(penalty, keep):
    from skglm import penalties

    if not isinstance(penalty, _norms.ElasticNet):
        raise ValueError(f"no exact solver for penalty {type(penalty).__name__}")
    weights = penalty._w(keep.shape[0])[keep]
    if penalty.l1_ratio == 1.0:
        return penalties.WeightedL1(penalty.alpha, weights)
    if not np.all(weights == 1.0):
        raise ValueError("the exact solver supports non-uniform weights for the L1 penalty only")
    return penalties.L1_plus_L2(penalty.alpha, penalty.l1_ratio)


def _skglm_solver(newton, tol, max_iter, fit_intercept):
    """skglm's proximal Newton (L1-logistic: far faster once many features are active), or its
    Anderson-accelerated coordinate descent."""
    from skglm.solvers import AndersonCD, ProxNewton

    if newton:
        return ProxNewton(tol=tol, max_iter=max_iter, fit_intercept=fit_intercept, warm_start=True)
    return AndersonCD(tol=tol, max_iter=max_iter, max_epochs=100_000, fit_intercept=fit_intercept,
                      ws_strategy="fixpoint", warm_start=True)


def solve(X, y, loss, penalty, tol=1e-10, max_iter=200, gap_tol=None):
    """Minimize ``F`` exactly with skglm: proximal Newton for the L1-logistic problem, Anderson-accelerated
    coordinate descent otherwise.

    An unpenalized all-ones column is handled as skglm's intercept.

    Parameters
    ----------
    X : ndarray, sparse matrix or ShiftedSparse of shape (n, p)
        A ``ShiftedSparse`` is made dense.
    y : ndarray of shape (n,)
    loss : Datafit
    penalty : ElasticNet (L1, L2, elastic net)
    tol : float
        Target of skglm's optimality criterion; the certified gap is returned beside it.
    max_iter : int
        Outer iterations of skglm's working-set solver.
    gap_tol : float or None
        A certified duality gap to reach: skglm's ``tol`` is divided by 100 (warm start) until the gap
        is at most ``gap_tol``, at most 4 times.

    Returns
    -------
    SolverResult
    """
    if is_shifted(X):  # skglm reads explicit matrices (benchmarks' references; no fit calls this)
        X = X.toarray()
    p = X.shape[1]
    icol = _intercept_column(X, penalty)
    keep = np.ones(p, dtype=bool)
    # proximal Newton keeps the intercept as a column with a zero weight (skglm's own intercept breaks its
    # weighted L1); coordinate descent drops the column and fits skglm's intercept
    newton = isinstance(loss, _losses.Logistic) and getattr(penalty, "l1_ratio", None) == 1.0
    if icol is not None and not newton:
        keep[icol] = False
    Xk = X[:, keep]
    Xk = sp.csc_matrix(Xk) if sp.issparse(Xk) else np.asfortranarray(Xk, dtype=float)
    yk, datafit, pen = np.asarray(y, dtype=float), _skglm_datafit(loss), _skglm_penalty(penalty, keep)
    intercept = icol is not None and not newton
    coef = None
    for _ in range(5 if gap_tol is not None else 1):
        start = () if coef is None else (coef, Xk @ coef[: keep.sum()] + (coef[-1] if intercept else 0.0))
        coef = _skglm_solver(newton, tol, max_iter, intercept).solve(Xk, yk, datafit, pen, *start)[0]
        w = np.zeros(p)
        w[keep] = coef[: keep.sum()]
        if intercept:
            w[icol] = coef[-1]
        gap = duality_gap(X, y, w, loss, penalty)
        if gap_tol is None or gap <= gap_tol:
            break
        tol /= 100.0
    return SolverResult(w, objective(X, y, w, loss, penalty), gap)


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
