"""Per-coordinate vectors kept as one number where their entries are equal (``dpsparse._arrays``), and the places
that rely on it: the bounded design and DP-GCD's plan hold no memory per feature on one public range."""
import numpy as np
import pytest
import scipy.sparse as sp

from dpsparse import data, losses, norms
from dpsparse._arrays import uniform_view
from dpsparse.mechanisms import dp_gcd, make_plan


def _is_one_number(v):
    return v.strides == (0,) and not v.flags.writeable


def test_equal_entries_become_a_read_only_view_of_one_number():
    v = np.full(1000, 0.25)
    u = uniform_view(v)
    np.testing.assert_array_equal(u, v)
    assert u.dtype == v.dtype and _is_one_number(u) and u.base.nbytes == 8  # the memory of one number
    with pytest.raises(ValueError):
        u[0] = 1.0


@pytest.mark.parametrize("v", [np.r_[np.ones(5), 0.0], np.full(3, np.nan), np.ones(1), np.ones((2, 2)), 2.0, None])
def test_anything_else_is_returned_as_it_is(v):
    assert uniform_view(v) is v


def _sparse_problem(p=400):
    X = sp.random(60, p, density=0.05, random_state=0, format="csr", data_rvs=lambda k: np.linspace(-1, 1, k))
    return X, np.where(np.arange(60) % 2 == 0, 1.0, -1.0)


def test_a_design_on_one_range_holds_no_vector_per_feature():
    """The map, the feature bounds, the bounds' ranges and the sparse design's shift are one number each on one
    range for every feature (what the sparse-memory benchmark measures, benchmarks/speed.py), and the same design
    as per-feature ranges of the same values give."""
    X, y = _sparse_problem()
    p = X.shape[1]
    one = data.prepare(X, y, data.Bounds(-1.0, 1.0), classification=True)
    listed = data.prepare(X, y, data.Bounds(np.full(p, -1.0), np.ones(p)), classification=True)
    for v in (one.feature_bounds, one.scale, one.shift, one.bounds.feature_low, one.bounds.feature_high, one.X.c,
              one.X.f):
        assert _is_one_number(v)
    np.testing.assert_array_equal(one.X.toarray(), listed.X.toarray())
    wider = data.prepare(X, y, data.Bounds(-1.0, 1.0, exceptions={0: (-2.0, 2.0)}), classification=True)
    assert wider.scale.strides == (8,) and wider.scale[0] == 0.5 and np.all(wider.scale[1:] == 1.0)


def test_rows_clipped_to_their_norm_bound_on_a_design_of_one_range():
    """Row clipping scales the sparse design's row factors, which are one number until a row is clipped."""
    X, y = _sparse_problem()
    d = data.prepare(X, y, data.Bounds(-1.0, 1.0, row_norm=0.5), classification=True)
    assert d.clipped_rows > 0
    np.testing.assert_allclose(np.linalg.norm(d.X.toarray()[:, :-1], axis=1).max(), 0.5)


def test_dp_gcd_plans_one_number_per_vector_on_the_bounded_design():
    """On the bounded design (every feature on [-1, 1]) DP-GCD's step sizes, noise scales and sensitivities are the
    same on every coordinate: one number each, however many features."""
    X, y = _sparse_problem()
    design = data.prepare(X, y, data.Bounds(-1.0, 1.0), classification=True)
    penalty = norms.build_penalty("l1", 1e-3, X.shape[1], True)
    plan = make_plan(dp_gcd.MECHANISM, design, losses.Logistic(), penalty, 1.0, 1e-4, None,
                     {"n_iter": 5, "clipping_norm": 0.5, "selection": "laplace"})
    for k in ("L", "M", "select_scales", "update_scales", "select_sensitivity", "update_sensitivity", "clip"):
        assert _is_one_number(plan.params[k]), k
    a, c = penalty.strengths(design.p)
    assert _is_one_number(c) and np.all(c == 0) and a[-1] == 0 and a.strides != (0,)  # the intercept unpenalized
