"""The mechanism contract: every registered mechanism runs through one call shape and one report path."""
import dataclasses
import warnings

import numpy as np
import pytest

from conftest import REGRESSION_ONLY, bounded_problem, mechanism_loss
from dpsparse import DPLasso, PrivacyBudget, PrivacyLeakWarning, audit, losses, norms
from dpsparse.data import BoundedDesign, Bounds, prepare
from dpsparse.mechanisms import REGISTRY, fit_mechanism, make_plan
from dpsparse.noise import make_noise

EPS, DELTA = 1.0, 1e-5


def _setup(name, seed=0, n=120, p=4, fit_intercept=True):
    classification = name not in REGRESSION_ONLY
    X, y = bounded_problem(n=n, p=p, seed=seed, classification=classification)
    labels = (None, None) if classification else (-1.0, 1.0)
    design = prepare(X[:, :-1], y, Bounds(-np.ones(p), np.ones(p), *labels, source="test bounds"), classification,
                     fit_intercept)
    penalty = norms.build_penalty("l1", 0.05, p, fit_intercept)
    options = {"n_iter": 3} if "n_iter" in REGISTRY[name].option_names else {}
    return design, mechanism_loss(name, classification), penalty, options


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_mechanism_meets_its_target_and_reports_provenance(name):
    design, loss, pen, options = _setup(name)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w, rep = fit_mechanism(REGISTRY[name], design, loss, pen, epsilon=EPS, delta=DELTA, options=options,
                               noise=make_noise(0), callback=lambda t, v: seen.append(np.shape(v)))
    assert w.shape == (design.p,) and np.all(np.isfinite(w))
    assert rep.mechanism == name and rep.accountant_epsilon <= EPS * (1 + 1e-9) and rep.accounting_holds
    assert rep.bounds_source == "test bounds" and rep.bounds_public
    assert seen and seen[0] in ((design.p,),)  # the callback gets the model


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_one_shot_mechanism_shows_its_progress_callback_the_released_model_only(name):
    """The callback prints (the support, in the estimators' progress line): it must see released values only. A
    mechanism that calls it once releases one vector: the callback sees that vector, not the minimizer before its
    noise (output and objective perturbation showed the exact minimizer's support)."""
    design, loss, pen, options = _setup(name)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w, _ = fit_mechanism(REGISTRY[name], design, loss, pen, epsilon=EPS, delta=DELTA, options=options,
                             noise=make_noise(0), callback=lambda t, v: seen.append(np.array(v, dtype=float)))
    if len(seen) == 1:
        np.testing.assert_array_equal(seen[0], w)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_mechanism_is_reproducible_with_a_seed(name):
    design, loss, pen, options = _setup(name)
    kw = dict(epsilon=EPS, delta=DELTA, options=options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w1, _ = fit_mechanism(REGISTRY[name], design, loss, pen, noise=make_noise(3), **kw)
        w2, _ = fit_mechanism(REGISTRY[name], design, loss, pen, noise=make_noise(3), **kw)
    np.testing.assert_array_equal(w1, w2)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("name", sorted(set(REGISTRY) - REGRESSION_ONLY))
def test_labels_of_one_byte_and_weights_of_one_number_give_the_model_of_full_vectors(name, fit_intercept):
    """The estimators hand the mechanisms their labels in {-1, +1} as one byte each and, with an intercept, the
    penalty's weights as ``n_penalized`` (memory: two vectors fewer at a fit's peak): the same model, draw for draw,
    as float labels and an explicit weight vector."""
    design, loss, pen, options = _setup(name, fit_intercept=fit_intercept)
    assert design.y.dtype == np.float64 and design.p == 4 + fit_intercept
    assert pen.weights.tolist() == [1.0] * 4 + [0.0] * fit_intercept
    small = dataclasses.replace(design, y=design.y.astype(np.int8))
    explicit = norms.L1(pen.alpha, pen.weights)
    kw = dict(epsilon=EPS, delta=DELTA, options=options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w1, _ = fit_mechanism(REGISTRY[name], design, loss, explicit, noise=make_noise(3), **kw)
        w2, _ = fit_mechanism(REGISTRY[name], small, loss, pen, noise=make_noise(3), **kw)
    np.testing.assert_allclose(w2, w1, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_plan_does_not_depend_on_the_data(name):
    """Two datasets with the same public information (n, p, bounds) get the same plan."""
    a, loss, pen, options = _setup(name, seed=0)
    b, _, _, _ = _setup(name, seed=7)
    assert not np.allclose(a.X, b.X)
    pa = make_plan(REGISTRY[name], a, loss, pen, EPS, DELTA, None, options)
    pb = make_plan(REGISTRY[name], b, loss, pen, EPS, DELTA, None, options)
    assert pa.accountant_epsilon == pb.accountant_epsilon and str(pa.details) == str(pb.details)


def test_a_direct_call_enforces_the_bounds_and_says_who_declared_them():
    from dpsparse.mechanisms import dp_gcd
    X, y = bounded_problem(n=50, p=3, seed=0)
    X[0, 0] = 5.0  # outside the declared bound 1
    _, rep = dp_gcd.dp_gcd(X, y, losses.Logistic(), norms.make_penalty("l1", 0.01, np.ones(4)), np.ones(4),
                           epsilon=EPS, delta=DELTA, noise=make_noise(0), n_iter=2)
    assert rep.bounds_source == "feature_bounds passed by the caller" and rep.clipped["feature values"] == 1
    d = BoundedDesign.from_arrays(X, y, np.ones(4), row_norm=1.0)
    assert np.all(np.abs(d.X) <= 1.0) and np.all(np.linalg.norm(d.X, axis=1) <= 1.0 + 1e-12)


def test_options_are_checked_with_their_names_and_ranges():
    design, loss, pen, _ = _setup("dp-gcd")
    for options, match in [({"n_iter": 0}, r"n_iter must be an integer in \[1"),
                           ({"n_iter": 10**9}, r"n_iter must be an integer in \[1, 1e\+06\]"),
                           ({"rule": "x"}, "unknown rule"), ({"batch": 1}, "unknown mechanism_options")]:
        with pytest.raises(ValueError, match=match):
            fit_mechanism(REGISTRY["dp-gcd"], design, loss, pen, epsilon=EPS, delta=DELTA, options=options,
                          noise=make_noise(None))
    with pytest.raises(ValueError, match="learning_rate must be a finite number"):
        fit_mechanism(REGISTRY["dp-sgd"], design, loss, pen, epsilon=EPS, delta=DELTA,
                      options={"learning_rate": float("nan")}, noise=make_noise(None))


# --- the leaks found by the review, each with its regression test --------------------------

def test_row_norm_bound_includes_the_intercept_column():
    """Huber output perturbation, mu = 1, n = 21, row_norm = 1, label flip at x = (1,1,1)/sqrt(3):
    the minimizer moved 1.40 x its declared sensitivity when R ignored the intercept."""
    bounds = Bounds(-np.ones(3), np.ones(3), -1.0, 1.0, row_norm=1.0)
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (21, 3)), rng.uniform(-1, 1, 21)
    X[0], y[0] = np.ones(3) / np.sqrt(3), 1.0
    X2, y2 = X.copy(), y.copy()
    y2[0] = -1.0
    assert prepare(X, y, bounds, False).row_norm == pytest.approx(np.sqrt(2.0))
    ratios = audit.sensitivity_replay("output", ((X, y), (X2, y2)), bounds, losses.Huber(1.0),
                                      norms.build_penalty("l1", 1e-3, 3, True), options={"mu": 1.0},
                                      classification=False)
    assert 0.5 < ratios["minimizer"] <= 1.0


def test_a_refused_fit_charges_nothing():
    X, y = bounded_problem(n=60, p=3, seed=0, classification=False)
    bounds = Bounds(-np.ones(3), np.ones(3), -1.0, 1.0)
    budget = PrivacyBudget(1.0, 1e-3)
    with pytest.raises(ValueError):
        DPLasso(epsilon=0.6, delta=1e-4, bounds=bounds, budget=budget,
                mechanism_options={"rule": "x"}).fit(X[:, :-1], y)
    with pytest.raises(ValueError):  # no label range: refused before the budget is charged
        DPLasso(epsilon=0.6, delta=1e-4, bounds=Bounds(-np.ones(3), np.ones(3)), budget=budget).fit(X[:, :-1], y)
    assert budget.remaining == (1.0, 1e-3)


def test_a_paper_calibration_that_overshoots_is_charged_its_true_epsilon():
    design, loss, pen, _ = _setup("dual-fw")
    kw = dict(epsilon=1.0, delta=DELTA, calibration="paper", options={"n_iter": 3, "mu": 1e-3}, noise=make_noise(None))
    with pytest.warns(Warning), pytest.raises(ValueError, match="asks for"):  # overdraw: refused, nothing charged
        fit_mechanism(REGISTRY["dual-fw"], design, loss, pen, budget=PrivacyBudget(2.0, 1e-3), **kw)
    budget = PrivacyBudget(1e4, 1e-3)
    with pytest.warns(Warning):
        _, rep = fit_mechanism(REGISTRY["dual-fw"], design, loss, pen, budget=budget, **kw)
    assert rep.accountant_epsilon > 2.0
    assert budget.remaining[0] == pytest.approx(1e4 - rep.accountant_epsilon)


def test_classes_can_be_declared_publicly():
    from dpsparse import DPLogisticRegression
    X, y = bounded_problem(n=60, p=3, seed=0)
    bounds = Bounds(-np.ones(3), np.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPLogisticRegression(bounds=bounds, max_iter=2, random_state=0, classes="from-data").fit(X[:, :-1], y)
        assert any("label set" in w for w in est.privacy_report_.warnings)
        # the label set sets the fits and the model's shape: no guarantee (a PrivacyLeakWarning)
        assert not est.privacy_report_.accounting_holds and not est.privacy_report_.to_dict()["guarantee_holds"]
        assert "NO differential-privacy guarantee" in str(est.privacy_report_)
        est = DPLogisticRegression(bounds=bounds, max_iter=2, random_state=0, classes=[-1.0, 1.0]).fit(X[:, :-1], y)
        assert not any("label set" in w for w in est.privacy_report_.warnings)
        assert est.privacy_report_.accounting_holds
    with pytest.warns(PrivacyLeakWarning, match="no privacy guarantee"):
        DPLogisticRegression(bounds=bounds, max_iter=2, random_state=0, classes="from-data").fit(X[:, :-1], y)
    y_odd = y.copy()
    y_odd[0] = 123456.0
    with pytest.raises(ValueError, match="outside classes") as refused:  # no record's label in the message
        DPLogisticRegression(bounds=bounds, classes=[-1.0, 1.0]).fit(X[:, :-1], y_odd)
    assert "123456" not in str(refused.value)


def test_a_direct_call_clips_the_labels_and_refuses_the_automatic_threshold_on_wide_bounds():
    """``from_arrays`` (a mechanism called on arrays) clips labels to [-1, 1], the range every sensitivity assumes:
    labels of +-10 with the logistic loss moved DP-GCD's releases 5 times their declared sensitivity before (0.5
    now, the label flip of a corner record); DP-GCD's automatic threshold, a sum of mean ``|x_ij|`` of sensitivity
    1, is refused on feature bounds above 1."""
    from dpsparse.audit import ReplayNoise
    from dpsparse.mechanisms.dp_gcd import dp_gcd

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (50, 3))
    X[0] = 1.0
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    ya, yb = y.copy(), y.copy()
    ya[0], yb[0] = 10.0, -10.0
    pen = norms.build_penalty("l1", 0.01, 3, False)
    first = ReplayNoise(0)
    dp_gcd(X, ya, losses.Logistic(), pen, np.ones(3), epsilon=1.0, delta=1e-5, noise=first, n_iter=3)
    second = ReplayNoise(0, recorded=first.log)
    dp_gcd(X, yb, losses.Logistic(), pen, np.ones(3), epsilon=1.0, delta=1e-5, noise=second, n_iter=3)
    assert 0.4 < max(r for _, r in second.ratios) <= 1.0 + 1e-9
    with pytest.raises(ValueError, match="needs feature bounds of at most 1"):
        dp_gcd(X, y, losses.Logistic(), pen, 10 * np.ones(3), epsilon=1.0, delta=1e-5, noise=first,
               clipping_norm="auto")
