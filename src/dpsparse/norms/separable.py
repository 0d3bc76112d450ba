"""Separable penalties: value, prox, subdifferential and conjugate.

A penalty ``psi(w)`` is added to the average loss with its own strength ``alpha``.
The interface, which structured norms implement too:

``value(w)``
    ``psi(w)``.
``prox(x, step)``
    ``argmin_w psi(w) + ||w - x||^2 / (2 step)``; for separable penalties ``step`` may be
    an array of per-coordinate steps.
``conjugate(v)`` and ``dual_scaling(v)``
    ``psi*(v)`` (``inf`` outside its domain) and the largest ``s`` in (0, 1] with
    ``psi*(s v)`` finite: what a solver needs to certify a duality gap.

Separable penalties ``psi(w) = sum_j psi_j(w_j)`` (``is_separable = True``) add
``coordinate_values(w)`` (the array of ``psi_j(w_j)``) and ``subdiff_distance(g, w)``
(``dist(-g_j, d psi_j(w_j))`` for every j), which coordinate methods need.

Coordinates with weight 0 are unpenalized (the intercept).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._arrays import number_or_array, uniform_view

__all__ = ["Penalty", "ElasticNet", "L1", "L2", "make_penalty", "PENALTIES", "require"]

# Relative slack of the feasibility test in ``conjugate``: floating-point rounding of a
# dual point that was scaled to the boundary must not turn a gap into ``inf``.
_FEASIBILITY_RTOL = 1e-9


def require(penalty: Penalty, methods: Sequence[str], who: str) -> None:
    """Check that ``penalty`` has every method in ``methods``; name what is missing.

    Raises
    ------
    ValueError
        Naming the mechanism or solver ``who`` and the missing methods.
    """
    missing = [m for m in methods if not callable(getattr(penalty, m, None))]
    if missing:
        raise ValueError(
            f"{who} needs a penalty with {', '.join(methods)}; "
            f"{type(penalty).__name__} lacks {', '.join(missing)}"
        )


class Penalty:
    """Base class of penalties (see the module docstring for the interface)."""

    name: str = "penalty"
    is_separable: bool = False

    def get_params(self) -> dict[str, Any]:
        """Parameters that define the penalty, for reports."""
        return {"name": self.name}


class NormPenalty(Penalty):
    """Base of the structured norms ``alpha * Omega``: the dual-ball conjugate from ``dual_norm``.

    Subclasses define ``dual_norm(v)`` (on the penalized coordinates) and ``_free``
    (the unpenalized indices).
    """

    def conjugate(self, v: ArrayLike) -> float:
        """Indicator of ``{Omega* <= alpha}`` (and of 0 on unpenalized coordinates), with a relative slack."""
        v = np.asarray(v, dtype=float)
        if np.any(np.abs(v[self._free]) > _FEASIBILITY_RTOL):
            return np.inf
        return 0.0 if self.dual_norm(v) <= self.alpha * (1.0 + _FEASIBILITY_RTOL) else np.inf

    def dual_scaling(self, v: np.ndarray) -> float:
        """Largest ``s`` in (0, 1] with ``Omega*(s v) <= alpha`` (unpenalized coordinates: the caller's)."""
        d = self.dual_norm(v)
        return 1.0 if d <= self.alpha else self.alpha / d


class ElasticNet(Penalty):
    """Weighted elastic net ``alpha * sum_j w_j (rho |x_j| + (1 - rho) x_j**2 / 2)``.

    The scikit-learn parametrization (``l1_ratio = rho``); ``rho = 1`` is the L1 norm
    (Lasso) and ``rho = 0`` the squared L2 norm (ridge).

    Parameters
    ----------
    alpha : float >= 0
        Penalty strength (``lambda / n`` in the notation of Kumar & Deisenroth, "Differentially
        Private Empirical Risk Minimization with Sparsity-Inducing Norms", arXiv 2019, Eq. 1).
    l1_ratio : float in [0, 1]
    weights : ndarray of shape (p,) of floats >= 0, or None
        Per-coordinate weights; 0 leaves a coordinate unpenalized. None: all ones. Read, not copied: the
        strengths derived from them are computed once (``strengths``), so change them by building a new penalty,
        not in place.
    n_penalized : int >= 0, or None
        With ``weights=None``: the first ``n_penalized`` coordinates weigh 1 and every later one (the
        intercept, last) 0, stored as this one number instead of a vector of weights (the estimators' penalty,
        ``build_penalty``); ``weights`` then makes the vector on demand.

    Raises
    ------
    ValueError
        alpha < 0 or not finite, l1_ratio outside [0, 1], negative or non-finite weights, ``n_penalized`` not
        an integer >= 0 or given beside ``weights``.
    """

    name = "elasticnet"
    is_separable = True

    def __init__(self, alpha: float = 1.0, l1_ratio: float = 0.5, weights: ArrayLike | None = None,
                 n_penalized: int | None = None):
        if not np.isfinite(alpha) or alpha < 0:
            raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
        if not 0.0 <= l1_ratio <= 1.0:
            raise ValueError(f"l1_ratio must be in [0, 1], got {l1_ratio!r}")
        if n_penalized is not None and (weights is not None or isinstance(n_penalized, (bool, np.bool_))
                                        or not isinstance(n_penalized, (int, np.integer)) or n_penalized < 0):
            raise ValueError(f"n_penalized must be an integer >= 0 with weights None, got {n_penalized!r} with "
                             f"weights {'None' if weights is None else 'given'}")
        self.alpha = float(alpha)
        self.l1_ratio = float(l1_ratio)
        self.weights = weights
        self._n_penalized = None if n_penalized is None else int(n_penalized)
        self._strengths = None  # (key, weights, (a, c)): see strengths

    @property
    def weights(self) -> np.ndarray | None:
        """Every coordinate's weight (a new vector where ``n_penalized`` stands for them), or None: all ones."""
        return self._weights if self._n_penalized is None else self._w(self._n_penalized + 1)

    @weights.setter
    def weights(self, weights):
        if weights is not None:
            weights = np.asarray(weights, dtype=float)
            if weights.ndim != 1 or not np.all(np.isfinite(weights)) or np.any(weights < 0):
                raise ValueError("weights must be a 1-d array of finite numbers >= 0")
        self._weights, self._n_penalized = weights, None

    def weight_entries(self, p: int) -> tuple[float | np.ndarray, int]:
        """The weights as a compiled loop reads them (``_kernels._entry``): ``(u, k)``, coordinate ``j < k``
        weighing ``u_j`` (``u`` one number where it is the same on every coordinate) and every later one 0. Makes
        no vector of ``p`` weights where none is stored.

        Parameters
        ----------
        p : int
            Number of coordinates.
        """
        if self._n_penalized is not None:
            return 1.0, self._n_penalized
        return (1.0 if self._weights is None else number_or_array(self._weights)), p

    def _w(self, p):
        if self._n_penalized is not None:
            return (np.arange(p) < self._n_penalized).astype(float)
        return np.ones(p) if self._weights is None else self._weights

    def strengths(self, p: int) -> tuple[np.ndarray, np.ndarray]:
        """Per-coordinate strengths of ``psi(w) = sum_j a_j |w_j| + (c_j / 2) w_j^2``.

        Returns
        -------
        a, c : ndarray of shape (p,)
            ``a = alpha * l1_ratio * weights`` and ``c = alpha * (1 - l1_ratio) * weights``, read-only (``c`` a
            view of one number where its entries are equal, ``_arrays.uniform_view``). Computed once per ``p``,
            ``alpha``, ``l1_ratio`` and weights array: a projection by bisection (objective perturbation's) asks
            for them about 100 times per iteration.
        """
        key = (p, self.alpha, self.l1_ratio, self._n_penalized)
        memo = getattr(self, "_strengths", None)
        if memo is None or memo[0] != key or memo[1] is not self._weights:
            aw = self.alpha * self._w(p)
            c = uniform_view(aw * (1.0 - self.l1_ratio))  # zeros for the L1 norm: one number
            aw *= self.l1_ratio
            for v in (aw, c):
                v.flags.writeable = False
            memo = self._strengths = (key, self._weights, (aw, c))  # the weights themselves: an id can be reused
        return memo[2]

    @property
    def unpenalized(self) -> np.ndarray:
        """Indices of coordinates with weight 0."""
        if self._n_penalized is not None:
            return np.array([self._n_penalized])
        return np.array([], dtype=int) if self._weights is None else np.flatnonzero(self._weights == 0)

    def coordinate_values(self, w: np.ndarray) -> np.ndarray:
        a, c = self.strengths(w.shape[0])
        return a * np.abs(w) + 0.5 * c * w**2

    def value(self, w: np.ndarray) -> float:
        return float(np.sum(self.coordinate_values(w)))

    def prox(self, x: np.ndarray, step: float | np.ndarray) -> np.ndarray:
        a, c = self.strengths(x.shape[0])
        return np.sign(x) * np.maximum(np.abs(x) - step * a, 0.0) / (1.0 + step * c)

    def prox_1d(self, value: float, step: float, j: int) -> float:
        """Prox of the ``j``-th term alone: ``prox(x, step)[j]`` where ``x[j] = value``, in O(1).

        What coordinate methods (DP-CD, DP-GCD) take at each update instead of the prox of
        the whole vector.
        """
        if self._n_penalized is not None:
            wj = float(j < self._n_penalized)
        else:
            wj = 1.0 if self._weights is None else float(self._weights[j])
        a, c = self.alpha * self.l1_ratio * wj, self.alpha * (1.0 - self.l1_ratio) * wj
        return math.copysign(max(abs(value) - step * a, 0.0), value) / (1.0 + step * c)

    def subdiff_distance(self, g: np.ndarray, w: np.ndarray) -> np.ndarray:
        a, c = self.strengths(w.shape[0])
        h = g + c * w
        return np.where(w != 0, np.abs(h + a * np.sign(w)), np.maximum(np.abs(h) - a, 0.0))

    def conjugate(self, v: np.ndarray) -> float:
        a, c = self.strengths(v.shape[0])
        excess = np.maximum(np.abs(v) - a, 0.0)
        quad = c > 0
        if np.any(excess[~quad] > _FEASIBILITY_RTOL * (a[~quad] + 1.0)):
            return np.inf
        return float(np.sum(excess[quad] ** 2 / (2.0 * c[quad])))

    def dual_scaling(self, v: np.ndarray) -> float:
        """Largest ``s`` in (0, 1] with ``|s v_j| <= a_j`` where ``psi_j`` is a pure L1 term.

        Unpenalized coordinates are left to the caller (a solver balances the intercept).
        """
        a, c = self.strengths(v.shape[0])
        box = (c == 0) & (a > 0) & (np.abs(v) > a)
        if not np.any(box):
            return 1.0
        return float(np.min(a[box] / np.abs(v[box])))

    def get_params(self) -> dict[str, Any]:
        return {"name": self.name, "alpha": self.alpha, "l1_ratio": self.l1_ratio}


class L1(ElasticNet):
    """Weighted L1 norm ``alpha * sum_j w_j |x_j|`` (Lasso penalty); prox: soft-thresholding."""

    name = "l1"

    def __init__(self, alpha: float = 1.0, weights: ArrayLike | None = None, n_penalized: int | None = None):
        super().__init__(alpha, 1.0, weights, n_penalized)

    def get_params(self) -> dict[str, Any]:
        return {"name": self.name, "alpha": self.alpha}


class L2(ElasticNet):
    """Weighted squared L2 norm ``(alpha / 2) * sum_j w_j x_j**2`` (ridge penalty)."""

    name = "l2"

    def __init__(self, alpha: float = 1.0, weights: ArrayLike | None = None, n_penalized: int | None = None):
        super().__init__(alpha, 0.0, weights, n_penalized)

    def get_params(self) -> dict[str, Any]:
        return {"name": self.name, "alpha": self.alpha}


PENALTIES = {"l1": L1, "l2": L2, "elasticnet": ElasticNet}


def make_penalty(name: str, alpha: float, weights: ArrayLike | None = None, **params: Any) -> ElasticNet:
    """Penalty by name: one of ``l1``, ``l2``, ``elasticnet``.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    try:
        cls = PENALTIES[name]
    except KeyError:
        raise ValueError(f"unknown penalty {name!r}; allowed: {sorted(PENALTIES)}") from None
    return cls(alpha=alpha, weights=weights, **params)
