import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from dpsparse import norms

PENALTIES = [
    norms.L1(0.3, np.array([1.0, 2.0, 0.0, 0.5])),
    norms.L2(0.7, np.array([1.0, 1.0, 0.0, 3.0])),
    norms.ElasticNet(0.4, 0.6, np.array([1.0, 0.5, 0.0, 1.0])),
]
ids = [p.name for p in PENALTIES]


def _coord(pen, j, x):
    e = np.zeros(4)
    e[j] = x
    return pen.coordinate_values(e)[j]


@pytest.mark.parametrize("pen", PENALTIES, ids=ids)
def test_value_is_sum_of_coordinate_values(pen):
    w = np.array([0.5, -1.0, 2.0, 0.0])
    assert pen.value(w) == pytest.approx(sum(_coord(pen, j, w[j]) for j in range(4)))


@pytest.mark.parametrize("pen", PENALTIES, ids=ids)
def test_prox_minimizes_its_objective(pen):
    rng = np.random.default_rng(0)
    for _ in range(20):
        x, step = rng.normal(0, 1, 4), rng.uniform(0.1, 3, 4)
        out = pen.prox(x, step)
        for j in range(4):
            obj = lambda v, j=j, xj=x[j], sj=step[j]: _coord(pen, j, v) + (v - xj) ** 2 / (2 * sj)  # noqa: E731
            best = minimize_scalar(obj, bounds=(-5, 5), method="bounded", options={"xatol": 1e-10})
            assert obj(out[j]) <= best.fun + 1e-9


@pytest.mark.parametrize("pen", PENALTIES, ids=ids)
def test_subdiff_distance_by_brute_force(pen):
    rng = np.random.default_rng(1)
    for _ in range(20):
        g = rng.normal(0, 1, 4)
        w = rng.normal(0, 1, 4) * (rng.random(4) < 0.5)
        d = pen.subdiff_distance(g, w)
        a, c = pen.strengths(4)
        for j in range(4):
            # subdifferential of a|x| + c x^2/2 at w_j: c w_j + a * (sign(w_j) or [-1, 1])
            lo, hi = (c[j] * w[j] + a[j] * np.sign(w[j]),) * 2 if w[j] != 0 else (-a[j], a[j])
            xi = np.linspace(lo, hi, 2001)
            assert d[j] == pytest.approx(np.min(np.abs(g[j] + xi)), abs=1e-3 * (hi - lo) + 1e-12)


@pytest.mark.parametrize("pen", PENALTIES, ids=ids)
def test_conjugate_is_the_supremum(pen):
    """psi*(v) = sup_w <v, w> - psi(w), by brute force on a grid, coordinate by coordinate."""
    rng = np.random.default_rng(2)
    grid = np.linspace(-60, 60, 240001)
    a, c = pen.strengths(4)
    for _ in range(5):
        v = rng.normal(0, 0.3, 4)
        v[2] = 0.0  # unpenalized coordinate: the conjugate is finite only at 0
        v = v * pen.dual_scaling(v)
        brute = sum(np.max(v[j] * grid - a[j] * np.abs(grid) - 0.5 * c[j] * grid**2) for j in range(4))
        assert pen.conjugate(v) == pytest.approx(brute, abs=1e-6)


def test_conjugate_infinite_outside_the_l1_dual_ball():
    pen = norms.L1(0.5)
    assert pen.conjugate(np.array([0.6, 0.0])) == np.inf
    assert pen.conjugate(np.array([0.5, -0.5])) == 0.0
    assert pen.dual_scaling(np.array([1.0, -0.25])) == pytest.approx(0.5)


def test_invalid_parameters():
    with pytest.raises(ValueError, match="alpha"):
        norms.L1(-1.0)
    with pytest.raises(ValueError, match="l1_ratio"):
        norms.ElasticNet(1.0, 1.5)
    with pytest.raises(ValueError, match="weights"):
        norms.L1(1.0, np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="unknown penalty 'l3'"):
        norms.make_penalty("l3", 1.0)


def test_require_names_the_missing_methods():
    class NoProx(norms.Penalty):
        def value(self, w):
            return 0.0

    with pytest.raises(ValueError, match="DP-GCD needs .* NoProx lacks prox"):
        norms.require(NoProx(), ("value", "prox"), "DP-GCD")


def test_elastic_net_strengths_are_computed_once_read_only_and_follow_the_parameters():
    pen = norms.L1(0.5, weights=np.r_[np.ones(3), 0.0])
    a, c = pen.strengths(4)
    assert pen.strengths(4)[0] is a and not a.flags.writeable and not c.flags.writeable
    np.testing.assert_array_equal(a, [0.5, 0.5, 0.5, 0.0])
    pen.alpha = 2.0
    np.testing.assert_array_equal(pen.strengths(4)[0], [2.0, 2.0, 2.0, 0.0])
    pen.weights = np.full(4, 0.5)
    np.testing.assert_array_equal(pen.strengths(4)[0], [1.0] * 4)
    pen.weights = None  # frees the array, whose id a new one may take
    pen.weights = np.array([5.0, 5.0, 5.0, 0.0])
    assert pen.value(np.ones(4)) == pytest.approx(30.0)


@pytest.mark.parametrize("l1_ratio", [1.0, 0.4, 0.0])
def test_the_estimators_penalty_keeps_its_weights_as_one_number_and_acts_as_the_weight_vector(l1_ratio):
    """``n_penalized=k`` (``build_penalty``'s, the intercept last) is the penalty of weights ``[1] * k + [0]``:
    values, prox, scores' distances, conjugate and strengths, with no vector of weights stored."""
    rng = np.random.default_rng(3)
    compact = norms.ElasticNet(0.7, l1_ratio, n_penalized=5)
    full = norms.ElasticNet(0.7, l1_ratio, weights=np.r_[np.ones(5), 0.0])
    assert compact._weights is None and compact.weights.tolist() == [1.0] * 5 + [0.0]
    assert compact.unpenalized.tolist() == [5] and compact.weight_entries(6) == (1.0, 5)
    assert full.weight_entries(6)[1] == 6
    w, g, x = rng.normal(size=6), rng.normal(size=6), rng.normal(size=6)
    assert compact.value(w) == full.value(w)
    np.testing.assert_array_equal(compact.prox(x, 0.3), full.prox(x, 0.3))
    assert [compact.prox_1d(x[j], 0.3, j) for j in range(6)] == [full.prox_1d(x[j], 0.3, j) for j in range(6)]
    np.testing.assert_array_equal(compact.subdiff_distance(g, w), full.subdiff_distance(g, w))
    assert compact.conjugate(0.01 * g) == full.conjugate(0.01 * g)
    for a, b in zip(compact.strengths(6), full.strengths(6)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(compact.strengths(4)[0], full.strengths(6)[0][:4])  # a restriction to features
    built = norms.build_penalty("elasticnet", 0.7, 5, True, l1_ratio=l1_ratio)
    assert built.weight_entries(6) == (1.0, 5)
    assert norms.build_penalty("l1", 0.7, 5, False).weights.tolist() == [1.0] * 5


@pytest.mark.parametrize("bad", [-1, 2.5, "3", True])
def test_n_penalized_must_be_a_count_and_goes_without_weights(bad):
    with pytest.raises(ValueError, match="n_penalized must be an integer >= 0"):
        norms.ElasticNet(1.0, 0.5, n_penalized=bad)
    with pytest.raises(ValueError, match="n_penalized must be an integer >= 0 with weights None"):
        norms.ElasticNet(1.0, 0.5, weights=np.ones(3), n_penalized=2)
