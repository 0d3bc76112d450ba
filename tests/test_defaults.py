"""Defaults that need no tuning: mechanism="auto", clip="auto" (the private label range), AdaSSP, the constant
predictor, the warning on a large delta."""
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

from conftest import planted_sparse
from dpsparse import DPLasso, DPLinearSVC, DPLogisticRegression, audit, data, losses, norms
from dpsparse.accounting import zcdp_budget, zcdp_epsilon
from dpsparse.exceptions import ConstantPredictorWarning, WeakGuaranteeWarning
from dpsparse.mechanisms import REGISTRY, auto, fit_mechanism
from dpsparse.private_bounds import LABEL_WIDTH, LabelScaleDesign


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


@pytest.mark.parametrize("loss,penalty,n,p,expected", [
    (losses.Squared(1.0), "l1", 5000, 1000, "two-stage"),
    (losses.Squared(1.0), "l1", 20000, 8, "dp-gd"),  # few features: nothing to select
    (losses.Logistic(), "l1", 20000, 100, "dp-gd"),  # few features
    (losses.Logistic(), "l1", 50, 30, "dp-gd"),  # n epsilon / log p = 14.7: above the few features' floor (8)
    (losses.Logistic(), "l1", 300, 1000, "constant"),  # 43: below the floor of many features (50)
    (losses.Logistic(), "l1", 5000, 1000, "dp-gcd"),  # 724: many features
    (losses.Logistic(), "l1", 54, 7129, "constant"),
    (losses.Huber(1.0), "l1", 5000, 50, "two-stage"),  # the Huber loss follows least squares
    (losses.Huber(1.0), "l1", 5000, 20, "dp-gd"),  # n epsilon / log p = 1669: every feature of at most 30
    (losses.Squared(1.0), "l1", 800, 30, "dp-gd"),  # at most 30 features: no selection
    (losses.Squared(1.0), "l1", 5000, 31, "two-stage"),
    (losses.Squared(1.0), "l1", 1000, 1000, "two-stage"),  # n epsilon / log p = 145: above the floor (130)
    (losses.Squared(1.0), "l1", 850, 1000, "two-stage"),  # 123: above the selection's own floor (110)
    (losses.Squared(1.0), "l1", 740, 1000, "constant"),  # 107: below it
    (losses.Squared(1.0), "l1", 230, 5, "dp-gd"),  # 143
    (losses.Squared(1.0), "l1", 200, 5, "constant"),  # 124
    (losses.Hinge(), "l1", 5000, 50, "dp-gd"),
    (losses.Hinge(), "l1", 200, 1000, "constant"),  # 29: below the hinge's floor (30)
    (losses.Hinge(), "l1", 300, 1000, "dp-gd"),  # 43
    (losses.Squared(1.0), "group-l2", 5000, 50, "dp-sgd"),
])
def test_the_rule_reads_public_quantities_only(loss, penalty, n, p, expected):
    groups = [list(range(p))] if penalty.startswith("group") else None
    name, options, reason = auto.choose(loss, norms.build_penalty(penalty, 1e-3, p, True, groups), n, p, 1.0)
    assert name == expected and reason
    REGISTRY[name].resolve_options(options)  # every option the rule sets is declared and in range


@pytest.mark.parametrize("n,p,epsilon,radius", [
    (1000, 100, 0.3, 3.0),  # n epsilon / log p = 65
    (1800, 300, 0.3, 3.0),  # 94.6: below the band (100)
    (2000, 300, 0.3, 10.0),  # 105.2
    (24000, 112, 0.1, 10.0),  # 509 (adult at epsilon 0.1)
    (24000, 112, 1.0, 10.0),  # 5086
])
def test_the_hinge_rules_step_radius_follows_n_epsilon_over_log_p(n, p, epsilon, radius):
    name, options, reason = auto.choose(losses.Hinge(), norms.build_penalty("l1", 1e-3, p, True), n, p, epsilon)
    expected = auto.HINGE_RADII[n * epsilon >= auto.HINGE_BAND * math.log(p)]
    assert name == "dp-gd" and options["step_radius"] == expected == radius and f"step {radius:g} /" in reason


@pytest.mark.parametrize("loss,n,p,epsilon", [
    (losses.Logistic(), 5000, 30, 0.6),  # n epsilon / log p = 882
    (losses.Logistic(), 5000, 30, 1.0),  # 1470
    (losses.Hinge(), 20000, 100, 0.2),  # 869
    (losses.Hinge(), 20000, 100, 0.3),  # 1303
    (losses.Squared(1.0), 2000, 8, 1.0),  # 962
    (losses.Squared(1.0), 15000, 8, 1.0),  # 7213 (cadata's size)
])
def test_the_rules_dp_gd_takes_more_steps_from_its_band(loss, n, p, epsilon):
    """The rule's DP-GD (the logistic loss on few features, the hinge loss, least squares on few features) takes
    ``GD_STEPS`` steps below ``n epsilon = GD_MANY_BAND log p`` and ``GD_MANY_STEPS`` from it, and says so."""
    name, options, reason = auto.choose(loss, norms.build_penalty("l1", 1e-3, p, True), n, p, epsilon)
    many = n * epsilon >= auto.GD_MANY_BAND * math.log(p)
    steps = auto.GD_MANY_STEPS if many else auto.GD_STEPS
    assert name == "dp-gd" and options["n_iter"] == steps == auto.gd_steps(n * epsilon / math.log(p))
    assert f"{steps} steps" in reason and auto.GD_MANY_STEPS > auto.GD_STEPS


@pytest.mark.parametrize("n,p,epsilon,mechanism", [
    (24000, 112, 0.1, "dp-gcd"),  # n epsilon / log p = 509 (adult at epsilon 0.1)
    (24000, 112, 0.2, "dp-gd"),  # 1017
    (24000, 112, 1.0, "dp-gd"),  # 5086 (adult at epsilon 1)
    (20000, 300, 1.0, "dp-gd"),  # 3506
    (20000, 301, 1.0, "dp-gcd"),  # 3505: more than FEW_MANY features
    (5000, 300, 1.0, "dp-gcd"),  # 877: below GD_MANY_BAND
])
def test_the_logistic_rules_dp_gd_covers_a_few_hundred_features_where_records_are_many(n, p, epsilon, mechanism):
    """On ``FEW`` to ``FEW_MANY`` features the logistic rule takes DP-GD (``GD_MANY_STEPS`` steps) from
    ``n epsilon = GD_MANY_BAND log p`` and DP-GCD below it (``--study gd-many``); on more, DP-GCD at every ratio."""
    name, options, reason = auto.choose(losses.Logistic(), norms.build_penalty("l1", 1e-4, p, True), n, p, epsilon)
    assert name == mechanism
    assert (p <= auto.FEW_MANY and n * epsilon >= auto.GD_MANY_BAND * math.log(p)) == (name == "dp-gd")
    if name == "dp-gd":
        assert options == {"n_iter": auto.GD_MANY_STEPS, "clipping_norm": "auto"}
        assert f"DP-GD, {auto.GD_MANY_STEPS} steps" in reason and f"on more than {auto.FEW_MANY} features" in reason


@pytest.mark.parametrize("n,p,epsilon,steps", [
    (1000, 5, 0.3, 20),  # n epsilon / log p = 186
    (2000, 8, 0.3, 100),  # 289
    (2000, 8, 0.6, 100),  # 577
    (3000, 8, 0.6, 200),  # 866
    (15000, 8, 1.0, 1000),  # 7213 (cadata's size)
])
def test_the_least_squares_rules_dp_gd_takes_fewer_steps_where_records_are_few(n, p, epsilon, steps):
    """Least squares on few features: DP-GD's steps grow with ``n epsilon / log p`` (``LEAST_SQUARES_GD_STEPS``)."""
    name, options, reason = auto.choose(losses.Squared(1.0), norms.build_penalty("l1", 1e-3, p, True), n, p, epsilon)
    ratio = n * epsilon / math.log(p)
    expected = next(s for bound, s in auto.LEAST_SQUARES_GD_STEPS if ratio < bound)
    assert name == "dp-gd" and options["n_iter"] == expected == auto.least_squares_steps(ratio) == steps
    assert f"{steps} steps" in reason
    assert [s for _, s in auto.LEAST_SQUARES_GD_STEPS] == sorted(s for _, s in auto.LEAST_SQUARES_GD_STEPS)


