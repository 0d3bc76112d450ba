"""Compiled inner loops (numba) of the coordinate methods and of the private selections.

One DP-CD epoch is ``K`` sequential coordinate updates, each O(nnz of a column): a Python
loop spends most of its time in interpreter overhead. ``cd_epoch`` runs the same epoch
compiled, on noise drawn beforehand (the noise of an epoch does not depend on the data).
DP-GCD's scores (``gcd_scores``), the exponential mechanism by inverse transform
(``exp_mechanism``) and the clipped gradient over a CSC matrix (``clipped_rmatvec``) serve
DP-GCD and private Frank-Wolfe. Compiled once per machine (``cache=True``), not per process.

The loss derivative is given by ``Datafit.derivative_kernel``: code 0 is the logistic
``-y expit(-y z)``; code 1 the residual ``z - y`` clipped to ``[-c, c]`` (Huber, the
clipped squared loss). The penalty is the separable elastic net's prox, by its per
coordinate thresholds ``step_j a_j`` and shrink factors ``1 / (1 + step_j c_j)``.

The exponentials are written in operations that the compiler vectorizes (``math.exp`` is a call
per value): ``_exp`` (within about 1 ulp of ``math.exp``) for the exponential mechanism's weights,
whose law is the guarantee, and ``_derivative_exp`` (within 2e-12, five fewer multiply-adds) for
the loss derivatives, which any error of that size leaves within their bounds; and the loops that sum are
compiled with ``fastmath={"reassoc", "contract"}`` (vectorized sums: the same sums, rounded in
another order) and ``error_model="numpy"`` (a division is not checked for zero, so it vectorizes).
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.extending import intrinsic, overload

__all__ = ["cd_epoch", "clipped_rmatvec", "csr_to_shifted_csc", "dense_clipped_rmatvec", "exp_mechanism",
           "gcd_scores", "shifted_abs_sum", "shifted_clipped_rmatvec"]

_VECTOR = dict(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
_LOG2E = 1.4426950408889634
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10  # ln 2 = _LN2_HI + _LN2_LO
_EXP_MIN, _EXP_MAX = -708.0, 709.0  # exp is a normal float in between
_ROUND = 6755399441055744.0  # 1.5 * 2^52: the bits of _ROUND + k are those of _ROUND plus the integer k (|k| < 2^51)


@intrinsic
def _float_of_bits(typingctx, bits):
    """The float64 whose IEEE bits are the int64 ``bits`` (a bit cast)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return types.float64(types.int64), codegen


