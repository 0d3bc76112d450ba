"""Dask arrays: data beyond one machine, read chunk by chunk.

A design held as a dask array is never gathered: ``prepare`` maps it onto the public
bounds chunk by chunk (lazily), and a mechanism that runs on it (``Mechanism.dask``)
reads it only through sums over rows, each one pass over the chunks with the partial
sums reduced on the cluster (``row_sum``; ``gradient_sums`` for the gradient and the loss
at a model), or through rows it gathers a batch at a time (dp-sgd, one-pass-sgd). The
noise is drawn once, on the client, after the reduction. An exact minimizer (output and
objective perturbation, dual-fw's primal responses) is found by a solver on the client
whose every evaluation of the objective is one pass (``spectral_gradient``, or L-BFGS),
stopped at the same certified tolerance as in memory (docs/scale.md). Dask is an
optional extra: ``pip install "dpsparse[dask]"``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["MeanLoss", "as_row_chunked", "gradient_sums", "is_dask", "labels", "prepare", "row_sum",
           "spectral_gradient"]


def is_dask(X):
    """Whether ``X`` is a dask array (without importing dask when it is not installed)."""
    return type(X).__module__.startswith("dask.")


def as_row_chunked(X, y):
    """``X`` chunked by rows only (every chunk holds whole records), ``y`` as a dask array with the same chunks.

    Raises
    ------
    ValueError
        ``X`` not 2-d, of sparse chunks, or ``y`` of another length.
    """
    import dask.array as da

    if X.ndim != 2:
        raise ValueError(f"X must be 2-d of shape (n_samples, n_features), got shape {X.shape}")
    if not isinstance(getattr(X, "_meta", None), np.ndarray):
        raise ValueError(f"X is a dask array of {type(X._meta).__name__} chunks; dask input takes dense numpy chunks "
                         "(a scipy.sparse matrix fits in memory as it is: pass it without dask)")
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
    scale, shift = data._feature_map(bounds, fit_intercept)
    record_norm = bounds.record_norm(p)

    def block(xc):
        xb = data._mapped_dense(xc, scale, shift, fit_intercept)
        counts = np.array([data._clip(xb[:, :p]), 0, int(np.count_nonzero(~np.isfinite(xc)))])
        if record_norm is not None:
            counts[1] = data._clip_rows_in_place(xb, record_norm, p)
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
    fn : callable (ndarray (m, p), ndarray (m,) or None) -> ndarray (size,)
    X : dask array of shape (n, p), chunked by rows
    y : dask array of shape (n,), with the same row chunks, or None (``fn`` gets None)

    Returns
    -------
    ndarray of shape (size,)
    """
    import dask.array as da

    def part(xc, yc=None):
        return np.asarray(fn(xc, None if yc is None else yc[:, 0]), dtype=float).reshape(1, size)

    args = (X,) if y is None else (X, y[:, None])
    parts = da.map_blocks(part, *args, chunks=((1,) * len(X.chunks[0]), (size,)), dtype=float)
    return np.asarray(parts.sum(axis=0).compute(), dtype=float)


def gradient_sums(X, y, w, derivative, values=()):
    """At the margins ``z = X w``: ``X^T derivative(z, y)`` and the sum over rows of each of ``values``, in one pass.

    Parameters
    ----------
    X : dask array of shape (n, p), chunked by rows
    y : dask array of shape (n,), with the same row chunks (``labels``)
    w : ndarray of shape (p,)
    derivative : callable (z, y) -> ndarray of shape (m,)
    values : sequence of callables (z, y) -> ndarray of shape (m,)

    Returns
    -------
    gradient : ndarray of shape (p,)
    sums : ndarray of shape (len(values),)
    """
    p = X.shape[1]

    def chunk(xc, yc):
        z = xc @ w
        return np.r_[xc.T @ derivative(z, yc), [np.sum(value(z, yc)) for value in values]]

    out = row_sum(chunk, X, y, p + len(values))
    return out[:p], out[p:]


