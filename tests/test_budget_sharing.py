"""A PrivacyBudget is shared, never copied: scikit-learn's tools charge every fit to it."""
import copy
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate, validation_curve

from dpsparse import DPLasso, DPLogisticRegression, PrivacyBudget, data
from dpsparse.accounting import BudgetExceededError


def _setup(total=1.0, epsilon=0.5):
    X, y, bounds, _ = data.load_bundled("breast_cancer")
    budget = PrivacyBudget(total, 1e-3)
    est = DPLogisticRegression(epsilon=epsilon, delta=1e-6, bounds=bounds, classes=[0, 1], budget=budget,
                               random_state=0)
    return X, y, est, budget


def test_copies_clones_and_pickles_in_this_process_are_the_budget_itself():
    _, _, est, budget = _setup()
    assert copy.copy(budget) is budget and copy.deepcopy(budget) is budget
    assert pickle.loads(pickle.dumps(budget)) is budget
    assert clone(est).budget is budget and copy.deepcopy(est).budget is budget


def test_cross_val_score_charges_every_fit_and_is_refused_on_the_third():
    X, y, est, budget = _setup()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(BudgetExceededError, match="asks for"):
            cross_val_score(est, X, y, cv=5, error_score="raise")
    assert [e for e, _, _ in budget.spent] == [0.5, 0.5]


def test_with_scikit_learns_default_error_score_the_refused_fits_score_nan():
    X, y, est, budget = _setup()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", FitFailedWarning)
        with pytest.warns(FitFailedWarning, match="BudgetExceededError"):
            scores = cross_val_score(est, X, y, cv=5)
    assert np.isfinite(scores).sum() == 2 and len(budget.spent) == 2


