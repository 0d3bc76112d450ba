"""Private hyperparameter search (dpsparse.tuning): accounting, calibration, selection."""
import math
import warnings

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant
from sklearn.base import clone
from sklearn.model_selection import cross_val_score, train_test_split

from dpsparse import DPLasso, DPLogisticRegression, PrivacyBudget, data, losses, norms
from dpsparse.accounting import zcdp_budget, zcdp_epsilon
from dpsparse.exceptions import WeakGuaranteeWarning
from dpsparse.noise import NoiseSource
from dpsparse.tuning import DPSearchCV, _Candidate, search_epsilon, search_zcdp

GRID = {"mechanism": ["dp-gcd", "dp-cd"], "max_iter": [2, 10]}


class ReleaseLog(NoiseSource):
    """Records (name, scale, sensitivity) of every release."""

    def __init__(self, seed=0):
        super().__init__(np.random.default_rng(seed), seeded=True)
        self.log = []

    def release(self, value, kind, scale, *, sensitivity, name, norm="l2", sampling=None):
        self.log.append((name, float(np.max(scale)), float(np.max(sensitivity))))
        return super().release(value, kind, scale, sensitivity=sensitivity, name=name, norm=norm)


def _breast_cancer():
    X, y, bounds, _ = data.load_bundled("breast_cancer")
    return X, y, bounds


@pytest.mark.parametrize("rho,mean,delta", [(0.01, 8.0, 1e-5), (0.002, 30.0, 1e-6)])
def test_search_epsilon_is_dp_accountings_for_the_event(rho, mean, delta):
    acc = RdpAccountant()
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.ZCDpEvent(rho), mean, 1.0))
    acc.compose(dp_event.ZCDpEvent(rho))  # the constant predictor
    assert search_epsilon(rho, mean, delta) == pytest.approx(acc.get_epsilon(delta), rel=1e-12)


def test_search_zcdp_is_the_largest_rho_meeting_the_target():
    rho = search_zcdp(1.0, 1e-5, 10.0)
    assert search_epsilon(rho, 10.0, 1e-5) <= 1.0
    assert search_epsilon(rho * 1.001, 10.0, 1e-5) > 1.0
    # repeating costs: more than one plain rho-zCDP fit, less than 10 composed ones
    single, ten = RdpAccountant(), RdpAccountant()
    single.compose(dp_event.ZCDpEvent(rho))
    ten.compose(dp_event.ZCDpEvent(rho), 10)
    assert single.get_epsilon(1e-5) < 1.0 < ten.get_epsilon(1e-5)


def test_each_setting_once_composes_its_runs_and_the_constant_in_zcdp():
    """repetitions='each' with K settings: K + 1 rho-zCDP runs, (K + 1) rho in all; with the rule's two settings
    each run has a third of the budget."""

    rho = search_zcdp(1.0, 1e-5, 2, each=True)
    assert search_epsilon(rho, 2, 1e-5, each=True) <= 1.0 < search_epsilon(rho * 1.001, 2, 1e-5, each=True)
    assert zcdp_epsilon(3 * rho, 1e-5) == pytest.approx(1.0, rel=1e-3)
    assert rho == pytest.approx(zcdp_budget(1.0, 1e-5) / 3, rel=1e-3)