def test_dplasso_on_five_features_with_few_records_for_the_budget_beats_the_label_mean():
    """n = 1000, p = 5, epsilon 0.3 (``n epsilon / log p = 186``): with 200 DP-GD steps the default's held-out R^2
    was -1.3 to -1.5 below the training mean's on average; with the rule's 20 it gains (measured +0.11 to +0.47)."""
    rng = np.random.default_rng(5)
    gains = []
    for seed in range(4):
        X = rng.uniform(-1, 1, (3000, 5))
        y = X @ rng.choice([-1.0, 1.0], 5) + 0.6 * rng.standard_normal(3000)
        half = 5 * y.std()
        est = _quiet(DPLasso(epsilon=0.3, bounds=data.Bounds(-1.0, 1.0, -half, half), random_state=seed).fit,
                     X[:1000], y[:1000])
        reason = est.privacy_report_.noise["mechanism chosen (mechanism='auto')"]
        assert "DP-GD on all of them, 20 steps" in reason and "steps: 20 below 250, 100 below 600" in reason
        mean_r2 = 1 - np.mean((y[1000:] - y[:1000].mean()) ** 2) / np.var(y[1000:])
        gains.append(est.score(X[1000:], y[1000:]) - mean_r2)
    assert np.mean(gains) > 0.1


def test_with_a_private_label_set_a_structured_norm_takes_a_mechanism_calibrated_in_zcdp():
    """The label set bought privately composes with the fit in zCDP, which DP-SGD's subsampled steps lack."""
    penalty = norms.build_penalty("group-l2", 1e-3, 300, True, [list(range(300))])
    name, options, reason = auto.choose(losses.Logistic(), penalty, 400, 300, 1.0, zcdp=True)
    assert name == "dp-gd" and REGISTRY[name].zcdp_calibration and "label set bought privately" in reason
    REGISTRY[name].resolve_options(options)
    assert auto.choose(losses.Logistic(), penalty, 400, 300, 1.0)[0] == "dp-sgd"


@pytest.mark.parametrize("loss,penalty,n,p,expected,steps", [
    (losses.Squared(1.0), "group-l2", 5000, 20, "dp-gd", 1000),  # n epsilon / log p = 1669
    (losses.Huber(1.0), "linf", 1000, 20, "dp-gd", 100),  # 334
    (losses.Squared(1.0), "linf", 300, 20, "constant", None),  # 100: below the least-squares floor (130)
    (losses.Logistic(), "linf", 2000, 30, "dp-gd", 200),  # 588
    (losses.Logistic(), "group-l2", 5000, 100, "dp-gd", 1000),  # 1086
    (losses.Logistic(), "group-l2", 20, 100, "constant", None),  # 4.3: below the few features' floor (8)
    (losses.Squared(1.0), "group-l2", 5000, 31, "dp-sgd", None),  # more than 30 features
    (losses.Logistic(), "linf", 5000, 101, "dp-sgd", None),  # more than 100
    (losses.Hinge(), "linf", 5000, 20, "dp-gd", 1000),  # the hinge rule, whatever the norm
])
def test_a_structured_norm_on_few_features_takes_dp_gd_with_the_separable_rules_floor_and_steps(loss, penalty, n, p,
                                                                                              expected, steps):
    groups = [list(range(i, min(i + 5, p))) for i in range(0, p, 5)] if penalty == "group-l2" else None
    name, options, reason = auto.choose(loss, norms.build_penalty(penalty, 1e-3, p, True, groups), n, p, 1.0)
    assert name == expected and options.get("n_iter") == steps
    REGISTRY[name].resolve_options(options)


@pytest.mark.parametrize("make,fit_kw,expected", [
    (lambda: DPLogisticRegression(), {}, auto.RULE_ALPHA),  # the rule, logistic, separable
    (lambda: DPLogisticRegression(penalty="elasticnet"), {}, auto.RULE_ALPHA),
    (lambda: DPLasso(), {}, auto.RULE_ALPHA),  # the rule, least squares
    (lambda: DPLogisticRegression(mechanism="dp-gcd"), {}, auto.ALPHA),  # named: the earlier fixed strength
    (lambda: DPLogisticRegression(penalty="group-l2", groups=[[0, 1], [2, 3], [4, 5]]), {}, auto.ALPHA),
    (lambda: DPLinearSVC(), {}, auto.ALPHA),  # hinge: no rule measured
    (lambda: DPLasso(loss="huber"), {}, auto.RULE_ALPHA),  # the Huber loss follows the least-squares rule
    (lambda: DPLogisticRegression(alpha=0.05), {}, 0.05),  # given: kept
])
def test_alpha_auto_is_the_measured_strength_under_the_rule_and_the_fixed_one_elsewhere(make, fit_kw, expected):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (600, 6))
    y = X[:, 0] + 0.1 * rng.standard_normal(600)
    est = make()
    classification = est._classification
    bounds = data.Bounds(-1.0, 1.0, None if classification else -2.0, None if classification else 2.0)
    target = (y > 0).astype(int) if classification else y
    extra = {"classes": [0, 1]} if classification else {}
    est.set_params(bounds=bounds, random_state=0, **extra)
    _quiet(est.fit, X, target)
    assert est.alpha_ == expected and est.get_params()["alpha"] in ("auto", 0.05)
    penalty = est._penalty(6)
    assert getattr(penalty, "alpha", None) == expected  # the fit's penalty has that strength
    reason = est.privacy_report_.noise.get("mechanism chosen (mechanism='auto')", "")
    assert (f"penalty strength alpha = {expected:g} (alpha='auto')" in reason) == (
        est.mechanism == "auto" and est.alpha == "auto")


@pytest.mark.parametrize("n,p,epsilon,steps", [
    (5000, 1000, 1.0, auto.GCD_FEW_STEPS),  # n epsilon / log p = 724: 50 steps
    (8000, 1000, 1.0, auto.ITERATIONS),  # 1158: 100
    (5000, 1000, 0.5, auto.GCD_FEW_STEPS),  # 362: 50
    (24000, 112, 0.1, auto.GCD_FEW_STEPS),  # 509 (adult at epsilon 0.1)
    (24000, 400, 1.0, auto.ITERATIONS),  # 4006 (on at most FEW_MANY features from 1000: DP-GD)
    (60000, 1000, 1.0, auto.ITERATIONS),  # 8686
    (80000, 1000, 1.0, auto.GCD_MANY_STEPS),  # 11,581
    (200000, 3000, 1.0, auto.GCD_MANY_STEPS),  # 24,980
])
def test_the_logistic_rules_dp_gcd_steps_follow_n_epsilon_over_log_p(n, p, epsilon, steps):
    name, options, reason = auto.choose(losses.Logistic(), norms.build_penalty("l1", 1e-4, p, True), n, p, epsilon)
    assert name == "dp-gcd" and options["n_iter"] == steps and f"DP-GCD, {steps} steps" in reason
    assert (n * epsilon < auto.GCD_BAND * math.log(p)) == (steps == auto.GCD_FEW_STEPS)
    assert (n * epsilon >= auto.GCD_MANY_BAND * math.log(p)) == (steps == auto.GCD_MANY_STEPS)
    assert options["warm_start"] == (steps == auto.GCD_FEW_STEPS)
    assert ("started from the constant predictor's intercept" in reason) == options["warm_start"]
    assert (f"the constant below {auto.FLOOR}; steps: {auto.GCD_FEW_STEPS} below {auto.GCD_BAND}, {auto.ITERATIONS} "
            f"below {auto.GCD_MANY_BAND}, {auto.GCD_MANY_STEPS} above") in reason  # what n epsilon / log p met


