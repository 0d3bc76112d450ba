"""Compiled inner loops (numba) of the coordinate methods.

One DP-CD epoch is ``K`` sequential coordinate updates, each O(nnz of a column): a Python
loop spends most of its time in interpreter overhead. ``cd_epoch`` runs the same epoch
compiled, on noise drawn beforehand (the noise of an epoch does not depend on the data).
Compiled once per machine (``cache=True``), not per process.

The loss derivative is given by ``Datafit.derivative_kernel``: code 0 is the logistic
``-y expit(-y z)``; code 1 the residual ``z - y`` clipped to ``[-c, c]`` (Huber, the
clipped squared loss). The penalty is the separable elastic net's prox, by its per
coordinate thresholds ``step_j a_j`` and shrink factors ``1 / (1 + step_j c_j)``.
"""
from __future__ import annotations

import math

from numba import njit

__all__ = ["cd_epoch", "csr_to_csc_with_ones"]


@njit(cache=True, inline="always")
def _derivative(code, c, z, y):
    if code == 0:  # -y expit(-y z), without overflow on either side
        t = -y * z
        if t >= 0.0:
            return -y / (1.0 + math.exp(-t))
        e = math.exp(t)
        return -y * e / (1.0 + e)
    r = z - y
    return min(max(r, -c), c)


@njit(cache=True)
def cd_epoch(indptr, indices, data, z, y, w, coords, eta, steps, clip, thresholds, shrink, code, c, acc, last,
             average):
    """``K`` proximal coordinate updates (``dp_cd.cd``'s inner loop), in place.

    Parameters
    ----------
    indptr, indices, data : arrays of X (n, p) by columns
        A CSC matrix; or a dense Fortran-ordered array as ``data = X.ravel(order="F")``
        (a view), ``indptr = n * arange(p + 1)`` and an empty ``indices`` (row ``q - indptr[j]``).
    z : float array (n,)
        Margins ``X w``, updated.
    y : float array (n,)
    w : float array (p,)
        Iterate, updated.
    coords : int array (K,)
        The coordinates, drawn independently of the data.
    eta : float array (K,)
        The noise of each update, drawn beforehand.
    steps, clip, thresholds, shrink : float arrays (p,)
        ``1 / M_j``, the clipping thresholds ``C_j``, ``step_j a_j``, ``1 / (1 + step_j c_j)``.
    code, c : int, float
        The loss derivative (module docstring).
    acc, last : float array (p,), int array (p,)
        Running sums of the inner iterates (``average``), updated.
    average : bool
    """
    n = z.shape[0]
    dense = indices.shape[0] == 0
    for k in range(coords.shape[0]):
        j = coords[k]
        g = 0.0
        for q in range(indptr[j], indptr[j + 1]):
            i = q - indptr[j] if dense else indices[q]
            term = _derivative(code, c, z[i], y[i]) * data[q]
            g += min(max(term, -clip[j]), clip[j])
        v = w[j] - steps[j] * (g / n + eta[k])
        new = math.copysign(max(abs(v) - thresholds[j], 0.0), v) * shrink[j]
        if average:
            acc[j] += w[j] * (k - last[j])
            last[j] = k
        step = new - w[j]
        if step != 0.0:
            for q in range(indptr[j], indptr[j + 1]):
                z[q - indptr[j] if dense else indices[q]] += step * data[q]
            w[j] = new


@njit(cache=True)
def csr_to_csc_with_ones(n, p, indptr, indices, data, scale, out_indptr, out_indices, out_data):
    """CSR ``(n, p)`` times ``scale`` per column, as CSC ``(n, p + 1)`` with a last column of ones, written
    into the preallocated ``out_*`` arrays (a counting sort by column: no other copy of the data)."""
    counts = out_indptr  # column counts first, then their running sum
    counts[:] = 0
    for k in range(indptr[n]):
        counts[indices[k] + 1] += 1
    counts[p + 1] = n
    for j in range(p + 1):
        counts[j + 1] += counts[j]
    fill = counts[:-1].copy()
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            q = fill[j]
            out_indices[q] = i
            out_data[q] = data[k] * scale[j]
            fill[j] = q + 1
        q = fill[p]
        out_indices[q] = i
        out_data[q] = 1.0
        fill[p] = q + 1