@pytest.mark.parametrize("estimator,n,p,eps,key,values", [
    (DPLogisticRegression(), 400, 30, 1.0, "n_iter", [200, 100]),  # the rule agrees at the share: half its steps
    (DPLogisticRegression(), 5000, 1000, 1.0, "n_iter", [50, 25]),  # each candidate: 3750 records, epsilon 0.56
    (DPLogisticRegression(), 16000, 1000, 1.0, "n_iter", [100, 50]),  # 12000 records: above auto.GCD_BAND
    (DPLasso(), 5000, 1000, 1.0, "sparsity", [6, 10]),  # 6 at the share, 10 at the whole n and epsilon
    (DPLasso(), 15480, 8, 0.1, "n_iter", [100, 200]),  # cadata's shape: 100 DP-GD steps at the share, 200 whole
])
def test_the_rule_grid_is_the_rules_choice_at_a_candidates_share_and_at_the_whole_budget(estimator, n, p, eps, key,
                                                                                          values):
    """The rule read at the training part (three quarters of the records) and the epsilon of a third of the zCDP
    budget (the two settings and the constant predictor's run), then at the whole n and epsilon (or, where the two
    agree, half the steps or features)."""
    from dpsparse.mechanisms import auto
    from dpsparse.tuning import rule_grid

    delta = 1.0 / n**2
    epsilon_each = zcdp_epsilon(zcdp_budget(eps, delta) / 3, delta)
    assert 0.45 * eps < epsilon_each < 0.6 * eps  # a third of rho: epsilon about as its square root
    penalty = estimator._penalty(p, auto.ALPHA)
    share = auto.choose(estimator._loss(), penalty, n - n // 4, p, epsilon_each)[:2]
    whole = auto.choose(estimator._loss(), penalty, n, p, eps)[:2]
    grid = rule_grid(estimator, n, p, eps)
    assert [(g["mechanism"], g["mechanism_options"]) for g in grid][0] == ([share[0]], [share[1]])
    assert whole != share or grid[1]["mechanism_options"][0][key] == share[1][key] // 2
    assert whole == share or grid[1]["mechanism"] == [whole[0]] and grid[1]["mechanism_options"] == [whole[1]]
    assert all(g["alpha"] == [auto.RULE_ALPHA] for g in grid)  # the rule's strength, which a named mechanism lacks
    assert [g["mechanism_options"][0][key] for g in grid] == values


def test_the_rule_grid_is_empty_where_the_candidates_share_is_below_the_rules_floor():
    """n = 1000, p = 1000, epsilon 1: the single fit clears the least-squares floor (n epsilon / log p = 145), a
    candidate (750 records, epsilon 0.53) does not; the search released a model below the constant predictor."""
    from dpsparse.mechanisms import auto
    from dpsparse.tuning import rule_grid

    assert auto.choose(losses.Squared(1.0), norms.build_penalty("l1", 1e-4, 1000, True), 1000, 1000, 1.0)[0] != \
        "constant"
    assert rule_grid(DPLasso(), 1000, 1000, 1.0) is None
    assert rule_grid(DPLasso(), 300, 1000, 1.0) is None


def test_every_release_of_a_search_is_calibrated_to_the_same_rho():
    X, y, bounds = _breast_cancer()
    noise = ReleaseLog(0)
    # bounds_share=0: the declared ranges as they are (the ranges the search buys before its runs:
    # test_private_bounds.test_the_private_search_buys_the_cuts_once_for_its_candidates)
    search = DPSearchCV(DPLogisticRegression(bounds=bounds, classes=[0, 1], bounds_share=0), GRID, epsilon=1.0,
                        delta=1e-5, mean_repetitions=6, random_state=noise).fit(X, y)
    rho = search_zcdp(1.0, 1e-5, 6)
    m = math.ceil(0.25 * X.shape[0])
    names = [name for name, _, _ in noise.log]
    assert names.count("label mean") == 1 and names.count("validation score") >= 2
    for name, scale, sens in noise.log:
        if name in ("label mean", "validation score"):
            assert scale == pytest.approx(sens / math.sqrt(2 * rho), rel=1e-12)
    assert {sens for name, _, sens in noise.log if name == "validation score"} == {1.0 / m}
    assert {sens for name, _, sens in noise.log if name == "label mean"} == {2.0 / (X.shape[0] - m)}
    report = search.privacy_report_
    assert report.accounting_holds and report.accountant_epsilon == pytest.approx(search_epsilon(rho, 6, 1e-5))
    assert report.noise["what was searched"] == "4 settings (of max_iter, mechanism) and the constant predictor"
    assert report.noise["zCDP budget of each candidate fit (rho)"] == pytest.approx(rho)


def test_the_number_of_base_runs_is_not_released():
    """Papernot & Steinke's Theorem 2 holds with K hidden: two searches that drew different K release
    reports that do not tell them apart, and no fitted attribute holds K."""
    X, y, bounds = _breast_cancer()
    runs, reports = set(), []
    for seed in range(6):
        noise = ReleaseLog(seed)
        search = DPSearchCV(DPLogisticRegression(bounds=bounds, classes=[0, 1]), GRID, epsilon=1.0, delta=1e-5,
                            mean_repetitions=6, random_state=noise).fit(X, y)
        runs.add([name for name, _, _ in noise.log].count("validation score") - 1)
        reports.append(search.privacy_report_.noise["base runs"])
        assert not any("repetition" in k and k.endswith("_") for k in vars(search))
    assert len(runs) > 1 and len(set(reports)) == 1


class NoNoise(NoiseSource):
    """Returns every released value unchanged (the scores themselves)."""

    def __init__(self):
        super().__init__(np.random.default_rng(0), seeded=True)

    def release(self, value, kind, scale, *, sensitivity, name, norm="l2", sampling=None):
        return value


def test_the_regression_score_changes_by_at_most_its_sensitivity_on_neighbours():
    """Replace-one neighbours of the validation part, the replacement at every extreme: the capped score moves
    by at most SCORE_CAP / m, and the bound is reached (it is not loose)."""
    from dpsparse.tuning import SCORE_CAP, _Score

    rng = np.random.default_rng(0)
    m, p = 40, 3
    X = rng.uniform(-1, 1, (m, p))
    y = rng.uniform(-1, 1, m)
    bounds = data.Bounds(-np.ones(p), np.ones(p), -1.0, 1.0)
    design = data.prepare(X, y, bounds, classification=False)
    score = _Score(design, False, 0.01, NoNoise())
    assert score.sensitivity == SCORE_CAP / m
    worst = 0.0
    for w in rng.normal(0, 2, (20, p + 1)):
        base = score(w)
        for x_new, y_new in [(np.ones(p), -1.0), (-np.ones(p), 1.0), (np.zeros(p), 1.0), (X[0], y[0])]:
            Xb, yb = X.copy(), y.copy()
            Xb[0], yb[0] = x_new, y_new
            other = _Score(data.prepare(Xb, yb, bounds, classification=False), False, 0.01, NoNoise())
            worst = max(worst, abs(other(w) - base))
    assert worst <= score.sensitivity * (1 + 1e-12) and worst >= 0.9 * score.sensitivity


def test_candidates_are_planned_at_the_search_rho():
    X, y, bounds = _breast_cancer()
    rho = search_zcdp(1.0, 1e-5, 20)
    p = X.shape[1]
    design = DPLogisticRegression(bounds=bounds)._design(X, y)
    for params in [dict(mechanism="dp-gcd", max_iter=10), dict(mechanism="dp-cd", max_iter=2),
                   dict(mechanism="fw", max_iter=5), dict(mechanism="output")]:
        cand = _Candidate(DPLogisticRegression(bounds=bounds), params, X.shape[0], p, 1.0)
        cand.make_plan(design, rho, 1e-5)
        assert cand.plan.ledger.zcdp() == pytest.approx(rho, rel=1e-3) and cand.plan.ledger.zcdp() <= rho


def test_a_search_charges_its_budget_once_and_refuses_bad_settings_before_charging():
    X, y, bounds = _breast_cancer()
    budget = PrivacyBudget(1.5, 1e-4)
    est = DPLogisticRegression(bounds=bounds, classes=[0, 1])
    for grid, match in [({"epsilon": [1.0]}, "may not set"), ({"mechanism": ["dp-sgd"]}, "zCDP"),
                        ({"mechanism": ["objective"]}, "zCDP target .* use one of adassp"),
                        ({"max_iter": []}, "empty"), ({}, "empty")]:
        with pytest.raises(ValueError, match=match):
            DPSearchCV(est, grid, epsilon=1.0, delta=1e-5, budget=budget).fit(X, y)
    with pytest.raises(ValueError, match="the estimator has a budget, which a search would not charge"):
        DPSearchCV(clone(est).set_params(budget=PrivacyBudget(0.5, 1e-3)), GRID, epsilon=1.0).fit(X, y)
    with pytest.raises(ValueError, match="budget must be a PrivacyBudget"):  # checked on the "each" path too
        DPSearchCV(est, GRID, repetitions="each", budget="plenty").fit(X, y)
    with pytest.raises(ValueError, match="validation_fraction"):
        DPSearchCV(est, GRID, validation_fraction=1.0, budget=budget).fit(X, y)
    with pytest.raises(ValueError, match="mean_repetitions"):
        DPSearchCV(est, GRID, mean_repetitions=0.5, budget=budget).fit(X, y)
    assert budget.remaining == (1.5, 1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPSearchCV(est, GRID, epsilon=1.0, delta=1e-5, budget=budget, random_state=0).fit(X, y)
    assert budget.remaining == pytest.approx((0.5, 9e-5))


def test_a_search_warns_of_a_weak_guarantee_as_the_estimators_do():
    X, y, bounds = _breast_cancer()
    est = DPLogisticRegression(bounds=bounds, classes=[0, 1])
    for params, match in [({"epsilon": 20.0}, "epsilon = 20 is above 10"), ({"delta": 0.01}, "above 1/n")]:
        with pytest.warns(WeakGuaranteeWarning, match=match) as caught:
            search = DPSearchCV(est, {"max_iter": [5]}, repetitions="each", random_state=0, **params).fit(X, y)
        assert {w.filename for w in caught if issubclass(w.category, WeakGuaranteeWarning)} == {__file__}
        assert any(match.split(" is")[0] in w for w in search.privacy_report_.warnings)


def test_a_search_says_it_ignores_the_estimators_own_epsilon():
    """The search spends its own epsilon: an estimator's ``epsilon=5`` is named in a warning at the user's line, and an
    estimator left at its defaults gives none."""
    X, y, bounds = _breast_cancer()
    est = DPLogisticRegression(bounds=bounds, classes=[0, 1], epsilon=5.0)
    with pytest.warns(UserWarning, match="DPSearchCV ignores the estimator's epsilon=5.0: the search spends its own "
                                         "\\(DPSearchCV\\(epsilon=1.0") as caught:
        search = DPSearchCV(est, {"max_iter": [5]}, repetitions="each", random_state=0, epsilon=1.0).fit(X, y)
    assert any(w.filename == __file__ for w in caught if "ignores" in str(w.message))
    assert search.privacy_report_.epsilon == 1.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPSearchCV(est.set_params(epsilon=1.0), {"max_iter": [5]}, repetitions="each", random_state=0,
                   epsilon=0.5).fit(X, y)
    assert not any("ignores" in str(w.message) for w in caught)


def test_a_search_on_a_label_set_read_off_the_data_has_no_guarantee():
    """As the estimators: the released label values come from the data, so the search warns and its report (and its
    best estimator's) says NO guarantee."""
    from dpsparse.exceptions import ClassesFromDataWarning

    X, y, bounds = _breast_cancer()
    est = DPLogisticRegression(bounds=bounds, classes="from-data")
    with pytest.warns(ClassesFromDataWarning) as caught:
        search = DPSearchCV(est, {"max_iter": [5]}, repetitions="each", random_state=0).fit(X, y)
    assert {w.filename for w in caught if issubclass(w.category, ClassesFromDataWarning)} == {__file__}
    for report in (search.privacy_report_, search.best_estimator_.privacy_report_):
        assert not report.classes_public and not report.guarantee_holds


def test_a_search_with_a_budget_inside_cross_validation_does_not_warn_of_spending():
    from dpsparse.exceptions import PrivacyLeakWarning

    X, y, bounds = _breast_cancer()
    search = DPSearchCV(DPLogisticRegression(bounds=bounds, classes=[0, 1]), {"max_iter": [5]}, repetitions="each",
                        random_state=0, budget=PrivacyBudget(10.0, 1e-3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        cross_val_score(search, X, y, cv=2)


def test_the_constant_predictor_wins_when_the_features_carry_nothing():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, 5))
    y = (rng.random(2000) < 0.8).astype(int)
    bounds = data.Bounds(-np.ones(5), np.ones(5))
    est = DPLogisticRegression(bounds=bounds, classes=[0, 1], alpha=1e-4, bounds_share=0)  # the ranges as declared
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = DPSearchCV(est, {"max_iter": [20, 50], "mechanism": ["dp-cd"]}, epsilon=0.5, random_state=3,
                            mean_repetitions=4).fit(X, y)
    assert search.best_params_ is None
    assert np.all(search.best_estimator_.coef_ == 0) and np.all(search.predict(X) == 1)


def test_at_a_large_epsilon_the_search_picks_an_accurate_model():
    X, y, bounds = _breast_cancer()
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = DPSearchCV(DPLogisticRegression(bounds=bounds, classes=[0, 1], alpha=1e-3, mechanism="dp-gcd"),
                            {"max_iter": [1, 40]}, epsilon=50.0, mean_repetitions=20, random_state=0).fit(Xtr, ytr)
    assert search.best_params_ == {"max_iter": 40}
    assert search.score(Xte, yte) > 0.9
    proba = search.predict_proba(Xte)  # the selected model's, as GridSearchCV gives
    np.testing.assert_array_equal(proba, search.best_estimator_.predict_proba(Xte))
    assert proba.shape == (len(yte), 2) and np.allclose(proba.sum(axis=1), 1.0)


def test_a_regressor_search_has_no_probabilities_and_a_pipeline_is_refused_with_the_remedy():
    from sklearn.pipeline import make_pipeline

    from dpsparse.preprocessing import DPMinMaxScaler

    X, y, bounds = _breast_cancer()
    assert not hasattr(DPSearchCV(DPLasso(), {"max_iter": [5]}), "predict_proba")
    pipe = make_pipeline(DPMinMaxScaler(bounds=bounds), DPLogisticRegression(bounds=bounds, classes=[0, 1]))
    with pytest.raises(ValueError, match="got Pipeline: a private transformer .* goes before the search"):
        DPSearchCV(pipe, {"dplogisticregression__max_iter": [5]}).fit(X, y)


def test_regression_search_and_clone():
    X, y, bounds, _ = data.load_bundled("diabetes")
    search = DPSearchCV(DPLasso(bounds=bounds), {"alpha": [1e-3, 1e-2], "max_iter": [5]}, epsilon=1.0,
                        random_state=ReleaseLog(0))
    assert clone(search).get_params()["param_grid"] == search.get_params()["param_grid"]
    search.fit(X, y)
    assert np.isfinite(search.best_score_) and search.predict(X).shape == y.shape
    assert search.privacy_report_.accounting_holds and search.best_estimator_.privacy_report_ is search.privacy_report_


def test_the_sparsity_of_hard_thresholding_is_searched_like_any_hyperparameter():
    X, y, bounds = _breast_cancer()
    grid = {"mechanism": ["dp-iht", "two-stage"], "mechanism_options": [{"sparsity": 2}, {"sparsity": 5}]}
    search = DPSearchCV(DPLogisticRegression(bounds=bounds, classes=[0, 1]), grid, epsilon=5.0, delta=1e-5,
                        mean_repetitions=8, random_state=ReleaseLog(2)).fit(X, y)
    assert search.privacy_report_.accounting_holds and search.best_params_ is not None
    assert search.best_estimator_.support_.size == search.best_params_["mechanism_options"]["sparsity"]


def test_the_search_shows_the_selected_runs_clipping_norm_only_when_each_setting_runs_once():
    """With ``repetitions="each"`` the selected model's released clipping norm is in the report; with a random number
    of runs it is not (one value per run would tell how many ran, which the guarantee keeps hidden)."""
    from dpsparse.data import load_bundled
    from dpsparse.tuning import rule_grid

    X, y, bounds, _ = load_bundled("breast_cancer")
    est = DPLogisticRegression(bounds=bounds, classes=[0, 1])
    grid = rule_grid(est, 427, 30, 1.0)
    key = "selected model, clipping norm (released)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        each = DPSearchCV(est, grid, epsilon=1.0, repetitions="each", random_state=0).fit(X, y).privacy_report_
        geometric = DPSearchCV(est, grid, epsilon=1.0, random_state=0).fit(X, y).privacy_report_
    assert isinstance(each.noise[key], float) and each.noise[key] > 0
    assert not any("released" in k for k in geometric.noise)


def test_a_search_on_a_dataframe_keeps_its_column_names_for_predict():
    import pandas as pd

    X, y, bounds, names = data.load_bundled("breast_cancer")
    df = pd.DataFrame(X, columns=names)
    search = DPSearchCV(DPLogisticRegression(bounds=bounds, classes=[0, 1]), {"max_iter": [20, 50]}, epsilon=1.0,
                        repetitions="each", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(df, y)
    assert list(search.feature_names_in_) == list(names) == list(search.best_estimator_.feature_names_in_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "X has feature names, but ... was fitted without feature names"
        search.predict(df)
    with pytest.raises(ValueError, match="same order"):
        search.predict(df[df.columns[::-1]])
