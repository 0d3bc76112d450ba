"""Checks and public constants shared by the mechanisms."""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .._arrays import number_or_array
from ..accounting import Ledger, zcdp_budget
from ..affine import is_shifted

__all__ = ["SHARE", "abs_sum", "auto_clip", "check_auto_clip", "check_n_iter", "column", "derivative_at_zero",
           "ledger_after", "per_log_feature", "private_unit_mean", "row_norm_bound", "row_norms", "run_threshold",
           "share_multiplier", "unit_row_norm_sum"]

SHARE = 0.05
"""Share of the zCDP budget that buys each automatic choice a mechanism makes privately before its steps (the
clipping threshold of ``clipping_norm="auto"``, DP-GCD's warm start; docs/privacy.md)."""


def per_log_feature(n, p, epsilon):
    """``n epsilon / log p`` (``log 2`` for ``p < 2``): records times epsilon per log of the features, the public
    quantity whose bands set the defaults' mechanism, steps and radius (docs/defaults.md). Selecting one of ``p``
    features privately costs about ``log p / epsilon`` records (the exponential mechanism's utility bound)."""
    return n * epsilon / math.log(max(p, 2))


def share_multiplier(info):
    """Noise multiplier of a Gaussian release of ``SHARE`` of the zCDP budget of ``info`` (``PublicInfo``): its
    ``zcdp``, or the largest ``rho`` meeting its (epsilon, delta)."""
    rho = zcdp_budget(info.epsilon, info.delta) if info.zcdp is None else info.zcdp
    return 1.0 / math.sqrt(2.0 * SHARE * rho)


def ledger_after(before):
    """A ``Ledger`` holding the Gaussian releases of noise multipliers ``before`` (sensitivity 1 each) that a
    mechanism makes before its steps (``SHARE`` each: an automatic clipping threshold, a warm start)."""
    ledger = Ledger()
    for multiplier in before:
        ledger.gaussian(multiplier, 1.0)
    return ledger


def private_unit_mean(total, n, multiplier, noise, name):
    """The mean of ``n`` values in [0, 1] (one a record, or one a pair of records), released: their sum ``total``
    (replace-one sensitivity 1) plus Gaussian noise of standard deviation ``multiplier`` (through ``noise.release``),
    over ``n``, clipped to ``[0.01, 1]`` (post-processing).

    Returns
    -------
    float
    """
    released = float(noise.release(np.array([total]), "gaussian", multiplier, sensitivity=1.0, name=name)[0])
    return min(max(released / n, 0.01), 1.0)


def row_norms(X):
    """``||x_i||_2`` of every row of a dense array, a sparse matrix or ``ShiftedSparse``: an array of shape (n,)
    (a dense array read ``_BLOCK`` values at a time: no temporary of the size of X)."""
    if is_shifted(X):
        return X.row_norms()
    if sp.issparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = np.asarray(X)
    rows = _BLOCK // max(X.shape[1], 1) + 1
    return np.concatenate([np.sqrt(np.einsum("ij,ij->i", X[i:i + rows], X[i:i + rows]))
                           for i in range(0, X.shape[0], rows)] or [np.zeros(0)])


def unit_row_norm_sum(X, R):
    """``sum_i min(||x_i||_2 / R, 1)`` over the rows of a design (a dense array, a sparse matrix, ``ShiftedSparse``
    or a dask array: one reduction over the chunks, nothing gathered): each term lies in [0, 1], so the sum has
    replace-one sensitivity 1 whatever the records."""
    from ..distributed import is_dask, row_sum

    def part(xc, _=None):
        return float(np.minimum(row_norms(xc) / R, 1.0).sum())

    return float(row_sum(part, X, None, 1)[0]) if is_dask(X) else part(X)


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
    if is_shifted(X):  # the cells' shifts |f_i c_j|, then what each stored value changes (compiled, O(nnz))
        from .._kernels import shifted_abs_sum

        S = X.S.tocsc()
        stored = shifted_abs_sum(S.indptr, S.indices, S.data, number_or_array(X.f), number_or_array(X.c), k)
        return float(np.abs(X.f).sum() * np.abs(X.c[:k]).sum() + stored)
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


def auto_clip(X, n_features, derivative_at_zero, multiplier, noise):
    """The clipping threshold of ``clipping_norm="auto"``: ``|f'(0)|`` times the private mean of ``|x_ij|``.

    Each record's mean of ``|x_ij|`` over the ``n_features`` features (the intercept excluded) lies in [0, 1] on a
    design whose feature bounds are at most 1 (the mechanisms refuse others), so their sum has replace-one sensitivity
    1; it is released with Gaussian noise of ``multiplier`` (``private_unit_mean``). At the start model every
    per-record term of the gradient is ``f'(0, y_i) x_ij``, so the threshold is the typical size of those terms:
    large terms (the records far out in the range) are clipped, typical ones are not. Between 0.01 and 1 times
    ``|f'(0)|``.

    Returns
    -------
    float
    """
    total = abs_sum(X, n_features) / max(n_features, 1)
    return derivative_at_zero * private_unit_mean(total, X.shape[0], multiplier, noise, "mean |x| (automatic clipping)")


def check_auto_clip(name, info):
    """ValueError (before any data is read) where ``auto_clip`` cannot run: feature bounds above 1 (its per-record
    values would leave [0, 1]) or the paper's calibration (the release is charged in the tight one only)."""
    if np.any(np.asarray(info.feature_bounds, dtype=float) > 1.0):
        raise ValueError(f"mechanism {name}: clipping_norm='auto' releases the mean of |x_ij| as a sum of values in "
                         "[0, 1]: it needs feature bounds of at most 1 (a prepared design's; the estimators map every "
                         "feature onto [-1, 1]); scale the features or set clipping_norm")
    if info.calibration == "paper":
        raise ValueError(f"mechanism {name}: clipping_norm='auto' is a release of its own, in the tight calibration "
                         "only")


def run_threshold(X, design, plan, noise):
    """The coordinate threshold a run of DP-GCD or DP-CD releases (``auto_clip`` over the features, the intercept
    excluded), kept for the report (``plan.record``)."""
    k = design.p - int(design.fit_intercept)
    threshold = auto_clip(X, k, derivative_at_zero(plan.info.loss), plan.params["auto_multiplier"], noise)
    return plan.record("clipping threshold", threshold)
