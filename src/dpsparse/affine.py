"""Sparse input mapped onto [-1, 1] without densifying it: ``ShiftedSparse``.

``data.prepare`` maps each feature affinely onto [-1, 1] (``x' = scale x + shift``, after
clipping ``x`` to its public range), clips each row to the public L2 bound and appends a
column of ones. On dense input that is one new array. On a sparse ``X`` the map sends every
stored zero to ``c_j = clip(shift_j, -1, 1)``, which is not zero unless the range is
symmetric: the mapped matrix is dense. It is kept implicitly as

    X' = S + f c^T

with ``S`` a CSC matrix with the sparsity of ``X`` (its values ``x'_ij - f_i c_j``, the
column of ones last), ``c`` the image of zero per column (0 for the intercept) and ``f`` the
row-clipping factors (``f_i <= 1``). Every mechanism reads ``X'`` through products, columns
and rows: ``X' w = S w + f (c . w)``, ``X'^T v = S^T v + c (f . v)``, column ``S_j + c_j f``.
They cost O(nnz + n + p); a column whose range is symmetric (``c_j = 0``) stays sparse.
A model fitted on ``X'`` equals the model fitted on the dense mapped array (tests).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._arrays import number_or_array, uniform_view

__all__ = ["ShiftedSparse", "gram", "is_shifted"]


def is_shifted(X):
    return isinstance(X, ShiftedSparse)


def gram(X, weights=None):
    """``X^T diag(weights) X`` as a dense (p, p) array, for a dense, sparse or shifted ``X`` (small p)."""
    if is_shifted(X):
        return X.gram(weights)
    XtD = X.T if weights is None else X.T.multiply(weights) if sp.issparse(X) else X.T * weights
    G = XtD @ X
    return G.toarray() if sp.issparse(G) else np.asarray(G)


class ShiftedSparse:
    """The matrix ``S + f c^T`` (module docstring), read through products, columns and rows.

    Parameters
    ----------
    S : CSC matrix of shape (n, p)
        Sorted indices.
    c : ndarray of shape (p,)
    f : ndarray of shape (n,)
    """

    ndim = 2
    dtype = np.dtype(float)

    def __init__(self, S, c, f):
        self.S, self.c, self.f = S, np.asarray(c, dtype=float), np.asarray(f, dtype=float)
        self.shape = S.shape
        self._shifted = np.flatnonzero(self.c)
        self._shift = number_or_array(self.c[self._shifted])  # the shifted columns' c
        self._csr = None  # S by rows, made on the first row access

    @property
    def T(self):
        return _Transposed(self)

    def __matmul__(self, w):
        w = np.asarray(w, dtype=float)
        out = self.S @ w
        return out + (np.multiply.outer(self.f, self.c @ w) if w.ndim == 2 else self.f * (self.c @ w))

    def rmatvec(self, v):
        """``X'^T v`` for ``v`` of shape (n,) or (n, k)."""
        v = np.asarray(v, dtype=float)
        out = np.asarray(self.S.T @ v)
        return out + (np.multiply.outer(self.c, self.f @ v) if v.ndim == 2 else self.c * (self.f @ v))

    def column(self, j):
        """Column ``j`` as a dense array of shape (n,)."""
        sl = slice(self.S.indptr[j], self.S.indptr[j + 1])
        col = self.c[j] * self.f
        col[self.S.indices[sl]] += self.S.data[sl]
        return col

    def __getitem__(self, key):
        """Rows (``X[rows]``) or columns (``X[:, cols]``): a ``ShiftedSparse`` (never densified)."""
        if isinstance(key, tuple):
            rows, cols = key
            if not (isinstance(rows, slice) and rows == slice(None)):
                raise IndexError("ShiftedSparse: index rows and columns separately")
            cols = np.arange(self.shape[1])[cols]
            return ShiftedSparse(self.S[:, cols], self.c[cols], self.f)
        rows = np.atleast_1d(np.arange(self.shape[0])[key])
        if self._csr is None:
            self._csr = self.S.tocsr()
        S = self._csr[rows].tocsc()
        S.sort_indices()
        return ShiftedSparse(S, self.c, self.f[rows])

    def toarray(self):
        """The dense matrix (small matrices and tests only)."""
        return self.S.toarray() + np.multiply.outer(self.f, self.c)

    def row_norms(self):
        """``||x'_i||_2`` of every row, O(nnz + n)."""
        Sr = self.S.tocsr()
        rows = np.repeat(np.arange(self.shape[0]), np.diff(Sr.indptr))
        cross = np.bincount(rows, Sr.data * (Sr.data + 2.0 * self.f[rows] * self.c[Sr.indices]), self.shape[0])
        return np.sqrt(np.maximum(cross + self.f**2 * float(self.c @ self.c), 0.0))

    def gram(self, weights=None):
        """``X'^T diag(weights) X'`` as a dense (p, p) array (small p only)."""
        d = np.ones(self.shape[0]) if weights is None else np.asarray(weights, dtype=float)
        SD = self.S.T.multiply(d).tocsr()
        SDf = np.asarray(SD @ self.f).ravel()
        G = (SD @ self.S).toarray()
        cross = np.outer(SDf, self.c)
        return G + cross + cross.T + float(self.f @ (d * self.f)) * np.outer(self.c, self.c)

    def clipped_gradient_sum(self, d, clip):
        """``sum_i clip(d_i x'_ij, -clip_j, clip_j)`` for every ``j``, O(nnz + (n + p) log n), with no temporary
        of the size of X.

        The shift's part ``sum_i clip(d_i f_i c_j)`` for all rows from the sorted ``u = d f`` and its
        prefix sums; each stored value then replaces its row's shift-only term by the whole one (compiled,
        ``_kernels.shifted_clipped_rmatvec``).
        """
        from ._kernels import shifted_clipped_rmatvec

        d = np.asarray(d, dtype=float)
        clip = np.broadcast_to(np.asarray(clip, dtype=float), self.shape[1:])
        bound = number_or_array(clip)
        u = d * self.f
        base = np.zeros(self.shape[1])
        j = self._shifted
        if j.size:
            order = np.sort(u)
            prefix = np.concatenate(([0.0], np.cumsum(order)))
            cj = self._shift  # one number where every shifted column has the same shift
            t = (bound if isinstance(bound, float) else clip[j]) / np.abs(cj)  # clip(u c) = c clip(u, -t, t)
            lo, hi = np.searchsorted(order, -t, "left"), np.searchsorted(order, t, "right")
            base[j] = cj * (prefix[hi] - prefix[lo] + t * (order.size - hi) - t * lo)
        return shifted_clipped_rmatvec(self.S.indptr, self.S.indices, self.S.data, d, u, number_or_array(self.c),
                                       bound, base)