@intrinsic
def _bits_of_float(typingctx, x):
    """The int64 whose bits are the IEEE bits of the float64 ``x`` (a bit cast)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return types.int64(types.float64), codegen


@intrinsic
def _prefetch(typingctx, arr, index):
    """Ask the processor to bring ``arr[index]`` into its caches (``llvm.prefetch``, for a read, kept in every
    level); changes nothing else."""
    def codegen(context, builder, signature, args):
        ptr = builder.gep(context.make_array(signature.args[0])(context, builder, args[0]).data, [args[1]])
        byte, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32]),
                                            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, byte), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, types.intp), codegen


def _entry(v, j):
    """``v[j]``, or ``v`` itself for a number: a per-coordinate quantity passed as one number where it is the same
    on every coordinate (``_arrays.uniform_view``; a broadcast view would stop the loop's vectorization)."""
    return v if isinstance(v, float) else v[j]


@overload(_entry, inline="always")
def _entry_compiled(v, j):
    if isinstance(v, types.Array):
        return lambda v, j: v[j]
    return lambda v, j: v


@njit(cache=True, inline="always")
def _row(indices, q):
    """``indices[q]``, the row of a stored value, as an unsigned integer: numba wraps a signed index that could be
    negative at every read (three instructions more a stored value, and no vectorized gather); a CSC matrix's row
    indices never are. DP-GCD's clipped gradient on dorothea: 1.34-1.40 ``X^T v`` an iteration against 1.53-1.61."""
    return np.uintp(indices[q])


def _prefetch_entry(v, j):
    """``_prefetch(v, j)`` for an array; nothing for a number (``_entry``)."""


@overload(_prefetch_entry, inline="always")
def _prefetch_entry_compiled(v, j):
    if isinstance(v, types.Array):
        return lambda v, j: _prefetch(v, j)
    return lambda v, j: None


@njit(cache=True, inline="always")
def _exp_of(x, top, rest):
    """``exp(x)`` on ``[_EXP_MIN, _EXP_MAX]`` with the polynomial ``top r^d + rest[0] r^(d-1) + ... + rest[-1]``
    of ``exp(r)``: ``x = k ln 2 + r`` (Cody & Waite), ``|r| <= ln(2) / 2``, the polynomial times ``2^k`` by its
    bits, ``k`` kept a float and made an integer by its bits (``_ROUND``): no conversion between floats and
    integers, which AVX2 does one value at a time. 0 below (``exp < 3.4e-308``), inf above (``exp > 8.2e307``)."""
    t = min(max(x, _EXP_MIN), _EXP_MAX)
    k = np.floor(t * _LOG2E + 0.5)  # a float: math.floor's int, and int(k), are not vectorized without AVX-512
    r = (t - k * _LN2_HI) - k * _LN2_LO
    s = top
    for f in rest:
        s = s * r + f
    e = s * _float_of_bits((_bits_of_float(k + _ROUND) - _bits_of_float(_ROUND) + 1023) << 52)
    if x < _EXP_MIN:
        e = 0.0
    if x > _EXP_MAX:
        e = math.inf
    return e


_TAYLOR = tuple(1.0 / math.factorial(k) for k in range(13, -1, -1))  # truncation below 0.02 ulp on |r| <= ln(2) / 2
_TAYLOR_TOP, _TAYLOR_REST = _TAYLOR[0], _TAYLOR[1:]


_DERIVATIVE_POLY = (2.4875694328827917e-05, 0.00019915865194263248, 0.0013888822747872578, 0.008333266101085444,
                    0.04166666688339378, 0.16666666891031098, 0.49999999999814726, 0.9999999999797864,
                    0.9999999999999997)
"""The exponential of the loss derivatives: the coefficients, highest degree first, of the polynomial of degree 8
that interpolates ``exp`` at the Chebyshev points of ``[-ln(2) / 2, ln(2) / 2]`` (numpy's
``Chebyshev.interpolate``, converted to powers; literals, so that numba's cache, keyed on this file, never keeps
other ones). Relative error below 2e-12 (``test_kernels``), far below the noise
of any mechanism that uses it, in 8 multiply-adds where ``_exp`` takes 13 (the derivative is most of a dense DP-CD
epoch's time). Its size does not enter a sensitivity: the logistic derivative ``-y / (1 + e)`` stays in [-1, 1] for
any ``e >= 0``, and the clipped terms within their thresholds."""
_DERIVATIVE_TOP, _DERIVATIVE_REST = _DERIVATIVE_POLY[0], _DERIVATIVE_POLY[1:]


@njit(cache=True, inline="always")
def _exp(x):
    """``exp(x)`` within about 1 ulp on ``[_EXP_MIN, _EXP_MAX]`` (``_exp_of`` with the Taylor polynomial of degree
    13): the exponential mechanism's weights, whose law is the guarantee."""
    return _exp_of(x, _TAYLOR_TOP, _TAYLOR_REST)


@njit(cache=True, inline="always")
def _derivative_exp(x):
    """``exp(x)`` within 2e-12 relative (``_DERIVATIVE_POLY``), positive and finite or ``inf`` as ``_exp``."""
    return _exp_of(x, _DERIVATIVE_TOP, _DERIVATIVE_REST)


@njit(cache=True, inline="always")
def _derivative(code, c, z, y):
    """``f'(z, y)`` of the loss of kernel ``(code, c)`` (module docstring)."""
    if code == 0:  # -y expit(-y z) = -y / (1 + exp(y z)): 0 or -y at the extremes, never NaN
        return -y / (1.0 + _derivative_exp(y * z))
    r = z - y
    return min(max(r, -c), c)


@njit(**_VECTOR)
def derivatives(z, y, code, c, out):
    """``out_i = f'(z_i, y_i)`` of the loss of kernel ``(code, c)`` for every ``i`` (``Datafit.derivative_kernel``);
    returns ``out``."""
    for i in range(z.shape[0]):
        out[i] = _derivative(code, c, z[i], y[i])
    return out


@njit(cache=True, inline="always")
def _shifted_value(indptr, indices, data, zero, f, j, i, q):
    """``x_ij`` of ``S + f zero^T`` walking row ``i`` of column ``j``, and the next stored position."""
    x = _entry(f, i) * zero[j]
    if q < indptr[j + 1] and indices[q] == i:
        return x + data[q], q + 1
    return x, q


# Each loop in a function of its own, called from the loop over the coordinates (``cd_epoch``): the compiler
# optimizes a loop less well inlined beside others (``inline="always"``), and a call through one more function
# costs more than a short column. The gradient of a coordinate evaluates the derivative on the rows of its
# column (vectorized, gathered on a sparse column); keeping the derivatives of every row instead costs an
# evaluation per changed row, scalar on a sparse column, and was slower on both kinds of design.

@njit(**_VECTOR)
def _dense_gradient(last, step, col, z, y, clip, code, c):
    """``z += step last`` (the previous update, deferred to this pass over the rows), then the gradient."""
    g = 0.0
    for i in range(z.shape[0]):
        z[i] += step * last[i]
        g += min(max(_derivative(code, c, z[i], y[i]) * col[i], -clip), clip)
    return g


@njit(**_VECTOR)
def _sparse_gradient(indices, data, start, stop, z, y, clip, code, c):
    g = 0.0
    for q in range(start, stop):
        i = _row(indices, q)
        g += min(max(_derivative(code, c, z[i], y[i]) * data[q], -clip), clip)
    return g


@njit(cache=True, error_model="numpy")
def _shifted_gradient(indptr, indices, data, zero, f, j, z, y, clip, code, c):
    g = 0.0
    q = indptr[j]
    for i in range(z.shape[0]):
        x, q = _shifted_value(indptr, indices, data, zero, f, j, i, q)
        g += min(max(_derivative(code, c, z[i], y[i]) * x, -clip), clip)
    return g


@njit(cache=True)
def _dense_add(col, z, step):
    for i in range(z.shape[0]):
        z[i] += step * col[i]


@njit(cache=True)
def _sparse_add(indices, data, start, stop, z, step):
    for q in range(start, stop):
        z[_row(indices, q)] += step * data[q]


@njit(cache=True)
def _shifted_add(indptr, indices, data, zero, f, j, z, step):
    q = indptr[j]
    for i in range(z.shape[0]):
        x, q = _shifted_value(indptr, indices, data, zero, f, j, i, q)
        z[i] += step * x


_AHEAD = 8  # coordinates of an epoch whose data ``cd_epoch`` asks for ahead of their update


@njit(cache=True)
def cd_epoch(indptr, indices, data, zero, f, z, y, w, coords, eta, stds, steps, clip, thresholds, shrink, code, c,
             acc, last, average):
    """``K`` proximal coordinate updates (``dp_cd.cd``'s inner loop), in place.

    Parameters
    ----------
    indptr, indices, data : arrays of X (n, p) by columns
        A CSC matrix; or a dense Fortran-ordered array as ``data = X.ravel(order="F")``
        (a view), ``indptr = n * arange(p + 1)`` and ``indices=None`` (row ``q - indptr[j]``).
    zero, f : float array (p,), float array (n,) or float
        The design is ``X + f zero^T`` (``affine.ShiftedSparse``, CSC with sorted indices): a column
        with ``zero_j != 0`` is read over every row. Zeros for a plain matrix; ``f`` one number where
        it is the same on every row.
    z : float array (n,)
        Margins ``X w``, updated.
    y : float array (n,)
    w : float array (p,)
        Iterate, updated.
    coords : int array (K,)
        The coordinates, drawn independently of the data.
    eta : float array (K,)
        Standard normal draws, one per update, drawn beforehand; the noise of update ``k`` is
        ``stds[coords[k]] * eta[k]``.
    stds, steps, clip, thresholds, shrink : float arrays (p,), or floats (the same on every coordinate)
        The noise's standard deviations, ``1 / M_j``, the clipping thresholds ``C_j``, ``step_j a_j``,
        ``1 / (1 + step_j c_j)``.
    code, c : int, float
        The loss derivative (module docstring).
    acc, last : float array (p,), int array (p,)
        Running sums of the inner iterates (``average``), updated.
    average : bool
    """
    n = z.shape[0]
    lag, lag_step = 0, 0.0  # dense: the update z += lag_step x_lag, made in the next pass over the rows
    for k in range(coords.shape[0]):
        # the coordinates are random: prefetch what the update of coords[k + _AHEAD] reads of the per-coordinate
        # arrays, and the first stored values of the column of coords[k + _AHEAD // 2] (its indptr now cached),
        # here rather than in a function (a call with this many arrays costs more than a short column)
        if k + _AHEAD < coords.shape[0]:
            ahead = coords[k + _AHEAD]
            _prefetch(indptr, ahead)
            _prefetch(w, ahead)
            _prefetch_entry(steps, ahead)
            _prefetch_entry(clip, ahead)
            _prefetch_entry(thresholds, ahead)
            _prefetch_entry(shrink, ahead)
            _prefetch(zero, ahead)
            _prefetch_entry(stds, ahead)
        if indices is not None and k + _AHEAD // 2 < coords.shape[0]:
            q = indptr[coords[k + _AHEAD // 2]]
            _prefetch(indices, q)
            _prefetch(data, q)
            _prefetch(data, min(q + 8, data.shape[0] - 1))  # the next cache line
        j = coords[k]
        start, stop = indptr[j], indptr[j + 1]
        if indices is None:  # sum_i clip(f'(z_i, y_i) x_ij, -C_j, C_j)
            g = _dense_gradient(data[lag:lag + n], lag_step, data[start:stop], z, y, _entry(clip, j), code, c)
            lag_step = 0.0
        elif zero[j] != 0.0:
            g = _shifted_gradient(indptr, indices, data, zero, f, j, z, y, _entry(clip, j), code, c)
        else:
            g = _sparse_gradient(indices, data, start, stop, z, y, _entry(clip, j), code, c)
        v = w[j] - _entry(steps, j) * (g / n + _entry(stds, j) * eta[k])
        new = math.copysign(max(abs(v) - _entry(thresholds, j), 0.0), v) * _entry(shrink, j)
        if average:
            acc[j] += w[j] * (k - last[j])
            last[j] = k
        step = new - w[j]
        if step == 0.0:
            continue
        if indices is None:  # z += step x_j: in the next pass
            lag, lag_step = start, step
        elif zero[j] != 0.0:
            _shifted_add(indptr, indices, data, zero, f, j, z, step)
        else:
            _sparse_add(indices, data, start, stop, z, step)
        w[j] = new
    if indices is None and lag_step != 0.0:
        _dense_add(data[lag:lag + n], z, lag_step)


@njit(cache=True)
def csr_to_shifted_csc(n, p, indptr, indices, data, scale, shift, zero, ones, out_indptr, out_indices, out_data):
    """CSR ``(n, p)`` mapped as ``clip(scale_j x + shift_j, -1, 1) - zero_j`` per stored value, as CSC ``(n, p +
    ones)`` (a last column of ones when ``ones``), written into the preallocated ``out_*`` arrays (a counting
    sort by column: no other copy of the data, row indices sorted); ``scale``, ``shift`` and ``zero`` are arrays
    (p,) or numbers (the same on every column). Returns the number of values clipped."""
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
            v = data[k] * _entry(scale, j) + _entry(shift, j)
            if v > 1.0 or v < -1.0:
                clipped += 1
                v = min(max(v, -1.0), 1.0)
            out_data[q] = v - _entry(zero, j)
            fill[j] = q + 1
        if ones:
            q = fill[p]
            out_indices[q] = i
            out_data[q] = 1.0
            fill[p] = q + 1
    return clipped


# The clipped sums over a CSC matrix run one loop over the stored values, closing a column's sum where its
# stored values end, rather than a loop per column: columns hold a few to a few hundred stored values, and
# a loop per column costs 1.1-1.5 ``X^T v`` on news20 and dorothea where the single loop costs 0.8-1.0.

@njit(cache=True, error_model="numpy")
def clipped_rmatvec(indptr, indices, data, d, clip, out):
    """``out_j = sum_i clip(d_i x_ij, -clip_j, clip_j)`` over the stored values of a CSC matrix (``clip`` an array
    (p,) or one number for every column); returns ``out``."""
    p = out.shape[0]
    out[:] = 0.0
    if p == 0:
        return out
    j, s, stop, bound = 0, 0.0, indptr[1], _entry(clip, 0)
    for q in range(indptr[p]):
        while q == stop:  # the stored values of column j end (empty columns skipped)
            out[j] = s
            j, s = j + 1, 0.0
            stop, bound = indptr[j + 1], _entry(clip, j)
        s += min(max(d[_row(indices, q)] * data[q], -bound), bound)
    out[j] = s
    return out


@njit(cache=True, error_model="numpy")
def shifted_clipped_rmatvec(indptr, indices, data, d, u, c, clip, out):
    """``out_j += sum_q clip(d_i s_qj + u_i c_j, -clip_j, clip_j) - clip(u_i c_j, -clip_j, clip_j)`` over the stored
    values ``s_qj`` (row ``i``) of a CSC matrix ``S``: what the stored values of ``S + f c^T`` change in the clipped
    sum ``sum_i clip(d_i x_ij)`` beyond the shift-only terms (``u = d f``; ``affine.ShiftedSparse``). ``c`` and
    ``clip`` arrays (p,) or numbers; returns ``out``."""
    p = out.shape[0]
    if p == 0:
        return out
    j, s, stop, bound, cj = 0, 0.0, indptr[1], _entry(clip, 0), _entry(c, 0)
    for q in range(indptr[p]):
        while q == stop:
            out[j] += s
            j, s = j + 1, 0.0
            stop, bound, cj = indptr[j + 1], _entry(clip, j), _entry(c, j)
        i = _row(indices, q)
        shift = u[i] * cj
        s += min(max(d[i] * data[q] + shift, -bound), bound) - min(max(shift, -bound), bound)
    out[j] += s
    return out


@njit(**_VECTOR)
def shifted_abs_sum(indptr, indices, data, f, c, k):
    """``sum_q |s_qj + f_i c_j| - |f_i c_j|`` over the stored values ``s_qj`` (row ``i``) of the first ``k`` columns
    of a CSC matrix ``S``: what they add to ``sum_ij |x_ij|`` of ``S + f c^T`` beyond ``sum_i |f_i| sum_j |c_j|``
    (``affine.ShiftedSparse``). ``f`` and ``c`` arrays or numbers."""
    total = 0.0
    for j in range(k):
        cj = _entry(c, j)
        for q in range(indptr[j], indptr[j + 1]):
            a = _entry(f, indices[q]) * cj
            total += abs(data[q] + a) - abs(a)
    return total


@njit(**_VECTOR)
def dense_clipped_rmatvec(X, d, clip, out):
    """``out_j = sum_i clip(d_i x_ij, -clip_j, clip_j)`` over a dense X (n, p), read in its own order (by columns
    when Fortran-ordered, by rows otherwise) with no temporary (``clip`` an array (p,) or one number for every
    column); returns ``out``."""
    n, p = X.shape
    if X.flags.f_contiguous:
        for j in range(p):
            s, bound = 0.0, _entry(clip, j)
            for i in range(n):
                s += min(max(d[i] * X[i, j], -bound), bound)
            out[j] = s
        return out
    out[:] = 0.0
    for i in range(n):
        for j in range(p):
            bound = _entry(clip, j)
            out[j] += min(max(d[i] * X[i, j], -bound), bound)
    return out


@njit(cache=True, error_model="numpy")
def gcd_scores(g, w, M, weights, k, a, c, rule, out):
    """DP-GCD's greedy scores (``dp_gcd.selection_scores``) for the elastic net ``a_j |w_j| + c_j w_j^2 / 2``,
    ``a_j = a weights_j`` and ``c_j = c weights_j`` on the coordinates ``j < k``, 0 on the others (the penalty's
    weights as ``ElasticNet.weight_entries`` gives them: no vector of strengths).

    Parameters
    ----------
    g, w : float arrays (p,)
        Gradient, iterate.
    M, weights : float arrays (p,), or floats (the same on every coordinate)
        Coordinate smoothness, the penalty's weights.
    k : int
        Coordinates from ``k`` on are unpenalized (the intercept).
    a, c : float
        The strengths per unit of weight, ``alpha l1_ratio`` and ``alpha (1 - l1_ratio)``.
    rule : int
        0 "gs-r", 1 "gs-s", 2 "gs-q".
    out : float array (p,)
        The scores, written.
    """
    for j in range(out.shape[0]):
        uj = (1.0 if j < k else 0.0) * _entry(weights, j)  # weights finite: 0 from k on
        Mj, aj, cj = _entry(M, j), a * uj, c * uj
        root = math.sqrt(Mj)
        if rule == 1:  # dist(-g_j, d psi_j(w_j)) / sqrt(M_j)
            h = g[j] + cj * w[j]
            s = abs(h + math.copysign(aj, w[j])) if w[j] != 0.0 else max(abs(h) - aj, 0.0)
            out[j] = s / root
            continue
        step = 1.0 / Mj
        x = w[j] - g[j] / Mj
        d = math.copysign(max(abs(x) - step * aj, 0.0), x) / (1.0 + step * cj) - w[j]
        if rule == 0:  # M_j |d_j| / sqrt(M_j)
            out[j] = root * abs(d)
            continue
        u = w[j] + d  # sqrt(-2 q_j), q_j the decrease of the quadratic model
        psi_u, psi_w = aj * abs(u) + 0.5 * cj * (u * u), aj * abs(w[j]) + 0.5 * cj * (w[j] * w[j])
        out[j] = math.sqrt(2.0 * max(-(g[j] * d + 0.5 * Mj * (d * d) + psi_u - psi_w), 0.0))


_BLOCK = 64  # weights a block of the exponential mechanism's inverse transform


@njit(**_VECTOR)
def _weights(scores, top, beta, sums):
    """``scores_j <- exp((scores_j - top) / beta)``, in place (one vectorized loop); ``sums_b`` the sum of block
    ``b`` (``_BLOCK`` weights)."""
    p = scores.shape[0]
    for j in range(p):
        scores[j] = _exp((scores[j] - top) / beta)
    for b in range(sums.shape[0]):
        total = 0.0
        for j in range(b * _BLOCK, min(p, (b + 1) * _BLOCK)):
            total += scores[j]
        sums[b] = total


@njit(cache=True)
def _last_positive(weights, start, stop):
    """The last index in ``[start, stop)`` of a positive weight, -1 if none."""
    for j in range(stop - 1, start - 1, -1):
        if weights[j] > 0.0:
            return j
    return -1


@njit(cache=True)
def exp_mechanism(scores, beta, u):
    """The exponential mechanism (McSherry & Talwar 2007): index ``j`` with probability proportional to
    ``exp(scores_j / beta)``, by inverse transform of one uniform ``u`` in [0, 1).

    The law of ``argmax_j scores_j + Gumbel(beta)`` (the Gumbel-max trick), from one uniform instead of ``p``
    Gumbel draws. ``scores`` (finite, or ``-inf`` for a candidate never chosen) is overwritten by the weights.
    The cumulative sum runs over the sums of blocks of ``_BLOCK`` weights, then within the block that crosses
    ``u`` times the total (where rounding leaves a sum short of it: the last candidate of positive weight before
    it). 0 where no weight is positive (every score ``-inf``, or a NaN), as an index for any caller.

    Returns
    -------
    int
    """
    p = scores.shape[0]
    sums = np.empty((p + _BLOCK - 1) // _BLOCK)
    _weights(scores, scores.max(), beta, sums)
    total = sums.sum()
    if not total > 0.0:  # no positive weight (NaN: every score -inf, or a NaN among them)
        return 0
    target = u * total
    acc = 0.0
    for b in range(sums.shape[0]):
        if acc + sums[b] > target:
            stop = min(p, (b + 1) * _BLOCK)
            for j in range(b * _BLOCK, stop):
                if scores[j] > 0.0:
                    acc += scores[j]
                    if acc > target:
                        return j
            return _last_positive(scores, b * _BLOCK, stop)
        acc += sums[b]
    return _last_positive(scores, 0, p)


@njit(cache=True, error_model="numpy")
def laplace_argmax(scores, scales, e, signs):
    """``argmax_j scores_j + scales_j s_j e_j``: report-noisy-max with Laplace noise of scales ``scales`` (an array
    (p,) or one number), from standard exponentials ``e`` and random signs ``s_j``: -1 where bit ``j % 64`` of
    ``signs[j // 64]`` is set (an int64 array of ``ceil(p / 64)`` random words). A standard exponential with a
    fair random sign is Laplace(0, 1): one draw a coordinate where the difference of two exponentials takes two."""
    best, top = 0, -math.inf
    for j in range(scores.shape[0]):
        v = scores[j] + _entry(scales, j) * (-e[j] if (signs[j >> 6] >> (j & 63)) & 1 else e[j])
        if v > top:
            best, top = j, v
    return best
