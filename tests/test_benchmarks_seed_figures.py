"""The pieces of benchmarks/seed_figures.py that its figures rest on: the library default's model measured on the
standardized problem, one point a pass on every curve, and the Gaussian width in Kumar & Deisenroth's bound."""
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import kumar  # noqa: E402
import seed_figures  # noqa: E402
from dpsparse import data  # noqa: E402


def _raw(classification, n=120, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 10.0, (n, p))
    z = X @ rng.normal(size=p)
    y = (z > np.median(z)).astype(float) if classification else 3.0 + z
    bounds = data.Bounds(np.zeros(p), 10.0 * np.ones(p), -100.0, 100.0, source="test")
    return X, y, bounds


@pytest.mark.parametrize("classification", [True, False])
def test_the_default_model_is_measured_on_the_standardized_problem(classification):
    X, y, bounds = _raw(classification)
    problem = seed_figures.paper_problem("t", "test", X, y, bounds, classification, "l1")
    model = SimpleNamespace(coef_=np.array([0.5, -1.0, 2.0, 0.0]), intercept_=0.3)
    w = seed_figures._standardized_coef(problem, model)
    _, _, y_mean, y_scale = problem.standardization
    # the same predictions, in the problem's (standardized) label units
    np.testing.assert_allclose(problem.design.X @ w, (X @ model.coef_ + model.intercept_ - y_mean) / y_scale)


@pytest.mark.parametrize("mechanism", seed_figures.MECHANISMS)
def test_a_curve_has_one_point_a_pass_from_the_start(mechanism):
    X, y, bounds = _raw(True)
    problem = seed_figures.paper_problem("t", "test", X, y, bounds, True, "l2")
    ref = seed_figures.bench.reference(problem)
    errors = seed_figures.curve(problem, ref, mechanism, (3, 0.1, 1.0), seed=0)
    assert len(errors) == 4 and errors[0] == 1.0 and all(np.isfinite(errors))


def test_the_width_of_the_l1_ball_is_the_expected_largest_gaussian():
    assert kumar.l1_ball_width(1) == pytest.approx(np.sqrt(2.0 / np.pi), rel=1e-6)
    g = np.random.default_rng(0).standard_normal((20_000, 50))
    assert kumar.l1_ball_width(50) == pytest.approx(np.abs(g).max(axis=1).mean(), rel=0.01)
