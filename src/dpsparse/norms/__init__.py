"""Penalties: separable (L1, L2, elastic net) and structured norms.

A penalty ``psi(w)`` is added to the average loss with its own strength ``alpha``.
The interface every penalty implements:

``value(w)``
    ``psi(w)``.
``prox(x, step)``
    ``argmin_w psi(w) + ||w - x||^2 / (2 step)``; for separable penalties ``step`` may be
    an array of per-coordinate steps, structured norms take a scalar.
``conjugate(v)`` and ``dual_scaling(v)``
    ``psi*(v)`` (``inf`` outside its domain) and the largest ``s`` in (0, 1] with
    ``psi*(s v)`` finite: what a solver needs to certify a duality gap.
``unpenalized``
    Indices of coordinates outside the penalty (the intercept column).

Separable penalties (``is_separable = True``, module ``separable``) add
``coordinate_values`` and ``subdiff_distance`` for coordinate methods. Structured norms
(``submodular``: norms of submodular set functions; ``group``: group Lasso) add
``omega``, ``dual_norm``, ``subgradient``, ``lmo_ball`` and ``lmo_dual_ball``;
``gaussian_width`` estimates the Gaussian width of their dual balls. See docs/norms.md.
"""
from .factory import PENALTY_NAMES, STRUCTURED, build_penalty, parse_groups
from .group import GroupLasso
from .separable import L1, L2, PENALTIES, ElasticNet, Penalty, make_penalty, require
from .submodular import (
    Cardinality,
    ConcaveCardinality,
    CustomSetFunction,
    GroupCount,
    Nonempty,
    Range,
    SetFunction,
    SubmodularNorm,
    min_norm_point,
    tree_groups,
)
from .width import gaussian_width

__all__ = [
    "Penalty", "ElasticNet", "L1", "L2", "make_penalty", "PENALTIES", "require",
    "SetFunction", "Cardinality", "Nonempty", "GroupCount", "ConcaveCardinality", "Range",
    "CustomSetFunction", "tree_groups", "SubmodularNorm", "min_norm_point",
    "GroupLasso", "gaussian_width", "build_penalty", "parse_groups", "PENALTY_NAMES", "STRUCTURED",
]
