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

__all__ = ["cd_epoch", "csr_to_shifted_csc"]


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


@njit(cache=True, inline="always")
def _shifted_value(indptr, indices, data, zero, f, j, i, q):
    """``x_ij`` of ``S + f zero^T`` walking row ``i`` of column ``j``, and the next stored position."""
    x = f[i] * zero[j]
    if q < indptr[j + 1] and indices[q] == i:
        return x + data[q], q + 1
    return x, q


@njit(cache=True)
def cd_epoch(indptr, indices, data, zero, f, z, y, w, coords, eta, steps, clip, thresholds, shrink, code, c, acc,
             last, average):
    """``K`` proximal coordinate updates (``dp_cd.cd``'s inner loop), in place.

    Parameters
    ----------
    indptr, indices, data : arrays of X (n, p) by columns
        A CSC matrix; or a dense Fortran-ordered array as ``data = X.ravel(order="F")``
        (a view), ``indptr = n * arange(p + 1)`` and an empty ``indices`` (row ``q - indptr[j]``).
    zero, f : float arrays (p,), (n,)
        The design is ``X + f zero^T`` (``affine.ShiftedSparse``, CSC with sorted indices): a column
        with ``zero_j != 0`` is read over every row. Zeros for a plain matrix.
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
    dense = indices.shape[0] == 0 and data.shape[0] > 0
    for k in range(coords.shape[0]):
        j = coords[k]
        shifted = zero[j] != 0.0
        g = 0.0
        if shifted:
            q = indptr[j]
            for i in range(n):
                x, q = _shifted_value(indptr, indices, data, zero, f, j, i, q)
                g += min(max(_derivative(code, c, z[i], y[i]) * x, -clip[j]), clip[j])
        else:
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
            if shifted:
                q = indptr[j]
                for i in range(n):
                    x, q = _shifted_value(indptr, indices, data, zero, f, j, i, q)
                    z[i] += step * x
            else:
                for q in range(indptr[j], indptr[j + 1]):
                    z[q - indptr[j] if dense else indices[q]] += step * data[q]
            w[j] = new


@njit(cache=True)
def csr_to_shifted_csc(n, p, indptr, indices, data, scale, shift, zero, ones, out_indptr, out_indices, out_data):
    """CSR ``(n, p)`` mapped as ``clip(scale_j x + shift_j, -1, 1) - zero_j`` per stored value, as CSC ``(n, p +
    ones)`` (a last column of ones when ``ones``), written into the preallocated ``out_*`` arrays (a counting
    sort by column: no other copy of the data, row indices sorted). Returns the number of values clipped."""
    counts = out_indptr  # column counts first, then their running sum
    counts[:] = 0
    for k in range(indptr[n]):
        counts[indices[k] + 1] += 1
    if ones:
        counts[p + 1] = n
    for j in range(p + ones):
        counts[j + 1] += counts[j]
    fill = counts[:-1].copy()
    clipped = 0
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            q = fill[j]
            out_indices[q] = i
            v = data[k] * scale[j] + shift[j]
            if v > 1.0 or v < -1.0:
                clipped += 1
                v = min(max(v, -1.0), 1.0)
            out_data[q] = v - zero[j]
            fill[j] = q + 1
        if ones:
            q = fill[p]
            out_indices[q] = i
            out_data[q] = 1.0
            fill[p] = q + 1
    return clipped
