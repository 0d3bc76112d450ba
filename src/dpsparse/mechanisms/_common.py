"""Checks and public constants shared by the mechanisms."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..affine import is_shifted

__all__ = ["abs_sum", "check_n_iter", "column", "derivative_at_zero", "row_norm_bound"]


def column(X, j):
    """Row indices and values of column ``j`` of a design (a dense array, CSC, or ``ShiftedSparse``,
    whose column is dense where its range does not contain 0 symmetrically)."""
    if is_shifted(X):
        if X.c[j] == 0.0:
            X = X.S
        else:
            return slice(None), X.column(j)
    if sp.issparse(X):
        sl = slice(X.indptr[j], X.indptr[j + 1])
        return X.indices[sl], X.data[sl]
    return slice(None), X[:, j]


def abs_sum(X, k):
    """``sum_ij |x_ij|`` over the first ``k`` columns of a design: a dense array, CSC or CSR matrix,
    ``ShiftedSparse`` (``S + f c^T``: the stored values' part, plus ``|f_i c_j|`` for the cells not stored), or a
    dask array (one reduction over the chunks, nothing gathered)."""
    from ..distributed import is_dask, row_sum

    if is_dask(X):
        return float(row_sum(lambda xc, _: np.abs(xc[:, :k]).sum(), X, None, 1)[0])
    if is_shifted(X):
        S = X.S.tocsc()
        cols = np.repeat(np.arange(S.shape[1]), np.diff(S.indptr))
        keep = cols < k
        rows, cols = S.indices[keep], cols[keep]
        shift = X.f[rows] * X.c[cols]
        return float(np.abs(S.data[keep] + shift).sum() + np.abs(X.f).sum() * np.abs(X.c[:k]).sum()
                     - np.abs(shift).sum())
    if sp.issparse(X):
        return float(abs(X[:, :k]).sum())
    return float(np.abs(np.asarray(X)[:, :k]).sum())


def derivative_at_zero(loss):
    """``max |f'(0, y)|`` over labels in [-1, 1]: attained at ``y = +-1`` for the losses here (squared and
    Huber: ``min(|y|, clip)``; logistic: ``1/2``; hinge: 1), never above ``loss.lipschitz``."""
    return float(np.max(np.abs(loss.bounded_derivative(np.zeros(2), np.array([-1.0, 1.0])))))


def check_n_iter(n_iter):
    """Raise ValueError unless ``n_iter`` is an integer >= 1."""
    if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 1:
        raise ValueError(f"n_iter must be an integer >= 1, got {n_iter!r}")


def row_norm_bound(feature_bounds, row_norm, p):
    """Public bound on ``||x_i||_2``: ``min(row_norm, ||feature_bounds||_2)``.

    Raises
    ------
    ValueError
        Bounds of the wrong length, not finite, negative, or a zero bound.
    """
    b = np.asarray(feature_bounds, dtype=float)
    if b.shape != (p,) or not np.all(np.isfinite(b)) or np.any(b < 0):
        raise ValueError(f"feature_bounds must be {p} finite numbers >= 0")
    R = float(np.linalg.norm(b)) if row_norm is None else min(float(row_norm), float(np.linalg.norm(b)))
    if not R > 0:
        raise ValueError("the row-norm bound must be > 0")
    return R