class MeanLoss:
    """``(1/n) sum_i f(<w, x_i>, y_i)`` and its gradient on a dask array, from one pass at each point; the last
    point's are kept, so that a value, a gradient and a certificate there cost one pass.

    Parameters
    ----------
    X : dask array of shape (n, p), chunked by rows
    y : ndarray of shape (n,)
        On the client; sent to the workers once (``labels``).
    loss : Datafit
    """

    def __init__(self, X, y, loss):
        self.X, self.y, self.loss, self.n = X, labels(X, y), loss, X.shape[0]
        self._last = None

    def __call__(self, w):
        """``(value, gradient)`` at ``w``."""
        if self._last is None or not np.array_equal(self._last[0], w):
            grad, (value,) = gradient_sums(self.X, self.y, w, self.loss.derivative, (self.loss.value,))
            self._last = (np.array(w), value / self.n, grad / self.n)
        return self._last[1], self._last[2]


SUFFICIENT_DECREASE = 1e-4
"""sigma of the nonmonotone acceptance test of ``spectral_gradient`` (Wright, Nowak & Figueiredo 2009)."""
MEMORY = 10
"""Objective values the nonmonotone acceptance test of ``spectral_gradient`` compares with."""
LONGEST = 1e12
"""``spectral_gradient``'s longest step, in safe steps (a secant curvature lost in rounding near the optimum)."""


def spectral_gradient(oracle, prox, x0, step, max_evaluations):
    """Minimize ``F = f + h`` (``f`` smooth, ``h`` with a prox, or the indicator of a set with a projection) by
    proximal gradient steps of Barzilai-Borwein length: a step on the client whose every evaluation of ``F`` and
    ``grad f`` is one pass over the data.

    The step ``(s^T s) / (s^T r)`` (``s`` the last move, ``r`` the change of the gradient) is the scalar secant
    (quasi-Newton) model of the curvature (Barzilai & Borwein 1988); a point is accepted when ``F`` falls below
    the largest of the last ``MEMORY`` values by ``SUFFICIENT_DECREASE ||x_new - x||^2 / (2 step)``, else the step
    is halved (SpaRSA: Wright, Nowak & Figueiredo, IEEE Trans. Signal Processing 2009; with a projection, the
    spectral projected gradient of Birgin, Martinez & Raydan, SIAM J. Optim. 2000). A step at most the safe
    ``step`` (``1 / L`` for an ``L``-smooth ``f``) is always accepted, and none is longer than ``LONGEST`` safe
    steps. It stops at the first point the oracle certifies.

    Parameters
    ----------
    oracle : callable ndarray -> (float, ndarray, bool)
        ``F(x)``, ``grad f(x)`` and whether ``x`` is certified (e.g. a duality gap within the tolerance), from one
        pass over the data.
    prox : callable (v, step) -> ndarray
        Prox of ``step h`` (or the projection onto the set).
    x0 : ndarray
        A point of the domain of ``h``.
    step : float > 0
        The safe step ``1 / L``; also the first one.
    max_evaluations : int
        Evaluations of the oracle (passes) at most.

    Returns
    -------
    x : ndarray
    certified : bool
        Whether the oracle certified ``x`` (False: ``max_evaluations`` ran out, or the steps stalled).
    """
    x = np.array(x0, dtype=float)
    value, grad, certified = oracle(x)
    recent, trial, evaluations = [value], float(step), 1
    while not certified and evaluations < max_evaluations:
        while True:
            x_new = prox(x - trial * grad, trial)
            moved = float((x_new - x) @ (x_new - x))
            value_new, grad_new, certified = oracle(x_new)
            evaluations += 1
            if (certified or trial <= step or evaluations >= max_evaluations
                    or value_new <= max(recent) - SUFFICIENT_DECREASE * moved / (2.0 * trial)):
                break
            trial /= 2.0
        if moved == 0.0:  # a fixed point in floating point: no step helps
            return x_new, certified
        s, r = x_new - x, grad_new - grad
        curvature = float(s @ r)
        trial = min(moved / curvature, LONGEST * step) if curvature > 0 else float(step)
        x, grad, recent = x_new, grad_new, (recent + [value_new])[-MEMORY:]
    return x, certified
