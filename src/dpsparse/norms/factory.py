"""Penalties by name for a design whose intercept column is last (estimators, CLI)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .group import GroupLasso
from .separable import PENALTIES, Penalty, make_penalty
from .submodular import GroupCount, Nonempty, SubmodularNorm

__all__ = ["PENALTY_NAMES", "STRUCTURED", "parse_groups", "build_penalty"]

GroupSpec = str | dict[str, Any] | Sequence[ArrayLike]  # a JSON file, a mapping or index lists

STRUCTURED = ("linf", "group-l2", "group-linf")
PENALTY_NAMES = tuple(sorted(PENALTIES)) + STRUCTURED


def parse_groups(spec: GroupSpec, n_features: int) -> tuple[list[np.ndarray], np.ndarray | None]:
    """Groups from a list of index lists, a dict ``{"groups": ..., "weights": ...}`` or a JSON file.

    Indices are 0-based columns of the data (the intercept is never in a group); the
    file format is in docs/norms.md.

    Returns
    -------
    groups : list of ndarray of int
    weights : ndarray or None

    Raises
    ------
    ValueError
        Unreadable file, wrong structure, or an index outside ``range(n_features)``.
    """
    if isinstance(spec, str):
        try:
            with open(spec) as fh:
                spec = json.load(fh)
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"groups file {spec!r} cannot be read: {exc}") from None
    weights = None
    if isinstance(spec, dict):
        unknown = set(spec) - {"groups", "weights"}
        if unknown or "groups" not in spec:
            raise ValueError(f"groups: a mapping needs the key 'groups' (and optionally 'weights'), got {sorted(spec)}")
        weights = None if spec.get("weights") is None else np.asarray(spec["weights"], dtype=float)
        spec = spec["groups"]
    if any(np.ndim(g) == 0 for g in spec):  # [0, 1] would be two groups of one feature each, silently
        raise ValueError("groups must be a list of lists of column indices, e.g. [[0, 1], [2, 3]]; got a list with "
                         "single indices in it")
    try:
        groups = [np.asarray(g, dtype=int).ravel() for g in spec]
    except (TypeError, ValueError):
        raise ValueError("groups must be a list of lists of column indices") from None
    if not groups or any(g.size == 0 for g in groups):
        raise ValueError("groups must be a non-empty list of non-empty lists of column indices")
    bad = [int(i) for g in groups for i in g if not 0 <= i < n_features]
    if bad:
        raise ValueError(f"groups: column indices {bad[:5]} are outside range({n_features})")
    if weights is not None and weights.shape != (len(groups),):
        raise ValueError(f"groups: {len(groups)} groups but {weights.size} weights")
    return groups, weights


def build_penalty(name: str, alpha: float, n_features: int, fit_intercept: bool = True, groups: GroupSpec | None = None,
                  l1_ratio: float = 0.5) -> Penalty:
    """The penalty ``name`` on ``n_features`` features, intercept (last) unpenalized.

    Parameters
    ----------
    name : {"l1", "l2", "elasticnet", "linf", "group-l2", "group-linf"}
        ``linf``: the L_inf norm (F = min(|A|, 1)); ``group-l2``: group Lasso;
        ``group-linf``: sum over groups of the L_inf norm (F = weighted group count).
    alpha : float >= 0
    n_features : int
        Features before the intercept column.
    fit_intercept : bool
    groups : see ``parse_groups``; required by the group penalties.
    l1_ratio : float, for ``elasticnet``.

    Raises
    ------
    ValueError
        Unknown name, missing or invalid groups.
    """
    free = [n_features] if fit_intercept else None
    if groups is not None and name not in ("group-l2", "group-linf"):
        raise ValueError(f"groups go with the penalties 'group-l2' and 'group-linf', not {name!r}")
    if name in PENALTIES:
        extra = {"l1_ratio": l1_ratio} if name == "elasticnet" else {}
        # weight 1 on the features, 0 on the intercept: one number, not a vector of weights
        return make_penalty(name, alpha, None if fit_intercept else np.ones(n_features),
                            n_penalized=n_features if fit_intercept else None, **extra)
    if name not in STRUCTURED:
        raise ValueError(f"unknown penalty {name!r}; allowed: {list(PENALTY_NAMES)}")
    if name == "linf":
        return SubmodularNorm(Nonempty(n_features), alpha, unpenalized=free)
    if groups is None:
        raise ValueError(f"penalty {name!r} needs groups (a list of column-index lists or a JSON file)")
    groups, weights = parse_groups(groups, n_features)
    if name == "group-l2":
        columns, counts = np.unique(np.concatenate(groups), return_counts=True)
        shared = columns[counts > 1].tolist()
        if shared:
            raise ValueError(f"penalty 'group-l2' needs disjoint groups: column(s) {shared[:5]} are in more than one "
                             "group (overlapping groups: penalty 'group-linf', docs/norms.md)")
        return GroupLasso(groups, n_features + fit_intercept, alpha, weights)
    return SubmodularNorm(GroupCount(n_features, groups, weights), alpha, unpenalized=free)