def test_the_rules_dp_gcd_starts_from_the_noisy_label_mean_and_reports_it():
    """Below ``GCD_BAND`` the rule's DP-GCD starts from the constant predictor's intercept (a noisy label mean, its
    own share of the budget, in the report): on 80 / 20 classes with uninformative features (n epsilon / log p = 53)
    it stays nearer the constant predictor's accuracy than the same fit started cold, whose few noisy steps leave
    it near a coin flip on some draws (8 draws each: measured 0.680 against 0.626, the constant 0.8)."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (6000, 300)), (rng.random(6000) < 0.8).astype(int)
    bounds = data.Bounds(-np.ones(300), np.ones(300))
    rule, cold = [], []
    for seed in range(8):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = DPLogisticRegression(epsilon=0.3, bounds=bounds, classes=[0, 1], random_state=seed)
            est.fit(X[:1000], y[:1000])
            same = DPLogisticRegression(epsilon=0.3, bounds=bounds, classes=[0, 1], random_state=seed, alpha=est.alpha_,
                                        mechanism="dp-gcd", max_iter=auto.GCD_FEW_STEPS,
                                        mechanism_options={"clipping_norm": "auto"}).fit(X[:1000], y[:1000])
        assert est.privacy_report_.mechanism == "dp-gcd" and "warm start" in est.privacy_report_.noise
        rule.append(est.score(X[1000:], y[1000:]))
        cold.append(same.score(X[1000:], y[1000:]))
    assert np.mean(rule) > np.mean(cold) + 0.03


@pytest.mark.parametrize("n,epsilon,sparsity,steps", [
    (1000, 1.0, 3, 20),  # n epsilon / log 1000 = 145: just above the floor (130), 3 features, 20 steps
    (1200, 1.0, 3, 20),  # 174: still 3 below 175 (--study sparsity-low)
    (1300, 1.0, 5, 50),  # 188: 5 features (--study fill-count)
    (2000, 1.0, 6, 50),  # 290
    (5000, 0.5, 10, 100),  # 362: 10 features, 100 DP-GD steps
    (5000, 1.0, 10, 200),  # 724: the planted Lasso of the targets
    (20000, 1.0, 10, 1000),  # 2895: 1000 DP-GD steps from 1000
])
def test_the_least_squares_rule_selects_fewer_features_when_records_are_few(n, epsilon, sparsity, steps):
    name, options, reason = auto.choose(losses.Squared(1.0), norms.build_penalty("l1", 1e-3, 1000, True), n, 1000,
                                        epsilon)
    assert name == "two-stage" and f"select {sparsity} " in reason and f"{steps} steps of DP-GD" in reason
    assert (options["sparsity"], options["selection_share"], options["n_iter"]) == (sparsity, 0.7, steps)
    REGISTRY[name].resolve_options(options)


def _fill_problem(spread=1.0, n=560, p=40, seed=0):
    """A regression where the rule reads the fill (``n epsilon / log p`` = 152 at epsilon 1): normals times
    ``spread`` clipped to [-1, 1] (a fill of about 0.73 at 1, 0.3 at 0.3), four informative features."""
    rng = np.random.default_rng(seed)
    X = np.clip(spread * rng.standard_normal((n, p)), -1.0, 1.0)
    y = X[:, :4] @ np.ones(4) + 0.3 * rng.standard_normal(n)
    return X, y, data.Bounds(-np.ones(p), np.ones(p), -10.0, 10.0)


def test_the_rule_reads_the_fill_only_below_fill_band_for_least_squares_on_many_features():
    sq, l1 = losses.Squared(1.0), norms.build_penalty("l1", 1e-3, 1000, True)
    assert auto.reads_fill(sq, l1, 1000, 1000, 1.0)  # n epsilon / log p = 145
    assert auto.reads_fill(sq, l1, 770, 1000, 1.0)  # 111: from the selection's floor (110)
    assert not auto.reads_fill(sq, l1, 750, 1000, 1.0)  # 109: below it, the constant
    assert auto.reads_fill(sq, l1, 2400, 1000, 1.0)  # 347: below FILL_BAND (350)
    assert not auto.reads_fill(sq, l1, 2420, 1000, 1.0)  # 350: the bands read n, p and epsilon only
    assert not auto.reads_fill(sq, norms.build_penalty("l1", 1e-3, 30, True), 500, 30, 1.0)  # every feature fit
    assert not auto.reads_fill(losses.Huber(1.0), l1, 1000, 1000, 1.0)  # not measured for the Huber loss
    assert not auto.reads_fill(losses.Logistic(), l1, 1000, 1000, 1.0)


@pytest.mark.parametrize("fill,filled", [(None, False), (0.01, False), (auto.FILL_MORE - 1e-9, False),
                                         (auto.FILL_MORE, True), (1.0, True)])
def test_a_fill_of_at_least_fill_more_selects_the_filled_count_below_fill_band(fill, filled):
    for n, steps, counts in ((800, 20, (3, 4)), (1000, 20, (3, 5)), (1300, 50, (5, 6)), (2000, 50, (6, 7)),
                             (3000, 100, (10, 10))):  # n epsilon / log p = 116, 145, 188, 290, 434
        options = auto.least_squares_selection(n, 1000, 1.0, fill)
        assert (options["sparsity"], options["n_iter"], options["selection_share"]) == (counts[filled], steps, 0.7)


@pytest.mark.parametrize("n,steps,counts", [
    (898, 20, (3, 4)), (899, 20, (3, 5)),  # n epsilon / log 1000 = 129.998, 130.14
    (1208, 20, (3, 5)), (1209, 50, (5, 6)),  # 174.87, 175.02
    (1554, 50, (5, 6)), (1555, 50, (6, 7)),  # 224.96, 225.11
    (2417, 50, (6, 7)), (2418, 100, (10, 10)),  # 349.9, 350.04: from FILL_BAND the fill changes nothing
])
def test_the_counts_change_at_the_band_edges(n, steps, counts):
    assert auto.FILL_BAND == 350
    for fill, count in ((None, counts[0]), (auto.FILL_MORE, counts[1])):
        options = auto.least_squares_selection(n, 1000, 1.0, fill)
        assert (options["sparsity"], options["n_iter"]) == (count, steps)
    assert auto.reads_fill(losses.Squared(1.0), norms.build_penalty("l1", 1e-3, 1000, True), n, 1000, 1.0) == (
        counts[0] != counts[1])


def test_the_report_never_rounds_a_ratio_up_to_the_band_it_is_below():
    _, options, reason = auto.choose(losses.Squared(1.0), norms.build_penalty("l1", 1e-3, 1000, True), 2417, 1000, 1.0)
    assert options["sparsity"] == 6 and "n epsilon / log p = 349.8: select 6" in reason  # 349.897: cut, not 349.9


@pytest.mark.parametrize("fill,words", [(0.7, "0.700 of their box (released privately), at least 0.65: 5 features "
                                         "instead of 3"),
                                        (0.3, "0.300 of their box (released privately), below 0.65: the band's 3")])
def test_the_report_says_what_the_fill_changed(fill, words):
    sq, l1 = losses.Squared(1.0), norms.build_penalty("l1", 1e-3, 1000, True)
    name, options, reason = auto.choose(sq, l1, 1000, 1000, 1.0, fill=fill)  # 145
    assert words in reason and f"select {options['sparsity']} privately" in reason


@pytest.mark.parametrize("n,sparsity", [(1000, 3), (1300, 5), (2000, 6), (3000, 10)])
def test_the_huber_loss_follows_the_counts_without_the_fill(n, sparsity):
    name, options, _ = auto.choose(losses.Huber(1.0), norms.build_penalty("l1", 1e-3, 1000, True), n, 1000, 1.0)
    assert name == "two-stage" and options["sparsity"] == sparsity and "selection_clip" not in options
    assert not auto.reads_fill(losses.Huber(1.0), norms.build_penalty("l1", 1e-3, 1000, True), n, 1000, 1.0)


def test_the_fill_is_one_gaussian_release_of_sensitivity_one_composed_with_the_fit():
    X, y, bounds = _fill_problem()
    noise = audit.LedgerNoise(0)
    est = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=noise).fit, X, y)
    report = est.privacy_report_
    fills = [d for d in noise.log if d.name == "the records' fill of their box"]
    rho = zcdp_budget(1.0, 1.0 / X.shape[0] ** 2)
    assert len(fills) == 1 and fills[0].family == "gaussian" and float(fills[0].sensitivity) == 1.0
    assert float(fills[0].scale) == pytest.approx(1.0 / math.sqrt(2.0 * auto.FILL_SHARE * rho), rel=1e-9)
    assert noise.log[0].name == fills[0].name  # before the fit reads anything
    assert report.accountant_epsilon <= 1.0 + 1e-9 and "fill" in report.accountant
    assert audit.check_log(noise.log, report).holds  # every draw, the fill's included, within the claim
    assert "the rule's fill" in report.noise and "records fill" in report.noise["mechanism chosen (mechanism='auto')"]
    alone = zcdp_epsilon((1.0 - auto.FILL_SHARE) * rho, 1.0 / X.shape[0] ** 2)  # the fill's cost, in epsilon
    assert f"the fit alone would be epsilon {alone:.4g}" in report.noise["whole budget"] and 0 < 1.0 - alone < 0.05


@pytest.mark.parametrize("spread,sparsity", [(1.0, 5), (0.3, 3)])
def test_the_noiseless_fill_chooses_five_features_where_the_records_fill_their_box(spread, sparsity):
    X, y, bounds = _fill_problem(spread)
    est = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=audit.LedgerNoise(0, zero=True)).fit, X, y)
    R = math.sqrt(X.shape[1] + 1)  # the design's bound: the features on [-1, 1] and the intercept's column
    m, order = X.shape[0] // 2, np.random.default_rng(0).permutation(X.shape[0])  # the noise generator's pairs
    fill = np.mean(np.minimum(np.linalg.norm(X[order[:m]] - X[order[m:2 * m]], axis=1) / (math.sqrt(2) * R), 1.0))
    assert float(est.privacy_report_.noise["the rule's fill"].split(",")[0]) == pytest.approx(fill, abs=5e-4)
    assert (fill >= auto.FILL_MORE) == (sparsity == 5)
    assert est.support_.size == sparsity


def test_the_fill_sum_moves_by_exactly_its_sensitivity_when_a_record_crosses_its_partners_box():
    from dpsparse.estimators import _fill_sum

    X, y, bounds = _fill_problem(n=100)
    order = np.random.default_rng(1).permutation(100)
    first, partner = order[0], order[50]
    X[partner] = 1.0  # the first record's partner, at a corner
    a, b = X.copy(), X.copy()
    a[first], b[first] = 1.0, -1.0  # on its partner (distance 0), then at the opposite corner (beyond sqrt(2) R)
    assert _fill_sum(b, y, bounds, True, order) - _fill_sum(a, y, bounds, True, order) == pytest.approx(1.0, abs=1e-12)


def test_the_fills_pairs_follow_a_permutation_not_the_files_order():
    """Paired by position, a file sorted by its records would pair by the sort, and one replaced record could move
    every pair; through a permutation drawn independently of the records the release depends on the records only,
    not their order: the same records shuffled and sorted give one distribution (means over 400 permutations
    agree)."""
    from dpsparse.estimators import _fill_sum

    X, y, bounds = _fill_problem(n=200)
    ranked = np.argsort(X[:, 0])
    Xs, ys = X[ranked], y[ranked]
    rng = np.random.default_rng(2)
    sums = [[_fill_sum(A, b, bounds, True, rng.permutation(200)) for _ in range(400)] for A, b in ((X, y), (Xs, ys))]
    assert 0 < np.std(sums[0]) and abs(np.mean(sums[0]) - np.mean(sums[1])) < 4 * np.std(sums[0]) * math.sqrt(2 / 400)


def test_records_bunched_in_a_corner_of_their_box_do_not_count_as_filling_it():
    """The fill measures the records' spread, not their distance from the box's centre: records in [0.8, 1] sit far
    from it but spread over a tenth of the range (a fill near 0.06, below ``auto.FILL_FLOOR``), and the rule releases
    the constant predictor."""
    rng = np.random.default_rng(3)
    X = rng.uniform(0.8, 1.0, (560, 40))
    y = X[:, :4] @ np.ones(4) + 0.1 * rng.standard_normal(560)
    est = _quiet(DPLasso(epsilon=1.0, bounds=data.Bounds(-np.ones(40), np.ones(40), -10.0, 10.0),
                         random_state=audit.LedgerNoise(0, zero=True)).fit, X, y)
    assert float(est.privacy_report_.noise["the rule's fill"].split(",")[0]) < 0.1
    assert est.privacy_report_.mechanism == "constant" and est.support_.size == 0


def test_a_fill_below_fill_floor_releases_the_constant_predictor_inside_the_same_budget():
    X, y, bounds = _fill_problem(spread=0.1)  # normals a tenth as wide: a fill near 0.07
    noise = audit.LedgerNoise(0)
    with pytest.warns(ConstantPredictorWarning, match=f"below {auto.FILL_FLOOR:g}"):
        est = DPLasso(epsilon=1.0, bounds=bounds, random_state=noise).fit(X, y)
    report = est.privacy_report_
    assert report.mechanism == "constant" and est.support_.size == 0
    assert noise.log[0].name == "the records' fill of their box" and len(noise.log) == 2  # the fill, the mean
    assert report.accountant_epsilon <= 1.0 + 1e-9 and audit.check_log(noise.log, report).holds


@pytest.mark.parametrize("fill,name", [(auto.FILL_FLOOR - 1e-9, "constant"), (auto.FILL_FLOOR, "two-stage"),
                                       (None, "two-stage")])
def test_the_rule_releases_the_constant_below_fill_floor(fill, name):
    sq, l1 = losses.Squared(1.0), norms.build_penalty("l1", 1e-3, 1000, True)
    for n in (800, 2400):  # n epsilon / log p = 116, 347: wherever the rule reads the fill
        chosen, _, reason = auto.choose(sq, l1, n, 1000, 1.0, fill=fill)
        assert chosen == name and (name == "two-stage" or "narrower public ranges" in reason)


def test_the_fill_is_read_on_the_declared_map_in_blocks_and_on_every_backend():
    from dpsparse.estimators import _fill_sum

    X, y, bounds = _fill_problem(0.5, n=51, p=40)  # 25 pairs, one record unpaired
    order = np.random.default_rng(4).permutation(51)
    X[order[3]] = 5.0  # beyond the declared range: clipped to the box, as the fit maps it
    X[order[4], :20] = X[order[29], :20] = 0.0  # a sparse matrix's implicit zeros on both sides of a pair
    R = math.sqrt(41)
    da = pytest.importorskip("dask.array")
    for bounds_, mapped in ((bounds, np.clip(X, -1.0, 1.0)),  # and a range not centred on 0: a shifted map
                            (data.Bounds(np.zeros(40), np.full(40, 2.0), -10.0, 10.0), np.clip(X, 0.0, 2.0) - 1.0)):
        gaps = mapped[order[:25]] - mapped[order[25:50]]
        expected = np.minimum(np.linalg.norm(gaps, axis=1) / (math.sqrt(2) * R), 1.0).sum()
        for A, block in ((X, 2**22), (X, 7 * 40), (sp.csr_matrix(X), 7 * 40)):  # one block, or 4 blocks of pairs
            assert _fill_sum(A, y, bounds_, True, order, block=block) == pytest.approx(expected, rel=1e-12)
        assert _fill_sum(da.from_array(X, chunks=(16, 40)), da.from_array(y, chunks=16), bounds_, True,
                         order) == pytest.approx(expected, rel=1e-12)


def test_the_fill_and_the_fit_are_charged_once_as_one_epsilon():
    from dpsparse.accounting import BudgetExceededError, PrivacyBudget

    X, y, bounds = _fill_problem()
    budget = PrivacyBudget(1.5, 1e-3)
    _quiet(DPLasso(epsilon=1.0, bounds=bounds, budget=budget, random_state=0).fit, X, y)
    assert budget.spent == [(1.0, 1.0 / X.shape[0] ** 2, "DPLasso (two-stage)")]
    refused = audit.LedgerNoise(0)
    with pytest.raises(BudgetExceededError):  # refused before the fill is released
        _quiet(DPLasso(epsilon=1.0, bounds=bounds, budget=budget, random_state=refused).fit, X, y)
    assert len(budget.spent) == 1 and refused.log == []


def test_a_dask_records_infinity_is_refused_before_the_fill_charges_anything():
    da = pytest.importorskip("dask.array")
    from dpsparse.accounting import PrivacyBudget

    X, y, bounds = _fill_problem()
    X[5, 2] = np.inf
    budget = PrivacyBudget(5.0, 1e-3)
    for clip in (1.0, "auto"):
        with pytest.raises(ValueError):
            DPLasso(epsilon=1.0, bounds=bounds, clip=clip, budget=budget, random_state=0).fit(
                da.from_array(X, chunks=(100, 40)), da.from_array(y, chunks=100))
    assert budget.spent == []


@pytest.mark.parametrize("kw", [{"mechanism": "two-stage"}, {"epsilon": 2.5},  # 380: from FILL_BAND (350)
                                {"bounds": "row_norm"}, {"loss_huber": True}])
def test_no_fill_is_released_where_the_rule_does_not_read_it(kw):
    X, y, bounds = _fill_problem()
    kw = dict(kw)
    if kw.pop("bounds", None):
        bounds = data.Bounds(-np.ones(40), np.ones(40), -10.0, 10.0, row_norm=4.0)  # not measured: not read
    if kw.pop("loss_huber", False):
        kw["loss"] = "huber"
    noise = audit.LedgerNoise(0)
    est = _quiet(DPLasso(**{"epsilon": 1.0, **kw}, bounds=bounds, random_state=noise).fit, X, y)
    assert "the rule's fill" not in est.privacy_report_.noise
    assert all(d.name != "the records' fill of their box" for d in noise.log) and noise.log


def test_the_fill_reads_bounds_declared_any_way_and_any_record_container_alike():
    pd = pytest.importorskip("pandas")
    from dpsparse import DPLinearRegression

    X, y, bounds = _fill_problem()
    as_dict = {"feature_low": [-1.0] * 40, "feature_high": [1.0] * 40, "label_low": -10.0, "label_high": 10.0}
    fits = [_quiet(DPLasso(epsilon=1.0, bounds=b, random_state=audit.LedgerNoise(0, zero=True)).fit, x, y)
            for b, x in ((bounds, X), (as_dict, X), (tuple(as_dict.values()), X), (bounds, pd.DataFrame(X)))]
    fills = {est.privacy_report_.noise["the rule's fill"] for est in fits}
    assert len(fills) == 1 and all(est.support_.size == 5 for est in fits)
    np.testing.assert_allclose(fits[1].coef_, fits[0].coef_)
    other = _quiet(DPLinearRegression(epsilon=1.0, bounds=bounds, random_state=0).fit, X, y)
    assert "the rule's fill" in other.privacy_report_.noise


def test_the_fill_maps_one_hot_groups_as_the_selection_does():
    X, y, bounds = _fill_problem()
    X[:, :3] = np.eye(3)[np.arange(X.shape[0]) % 3]  # a one-hot answer in columns 0-2, on [0, 1]
    low, high = -np.ones(40), np.ones(40)
    low[:3] = 0.0
    grouped = data.Bounds(low, high, -10.0, 10.0, one_hot=[[0, 1, 2]])
    plain = data.Bounds(low, high, -10.0, 10.0)
    fills = [_quiet(DPLasso(epsilon=1.0, bounds=b, random_state=audit.LedgerNoise(0, zero=True)).fit, X, y)
             .privacy_report_.noise["the rule's fill"] for b in (grouped, plain)]
    assert fills[0] == fills[1]  # two-stage keeps no group: the groups' indicators mapped as any feature


def test_the_model_cards_plain_words_name_the_fill_and_each_share_where_it_was_spent():
    from dpsparse import card

    X, y, bounds = _fill_problem()
    est = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=0).fit, X, y)
    words = " ".join(card.plain_words({"privacy_report": est.privacy_report_.to_dict(),
                                       "data": {"training records": X.shape[0]}}))
    assert "how much of their declared ranges the records fill" in words and "(2% of the budget counted" in words
    assert "within the second stage's share of the budget" in words  # the automatic clipping norm of stage 2
    assert "the label range, narrowed to the labels' noisy mean and spread (10% of the fit's budget" in words


def test_adassp_is_three_gaussian_releases_at_the_target():
    X, y, _, bounds = planted_sparse(n=3000, p=6, s=3)
    design = data.prepare(X, y, bounds, classification=False)
    noise = audit.LedgerNoise(0)
    w, report = fit_mechanism(REGISTRY["adassp"], design, losses.Squared(1.0), None, epsilon=1.0, delta=1e-6,
                              noise=noise)
    assert [d.name for d in noise.log] == ["smallest eigenvalue of X^T X", "X^T X (upper triangle)", "X^T y"]
    m = report.noise["noise multiplier"]
    R = report.noise["row norm bound R"]
    assert [float(d.scale) / float(d.sensitivity) for d in noise.log] == pytest.approx([m] * 3, rel=1e-12)
    assert [float(d.sensitivity) for d in noise.log] == pytest.approx([R**2, math.sqrt(2) * R**2, 2 * R])
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_event.GaussianDpEvent(m), 3)
    assert report.accountant_epsilon <= 1.0 and acc.get_epsilon(1e-6) == pytest.approx(1.0, rel=1e-3)


def test_adassp_approaches_least_squares_on_the_bounded_design_when_epsilon_is_large():
    X, y, _, bounds = planted_sparse(n=5000, p=5, s=3)
    design = data.prepare(X, y, bounds, classification=False)
    w, _ = _quiet(fit_mechanism, REGISTRY["adassp"], design, losses.Squared(1.0), None, epsilon=1e5, delta=1e-6,
                  noise=audit.LedgerNoise(0))
    ols = np.linalg.lstsq(design.X, design.y, rcond=None)[0]
    np.testing.assert_allclose(w, ols, atol=1e-3)


def test_the_constant_predictor_is_the_noisy_label_mean():
    X, y, _, bounds = planted_sparse(n=400, p=3, s=2, classification=True)
    est = _quiet(DPLogisticRegression(epsilon=1e6, bounds=bounds, classes=[0, 1], mechanism="constant",
                                      random_state=0).fit, X, y)
    share = np.mean(y == 1)
    assert np.all(est.coef_ == 0)
    assert est.intercept_ == pytest.approx(math.log(share / (1 - share)), abs=1e-4)
    assert "bounds: budget" not in est.privacy_report_.noise  # nothing spent on bounds it does not use


def _label_design(y, half=10.0, share=0.1):
    p = 2
    X = np.zeros((y.size, p))
    bounds = data.Bounds(-np.ones(p), np.ones(p), -half, half)
    return LabelScaleDesign(X, y, bounds, True, share)


def test_the_label_sums_move_by_at_most_their_declared_sensitivity():
    """Replace one label at the extremes of the declared range: the two sums move by at most 2 in L2, reached."""
    rng = np.random.default_rng(0)
    y = rng.uniform(-3, 3, 50)
    worst = 0.0
    for new in (-10.0, 10.0, 0.0, 25.0):
        ya, yb = y.copy(), y.copy()
        ya[0], yb[0] = -10.0 if new >= 0 else 10.0, new
        record = audit.ReplayNoise(0)
        _label_design(ya).plan_zcdp(0.01).release(record)
        replay = audit.ReplayNoise(0, recorded=record.log)
        _label_design(yb).plan_zcdp(0.01).release(replay)
        worst = max(worst, max(r for _, r in replay.ratios))
    assert 0.9 <= worst <= 1.0 + 1e-12


def test_the_label_range_is_the_private_mean_plus_minus_two_sd_inside_the_declared_one():
    rng = np.random.default_rng(1)
    y = 2.0 + 0.5 * rng.standard_normal(20000)
    pending = _label_design(y).plan_zcdp(1.0)
    design = pending.release(audit.LedgerNoise(0))
    lo, hi = design.bounds.label_low, design.bounds.label_high
    assert lo == pytest.approx(2.0 - LABEL_WIDTH * 0.5, abs=0.05) and hi == pytest.approx(2.0 + LABEL_WIDTH * 0.5,
                                                                                            abs=0.05)
    assert pending.ledger.zcdp() == pytest.approx(1.0)


def test_clip_auto_narrows_a_wide_label_range_and_helps():
    X, y, w, bounds = planted_sparse(n=3000, p=40, s=3)
    wide = data.Bounds(bounds.feature_low, bounds.feature_high, -50.0, 50.0)
    auto_fit = _quiet(DPLasso(epsilon=1.0, bounds=wide, random_state=0).fit, X, y)
    fixed = _quiet(DPLasso(epsilon=1.0, bounds=wide, clip=1.0, random_state=0).fit, X, y)
    assert auto_fit.label_range_[1] - auto_fit.label_range_[0] < 40.0  # of 100 declared
    assert "label range" in " ".join(auto_fit.privacy_report_.noise)
    assert auto_fit.score(X, y) > fixed.score(X, y)
    assert auto_fit.privacy_report_.accounting_holds


def test_a_delta_above_one_over_n_warns():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (30, 5))
    y = np.where(X[:, 0] > 0, 1, 0)
    with pytest.warns(WeakGuaranteeWarning, match="above 1/n"):
        est = DPLogisticRegression(epsilon=1.0, delta=0.1, bounds=data.Bounds(-1.0, 1.0), classes=[0, 1],
                                   random_state=0).fit(X, y)
    assert any("above 1/n" in w for w in est.privacy_report_.warnings)
    assert "delta" not in est.privacy_report_.noise  # declared: the report does not call it the default


def test_the_report_says_where_a_default_delta_came_from():
    """delta=None is 1/n^2 for the n training records; the report says so beside the guarantee's delta."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 5))
    y = np.where(X[:, 0] > 0, 1, 0)
    rep = DPLogisticRegression(bounds=data.Bounds(-1.0, 1.0), classes=[0, 1], random_state=0).fit(X, y).privacy_report_
    assert rep.delta == 1 / 400**2
    assert rep.noise["delta"].startswith("1/n^2 = 6.25e-06 for the n = 400 training records")
    assert "delta=None, the default" in str(rep)


