"""Dask arrays: data beyond one machine, read chunk by chunk.

A design held as a dask array is never gathered: ``prepare`` maps it onto the public
bounds chunk by chunk (lazily), and a mechanism that reads the data only through sums
over rows (``Mechanism.dask``: dp-gd, dp-gcd, dp-sgd) computes each sum as one pass over
the chunks, the partial sums reduced on the cluster and the noise drawn once, on
the client, after the reduction (docs/scale.md). Dask is an optional extra:
``pip install "dpsparse[dask]"``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["as_row_chunked", "is_dask", "labels", "prepare", "row_sum"]


def is_dask(X):
    """Whether ``X`` is a dask array (without importing dask when it is not installed)."""
    return type(X).__module__.startswith("dask.")


def as_row_chunked(X, y):
    """``X`` chunked by rows only (every chunk holds whole records), ``y`` as a dask array with the same chunks.

    Raises
    ------
    ValueError
        ``X`` not 2-d, or ``y`` of another length.
    """
    import dask.array as da

    if X.ndim != 2:
        raise ValueError(f"X must be 2-d of shape (n_samples, n_features), got shape {X.shape}")
    if any(np.isnan(c) for c in X.shape):
        raise ValueError("X has unknown chunk sizes: call X.compute_chunk_sizes() first")
    X = X.rechunk({1: -1}).astype(float)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"X and y have different numbers of samples: {X.shape[0]} and {y.shape[0]}")
    return X, da.from_array(y, chunks=(X.chunks[0],))


def prepare(X, bounds, fit_intercept):
    """The features of a row-chunked dask array mapped onto [-1, 1] as ``data.prepare`` maps dense input
    (affine map, clipping, row-norm clipping, intercept column), lazily; and the number of feature values
    clipped and of rows scaled (one pass over the chunks).

    Returns
    -------
    Xb : dask array of shape (n, p + fit_intercept)
    clipped_values, clipped_rows : int

    Raises
    ------
    ValueError
        X contains NaN or infinity.
    """
    import dask

    from . import data

    p = X.shape[1]
    scale, shift = data._feature_map(bounds)

    def block(xc):
        xb = data._mapped_dense(xc, scale, shift, fit_intercept)
        counts = np.array([data._clip(xb[:, :p]), 0, int(np.count_nonzero(~np.isfinite(xc)))])
        if bounds.row_norm is not None:
            counts[1] = data._clip_rows_in_place(xb, bounds.row_norm, p)
        return xb, counts

    Xb = X.map_blocks(lambda xc: block(xc)[0], chunks=(X.chunks[0], (p + fit_intercept,)), dtype=float)
    counts = X.map_blocks(lambda xc: block(xc)[1][None, :], chunks=((1,) * len(X.chunks[0]), (3,)), dtype=int)
    clipped, rows, bad = (int(v) for v in dask.compute(counts.sum(axis=0))[0])
    if bad:
        raise ValueError("X contains NaN or infinity; every feature value must be finite")
    return Xb, clipped, rows


def labels(X, y):
    """The labels ``y`` (numpy, on the client) as a dask array in the row chunks of ``X``, sent to the workers
    once (persisted) for the passes of a fit."""
    import dask.array as da

    return da.from_array(np.asarray(y, dtype=float), chunks=(X.chunks[0],)).persist()


def row_sum(fn, X, y, size):
    """``sum over chunks of fn(X_chunk, y_chunk)``, a vector of ``size``: one pass, reduced on the cluster.

    Parameters
    ----------
    fn : callable (ndarray (m, p), ndarray (m,)) -> ndarray (size,)
    X : dask array of shape (n, p), chunked by rows
    y : dask array of shape (n,), with the same row chunks

    Returns
    -------
    ndarray of shape (size,)
    """
    import dask.array as da

    parts = da.map_blocks(lambda xc, yc: np.asarray(fn(xc, yc[:, 0]), dtype=float).reshape(1, size), X, y[:, None],
                          chunks=((1,) * len(X.chunks[0]), (size,)), dtype=float)
    return np.asarray(parts.sum(axis=0).compute(), dtype=float)
