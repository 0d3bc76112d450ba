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
        # the stored values of the unshifted columns, then each shifted column whole (dense, one at a time)
        S, shifted = X.S.tocsc(), np.flatnonzero(X.c[:k])
        total = _blocked_abs_sum(S.data[:S.indptr[k]])
        for j in shifted:
            total += np.abs(X.column(j)).sum() - _blocked_abs_sum(S.data[S.indptr[j]:S.indptr[j + 1]])
        return float(total)
    if sp.issparse(X) and X.format == "csc":
        return float(_blocked_abs_sum(X.data[:X.indptr[k]]))
    if sp.issparse(X):
        X = X.tocsr()
        return float(_blocked_abs_sum(X.data, X.indices, k))
    X = np.asarray(X)
    rows = _BLOCK // max(k, 1) + 1
    return float(sum(np.abs(X[i:i + rows, :k]).sum() for i in range(0, X.shape[0], rows)))


_BLOCK = 1 << 14
"""Values read at a time by ``abs_sum``: its temporaries stay a small part of any large X."""


def _blocked_abs_sum(values, columns=None, k=None):
    """``sum |values|`` (those whose column is below ``k`` when ``columns`` is given), ``_BLOCK`` at a time."""
    total = 0.0
    for i in range(0, values.size, _BLOCK):
        block = np.abs(values[i:i + _BLOCK])
        total += (block if columns is None else block[columns[i:i + _BLOCK] < k]).sum()
    return total


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
