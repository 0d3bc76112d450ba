"""Exact non-private solvers: the reference optimum F* with a certified duality gap.

The problem is ``F(w) = (1/n) sum_i f(<w, x_i>, y_i) + psi(w)`` (SPEC section 1). The
duality gap is computed from scratch from ``w`` (never from a solver's incremental
residuals) with the Fenchel dual

    D(u) = -(1/n) sum_i f*(u_i; y_i) - psi*(-X^T u / n),

at ``u = f'(Xw)`` made dual-feasible: its positive and negative parts are rescaled so
that ``sum_i u_i = 0`` when the penalty leaves a coordinate (the intercept) unpenalized,
then ``u`` is scaled into the domain of ``psi*``. Both rescalings are by factors in
(0, 1], so ``u`` stays in the domain of ``f*``. ``F(w) - F* <= F(w) - D(u)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import losses as _losses
from . import norms as _norms

__all__ = ["objective", "duality_gap", "solve", "SolverResult"]


def objective(X, y, w, loss, penalty):
    """``F(w)``: average loss plus penalty.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    w : ndarray of shape (p,)
    loss : Datafit
    penalty : Penalty
    """
    return loss.objective(X @ w, y) + penalty.value(w)


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
    col = X[:, j].toarray().ravel() if sp.issparse(X) else X[:, j]
    if not np.all(col == 1.0):
        raise ValueError("the unpenalized coordinate must be an intercept column of ones")
    return j


def duality_gap(X, y, w, loss, penalty):
    """Certified duality gap ``F(w) - D(u) >= F(w) - F*``, computed from scratch.

    Returns
    -------
    gap : float
        Non-negative up to rounding; ``inf`` if no feasible dual point was found.
    """
    n = X.shape[0]
    z = X @ w
    u = loss.derivative(z, y)
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


def solve(X, y, loss, penalty, tol=1e-10, max_iter=200):
    """Minimize ``F`` exactly (skglm's Anderson-accelerated coordinate descent).

    An unpenalized all-ones column is handled as skglm's intercept.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit
    penalty : ElasticNet (L1, L2, elastic net)
    tol : float
        Target of skglm's optimality criterion; the certified gap is returned beside it.
    max_iter : int
        Outer iterations of skglm's working-set solver.

    Returns
    -------
    SolverResult
    """
    from skglm.solvers import AndersonCD

    p = X.shape[1]
    icol = _intercept_column(X, penalty)
    keep = np.ones(p, dtype=bool)
    if icol is not None:
        keep[icol] = False
    Xk = X[:, keep]
    Xk = sp.csc_matrix(Xk) if sp.issparse(Xk) else np.asfortranarray(Xk, dtype=float)
    solver = AndersonCD(tol=tol, max_iter=max_iter, max_epochs=100_000, fit_intercept=icol is not None,
                        ws_strategy="fixpoint")
    coef = solver.solve(Xk, np.asarray(y, dtype=float), _skglm_datafit(loss), _skglm_penalty(penalty, keep))[0]
    w = np.zeros(p)
    w[keep] = coef[: keep.sum()]
    if icol is not None:
        w[icol] = coef[-1]
    return SolverResult(w, objective(X, y, w, loss, penalty), duality_gap(X, y, w, loss, penalty))
