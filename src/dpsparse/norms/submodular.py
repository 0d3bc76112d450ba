"""Submodular set functions and the structured norms they induce.

A set function ``F: 2^V -> R`` on ``V = {0, ..., p-1}`` that is submodular,
non-decreasing, with ``F(empty) = 0`` and ``F({j}) > 0``, defines the norm
``Omega(w) = f(|w|)``, ``f`` the Lovasz extension of ``F``: the tight convex relaxation
of ``F(supp(w))`` on the L_inf ball (Kumar & Deisenroth, "Differentially Private Empirical
Risk Minimization with Sparsity-Inducing Norms", arXiv 2019, section 2; Bach, NIPS 2010,
"Structured sparsity-inducing norms through submodular functions"; Bach, FnT ML 2013,
"Learning with submodular functions: a convex optimization perspective").

Facts used here (Bach 2013, sections 3-5 and 8):

* Greedy algorithm: for ``|w|`` sorted decreasingly along ``j1, j2, ...``,
  ``Omega(w) = sum_k |w|_(jk) [F({j1..jk}) - F({j1..jk-1})]`` (``O(p log p)``).
* ``Omega`` is the support function of the symmetric submodular polyhedron
  ``|P|(F) = {s : |s|(A) <= F(A) for all A}``; the greedy vertex (``sign(s)`` times the
  marginal gains along decreasing ``|s|``) maximizes ``<s, t>`` over ``|P|(F)``.
* Dual norm ``Omega*(s) = max_{A nonempty} |s|(A) / F(A)``, the gauge of ``|P|(F)``;
  ``prox_{alpha Omega}(x) = x - proj_{alpha |P|(F)}(x)`` (Moreau).

Each set function gives ``gains(order)`` (vectorized marginal gains along one or many
orders), ``dual_argmax(a)`` (``max_A a(A)/F(A)`` for ``a >= 0``, with a maximizing set, by
the exact method named in ``dual_method``) and optionally a closed-form ``prox``.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .separable import NormPenalty

__all__ = [
    "SetFunction", "Cardinality", "Nonempty", "GroupCount", "ConcaveCardinality", "Range",
    "CustomSetFunction", "tree_groups", "SubmodularNorm", "min_norm_point",
]

_MAX_CHECK_P = 14
_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
_MAX_TABLE_P = 20


def _check_p(p):
    if int(p) != p or p < 1:
        raise ValueError(f"the ground set size p must be an integer >= 1, got {p!r}")
    return int(p)


def _set_str(mask):
    return "{" + ", ".join(str(j) for j in np.flatnonzero(mask)) + "}"


class SetFunction:
    """Base class: a normalized non-decreasing submodular ``F`` on ``{0, ..., p-1}``.

    Subclasses define ``p``, the string ``dual_method`` and:

    ``_values(masks)``
        ``F`` on boolean masks of shape (..., p).
    ``gains(order)``
        Marginal gains ``F({j1..jk}) - F({j1..jk-1})``, k = 1..p, along permutations
        ``order`` of shape (p,) or (m, p) (one permutation of ``range(p)`` per row);
        same shape as ``order``.
    ``dual_argmax(a)``
        ``max_{A nonempty} a(A) / F(A)`` for ``a >= 0`` of shape (p,), and a maximizing
        boolean mask.
    """

    p: int

    def mask(self, A: ArrayLike) -> np.ndarray:
        """Boolean mask of shape (p,) from a mask or an index array."""
        A = np.asarray(A)
        if A.dtype == bool:
            if A.shape != (self.p,):
                raise ValueError(f"a boolean mask must have shape ({self.p},), got {A.shape}")
            return A
        out = np.zeros(self.p, dtype=bool)
        out[A.astype(int)] = True
        return out

    def __call__(self, A: ArrayLike) -> float:
        """``F(A)`` for a boolean mask of shape (p,) or an array of indices."""
        return float(self._values(self.mask(A)[None, :])[0])

    def prox(self, x: np.ndarray, t: float) -> np.ndarray | None:
        """Closed-form ``prox_{t Omega}(x)``, or None when there is none."""
        return None

    def get_params(self) -> dict[str, Any]:
        return {"name": type(self).__name__, "p": self.p}


def _all_masks(p):
    """Boolean masks of shape (2**p, p) of all subsets, row ``code`` = bits of ``code``."""
    return (np.arange(2**p)[:, None] >> np.arange(p)[None, :]) & 1 == 1


def _soft_threshold(x, t):
    return np.sign(x) * np.maximum(np.abs(x) - t, 0.0)


def _project_l1_ball(x, radius):
    """Euclidean projection onto ``{||z||_1 <= radius}`` (sort-based, Duchi et al. 2008)."""
    a = np.abs(x)
    if a.sum() <= radius:
        return x.copy()
    u = np.sort(a)[::-1]
    css = np.cumsum(u) - radius
    k = np.flatnonzero(u > css / np.arange(1, a.size + 1))[-1]
    return _soft_threshold(x, css[k] / (k + 1))


class Cardinality(SetFunction):
    """``F(A) = |A|``: ``Omega`` is the L1 norm, ``|P|(F)`` the L_inf ball, ``Omega* = L_inf``."""

    dual_method = "closed form max_j |s_j|"

    def __init__(self, p: int):
        self.p = _check_p(p)

    def _values(self, masks: np.ndarray) -> np.ndarray:
        return masks.sum(axis=-1).astype(float)

    def gains(self, order: ArrayLike) -> np.ndarray:
        return np.ones(np.shape(order))

    def dual_argmax(self, a: np.ndarray) -> tuple[float, np.ndarray]:
        j = int(np.argmax(a))
        return float(a[j]), self.mask([j])

    def prox(self, x: np.ndarray, t: float) -> np.ndarray | None:
        return _soft_threshold(x, t)


class Nonempty(SetFunction):
    """``F(A) = min(|A|, 1)``: ``Omega`` is L_inf, ``|P|(F)`` the L1 ball, ``Omega* = L1``."""

    dual_method = "closed form ||s||_1"

    def __init__(self, p: int):
        self.p = _check_p(p)

    def _values(self, masks: np.ndarray) -> np.ndarray:
        return masks.any(axis=-1).astype(float)

    def gains(self, order: ArrayLike) -> np.ndarray:
        out = np.zeros(np.shape(order))
        out[..., 0] = 1.0
        return out

    def dual_argmax(self, a: np.ndarray) -> tuple[float, np.ndarray]:
        return float(a.sum()), np.ones(self.p, dtype=bool)

    def prox(self, x: np.ndarray, t: float) -> np.ndarray | None:
        return x - _project_l1_ball(x, t)


def tree_groups(parent: ArrayLike) -> list[np.ndarray]:
    """Groups of a hierarchy: for each node, the node and all its descendants.

    With these groups, ``GroupCount`` penalizes a variable only after its ancestors: the
    supports it selects are rooted subtrees (Bach 2013, section 6.2; Jenatton et al. 2011).

    Parameters
    ----------
    parent : int sequence of length p
        ``parent[j]`` is the parent of node ``j``, ``-1`` for roots.

    Returns
    -------
    list of p int ndarrays
    """
    parent = np.asarray(parent, dtype=int)
    p = parent.size
    desc = np.eye(p, dtype=bool)
    for j in range(p):
        k, seen = parent[j], 0
        while k >= 0:
            if seen > p:
                raise ValueError("parent does not define a forest (it has a cycle)")
            desc[k, j] = True
            k, seen = parent[k], seen + 1
    return [np.flatnonzero(row) for row in desc]


class GroupCount(SetFunction):
    """Weighted group count ``F(A) = sum_g d_g 1{A meets g}``; groups may overlap.

    ``Omega(w) = sum_g d_g ||w_g||_inf``: the L1/L_inf group norm, with nested groups the
    hierarchical norm (Bach 2013, section 6.2; Obozinski & Bach 2012).

    Parameters
    ----------
    p : int
    groups : sequence of int sequences
        Nonempty groups of indices in ``range(p)``; every index must be in some group.
    weights : ndarray of shape (n_groups,) of floats > 0, or None (all ones)
    """

    def __init__(self, p: int, groups: Iterable[ArrayLike], weights: ArrayLike | None = None):
        self.p = _check_p(p)
        self.groups = [np.unique(np.asarray(g, dtype=int)) for g in groups]
        if not self.groups or any(g.size == 0 or g.min() < 0 or g.max() >= p for g in self.groups):
            raise ValueError(f"groups must be a nonempty list of nonempty subsets of range({p})")
        d = np.ones(len(self.groups)) if weights is None else np.asarray(weights, dtype=float)
        if d.shape != (len(self.groups),) or not np.all(np.isfinite(d)) or np.any(d <= 0):
            raise ValueError("group weights must be finite, > 0, one per group")
        self.weights = d
        self._flat = np.concatenate(self.groups)
        self._starts = np.cumsum([0] + [g.size for g in self.groups[:-1]])
        counts = np.bincount(self._flat, minlength=p)
        if np.any(counts == 0):
            raise ValueError(f"every variable must be in a group (F({{j}}) > 0); missing: "
                             f"{np.flatnonzero(counts == 0).tolist()}")
        self.disjoint = bool(np.all(counts == 1))
        self.dual_method = ("closed form max_g ||s_g||_1 / d_g" if self.disjoint
                            else "linear program over group decompositions (HiGHS), repaired to an exact upper bound")

    def _values(self, masks: np.ndarray) -> np.ndarray:
        met = np.maximum.reduceat(masks[..., self._flat], self._starts, axis=-1)
        return met.astype(float) @ self.weights

    def gains(self, order: ArrayLike) -> np.ndarray:
        order = np.asarray(order)
        pos = np.argsort(order, axis=-1)  # position of each variable in its order
        first = np.minimum.reduceat(pos[..., self._flat], self._starts, axis=-1)
        out = np.zeros(order.shape)
        rows = out.reshape(-1, self.p)
        firsts = first.reshape(rows.shape[0], -1)
        np.add.at(rows, (np.arange(rows.shape[0])[:, None], firsts), self.weights)
        return out

    def dual_argmax(self, a: np.ndarray) -> tuple[float, np.ndarray]:
        if self.disjoint:
            ratios = np.add.reduceat(a[self._flat], self._starts) / self.weights
            g = int(np.argmax(ratios))
            return float(ratios[g]), self.mask(self.groups[g])
        return self._dual_lp(a)

    def _dual_lp(self, a):
        """Overlapping groups: ``Omega*(a)`` as a linear program over decompositions.

        ``Omega*(a) = min max_g xi^g(g) / d_g`` over ``xi^g >= 0`` supported in g with
        ``sum_g xi^g = a`` (dual of ``sum_g d_g ||u_g||_inf <= 1``; Obozinski & Bach). The
        LP solution, repaired to an exact decomposition, gives an upper bound; its dual
        variables ``u`` a set (best level set of u) and a lower bound. Returns the upper
        bound (safe for dual scaling) and that set.
        """
        G, n = len(self.groups), self._flat.size
        gid = np.repeat(np.arange(G), [g.size for g in self.groups])
        A_eq = np.zeros((self.p, n + 1))
        A_eq[self._flat, np.arange(n)] = 1.0
        A_ub = np.zeros((G, n + 1))
        A_ub[gid, np.arange(n)] = 1.0
        A_ub[:, n] = -self.weights
        from scipy.optimize import linprog  # here: scipy.optimize is slow to import, and rarely needed

        res = linprog(np.r_[np.zeros(n), 1.0], A_ub=A_ub, b_ub=np.zeros(G), A_eq=A_eq, b_eq=a,
                      bounds=(0, None), method="highs", options=_LP_OPTIONS)
        if res.status != 0:
            raise RuntimeError(f"dual norm linear program failed: {res.message}")
        xi = np.maximum(res.x[:n], 0.0)
        total = np.bincount(self._flat, weights=xi, minlength=self.p)
        xi *= np.where(total > 0, a / np.where(total > 0, total, 1.0), 0.0)[self._flat]
        missing = (total == 0) & (a > 0)  # put a_j in the first group that holds j
        first = np.unique(self._flat, return_index=True)[1]
        xi[first[missing]] = a[missing]
        upper = float(np.max(np.bincount(gid, weights=xi, minlength=G) / self.weights))
        lower, A = _best_level_set(self, a, np.maximum(res.eqlin.marginals, 0.0))
        return max(upper, lower), A

    def prox(self, x: np.ndarray, t: float) -> np.ndarray | None:
        if not self.disjoint:
            return None
        out = np.empty_like(x)
        for g, d in zip(self.groups, self.weights):
            out[g] = x[g] - _project_l1_ball(x[g], t * d)
        return out

    def get_params(self) -> dict[str, Any]:
        return {"name": "GroupCount", "p": self.p, "groups": [g.tolist() for g in self.groups],
                "weights": self.weights.tolist()}


def _best_level_set(F, a, u):
    """Best ratio ``a(A)/F(A)`` over the level sets ``{u >= tau}`` of ``u >= 0``.

    ``<a, u> / f(u)`` is a weighted mean of these ratios (``f`` the Lovasz extension), so
    the best level set does at least as well as ``u``.
    """
    levels = np.unique(u[u > 0])
    if levels.size == 0:
        levels = np.array([np.max(u)])
    masks = u[None, :] >= levels[:, None]
    ratios = (masks @ a) / F._values(masks)
    k = int(np.argmax(ratios))
    return float(ratios[k]), masks[k]


class ConcaveCardinality(SetFunction):
    """``F(A) = h(|A|)``, ``h`` concave, non-decreasing, ``h(0) = 0``, ``h(1) > 0``.

    Examples: ``h(k) = k`` (L1), ``min(k, 1)`` (L_inf), ``min(k, r)``, ``sqrt(k)``
    (Bach 2013, section 6.1). ``Omega(w) = sum_k |w|_(k) (h(k) - h(k-1))``, an ordered
    weighted L1 norm.

    Parameters
    ----------
    p : int
    h : callable on int ndarrays (vectorized), or ndarray of shape (p + 1,) of ``h(0..p)``
    """

    dual_method = "closed form max_k (sum of the k largest |s_j|) / h(k)"

    def __init__(self, p: int, h: Callable[[np.ndarray], ArrayLike] | ArrayLike):
        self.p = _check_p(p)
        hv = np.asarray(h(np.arange(p + 1)) if callable(h) else h, dtype=float)
        if hv.shape != (p + 1,) or not np.all(np.isfinite(hv)):
            raise ValueError(f"h must give p + 1 = {p + 1} finite values h(0..p)")
        inc = np.diff(hv)
        tol = 1e-12 * max(1.0, np.max(np.abs(hv)))
        if hv[0] != 0 or inc[0] <= 0:
            raise ValueError("h must have h(0) = 0 and h(1) > 0")
        if np.any(inc < -tol):
            k = int(np.flatnonzero(inc < -tol)[0]) + 1
            raise ValueError(f"h must be non-decreasing: h({k}) < h({k - 1})")
        if np.any(np.diff(inc) > tol):
            k = int(np.flatnonzero(np.diff(inc) > tol)[0]) + 1
            raise ValueError(f"h must be concave: h({k + 1}) - h({k}) > h({k}) - h({k - 1})")
        self.h = hv
        self._inc = inc

    def _values(self, masks: np.ndarray) -> np.ndarray:
        return self.h[masks.sum(axis=-1)]

    def gains(self, order: ArrayLike) -> np.ndarray:
        return np.broadcast_to(self._inc, np.shape(order)).copy()

    def dual_argmax(self, a: np.ndarray) -> tuple[float, np.ndarray]:
        order = np.argsort(-a, kind="stable")
        ratios = np.cumsum(a[order]) / self.h[1:]
        k = int(np.argmax(ratios))
        return float(ratios[k]), self.mask(order[: k + 1])

    def get_params(self) -> dict[str, Any]:
        return {"name": "ConcaveCardinality", "p": self.p, "h": self.h.tolist()}


class Range(SetFunction):
    """``F(A) = offset + max(A) - min(A) + 1`` for nonempty A: favours contiguous supports.

    The bare range ``max(A) - min(A) + 1`` is not submodular for p >= 3 (``F({0}) +
    F({p-1}) = 2 < F({0, p-1}) = p``); adding a constant on nonempty sets makes it
    submodular exactly when ``offset >= p - 2`` (then ``F`` is a group count with groups
    ``{0..k}`` and ``{k+1..p-1}``). Bach (NIPS 2010, section 4; FnT 2013, section 6.4)
    uses ``offset = p - 1``, the default.

    Parameters
    ----------
    p : int
    offset : float >= p - 2, or None (p - 1)
    """

    dual_method = "closed form max over intervals [a, b] of |s|([a, b]) / F([a, b])"

    def __init__(self, p: int, offset: float | None = None):
        self.p = _check_p(p)
        self.offset = float(p - 1 if offset is None else offset)
        if self.offset < p - 2:
            raise ValueError(f"Range with offset {self.offset} < p - 2 = {p - 2} is not submodular: "
                             f"F({{0}}) + F({{{p - 1}}}) < F({{0, {p - 1}}}) + F({{}})")

    def _values(self, masks: np.ndarray) -> np.ndarray:
        nonempty = masks.any(axis=-1)
        idx = np.arange(self.p)
        hi = np.max(np.where(masks, idx, -1), axis=-1)
        lo = np.min(np.where(masks, idx, self.p), axis=-1)
        return np.where(nonempty, self.offset + hi - lo + 1.0, 0.0)

    def gains(self, order: ArrayLike) -> np.ndarray:
        order = np.asarray(order)
        hi = np.maximum.accumulate(order, axis=-1)
        lo = np.minimum.accumulate(order, axis=-1)
        return np.diff(self.offset + hi - lo + 1.0, axis=-1, prepend=0.0)

    def dual_argmax(self, a: np.ndarray) -> tuple[float, np.ndarray]:
        # Any A with ends lo <= hi costs F([lo, hi]); filling the interval only adds mass.
        c = np.r_[0.0, np.cumsum(a)]
        lo, hi = np.triu_indices(self.p)
        ratios = (c[hi + 1] - c[lo]) / (self.offset + hi - lo + 1.0)
        k = int(np.argmax(ratios))
        m = np.zeros(self.p, dtype=bool)
        m[lo[k]: hi[k] + 1] = True
        return float(ratios[k]), m

    def get_params(self) -> dict[str, Any]:
        return {"name": "Range", "p": self.p, "offset": self.offset}


class CustomSetFunction(SetFunction):
    """A user-supplied ``F``, tabulated on all ``2**p`` subsets and checked by brute force.

    Parameters
    ----------
    func : callable
        ``func(A)`` with ``A`` a boolean mask of shape (p,), returning a float.
    p : int <= 20
    check : bool
        Verify ``F(empty) = 0``, ``F({j}) > 0``, monotonicity and submodularity on all
        sets (p <= 14 only; larger p needs ``check=False``: you vouch for ``F``).

    Raises
    ------
    ValueError
        Naming the sets that violate a property.
    """

    def __init__(self, func: Callable[[np.ndarray], float], p: int, check: bool = True):
        self.p = _check_p(p)
        if p > _MAX_TABLE_P or (check and p > _MAX_CHECK_P):
            raise ValueError(f"a custom set function is tabulated for p <= {_MAX_TABLE_P} and checked "
                             f"by brute force for p <= {_MAX_CHECK_P} (check=False skips it); got p = {p}")
        masks = _all_masks(p)
        self.table = np.array([float(func(m)) for m in masks])
        if check:
            _validate(self.table, p)
        self.func = func

    def _values(self, masks: np.ndarray) -> np.ndarray:
        codes = masks.astype(np.int64) @ (1 << np.arange(self.p, dtype=np.int64))
        return self.table[codes]

    dual_method = "brute force over all nonempty sets (tabulated F)"

    def gains(self, order: ArrayLike) -> np.ndarray:
        codes = np.cumsum(np.int64(1) << np.asarray(order, dtype=np.int64), axis=-1)
        return np.diff(self.table[codes], axis=-1, prepend=0.0)

    def dual_argmax(self, a: np.ndarray) -> tuple[float, np.ndarray]:
        sums = np.zeros(1)
        for aj in a:  # a(A) for every code A, bit j = element j
            sums = np.concatenate([sums, sums + aj])
        ratios = sums[1:] / self.table[1:]
        k = int(np.argmax(ratios)) + 1
        return float(ratios[k - 1]), (k >> np.arange(self.p)) & 1 == 1


def _validate(T, p):
    """Raise ValueError naming sets that break normalization, positivity, monotonicity or submodularity."""
    tol = 1e-12 * max(1.0, np.max(np.abs(T)))
    if not np.all(np.isfinite(T)):
        raise ValueError("F must be finite on every set")
    if abs(T[0]) > tol:
        raise ValueError(f"F(empty) must be 0, got {T[0]}")
    codes = np.arange(2**p)
    single = T[1 << np.arange(p)]
    if np.any(single <= 0):
        j = int(np.flatnonzero(single <= 0)[0])
        raise ValueError(f"F({{{j}}}) = {single[j]} must be > 0")
    bits = [(codes & (1 << j)) == 0 for j in range(p)]
    mask_of = lambda c: _set_str((c >> np.arange(p)) & 1 == 1)  # noqa: E731
    for j in range(p):
        base = codes[bits[j]]
        bad = np.flatnonzero(T[base | (1 << j)] < T[base] - tol)
        if bad.size:
            c = int(base[bad[0]])
            raise ValueError(f"F is not non-decreasing: F({mask_of(c | 1 << j)}) = {T[c | 1 << j]} "
                             f"< F({mask_of(c)}) = {T[c]}")
    for j, k in itertools.combinations(range(p), 2):
        base = codes[bits[j] & bits[k]]
        bj, bk = base | (1 << j), base | (1 << k)
        slack = T[bj] + T[bk] - T[bj | (1 << k)] - T[base]
        bad = np.flatnonzero(slack < -tol)
        if bad.size:
            c = int(base[bad[0]])
            a, b = c | 1 << j, c | 1 << k
            raise ValueError(f"F is not submodular: F({mask_of(a)}) + F({mask_of(b)}) = {T[a] + T[b]} "
                             f"< F({mask_of(a | b)}) + F({mask_of(c)}) = {T[a | b] + T[c]}")


def min_norm_point(y: np.ndarray, lmo: Callable[[np.ndarray], np.ndarray], tol: float,
                   max_iter: int = 1000) -> tuple[np.ndarray, float]:
    """Projection of ``y`` onto a polytope given by its linear maximization oracle (Wolfe 1976).

    Wolfe's min-norm-point algorithm on ``Q - y``: corrals of affinely independent
    vertices, exact affine minimization, line search back into the convex hull. Stops
    when the Frank-Wolfe gap ``g = <t - y, t - v>`` (``v = lmo(y - t)``) is <= ``tol``;
    then ``||t - proj_Q(y)||**2 <= 2 g``.

    Parameters
    ----------
    y : ndarray of shape (p,)
    lmo : callable
        ``lmo(d)`` returns a maximizer of ``<d, v>`` over Q, shape (p,).
    tol : float > 0
    max_iter : int
        Major iterations.

    Returns
    -------
    t : ndarray of shape (p,)
        A point of Q (a convex combination of oracle outputs).
    gap : float
        The final Frank-Wolfe gap (``<= tol`` unless max_iter was reached).
    """
    S = (lmo(y) - y)[None, :]
    lam = np.ones(1)
    x = S[0].copy()
    gap = np.inf
    for _ in range(max_iter):
        q = lmo(-x) - y
        gap = float(x @ (x - q))
        if gap <= tol or np.any(np.all(S == q, axis=1)):
            break
        S, lam = np.vstack([S, q]), np.r_[lam, 0.0]
        S, lam, x = _wolfe_minor_cycles(S, lam)
    return x + y, max(gap, 0.0)


def _wolfe_minor_cycles(S, lam):
    """Move to the min-norm point of the corral's affine hull, dropping vertices on the way."""
    while True:
        k = S.shape[0]
        K = np.zeros((k + 1, k + 1))
        K[:k, :k] = S @ S.T
        K[:k, k] = K[k, :k] = 1.0
        alpha = np.linalg.lstsq(K, np.r_[np.zeros(k), 1.0], rcond=None)[0][:k]
        if np.all(alpha > 1e-14):
            return S, alpha, alpha @ S
        neg = alpha <= 1e-14
        den = lam[neg] - alpha[neg]
        theta = np.min(np.where(den > 0, lam[neg] / np.where(den > 0, den, 1.0), 0.0))
        lam = theta * alpha + (1.0 - theta) * lam
        keep = lam > 1e-14
        S, lam = S[keep], lam[keep] / lam[keep].sum()


