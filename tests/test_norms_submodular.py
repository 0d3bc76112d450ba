import itertools

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import linprog
from scipy.special import gammaln
from scipy.stats import norm as normal

from dpsparse import norms

P = 7


def _families(p=P):
    return {
        "cardinality": norms.Cardinality(p),
        "nonempty": norms.Nonempty(p),
        "groups-disjoint": norms.GroupCount(p, [[0, 1, 2], [3, 4], list(range(5, p))], [1.0, 2.0, 0.5]),
        "groups-overlap": norms.GroupCount(p, [[0, 1, 2], [2, 3, 4], [4, 5], [1, 5, 6]], [1.0, 0.7, 1.5, 1.0]),
        "tree": norms.GroupCount(p, norms.tree_groups([-1, 0, 0, 1, 1, 2, 2])),
        "sqrt-cardinality": norms.ConcaveCardinality(p, np.sqrt),
        "range": norms.Range(p),
        "custom": norms.CustomSetFunction(lambda m: np.sqrt(m.sum()) + m[:3].any() + 0.5 * m[4:].any(), p),
    }


FAMILIES = _families()
IDS = list(FAMILIES)


def _subsets(p):
    return [list(A) for k in range(1, p + 1) for A in itertools.combinations(range(p), k)]


def _norm(F, alpha=1.0):
    return norms.SubmodularNorm(F, alpha, unpenalized=[F.p])  # intercept last


@pytest.mark.parametrize("F", FAMILIES.values(), ids=IDS)
def test_gains_are_marginal_values_of_F(F):
    rng = np.random.default_rng(0)
    orders = np.array([rng.permutation(F.p) for _ in range(4)])
    batch = F.gains(orders)
    for order, g in zip(orders, batch):
        prefix = [F(order[:k]) for k in range(F.p + 1)]
        np.testing.assert_allclose(F.gains(order), np.diff(prefix), atol=1e-12)
        np.testing.assert_allclose(g, np.diff(prefix), atol=1e-12)
    assert F(np.zeros(F.p, dtype=bool)) == 0.0


@pytest.mark.parametrize("F", FAMILIES.values(), ids=IDS)
def test_families_are_submodular_and_monotone(F):
    norms.CustomSetFunction(F, F.p)  # brute-force check raises on any violation