@pytest.mark.parametrize("name,options", [("dp-gcd", {"clipping_norm": "auto"}),
                                          ("dp-gcd", {"clipping_norm": "auto", "warm_start": True}),
                                          ("dp-gcd", {"warm_start": True}), ("dp-cd", {"clipping_norm": "auto"}),
                                          ("dp-gd", {"clipping_norm": 1.0, "warm_start": True}),
                                          ("dp-gd", {"clipping_norm": "auto", "warm_start": True})])
def test_coordinate_automatic_clipping_and_warm_start_are_in_the_ledger_and_within_their_sensitivity(name, options):
    """DP-GCD's and DP-CD's automatic threshold (and DP-GCD's and DP-GD's warm start): the draws compose to the claim,
    and every release stays within its declared sensitivity, the threshold's reaching it on a record moved to a
    corner."""
    options = {"n_iter": 5 if name == "dp-gcd" else 2, **options}
    bounds, pairs = audit.neighbouring_pairs(n=40, p=3, classification=True)
    pen = norms.build_penalty("l1", 0.05, 3, True)
    design = data.prepare(*pairs["label flip"][0], bounds, True)
    check = _quiet(audit.ledger_replay, name, design, losses.Logistic(), pen, epsilon=1.0, delta=1e-5,
                   options=options)
    assert check.composed == pytest.approx(check.claimed, rel=1e-6) and check.claimed <= 1.0
    for pair in pairs.values():
        ratios = _quiet(audit.sensitivity_replay, name, pair, bounds, losses.Logistic(), pen, options=options)
        assert max(ratios.values()) <= 1.0 + 1e-9
    if options.get("clipping_norm") == "auto" and name != "dp-gd":  # a record moved from the origin to a corner
        # moves the sum by its bound, 1 (DP-GD's automatic norm: test_gradient_methods_automatic_clipping_norm...)
        X, y = pairs["label flip"][0]
        Xa, Xb = X.copy(), X.copy()
        Xa[0], Xb[0] = 0.0, 1.0
        ratios = _quiet(audit.sensitivity_replay, name, ((Xa, y), (Xb, y)), bounds, losses.Logistic(), pen,
                        options=options)
        assert ratios["mean |x| (automatic clipping)"] == pytest.approx(1.0)