def test_grid_search_and_cross_validate_charge_each_fit():
    X, y, est, budget = _setup(total=10.0)
    est.set_params(epsilon=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        GridSearchCV(est, {"alpha": [1e-3, 1e-2]}, cv=2).fit(X, y)  # 2 x 2 fits and the refit
        assert len(budget.spent) == 5
        cross_validate(est, X, y, cv=3)
    assert len(budget.spent) == 8 and budget.remaining[0] == pytest.approx(2.0)


def test_a_copy_in_another_process_refuses_to_be_charged():
    """What n_jobs > 1 with processes does: the worker unpickles a detached copy."""
    _, _, _, budget = _setup()
    code = ("import pickle, sys\nfrom dpsparse.accounting import BudgetExceededError\n"
            "b = pickle.loads(sys.stdin.buffer.read())\n"
            "print(repr(b))\ntry:\n    b.spend(0.1, 1e-6)\nexcept BudgetExceededError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(budget), capture_output=True, check=True)
    shown, refused = out.stdout.decode().splitlines()[:2]
    assert "a detached copy: it refuses new charges" in shown and "left)" not in shown  # not what it could spend
    assert "unpickled in another process (a saved estimator loaded again" in refused and budget.spent == []


def test_a_search_s_choice_has_no_guarantee_and_cross_validation_without_a_budget_warns():
    """GridSearchCV chooses by scores without noise: every fit inside it warns and its report (the refitted
    ``best_estimator_``'s too) says NO guarantee. cross_val_score without a budget warns that each fit spends its
    epsilon; with a budget it is silent (the budget keeps the total), and a plain fit says nothing of either."""
    from dpsparse.exceptions import PrivacyLeakWarning

    X, y, est, _ = _setup(total=10.0, epsilon=1.0)
    with pytest.warns(PrivacyLeakWarning, match="a scikit-learn tool that chooses by held-out scores") as caught:
        grid = GridSearchCV(est, {"alpha": [1e-3, 1e-2]}, cv=2).fit(X, y)
    report = grid.best_estimator_.privacy_report_
    assert report.chosen_without_noise and not report.guarantee_holds and report.accounting_holds
    assert "NO differential-privacy guarantee" in str(report) and report.to_dict()["guarantee_holds"] is False
    assert {w.filename for w in caught if issubclass(w.category, PrivacyLeakWarning)} == {__file__}
    with parallel_backend("threading"), warnings.catch_warnings(record=True) as caught:  # the search not on the
        warnings.simplefilter("always")  # workers' stacks: their fits are still a search's candidates
        GridSearchCV(clone(est).set_params(budget=None), {"alpha": [1e-3, 1e-2]}, cv=2, n_jobs=2).fit(X, y)
    leaks = {str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)}
    assert leaks and all("chooses by held-out scores" in m for m in leaks)
    with pytest.warns(PrivacyLeakWarning, match="chooses by held-out scores"):  # its scores compared as a search's
        validation_curve(clone(est).set_params(budget=None), X, y, param_name="alpha", param_range=[1e-3, 1e-2], cv=2)
    free = clone(est).set_params(budget=None)
    with pytest.warns(PrivacyLeakWarning, match="model selection without a budget: .* k fits k epsilon"):
        cross_val_score(free, X, y, cv=2)
    with warnings.catch_warnings(record=True) as caught:  # once per call of the tool, not once per fold
        warnings.simplefilter("always")
        cross_val_score(free, X, y, cv=3)
        cross_val_score(free, X, y, cv=3)
    assert sum("k fits k epsilon" in str(w.message) for w in caught) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        cross_val_score(clone(est), X, y, cv=2)  # charged to the shared budget: no warning
        fitted = clone(free).fit(X, y)
    assert fitted.privacy_report_.accounting_holds and not fitted.privacy_report_.chosen_without_noise


def test_a_pipeline_step_that_learns_without_noise_voids_the_guarantee():
    """After scikit-learn's StandardScaler (exact means and deviations, carried by the pipeline) the fit warns, at
    the user's line, and its report says NO guarantee (``inputs_private``); after dpsparse's private scaler, or a
    step that reads only the number of features, it does not."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    from dpsparse.exceptions import PrivacyLeakWarning
    from dpsparse.preprocessing import DPStandardScaler

    X, y, bounds, _ = data.load_bundled("breast_cancer")
    last = DPLogisticRegression(epsilon=1.0, bounds=data.Bounds(-3.0, 3.0), classes=[0, 1])
    with pytest.warns(PrivacyLeakWarning, match="step\\(s\\) standardscaler before this fit learned") as caught:
        pipe = make_pipeline(StandardScaler(), clone(last)).fit(X, y)
    assert {w.filename for w in caught if issubclass(w.category, PrivacyLeakWarning)} == {__file__}
    report = pipe[-1].privacy_report_
    assert not report.inputs_private and not report.guarantee_holds and report.accounting_holds
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe = make_pipeline(DPStandardScaler(epsilon=0.2, bounds=bounds), clone(last)).fit(X, y)
        assert pipe[-1].privacy_report_.guarantee_holds
        pipe = make_pipeline(PolynomialFeatures(1, include_bias=False),
                             clone(last).set_params(bounds=bounds)).fit(X, y)
        assert pipe[-1].privacy_report_.inputs_private


def test_a_label_transformer_that_learns_without_noise_voids_the_guarantee():
    """TransformedTargetRegressor with StandardScaler fits the labels' exact mean and deviation, which the model then
    carries: the fit warns at the user's line and its report says NO guarantee; with a stateless ``func`` and
    ``inverse_func`` (or no transformer) it does not."""
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    from dpsparse.exceptions import PrivacyLeakWarning

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (600, 4))
    y = X @ [2.0, -1.0, 0.5, 0.0] + 0.1 * rng.standard_normal(600)
    reg = DPLasso(epsilon=1.0, bounds=data.Bounds(-1.0, 1.0, -4.0, 4.0), random_state=0)
    for scaler in (StandardScaler(), MinMaxScaler()):
        name = type(scaler).__name__.lower()
        with pytest.warns(PrivacyLeakWarning, match=f"step\\(s\\) {name} \\(TransformedTargetRegressor") as caught:
            fitted = TransformedTargetRegressor(regressor=clone(reg), transformer=scaler).fit(X, y)
        assert {w.filename for w in caught if issubclass(w.category, PrivacyLeakWarning)} == {__file__}
        report = fitted.regressor_.privacy_report_
        assert not report.inputs_private and not report.guarantee_holds
    reg.set_params(random_state=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fitted = TransformedTargetRegressor(regressor=clone(reg), func=np.tanh, inverse_func=np.arctanh,
                                            check_inverse=False).fit(X, y)
        assert fitted.regressor_.privacy_report_.guarantee_holds
        assert TransformedTargetRegressor(regressor=clone(reg)).fit(X, y).regressor_.privacy_report_.guarantee_holds


def test_the_call_stack_check_sees_nested_pipelines_composites_and_every_tool_that_chooses():
    """A scaler in an outer pipeline voids the guarantee of a fit in an inner one; a ColumnTransformer of
    passthrough columns, a fit that is itself the first step (SelectFromModel) and DPSearchCV alone do not; a tuned
    decision threshold chooses by scores without noise (a search), and DPSearchCV after a scaler is flagged too."""
    from sklearn.compose import ColumnTransformer
    from sklearn.feature_selection import SelectFromModel
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import TunedThresholdClassifierCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    from dpsparse import DPSearchCV

    X, y, bounds, _ = data.load_bundled("breast_cancer")

    def est(b=None):
        return DPLogisticRegression(epsilon=1.0, bounds=data.Bounds(-3.0, 3.0) if b is None else b, classes=[0, 1])

    def holds(fit):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fit().guarantee_holds

    inner = make_pipeline(PolynomialFeatures(1, include_bias=False), est())
    assert not holds(lambda: make_pipeline(StandardScaler(), inner).fit(X, y)[-1][-1].privacy_report_)
    passthrough = ColumnTransformer([("p", "passthrough", list(range(30)))])
    assert holds(lambda: make_pipeline(passthrough, est(bounds)).fit(X, y)[-1].privacy_report_)
    first = make_pipeline(SelectFromModel(est(bounds)), LogisticRegression(max_iter=20))
    assert holds(lambda: first.fit(X, y)[0].estimator_.privacy_report_)
    tuned = TunedThresholdClassifierCV(est(bounds), cv=2)
    assert not holds(lambda: tuned.fit(X, y).estimator_.privacy_report_)
    search = DPSearchCV(est(bounds), {"alpha": [1e-3, 1e-2]}, epsilon=1.0)
    assert holds(lambda: search.fit(X, y).privacy_report_)
    scaled = make_pipeline(StandardScaler(), DPSearchCV(est(), {"alpha": [1e-3, 1e-2]}, epsilon=1.0))
    assert not holds(lambda: scaled.fit(X, y)[-1].privacy_report_)


def test_tools_that_learn_from_predictions_or_combine_several_fits_say_what_the_whole_spends():
    """CalibratedClassifierCV fits its calibrators without noise on this model's predictions (no guarantee, as a
    search); OneVsRestClassifier and VotingClassifier release several fits on the same records, whose epsilons add
    up: each fit's report says so, with a warning once per call, unless a shared budget keeps the total."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import VotingClassifier
    from sklearn.multiclass import OneVsRestClassifier

    from dpsparse.estimators import LEARNED_ON_PREDICTIONS, SEVERAL_FITS_SPEND
    from dpsparse.exceptions import PrivacyLeakWarning

    X, y, bounds, _ = data.load_bundled("breast_cancer")
    est = DPLogisticRegression(epsilon=1.0, bounds=bounds, classes=[0, 1])
    with pytest.warns(PrivacyLeakWarning, match="learns without noise from this model's predictions"):
        calibrated = CalibratedClassifierCV(est, cv=3).fit(X, y)
    reports = [c.estimator.privacy_report_ for c in calibrated.calibrated_classifiers_]
    assert len(reports) == 3 and not any(r.guarantee_holds for r in reports)
    assert all(LEARNED_ON_PREDICTIONS in r.warnings for r in reports)
    rng = np.random.default_rng(0)
    X3 = rng.uniform(-1.0, 1.0, (3000, 4))
    y3 = np.argmax(X3[:, :3], axis=1)
    three = DPLogisticRegression(epsilon=1.0, bounds=data.Bounds(-1.0, 1.0), classes=[0, 1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ovr = OneVsRestClassifier(three).fit(X3, y3)
    assert [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)] == [SEVERAL_FITS_SPEND]
    assert all(e.privacy_report_.guarantee_holds and SEVERAL_FITS_SPEND in e.privacy_report_.warnings
               for e in ovr.estimators_)
    with pytest.warns(PrivacyLeakWarning, match="one of several models on the same records"):
        VotingClassifier([("a", est), ("b", clone(est))]).fit(X, y)
    budget = PrivacyBudget(2.0, 1e-3)
    shared = DPLogisticRegression(epsilon=1.0, bounds=bounds, classes=[0, 1], budget=budget)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        voting = VotingClassifier([("a", shared), ("b", clone(shared))]).fit(X, y)
    assert len(budget.spent) == 2 and SEVERAL_FITS_SPEND not in voting.estimators_[0].privacy_report_.warnings


def test_a_multiclass_wrapper_that_fits_one_model_is_not_several_fits():
    """One-vs-rest on binary labels and one-vs-one on two classes fit a single model: no warning, a clean report;
    the same wrapper inside a VotingClassifier still combines several fits."""
    from sklearn.ensemble import VotingClassifier
    from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier

    from dpsparse.estimators import SEVERAL_FITS_SPEND
    from dpsparse.exceptions import PrivacyLeakWarning

    X, y, bounds, _ = data.load_bundled("breast_cancer")
    est = DPLogisticRegression(epsilon=1.0, bounds=bounds, classes=[0, 1])
    for wrapper in (OneVsRestClassifier, OneVsOneClassifier):
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            fitted = wrapper(est).fit(X, y)
        assert len(fitted.estimators_) == 1
        assert SEVERAL_FITS_SPEND not in fitted.estimators_[0].privacy_report_.warnings
    with pytest.warns(PrivacyLeakWarning, match="one of several models on the same records"):
        VotingClassifier([("a", OneVsRestClassifier(est)), ("b", clone(est))]).fit(X, y)
    # a binary wrapper nested in one that fits several (in this thread or in joblib's worker threads) hides nothing
    y3 = np.where(X[:, 0] > np.median(X[:, 0]), 2, y)
    for outer, inner in [(OneVsRestClassifier, OneVsRestClassifier), (OneVsOneClassifier, OneVsRestClassifier),
                         (OneVsRestClassifier, OneVsOneClassifier)]:
        for backend in ("sequential", "threading"):
            with parallel_backend(backend), pytest.warns(PrivacyLeakWarning, match="one of several models"):
                fitted = outer(inner(est), n_jobs=2).fit(X, y3)
            assert all(SEVERAL_FITS_SPEND in e.estimators_[0].privacy_report_.warnings for e in fitted.estimators_)


def test_steps_that_fill_or_encode_with_declared_constants_keep_the_guarantee():
    """A constant imputer and encoders given their categories learn nothing from the records; the same steps that
    read the data (the mean, the categories seen, a missing indicator) remove the guarantee."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    X, y, bounds, _ = data.load_bundled("breast_cancer")
    Xc = np.c_[X[:, :3], np.arange(X.shape[0]) % 3]
    coded = data.Bounds(np.r_[bounds.feature_low[:3], 0, 0, 0], np.r_[bounds.feature_high[:3], 1, 1, 1])

    def holds(step, X, b):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = DPLogisticRegression(bounds=b, classes=[0, 1])
            return make_pipeline(step, est).fit(X, y)[-1].privacy_report_.guarantee_holds

    assert holds(SimpleImputer(strategy="constant", fill_value=0.0), X, bounds)
    assert not holds(SimpleImputer(strategy="constant", add_indicator=True), X, bounds)
    assert not holds(SimpleImputer(strategy="mean"), X, bounds)
    declared = dict(categories=[[0, 1, 2]], handle_unknown="ignore")
    for encoder, kept in ((OneHotEncoder(**declared), True), (OneHotEncoder(), False),
                          (OneHotEncoder(categories=[[0, 1, 2]]), False),  # an unknown category refuses the fit
                          (OneHotEncoder(**declared, min_frequency=5), False)):
        assert holds(ColumnTransformer([("n", "passthrough", [0, 1, 2]), ("c", encoder, [3])]), Xc, coded) == kept
    dropped = ColumnTransformer([("n", "passthrough", [0, 1, 2]), ("c", OneHotEncoder(**declared, drop=np.array([0])),
                                                                   [3])])  # an array: no ambiguous comparison
    assert holds(dropped, Xc, data.Bounds(coded.feature_low[:5], coded.feature_high[:5])) is False
    learning_remainder = ColumnTransformer([("c", OneHotEncoder(**declared), [3])], remainder=StandardScaler())
    assert not holds(learning_remainder, Xc, coded)


def test_feature_selectors_that_refit_or_choose_by_scores_say_so():
    """RFE refits on fewer features each round (their epsilons add up); a sequential selector chooses by held-out
    scores without noise (no guarantee, as a search)."""
    from sklearn.feature_selection import RFE, RFECV, SequentialFeatureSelector

    from dpsparse.estimators import SEARCH_NOT_PRIVATE, SEVERAL_FITS_SPEND

    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (2000, 4))
    y = (X[:, 0] > 0).astype(int)
    est = DPLogisticRegression(bounds=data.Bounds(-1.0, 1.0), classes=[0, 1])
    sequential = SequentialFeatureSelector(est, n_features_to_select=2, cv=2)
    for tool, note, holds in ((RFE(est, n_features_to_select=2), SEVERAL_FITS_SPEND, True),
                              (sequential, SEARCH_NOT_PRIVATE, False), (RFECV(est, cv=2), SEARCH_NOT_PRIVATE, False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tool.fit(X, y)
        assert note in {str(w.message) for w in caught}
        if holds:
            assert tool.estimator_.privacy_report_.guarantee_holds
