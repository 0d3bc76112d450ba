"""Group Lasso: the L1/L2 norm over non-overlapping groups (Yuan & Lin 2006).

``Omega(w) = sum_g d_g ||w_g||_2``, ``d_g = sqrt(|g|)`` by default; dual norm
``Omega*(s) = max_g ||s_g||_2 / d_g``; prox: block soft-thresholding (Bach, Jenatton,
Mairal & Obozinski 2012, "Optimization with sparsity-inducing penalties", section 3;
Obozinski & Bach for group norms as convex relaxations). Coordinates in no group are
unpenalized: the intercept column is left out of every group.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .separable import NormPenalty

__all__ = ["GroupLasso"]


class GroupLasso(NormPenalty):
    """``alpha * sum_g d_g ||w_g||_2`` over disjoint groups.

    Parameters
    ----------
    groups : sequence of int sequences
        Disjoint nonempty groups of indices in ``range(n_features)``.
    n_features : int
        Length of the vectors; indices in no group are unpenalized (at most one for the
        solvers of ``dpsparse.solvers``: the all-ones intercept column).
    alpha : float >= 0
    weights : ndarray of shape (n_groups,) of floats > 0, or None (``sqrt(|g|)``)
    """

    name = "grouplasso"
    is_separable = False

    def __init__(self, groups: Iterable[ArrayLike], n_features: int, alpha: float = 1.0,
                 weights: ArrayLike | None = None):
        if not np.isfinite(alpha) or alpha < 0:
            raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
        self.groups = [np.asarray(g, dtype=int) for g in groups]
        flat = np.concatenate(self.groups) if self.groups else np.array([], dtype=int)
        if (not self.groups or any(g.size == 0 for g in self.groups) or flat.min() < 0
                or flat.max() >= n_features or np.unique(flat).size != flat.size):
            raise ValueError(f"groups must be disjoint nonempty subsets of the {n_features} columns (the intercept "
                             "included when fitted, last)")
        sizes = np.array([g.size for g in self.groups])
        d = np.sqrt(sizes) if weights is None else np.asarray(weights, dtype=float)
        if d.shape != sizes.shape or not np.all(np.isfinite(d)) or np.any(d <= 0):
            raise ValueError("group weights must be finite, > 0, one per group")
        self.alpha, self.n_features, self.weights = float(alpha), int(n_features), d
        self._flat, self._starts = flat, np.r_[0, np.cumsum(sizes)[:-1]]
        self._free = np.setdiff1d(np.arange(n_features), flat)

    @property
    def unpenalized(self) -> np.ndarray:
        """Indices in no group."""
        return self._free

    def _group_norms(self, w):
        """``||w_g||_2`` for every group; w of shape (n_features,) or (m, n_features)."""
        w = np.asarray(w, dtype=float)
        return np.sqrt(np.add.reduceat(w[..., self._flat] ** 2, self._starts, axis=-1))

    def _per_coord(self, per_group):
        out = np.zeros(self.n_features)
        out[self._flat] = np.repeat(per_group, [g.size for g in self.groups])
        return out

    def omega(self, w: ArrayLike) -> float | np.ndarray:
        """``Omega(w)`` without alpha; w of shape (n,) or (m, n)."""
        return self._group_norms(w) @ self.weights

    def value(self, w: np.ndarray) -> float:
        return self.alpha * float(self.omega(w))

    def dual_norm(self, s: ArrayLike) -> float:
        """``Omega*(s) = max_g ||s_g||_2 / d_g``."""
        return float(np.max(self._group_norms(s) / self.weights))

    def prox(self, x: ArrayLike, step: float) -> np.ndarray:
        """Block soft-thresholding ``x_g (1 - step alpha d_g / ||x_g||)_+``; scalar step."""
        if np.ndim(step) != 0:
            raise ValueError("a non-separable norm takes a scalar step")
        x = np.asarray(x, dtype=float)
        nrm = self._group_norms(x)
        shrink = np.maximum(1.0 - step * self.alpha * self.weights / np.where(nrm > 0, nrm, 1.0), 0.0)
        factor = self._per_coord(shrink)
        factor[self._free] = 1.0
        return x * factor

    def subgradient(self, w: ArrayLike) -> np.ndarray:
        """An element of ``d(alpha Omega)(w)``: ``alpha d_g w_g / ||w_g||`` (0 on zero groups)."""
        return self.alpha * self.lmo_dual_ball(w)

    def lmo_dual_ball(self, s: ArrayLike) -> np.ndarray:
        """``argmax <s, t>`` over ``{Omega*(t) <= 1}``: ``d_g s_g / ||s_g||``; value ``Omega(s)``."""
        nrm = self._group_norms(s)
        return np.asarray(s, dtype=float) * self._per_coord(self.weights / np.where(nrm > 0, nrm, np.inf))

    def lmo_ball(self, g: ArrayLike) -> np.ndarray:
        """``argmax <g, u>`` over ``{Omega(u) <= 1}``: ``g_G / (d_G ||g_G||)``, G maximizing the ratio."""
        ratios = self._group_norms(g) / self.weights
        k = int(np.argmax(ratios))
        out = np.zeros(self.n_features)
        idx = self.groups[k]
        if ratios[k] > 0:
            out[idx] = np.asarray(g, dtype=float)[idx] / (ratios[k] * self.weights[k] ** 2)  # Omega(out) = 1
        return out


    def get_params(self) -> dict[str, Any]:
        return {"name": self.name, "alpha": self.alpha, "groups": [g.tolist() for g in self.groups],
                "weights": self.weights.tolist()}