def test_the_automatic_clip_is_half_the_mean_absolute_feature_for_the_logistic_loss():
    from dpsparse.mechanisms._common import auto_clip

    rng = np.random.default_rng(0)
    for scale in (0.1, 0.8):
        X = rng.uniform(-scale, scale, (5000, 10))
        design = data.prepare(X, np.ones(5000), data.Bounds(-1.0, 1.0), True)
        clip = auto_clip(design.X, 10, 0.5, 1.0, audit.LedgerNoise(0, zero=True))
        assert clip == pytest.approx(0.5 * np.mean(np.abs(X)), rel=1e-12)


def test_declared_bounds_are_tightened_privately_only_where_affordable():
    rng = np.random.default_rng(0)
    X = rng.normal(0, 1, (20000, 3))
    y = X @ np.array([1.0, -1.0, 0.5]) + 0.1 * rng.standard_normal(20000)
    wide = data.Bounds(-100 * np.ones(3), 100 * np.ones(3), -100.0, 100.0)
    est = _quiet(DPLasso(epsilon=1.0, bounds=wide, random_state=0).fit, X, y)
    assert "tightened" in est.bounds_.source
    assert np.all(est.bounds_.feature_high <= 100) and np.all(est.bounds_.feature_high < 10)
    assert est.score(X, y) > 0.9 and est.privacy_report_.accounting_holds
    small = _quiet(DPLasso(epsilon=1.0, bounds=wide, random_state=0).fit, X[:300], y[:300])
    assert "tightened" not in small.bounds_.source  # 300 records cannot place 12 quantiles within 10 % of them


