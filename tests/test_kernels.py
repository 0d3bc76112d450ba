"""Compiled kernels (``dpsparse._kernels``): the vectorized exponential, the exponential mechanism by inverse
transform, DP-GCD's scores and the clipped product over a CSC matrix, against their numpy definitions."""
import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit
from scipy import special, stats

from dpsparse import _kernels, norms
from dpsparse.mechanisms import dp_gcd


@njit
def _exp_all(x, out):
    for i in range(x.shape[0]):
        out[i] = _kernels._exp(x[i])


def test_exp_is_within_about_one_ulp_of_numpy_and_saturates_outside_its_range():
    x = np.r_[np.random.default_rng(0).uniform(-708.0, 709.0, 200_000), -708.0, 709.0, 0.0, -1e-300, 1e-300]
    out = np.empty_like(x)
    _exp_all(x, out)
    ref = np.exp(x)
    assert np.max(np.abs(out - ref) / ref) <= 1.02 * np.finfo(float).eps
    edges = np.array([-np.inf, -800.0, -708.5, 709.5, 800.0, np.inf])
    out = np.empty_like(edges)
    _exp_all(edges, out)
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0, np.inf, np.inf, np.inf])


@njit
def _derivative_exp_all(x, out):
    for i in range(x.shape[0]):
        out[i] = _kernels._derivative_exp(x[i])


@njit
def _logistic_derivatives(z, y, out):
    for i in range(z.shape[0]):
        out[i] = _kernels._derivative(0, 0.0, z[i], y[i])


def test_the_derivatives_exponential_is_within_2e_12_and_the_logistic_derivative_within_its_bound():
    x = np.r_[np.random.default_rng(0).uniform(-708.0, 709.0, 200_000), np.linspace(-0.35, 0.35, 10_001), -708.0,
              709.0]
    out = np.empty_like(x)
    _derivative_exp_all(x, out)
    err = np.max(np.abs(out - np.exp(x)) / np.exp(x))
    assert 1e-14 < err <= 2e-12  # an approximation (not _exp), within its bound
    edges = np.array([-np.inf, -800.0, -708.5, 709.5, 800.0, np.inf])
    _derivative_exp_all(edges, out[:6])
    np.testing.assert_array_equal(out[:6], [0.0, 0.0, 0.0, np.inf, np.inf, np.inf])
    z = np.r_[np.linspace(-800.0, 800.0, 100_001), -np.inf, np.inf]
    y = np.where(np.arange(z.size) % 2, 1.0, -1.0)
    d = np.empty_like(z)
    _logistic_derivatives(z, y, d)
    assert np.all(np.abs(d) <= 1.0)  # the bound every unclipped sensitivity rests on
    np.testing.assert_allclose(d, -y * special.expit(-y * z), rtol=2e-12, atol=1e-300)


def test_the_derivatives_polynomial_is_the_chebyshev_interpolant_of_degree_8():
    h = np.log(2.0) / 2.0
    want = np.polynomial.Chebyshev.interpolate(np.exp, 8, domain=[-h, h])
    r = np.linspace(-h, h, 10_001)
    # compared as functions: the conversion to powers is ill-conditioned (numpy releases differ by 3e-8 on the top
    # coefficient, whose term stays below 3e-10 on the interval)
    np.testing.assert_allclose(np.polyval(_kernels._DERIVATIVE_POLY, r), want(r), rtol=1e-15)