class SubmodularNorm(NormPenalty):
    """The norm ``alpha * Omega(w)``, ``Omega(w) = f(|w|)``, of a submodular ``F``.

    Parameters
    ----------
    F : SetFunction
        On the penalized coordinates (``F.p`` of them, in increasing index order).
    alpha : float >= 0
    unpenalized : int sequence or None
        Coordinates left out of the norm (the intercept column), so that vectors have
        ``F.p + len(unpenalized)`` coordinates. The solvers of ``dpsparse.solvers``
        accept one, the all-ones intercept column: e.g. ``unpenalized=[p]`` for the
        intercept appended last by ``dpsparse.data.prepare``.
    prox_tol : float > 0
        Target accuracy ``||prox - exact prox||`` of the min-norm-point prox (general F).

    Notes
    -----
    The conjugate of ``alpha Omega`` is the indicator of ``alpha |P|(F)`` (and of
    ``{0}`` on unpenalized coordinates). Methods take full-length vectors.
    """

    name = "submodular"
    is_separable = False

    def __init__(self, F: SetFunction, alpha: float = 1.0, unpenalized: ArrayLike | None = None,
                 prox_tol: float = 1e-7):
        if not np.isfinite(alpha) or alpha < 0:
            raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
        self.F, self.alpha, self.prox_tol = F, float(alpha), float(prox_tol)
        free = np.unique(np.asarray([] if unpenalized is None else unpenalized, dtype=int))
        self.n_features = F.p + free.size
        if free.size and (free.min() < 0 or free.max() >= self.n_features):
            raise ValueError(f"unpenalized indices must lie in range({self.n_features})")
        self._free = free
        self._pen = np.setdiff1d(np.arange(self.n_features), free)
        self.prox_accuracy = 0.0

    @property
    def unpenalized(self) -> np.ndarray:
        """Indices of coordinates outside the norm."""
        return self._free

    @property
    def dual_method(self) -> str:
        """How the dual norm is computed."""
        return self.F.dual_method

    def _part(self, w):
        w = np.asarray(w, dtype=float)
        if w.shape[-1] != self.n_features:
            raise ValueError(f"vectors must have {self.n_features} coordinates, got {w.shape[-1]}")
        return w[..., self._pen]

    def omega(self, w: ArrayLike) -> float | np.ndarray:
        """``Omega(w)`` (without alpha) by the greedy algorithm; w of shape (n,) or (m, n)."""
        a = np.abs(self._part(w))
        order = np.argsort(-a, axis=-1, kind="stable")
        return np.sum(np.take_along_axis(a, order, axis=-1) * self.F.gains(order), axis=-1)

    def value(self, w: ArrayLike) -> float:
        return self.alpha * float(self.omega(w))

    def _greedy_vertex(self, s):
        """Maximizer of ``<s, t>`` over ``|P|(F)`` (penalized coordinates)."""
        order = np.argsort(-np.abs(s), kind="stable")
        t = np.empty_like(s)
        t[order] = self.F.gains(order)
        return np.sign(s) * t

    def _full(self, part):
        out = np.zeros(self.n_features)
        out[self._pen] = part
        return out

    def lmo_dual_ball(self, s: ArrayLike) -> np.ndarray:
        """``argmax <s, t>`` over ``|P|(F)`` (0 on unpenalized coordinates); value ``Omega(s)``."""
        return self._full(self._greedy_vertex(self._part(s)))

    def subgradient(self, w: ArrayLike) -> np.ndarray:
        """An element of ``d(alpha Omega)(w)`` (0 on unpenalized coordinates)."""
        return self.alpha * self.lmo_dual_ball(w)

    def dual_norm(self, s: ArrayLike) -> float:
        """``Omega*(s) = max_{A nonempty} |s|(A) / F(A)`` (method: ``dual_method``)."""
        return self.F.dual_argmax(np.abs(self._part(s)))[0]

    def lmo_ball(self, g: ArrayLike) -> np.ndarray:
        """``argmax <g, u>`` over ``{Omega(u) <= 1}``: ``1_A sign(g) / F(A)``, A attaining ``Omega*(g)``."""
        gp = self._part(g)
        _, A = self.F.dual_argmax(np.abs(gp))
        return self._full(np.where(A, np.sign(gp), 0.0) / self.F(A))

    def project_dual_ball(self, x: ArrayLike, radius: float = 1.0) -> tuple[np.ndarray, float]:
        """Projection of the penalized part of ``x`` onto ``radius |P|(F)`` (min-norm point).

        Returns
        -------
        t : ndarray of shape (F.p,)
        accuracy : float
            Certified bound on ``||t - exact projection||``.
        """
        xp = self._part(x)
        if radius == 0:
            return np.zeros_like(xp), 0.0
        if self.F.dual_argmax(np.abs(xp))[0] <= radius:
            return xp.copy(), 0.0
        tol = 0.5 * (self.prox_tol * max(1.0, np.linalg.norm(xp))) ** 2
        t, gap = min_norm_point(xp, lambda d: radius * self._greedy_vertex(d), tol)
        return t, float(np.sqrt(2.0 * gap))

    def prox(self, x: ArrayLike, step: float) -> np.ndarray:
        """``argmin_w alpha Omega(w) + ||w - x||^2 / (2 step)`` (scalar step).

        Closed forms for L1, L_inf and disjoint L1/L_inf groups; otherwise
        ``x - proj_{step alpha |P|(F)}(x)`` by min-norm point, whose certified accuracy is
        stored in ``prox_accuracy``.
        """
        if np.ndim(step) != 0:
            raise ValueError("a non-separable norm takes a scalar step")
        x = np.asarray(x, dtype=float)
        out = x.copy()
        t = step * self.alpha
        closed = self.F.prox(x[self._pen], t)
        if closed is not None:
            out[self._pen], self.prox_accuracy = closed, 0.0
        else:
            proj, self.prox_accuracy = self.project_dual_ball(x, t)
            out[self._pen] = x[self._pen] - proj
        return out


    def get_params(self) -> dict[str, Any]:
        return {"name": self.name, "alpha": self.alpha, "F": self.F.get_params(),
                "unpenalized": self._free.tolist()}