def test_the_constant_predictor_releases_its_mean_with_the_noise_that_adds_less():
    """Alone, one scalar: Laplace (std sqrt(2) / epsilon) when below the calibrated Gaussian; in zCDP, Gaussian."""
    import math

    from dpsparse.mechanisms.constant import _multiplier, noise_family

    delta = 1.0 / 426**2
    kind, scale = noise_family(0.1, delta)
    assert kind == "laplace" and scale == pytest.approx(10.0) and math.sqrt(2.0) * scale < _multiplier(0.1, delta)
    assert noise_family(0.1, delta, rho=0.01)[0] == "gaussian"  # the label selection's or the search's composition
    kind, m = noise_family(1.0, 0.1)  # a large delta: the Gaussian's multiplier is below sqrt(2)
    assert kind == "gaussian" and m < math.sqrt(2.0)


def test_the_report_says_when_max_iter_overrides_the_rules_steps():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, 10))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(epsilon=1.0, bounds=data.Bounds(-1.0, 1.0), classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        given = DPLogisticRegression(max_iter=20, **kw).fit(X, y).privacy_report_
        rule = DPLogisticRegression(**kw).fit(X, y).privacy_report_
    assert given.iterations == 20 and "max_iter=20 given: 20 steps instead" in given.noise[
        "mechanism chosen (mechanism='auto')"]
    assert "given" not in rule.noise["mechanism chosen (mechanism='auto')"] and rule.iterations == 200


@pytest.mark.parametrize("mechanism,options", [("output", {"mu": 100.0}), ("adassp", None)])
def test_the_label_range_step_plans_with_the_intercept_in_the_row_norm(mechanism, options):
    """With ``clip="auto"`` and a declared ``row_norm``, the fit is planned on the label-range step's public
    information: its row-norm bound must count the column of ones (``sqrt(r^2 + 1)``), as the design does. A
    record at a corner of the declared rows (``||x|| = r = 1``) with its label at either end of the range moves
    every release by at most its declared sensitivity (the bound without the intercept gave 1.39 and 1.41)."""
    from dpsparse.audit import ReplayNoise

    n, p = 400, 5
    y = np.random.default_rng(1).normal(size=n) * 0.1
    bounds = data.Bounds(-np.ones(p), np.ones(p), -10.0, 10.0, row_norm=1.0)
    fits = []
    for label, recorded in ((10.0, None), (-10.0, True)):
        X, yy = np.zeros((n, p)), y.copy()
        X[0, 0], yy[0] = 1.0, label
        noise = ReplayNoise(0) if recorded is None else ReplayNoise(0, recorded=fits[0][1].log)
        est = _quiet(DPLasso(epsilon=1.0, alpha=0.0, bounds=bounds, mechanism=mechanism, mechanism_options=options,
                             random_state=noise, noise="fast").fit, X, yy)
        fits.append((est, noise))
    ratios = dict(fits[1][1].ratios)
    assert est.privacy_report_.noise and max(ratios.values()) <= 1.0 + 1e-9
    assert max(ratios.values()) > 0.9  # the pair is the worst case of at least one release


@pytest.mark.parametrize("name", ["dp-gd", "dp-sgd"])
def test_gradient_methods_automatic_clipping_norm_is_in_the_ledger_and_within_its_sensitivity(name):
    """``clipping_norm="auto"`` (the default of DP-GD and DP-SGD): one Gaussian release of sensitivity 1 before the
    steps, composed with them to the claim; a record moved from the origin to a corner of the rows (``||x|| = R``)
    moves the released sum by exactly its bound."""
    options = {"n_iter": 5, "clipping_norm": "auto"}
    bounds, pairs = audit.neighbouring_pairs(n=40, p=3, classification=True)
    pen = norms.build_penalty("l1", 0.05, 3, True)
    design = data.prepare(*pairs["label flip"][0], bounds, True)
    check = _quiet(audit.ledger_replay, name, design, losses.Logistic(), pen, epsilon=1.0, delta=1e-5,
                   options=options)
    assert check.composed == pytest.approx(check.claimed, rel=1e-6) and check.claimed <= 1.0
    for pair in pairs.values():
        ratios = _quiet(audit.sensitivity_replay, name, pair, bounds, losses.Logistic(), pen, options=options)
        assert max(ratios.values()) <= 1.0 + 1e-9
    X, y = pairs["label flip"][0]
    Xa, Xb = X.copy(), X.copy()
    Xa[0], Xb[0] = 0.0, 1.0  # the intercept's 1 in both: ||x|| from 1 to R = 2 of the bound R = 2, i.e. 1/2 of R
    ratios = _quiet(audit.sensitivity_replay, name, ((Xa, y), (Xb, y)), bounds, losses.Logistic(), pen,
                    options=options)
    assert ratios["mean ||x|| (automatic clipping)"] == pytest.approx(0.5)


def test_the_automatic_clipping_norm_is_the_mean_start_gradient_norm_bound():
    """Without noise: ``|f'(0)| R`` times the mean of ``min(||x_i|| / R, 1)``, on dense, sparse and shifted
    sparse designs alike (``|f'(0)| = 1/2`` for the logistic loss)."""
    from dpsparse.mechanisms.dp_sgd import auto_clipping_norm

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (3000, 10))
    X[rng.random(X.shape) < 0.5] = 0.0
    for bounds in (data.Bounds(-1.0, 1.0), data.Bounds(-np.ones(10), 3 * np.ones(10))):  # the second: shifted
        for Xin in (X, sp.csr_matrix(X)):
            design = data.prepare(Xin, np.ones(3000), bounds, True)
            rows = np.linalg.norm(data.prepare(X, np.ones(3000), bounds, True).X, axis=1)  # the same rows, dense
            expect = 0.5 * design.row_norm * np.mean(np.minimum(rows / design.row_norm, 1.0))
            C = auto_clipping_norm(design.X, design.row_norm, losses.Logistic(), 1.0, audit.LedgerNoise(0, zero=True))
            assert C == pytest.approx(expect, rel=1e-10)