def test_the_exponential_mechanisms_weights_use_the_exact_exponential():
    """Its law is the guarantee: the weights within 2 ulp of numpy's, where the derivatives' exponential is off by
    thousands."""
    scores = np.random.default_rng(2).uniform(-30.0, 0.0, 20_000)
    weights, sums = scores.copy(), np.empty(-(-scores.size // _kernels._BLOCK))
    _kernels._weights(weights, 0.0, 0.7, sums)
    np.testing.assert_allclose(weights, np.exp(scores / 0.7), rtol=2 * np.finfo(float).eps, atol=0)


def test_exp_mechanism_samples_proportionally_to_exp_score_over_beta():
    """Chi-square, false-alarm rate 1e-3; a candidate at -inf is never chosen."""
    scores, beta = np.array([0.0, 0.3, -np.inf, 0.5, 1.0, 1.2]), 0.4
    law = np.exp(scores / beta) / np.exp(scores / beta).sum()
    u = np.random.default_rng(1).random(30_000)
    counts = np.bincount([_kernels.exp_mechanism(scores.copy(), beta, v) for v in u], minlength=6)
    assert counts[2] == 0
    keep = law > 0
    assert stats.chisquare(counts[keep], u.size * law[keep]).pvalue > 1e-3


def test_exp_mechanism_samples_the_law_across_blocks_of_its_cumulative_sum():
    """300 candidates (blocks of 64, the last one partial), a whole block and a block's edges at -inf: chi-square
    over the candidates of positive weight, false-alarm rate 1e-3."""
    rng = np.random.default_rng(4)
    scores, beta = rng.uniform(0.0, 1.0, 300), 0.5
    scores[64:128] = -np.inf
    scores[[0, 63, 191, 192, 299]] = -np.inf
    law = np.exp(scores / beta) / np.exp(scores / beta).sum()
    u = rng.random(60_000)
    counts = np.bincount([_kernels.exp_mechanism(scores.copy(), beta, v) for v in u], minlength=300)
    keep = law > 0
    assert counts[~keep].sum() == 0
    assert stats.chisquare(counts[keep], u.size * law[keep]).pvalue > 1e-3


def test_laplace_argmax_reads_coordinate_js_sign_from_bit_j_mod_64_of_word_j_div_64():
    """130 coordinates (three words, the top bit of each included): with equal scores and exponentials growing with
    j, the winner is the largest j whose sign bit is clear; a number for the scales or an array."""
    rng = np.random.default_rng(5)
    p = 130
    e, scores = 1.0 + 1e-3 * np.arange(p), np.zeros(p)
    for words in [rng.integers(0, 2**64, 3, dtype=np.uint64) for _ in range(20)] + [
            np.array([2**64 - 1 - 2**63, 2**64 - 1, 2**64 - 1], dtype=np.uint64),  # only coordinate 63 positive
            np.array([2**64 - 1, 2**64 - 1, 2**64 - 1 - 2**1], dtype=np.uint64)]:  # only coordinate 129
        positive = [j for j in range(p) if not (int(words[j // 64]) >> (j % 64)) & 1]
        signs = words.view(np.int64)
        for scales in (1.0, np.ones(p)):
            assert _kernels.laplace_argmax(scores, scales, e, signs) == max(positive)


def test_exp_mechanism_at_the_ends_of_the_uniform_and_far_below_the_best():
    scores = np.array([0.0, -1e6, 5.0, 5.0 - 1e-9])
    assert _kernels.exp_mechanism(scores.copy(), 1.0, 0.0) == 0  # the first candidate of positive weight
    assert _kernels.exp_mechanism(scores.copy(), 1.0, np.nextafter(1.0, 0.0)) == 3
    assert _kernels.exp_mechanism(scores.copy(), 1e-12, 0.5) == 2  # a vanishing scale: the best
    for degenerate in (np.full(70, -np.inf), np.array([0.0, np.nan, 1.0]), np.array([0.0, np.inf, 1.0])):
        assert _kernels.exp_mechanism(degenerate, 1.0, 0.5) == 0  # no positive weight: an index all the same
    many = np.r_[np.full(130, -np.inf), 1.0, np.full(69, -np.inf)]  # the one candidate in the third block
    assert [_kernels.exp_mechanism(many.copy(), 1.0, v) for v in (0.0, 0.5, np.nextafter(1.0, 0.0))] == [130] * 3


@pytest.mark.parametrize("rule", dp_gcd.RULES)
def test_gcd_scores_are_the_numpy_scores(rule):
    rng = np.random.default_rng(2)
    p = 500
    g, M = rng.normal(0, 1, p), rng.uniform(0.1, 2.0, p)
    w = rng.normal(0, 1, p) * (rng.random(p) < 0.5)
    for pen in (norms.ElasticNet(0.3, 0.6, weights=np.r_[rng.uniform(0, 2, p - 1), 0.0]),
                norms.ElasticNet(0.3, 0.6, n_penalized=p - 1)):  # the estimators' penalty: no vector of weights
        out = np.empty(p)
        _kernels.gcd_scores(g, w, M, *pen.weight_entries(p), 0.18, 0.12, dp_gcd.RULES.index(rule), out)
        # the strengths rounded in another order ((alpha l1_ratio) u_j against (alpha u_j) l1_ratio): gs-q's
        # square root of a difference carries their last bits to about 1e-14 of a score of order 1
        np.testing.assert_allclose(out, dp_gcd.selection_scores(g, w, M, pen, rule), rtol=1e-14, atol=1e-13)


@pytest.mark.parametrize("rule", dp_gcd.RULES)
def test_gcd_scores_take_one_number_for_a_quantity_the_same_on_every_coordinate(rule):
    """``M`` and the weights as floats (``_arrays.number_or_array`` of a uniform vector), the unpenalized last
    coordinate as ``k = p - 1``, give the scores of the full vectors: what DP-GCD passes on the bounded design."""
    rng = np.random.default_rng(4)
    p = 300
    g, w = rng.normal(0, 1, p), rng.normal(0, 1, p) * (rng.random(p) < 0.5)
    full, numbers = np.empty(p), np.empty(p)
    _kernels.gcd_scores(g, w, np.full(p, 0.25), np.r_[np.full(p - 1, 2.0), 0.0], p, 0.1, 0.05,
                        dp_gcd.RULES.index(rule), full)
    _kernels.gcd_scores(g, w, 0.25, 2.0, p - 1, 0.1, 0.05, dp_gcd.RULES.index(rule), numbers)
    np.testing.assert_array_equal(numbers, full)


def test_the_sparse_map_takes_one_number_for_a_range_shared_by_every_column():
    """``csr_to_shifted_csc`` with the map's scale, shift and zero as floats writes the CSC of the full vectors."""
    X = sp.random(30, 12, density=0.3, random_state=5, format="csr", data_rvs=lambda k: np.linspace(-3, 3, k))
    n, p, size = X.shape[0], X.shape[1], X.nnz + X.shape[0]
    outs = []
    for scale, shift, zero in [(np.full(p, 0.5), np.full(p, 0.25), np.full(p, 0.25)), (0.5, 0.25, 0.25)]:
        out = np.empty(p + 2, dtype=np.int32), np.empty(size, dtype=np.int32), np.empty(size)
        clipped = _kernels.csr_to_shifted_csc(n, p, X.indptr, X.indices, X.data, scale, shift, zero, 1, *out)
        outs.append((clipped, *out))
    assert outs[0][0] == outs[1][0] > 0
    for full, number in zip(outs[0][1:], outs[1][1:]):
        np.testing.assert_array_equal(number, full)


@pytest.mark.parametrize("one_number", [False, True], ids=["per-column", "one-number"])
def test_clipped_rmatvec_is_the_brute_force_sum(one_number):
    """By columns of a CSC matrix (one loop over its stored values: empty first, middle and last columns) and of a
    dense array in either order, with a threshold per column or one number for all (what DP-GCD passes for the
    automatic threshold)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (40, 7))
    X[rng.random(X.shape) < 0.6] = 0.0
    X[:, [0, 3, 4, 6]] = 0.0
    d, clip = rng.uniform(-1, 1, 40), (0.3 if one_number else rng.uniform(0.05, 1.0, 7))
    want = np.clip(X * d[:, None], -clip, clip).sum(axis=0)
    S = sp.csc_matrix(X)
    got = _kernels.clipped_rmatvec(S.indptr, S.indices, S.data, d, clip, np.full(7, np.nan))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    for dense in (np.asfortranarray(X), np.ascontiguousarray(X)):
        np.testing.assert_allclose(_kernels.dense_clipped_rmatvec(dense, d, clip, np.empty(7)), want, rtol=1e-13,
                                   atol=1e-15)


@pytest.mark.parametrize("code,c", [(0, 0.0), (1, 0.3)])
def test_the_vectorized_column_gradient_is_numpys(code, c):
    """``_dense_gradient`` (fast-math sum, the exponential inlined): the pending update, then the clipped sum of
    ``f'(z_i, y_i) x_ij``, for the logistic and the clipped-residual derivatives."""
    from dpsparse import losses

    rng = np.random.default_rng(4)
    n = 1001
    last, col, z = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.normal(0, 20, n)
    y = np.sign(rng.standard_normal(n)) if code == 0 else rng.uniform(-1, 1, n)
    loss = losses.Logistic() if code == 0 else losses.Huber(c)
    z_after = z + 0.7 * last
    clip = 0.2
    expected = np.clip(loss.bounded_derivative(z_after, y) * col, -clip, clip).sum()
    got = _kernels._dense_gradient(last, 0.7, col, z, y, clip, code, c)
    np.testing.assert_allclose(z, z_after, rtol=0, atol=1e-13)  # a fused multiply-add: rounded once
    assert got == pytest.approx(expected, rel=1e-12)