class _Transposed:
    def __init__(self, X):
        self.X = X
        self.shape = X.shape[::-1]

    def __matmul__(self, v):
        return self.X.rmatvec(v)


def from_sparse(X, scale, shift, fit_intercept):
    """The mapped design of a sparse ``X`` (clipped to the range, mapped, intercept column last), in one
    new CSC matrix (the one copy of ``X``'s values).

    Returns
    -------
    ShiftedSparse of shape (n, p + fit_intercept), and the number of feature values clipped
    (stored values, and the zeros of each column whose range excludes 0).
    """
    from ._kernels import csr_to_shifted_csc

    X = sp.csr_matrix(X)
    n, p = X.shape
    zero = uniform_view(np.clip(shift, -1.0, 1.0))
    nnz = X.indptr[-1]
    size = nnz + n * fit_intercept
    index = np.int64 if size > np.iinfo(np.int32).max else np.int32
    indptr, indices, values = np.empty(p + 2, dtype=index), np.empty(size, dtype=index), np.empty(size)
    clipped = csr_to_shifted_csc(n, p, X.indptr, X.indices, X.data.astype(float, copy=False),
                                 *map(number_or_array, (scale, shift, zero)), int(fit_intercept), indptr, indices,
                                 values)
    S = sp.csc_matrix((values, indices, indptr[: p + 1 + fit_intercept]), shape=(n, p + fit_intercept))
    zeros_per_column = n - np.diff(indptr[: p + 1])
    clipped += int(np.sum((np.abs(shift) > 1.0) * zeros_per_column))
    zero = np.append(zero, 0.0) if fit_intercept else zero
    return ShiftedSparse(S, uniform_view(zero), uniform_view(np.ones(n))), clipped


def clip_rows(X, bound, p):
    """Scale the rows whose first ``p`` columns have L2 norm above ``bound`` down to it (in place on ``X``);
    return how many."""
    features = X[:, np.arange(p)] if X.shape[1] > p else X
    norms = features.row_norms()
    over = norms > bound
    if not over.any():
        return 0
    factor = np.where(over, bound / np.where(over, norms, 1.0), 1.0)
    end = X.S.indptr[p]
    X.S.data[:end] *= factor[X.S.indices[:end]]
    X.f = X.f * factor  # f may be a read-only view (uniform_view)
    return int(over.sum())