def test_the_report_shows_the_released_clipping_norm_the_run_used():
    """The automatic clipping norm (threshold) is a noisy release, so public: the report carries the value the steps
    used (here without noise, the closed form), one per run in a one-vs-rest fit, and two-stage's second stage's."""
    from dpsparse.mechanisms._common import auto_clip
    from dpsparse.mechanisms.dp_sgd import auto_clipping_norm

    rng = np.random.default_rng(1)
    X = rng.uniform(-0.5, 0.5, (400, 12))
    design = data.prepare(X, np.where(X[:, 0] > 0, 1.0, -1.0), data.Bounds(-1.0, 1.0), True)
    pen = norms.build_penalty("l1", 1e-3, 12, True)
    zero = audit.LedgerNoise(0, zero=True)
    expect = {"dp-gd": ("clipping norm", auto_clipping_norm(design.X, design.row_norm, losses.Logistic(), 1.0, zero)),
              "dp-gcd": ("clipping threshold", auto_clip(design.X, 12, 0.5, 1.0, zero)),
              "dp-cd": ("clipping threshold", auto_clip(design.X, 12, 0.5, 1.0, zero))}
    for name, (line, value) in expect.items():
        _, report = fit_mechanism(REGISTRY[name], design, losses.Logistic(), pen, epsilon=1.0, delta=1e-5,
                                  options={"n_iter": 3, "clipping_norm": "auto"}, noise=zero)
        assert report.noise[f"{line} (released)"] == pytest.approx(value, rel=1e-12)
        assert f"{line} (released)" in str(report)
    from dpsparse.mechanisms import fit_one_vs_rest

    _, report = _quiet(fit_one_vs_rest, REGISTRY["dp-gd"], design, rng.integers(0, 3, 400), 3, losses.Logistic(), pen,
                       epsilon=1.0, delta=1e-5, options={"n_iter": 3}, noise=zero)
    assert len(report.noise["clipping norm (released)"].split(", ")) == 3
    _, report = _quiet(fit_mechanism, REGISTRY["two-stage"], design, losses.Squared(1.0), pen, epsilon=1.0,
                       delta=1e-5, options={"sparsity": 3, "second": "dp-gd"}, noise=zero)
    assert report.noise["stage 2: clipping norm (released)"] > 0



def test_the_rule_says_so_when_it_releases_the_constant_predictor():
    from dpsparse import ConstantPredictorWarning

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 300))
    y = (X[:, 0] > 0).astype(int)
    with pytest.warns(ConstantPredictorWarning, match="below 50 log p"):
        est = DPLogisticRegression(epsilon=0.1, classes=[0, 1], bounds=data.Bounds(-1.0, 1.0)).fit(X, y)
    assert est.privacy_report_.mechanism == "constant"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPLogisticRegression(epsilon=0.1, classes=[0, 1], bounds=data.Bounds(-1.0, 1.0), mechanism="constant").fit(X, y)
    assert not any(issubclass(w.category, ConstantPredictorWarning) for w in caught)  # named: the user chose it


def test_the_warm_start_shrinks_the_noisy_label_mean_by_twice_its_noise(monkeypatch):
    """The start's intercept is the log-odds of the noisy label mean soft-thresholded towards 0 by
    ``WARM_SHRINK`` noise standard deviations (post-processing of the one release): the mean the noise source
    returns, shrunk, gives the intercept in closed form; a mean within the threshold gives 0 (balanced classes keep
    the cold start's intercept, which the noise alone would move)."""
    from dpsparse.mechanisms import constant as constant_mod
    from dpsparse.mechanisms import dp_gcd, make_plan
    from dpsparse.noise import make_noise

    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (400, 4)), np.where(rng.random(400) < 0.9, 1.0, -1.0)
    design = data.prepare(X, y, data.Bounds(-np.ones(4), np.ones(4)), True)
    plan = make_plan(dp_gcd.MECHANISM, design, losses.Logistic(), norms.build_penalty("l1", 1e-4, 4, True), 1.0,
                     1e-5, None, {"n_iter": 1, "warm_start": True})
    sd = plan.params["warm_multiplier"] * 2.0 / 400
    starts = []
    monkeypatch.setattr(dp_gcd, "gcd", lambda *a, **k: starts.append(k.get("w0", a[-1])) or np.zeros(5))
    for noisy, expected in ((0.8, math.log((1.8 - 2 * sd) / (0.2 + 2 * sd))), (1.5 * sd, 0.0), (-1.5 * sd, 0.0),
                            (-0.5, -math.log((1.5 - 2 * sd) / (0.5 + 2 * sd)))):
        monkeypatch.setattr(constant_mod, "label_mean", lambda *a, noisy=noisy, **k: noisy)
        dp_gcd.MECHANISM.run(design, plan, make_noise(np.random.default_rng(0)), None)
        assert starts[-1][-1] == pytest.approx(expected)