@pytest.mark.parametrize("F", FAMILIES.values(), ids=IDS)
def test_norm_is_the_support_function_of_the_polyhedron(F):
    """Omega(w) = max <|w|, t> over {t >= 0, t(A) <= F(A)}: a linear program over all 2^p - 1 sets."""
    subsets = _subsets(F.p)
    A_ub = np.zeros((len(subsets), F.p))
    for i, A in enumerate(subsets):
        A_ub[i, A] = 1.0
    b_ub = np.array([F(A) for A in subsets])
    pen = _norm(F)
    rng = np.random.default_rng(1)
    for _ in range(3):
        w = rng.normal(size=F.p + 1) * (rng.random(F.p + 1) < 0.8)
        res = linprog(-np.abs(w[:-1]), A_ub=A_ub, b_ub=b_ub, bounds=(0, None), method="highs")
        assert pen.omega(w) == pytest.approx(-res.fun, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("F", FAMILIES.values(), ids=IDS)
def test_lovasz_extension_properties(F):
    pen = _norm(F)
    rng = np.random.default_rng(2)
    for A in _subsets(F.p)[:: 7]:
        w = np.zeros(F.p + 1)
        w[A] = rng.choice([-1.0, 1.0], len(A))
        w[-1] = 5.0  # unpenalized
        assert pen.omega(w) == pytest.approx(F(A), rel=1e-12)
    for _ in range(10):
        a, b = rng.normal(size=(2, F.p + 1))
        c = rng.uniform(0.1, 10)
        assert pen.omega(c * a) == pytest.approx(c * pen.omega(a), rel=1e-12)
        for lam in np.linspace(0, 1, 7):
            assert pen.omega(lam * a + (1 - lam) * b) <= lam * pen.omega(a) + (1 - lam) * pen.omega(b) + 1e-12
    assert pen.value(a) == pytest.approx(pen.omega(a))


@pytest.mark.parametrize("F", FAMILIES.values(), ids=IDS)
def test_dual_norm_is_the_max_over_all_sets(F):
    pen = _norm(F, alpha=0.3)
    rng = np.random.default_rng(3)
    for _ in range(5):
        s = rng.normal(size=F.p + 1)
        brute = max(np.abs(s[A]).sum() / F(A) for A in _subsets(F.p))
        assert pen.dual_norm(s) == pytest.approx(brute, rel=1e-9)
        k = pen.dual_scaling(s)
        assert k == pytest.approx(min(1.0, 0.3 / brute), rel=1e-9)
        v = k * s
        v[-1] = 0.0
        assert pen.conjugate(v) == 0.0
        if k < 1:
            assert pen.conjugate(1.01 * v) == np.inf
    v[-1] = 1e-3
    assert pen.conjugate(v) == np.inf  # unpenalized coordinate must vanish
    assert isinstance(pen.dual_method, str)


@pytest.mark.parametrize("F", FAMILIES.values(), ids=IDS)
def test_linear_maximization_oracles(F):
    pen = _norm(F)
    rng = np.random.default_rng(4)
    for _ in range(5):
        s = rng.normal(size=F.p + 1)
        t = pen.lmo_dual_ball(s)  # greedy vertex of |P|(F)
        assert pen.dual_norm(t) <= 1 + 1e-12 and t[-1] == 0.0
        assert s @ t == pytest.approx(pen.omega(s), rel=1e-12)
        u = pen.lmo_ball(s)  # 1_A sign(s) / F(A)
        assert pen.omega(u) == pytest.approx(1.0, rel=1e-12)
        assert s @ u == pytest.approx(pen.dual_norm(s), rel=1e-12)
        g = pen.subgradient(s)
        assert g @ s == pytest.approx(pen.value(s), rel=1e-12)


@pytest.mark.parametrize("F", FAMILIES.values(), ids=IDS)
def test_prox_optimality_conditions(F):
    """x - prox(x) in t dOmega(prox(x)): Omega*(x - prox) <= t and <x - prox, prox> = t Omega(prox)."""
    alpha, step = 0.7, 1.3
    pen = _norm(F, alpha)
    rng = np.random.default_rng(5)
    for scale in [0.3, 1.0, 3.0]:
        x = rng.normal(size=F.p + 1) * scale
        out = pen.prox(x, step)
        r = x - out
        tol = 1e-6 * max(1.0, np.linalg.norm(x))
        assert r[-1] == 0.0
        assert pen.dual_norm(r) <= alpha * step + tol
        assert r @ out == pytest.approx(alpha * step * pen.omega(out), abs=tol)
        assert pen.prox_accuracy <= 1e-6 * max(1.0, np.linalg.norm(x))


@pytest.mark.parametrize("name", ["cardinality", "nonempty", "groups-disjoint"])
def test_closed_form_prox_agrees_with_min_norm_point(name):
    F = FAMILIES[name]
    closed = _norm(F, 0.5)
    general = _norm(norms.CustomSetFunction(F, F.p), 0.5)
    rng = np.random.default_rng(6)
    for _ in range(5):
        x = rng.normal(size=F.p + 1) * 2
        np.testing.assert_allclose(closed.prox(x, 0.8), general.prox(x, 0.8), atol=1e-6)
        assert closed.prox_accuracy == 0.0


def test_closed_forms_of_l1_and_linf():
    p = 6
    x = np.array([3.0, -1.0, 0.2, -0.5, 2.0, 0.0, 9.0])
    l1 = norms.SubmodularNorm(norms.Cardinality(p), 1.0, unpenalized=[p])
    linf = norms.SubmodularNorm(norms.Nonempty(p), 1.0, unpenalized=[p])
    assert l1.omega(x) == pytest.approx(6.7) and l1.dual_norm(x) == 3.0
    assert linf.omega(x) == 3.0 and linf.dual_norm(x) == pytest.approx(6.7)
    np.testing.assert_allclose(l1.prox(x, 0.5), [2.5, -0.5, 0, 0, 1.5, 0, 9.0])
    # L_inf prox of x: clip at the level c with sum (|x_j| - c)_+ = t
    np.testing.assert_allclose(linf.prox(x, 1.5), [1.75, -1.0, 0.2, -0.5, 1.75, 0.0, 9.0])


def test_validation_names_the_violating_sets():
    p = 4
    bare_range = lambda m: float(np.ptp(np.flatnonzero(m)) + 1) if m.any() else 0.0  # noqa: E731
    with pytest.raises(ValueError, match=r"not submodular: F\(\{0\}\) \+ F\(\{2\}\)"):
        norms.CustomSetFunction(bare_range, p)
    with pytest.raises(ValueError, match=r"not non-decreasing: F\(\{0, 1\}\) = 0.5 < F\(\{1\}\) = 1"):
        norms.CustomSetFunction(lambda m: 1.0 if m.sum() == 1 else 0.5 * m.any(), p)
    with pytest.raises(ValueError, match=r"F\(empty\) must be 0"):
        norms.CustomSetFunction(lambda m: 1.0 + m.sum(), p)
    with pytest.raises(ValueError, match=r"F\(\{2\}\) = 0.0 must be > 0"):
        norms.CustomSetFunction(lambda m: float(m[[0, 1, 3]].any()), p)
    with pytest.raises(ValueError, match="p <= 14"):
        norms.CustomSetFunction(lambda m: float(m.any()), 15)
    with pytest.raises(ValueError, match="not submodular"):
        norms.Range(6, offset=3)
    with pytest.raises(ValueError, match="concave"):
        norms.ConcaveCardinality(4, lambda k: k**2)
    with pytest.raises(ValueError, match="h\\(0\\) = 0"):
        norms.ConcaveCardinality(4, lambda k: k + 1.0)
    with pytest.raises(ValueError, match="missing: \\[3\\]"):
        norms.GroupCount(4, [[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="coordinates"):
        norms.SubmodularNorm(norms.Cardinality(3)).value(np.ones(4))
    with pytest.raises(ValueError, match="scalar step"):
        norms.SubmodularNorm(norms.Cardinality(3)).prox(np.ones(3), np.ones(3))


def test_tree_groups():
    assert [g.tolist() for g in norms.tree_groups([-1, 0, 0, 1])] == [[0, 1, 2, 3], [1, 3], [2], [3]]
    with pytest.raises(ValueError, match="cycle"):
        norms.tree_groups([1, 0])


def test_min_norm_point_projects_onto_a_box():
    y = np.array([2.0, -0.3, -5.0, 0.5])
    t, gap = norms.min_norm_point(y, np.sign, tol=1e-20)  # stops at rounding level
    assert gap < 1e-12
    assert np.linalg.norm(t - np.clip(y, -1, 1)) <= np.sqrt(2 * gap) + 1e-15


GL_GROUPS = [[0, 1, 2], [3, 4], [5, 6, 7, 8]]


def test_group_lasso_value_dual_and_oracles():
    pen = norms.GroupLasso(GL_GROUPS, 10, alpha=0.4)
    assert pen.unpenalized.tolist() == [9]
    rng = np.random.default_rng(7)
    for _ in range(5):
        s = rng.normal(size=10)
        nrm = [np.linalg.norm(s[g]) for g in GL_GROUPS]
        d = np.sqrt([3, 2, 4])
        assert pen.omega(s) == pytest.approx(d @ nrm)
        assert pen.dual_norm(s) == pytest.approx(max(np.array(nrm) / d))
        u, t = pen.lmo_ball(s), pen.lmo_dual_ball(s)
        assert pen.omega(u) == pytest.approx(1.0) and s @ u == pytest.approx(pen.dual_norm(s))
        assert pen.dual_norm(t) == pytest.approx(1.0) and s @ t == pytest.approx(pen.omega(s))
        v = pen.dual_scaling(s) * s
        v[9] = 0.0
        assert pen.conjugate(v) == 0.0 and pen.conjugate(1.01 * v) == np.inf


def test_group_lasso_prox_optimality():
    pen = norms.GroupLasso(GL_GROUPS, 10, alpha=0.4)
    rng = np.random.default_rng(8)
    for scale in [0.2, 1.0, 3.0]:
        x = rng.normal(size=10) * scale
        out = pen.prox(x, 1.5)
        r = x - out
        assert r[9] == 0.0
        assert pen.dual_norm(r) <= 0.6 + 1e-12
        assert r @ out == pytest.approx(0.6 * pen.omega(out), abs=1e-12)
    with pytest.raises(ValueError, match="disjoint"):
        norms.GroupLasso([[0, 1], [1, 2]], 3)


def test_package_reexports_the_separable_penalties():
    from dpsparse.norms import L1, L2, PENALTIES, ElasticNet, Penalty, make_penalty, require  # noqa: F401

    assert isinstance(make_penalty("l1", 0.1), L1) and issubclass(ElasticNet, Penalty)
    assert norms.SubmodularNorm.is_separable is False and norms.GroupLasso.is_separable is False


def _expected_linf_width(p):
    return quad(lambda t: 1.0 - (2.0 * normal.cdf(t) - 1.0) ** p, 0, np.inf)[0]


def _expected_group_width(sizes):
    # E ||b_g||_2 = sqrt(2) Gamma((k+1)/2) / Gamma(k/2) (chi distribution), weights sqrt(k)
    k = np.asarray(sizes, dtype=float)
    return float(np.sum(np.sqrt(k) * np.sqrt(2) * np.exp(gammaln((k + 1) / 2) - gammaln(k / 2))))


@pytest.mark.slow
@pytest.mark.parametrize("p", [5, 40])
def test_gaussian_width_closed_forms(p):
    cases = [
        (norms.SubmodularNorm(norms.Cardinality(p), 3.0, unpenalized=[p]), p * np.sqrt(2 / np.pi)),
        (norms.SubmodularNorm(norms.Nonempty(p), 3.0, unpenalized=[p]), _expected_linf_width(p)),
        (norms.GroupLasso([range(0, 2), range(2, p)], p + 1), _expected_group_width([2, p - 2])),
    ]
    for seed, (pen, expected) in enumerate(cases):
        est, (lo, hi) = norms.gaussian_width(pen, n_samples=20_000, random_state=seed)
        assert lo < expected < hi
        assert hi - lo < 0.05 * expected
        assert est == pytest.approx(expected, rel=0.03)