def test_the_huber_loss_follows_the_least_squares_rule_and_its_selection_needs_no_label_clip():
    """``DPLasso(loss="huber")`` on more than 30 features: the least-squares rule's selection, whose scores use the
    Huber derivative (bounded by its threshold) instead of the squared loss clipped at ``SELECTION_CLIP`` (which
    two-stage refuses for another loss); the one informative feature is found (R^2 measured 0.75, 0.92 without
    noise in the labels' model)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (3000, 60))
    y = X[:, 0] + 0.3 * rng.standard_normal(3000)
    bounds = data.Bounds(-np.ones(60), np.ones(60), -4.0, 4.0)
    est = _quiet(DPLasso(epsilon=1.0, loss="huber", bounds=bounds, random_state=0).fit, X, y)
    report = est.privacy_report_
    assert report.mechanism.startswith("two-stage") and "the Huber loss on 60 > 30 features" in report.noise[
        "mechanism chosen (mechanism='auto')"]
    assert est.coef_[0] > 0.5 and est.score(X, y) > 0.6


def test_the_logistic_rule_runs_dp_gd_on_one_hot_groups_from_their_band():
    """With one-hot groups whose records have a small norm, more than ``FEW`` features take DP-GD from
    ``ONE_HOT_BAND``; below it, or where the groups leave the norm above ``FEW``, DP-GCD as without them."""
    loss, p = losses.Logistic(), 112
    pen = norms.build_penalty("l1", 1e-4, p, True)
    n = int(np.ceil(auto.ONE_HOT_BAND * np.log(p) / 0.1))
    assert auto.choose(loss, pen, n, p, 0.1, one_hot=14.0)[0] == "dp-gd"
    assert auto.choose(loss, pen, n - 50, p, 0.1, one_hot=14.0)[0] == "dp-gcd"
    assert auto.choose(loss, pen, n, p, 0.1, one_hot=auto.FEW + 1.0)[0] == "dp-gcd"
    assert auto.choose(loss, pen, n, p, 0.1)[0] == "dp-gcd"


def test_dp_gd_and_dp_sgd_keep_the_one_hot_groups_and_the_model_is_the_same_function(shared_data):
    """The rule's DP-GD keeps the declared groups (``bounds_.one_hot``) and its model predicts from the original
    units; DP-SGD keeps them too; DP-GCD drops them (indicators centred as any feature)."""
    from dpsparse.schema import load_schema

    root = Path(__file__).resolve().parents[1]
    sch = load_schema(root / "examples" / "adult.schema.json")
    X, y, _ = sch.read(shared_data / "adult" / "adult.data.gz")
    X, y = X[:6000], y[:6000]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gd = DPLogisticRegression(epsilon=1.0, bounds=sch.bounds(), random_state=0).fit(X, y)
        gcd = DPLogisticRegression(epsilon=1.0, bounds=sch.bounds(), random_state=0, mechanism="dp-gcd").fit(X, y)
        sgd = DPLogisticRegression(epsilon=1.0, bounds=sch.bounds(), random_state=0, mechanism="dp-sgd").fit(X, y)
    assert gd.privacy_report_.mechanism == "dp-gd" and "one-hot groups" in gd.privacy_report_.noise[
        "mechanism chosen (mechanism='auto')"]
    assert gd.bounds_.one_hot == sgd.bounds_.one_hot == sch.bounds().one_hot and gcd.bounds_.one_hot is None
    assert gd.privacy_report_.noise["one-hot groups"].startswith("8 declared and kept")
    assert "not kept by dp-gcd" in gcd.privacy_report_.noise["one-hot groups"]
    decision = X @ gd.coef_ + gd.intercept_
    np.testing.assert_allclose(gd.decision_function(X), decision, atol=1e-9)
    assert gd.score(X, y) > 0.8


def test_groups_a_mechanism_does_not_keep_change_nothing_and_multi_hot_records_warn():
    """DP-GCD with one-hot groups declared is the fit without them (the declared ranges narrowed privately where
    affordable, the same model for the same seed); records with two ones in a group warn the data holder."""
    rng = np.random.default_rng(0)
    n = 20000
    X = np.zeros((n, 5))
    X[np.arange(n), rng.integers(0, 3, n)] = 1.0
    X[:, 3:] = rng.uniform(-1.5, 1.5, (n, 2))
    y = np.where(X[:, 0] + X[:, 3] + 0.5 * rng.standard_normal(n) > 0.5, 1, 0)
    low, high = [0, 0, 0, -5, -5], [1, 1, 1, 5, 5]
    fits = []
    for groups in (None, [[0, 1, 2]]):
        bounds = data.Bounds(low, high, classes=[0, 1], one_hot=groups)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(DPLogisticRegression(epsilon=1.0, bounds=bounds, mechanism="dp-gcd", random_state=1).fit(X, y))
    plain, grouped = fits
    assert plain.bounds_.feature_high[3] < 5  # narrowed privately
    np.testing.assert_array_equal(grouped.bounds_.feature_high, plain.bounds_.feature_high)
    np.testing.assert_array_equal(grouped.coef_, plain.coef_)
    X[: n // 10, :3] = 1.0  # a tenth of the records answer all three
    with pytest.warns(UserWarning, match=r"2000 records \(10%\) hold more than one nonzero value in a declared"):
        DPLogisticRegression(epsilon=1.0, bounds=data.Bounds(low, high, classes=[0, 1], one_hot=[[0, 1, 2]]),
                             random_state=1).fit(X, y)


def test_the_label_range_step_plans_with_the_one_hot_groups_bound():
    """A regressor's label-range step (``clip="auto"``) plans the fit on the row-norm bound the design will have:
    with one-hot groups, one per group and per other feature, the intercept included."""
    X = np.array([[1.0, 0.0, 0.0, 3.0], [0.0, 1.0, 0.0, -2.0], [0.0, 0.0, 1.0, 0.5]])
    y = np.array([1.0, -1.0, 0.5])
    bounds = data.Bounds([0, 0, 0, -5], [1, 1, 1, 5], -3.0, 3.0, one_hot=[[0, 1, 2]])
    pending = LabelScaleDesign(X, y, bounds, True, 0.1)
    assert pending.row_norm == pytest.approx(data.prepare(X, y, bounds, False).row_norm) == pytest.approx(np.sqrt(3))


def test_the_selection_has_its_own_least_squares_floor():
    """Least squares on more than ``FEW_LEAST_SQUARES`` features selects from ``FLOOR_SELECTION log p``; on fewer
    features, and for the Huber loss, the noisy label mean stays below ``FLOOR_LEAST_SQUARES log p``."""
    def chosen(loss, n, p):
        return auto.choose(loss, norms.build_penalty("l1", 1e-4, p, True), n, p, 1.0)[0]

    p = 1000
    at = int(np.ceil(auto.FLOOR_SELECTION * np.log(p)))
    assert chosen(losses.Squared(1.0), at, p) == "two-stage" and chosen(losses.Squared(1.0), at - 5, p) == "constant"
    assert chosen(losses.Huber(0.5), at, p) == "constant"
    few = int(np.ceil(auto.FLOOR_SELECTION * np.log(20)))
    assert chosen(losses.Squared(1.0), few, 20) == "constant"
    assert auto.FLOOR_SELECTION < auto.FLOOR_LEAST_SQUARES
