"""Private support selection, then a private fit (mechanism two-stage)."""
import warnings

import numpy as np
import pytest

from conftest import planted_sparse, worst_replay
from doubles import RecordingNoise
from dpsparse import DPLasso, DPLinearSVC, DPLogisticRegression, PrivacyBudget, audit, data, losses, norms
from dpsparse.mechanisms import REGISTRY, auto, fit_mechanism, make_plan

MECH = REGISTRY["two-stage"]


def _design(p=20):
    X, y, _, bounds = planted_sparse(300, p, 3)
    return data.prepare(X, y, bounds, classification=False)


def test_plan_composes_the_selection_and_the_second_stage_in_one_ledger():
    design = _design()
    pen = norms.build_penalty("l1", 1e-3, 20, True)
    plan = make_plan(MECH, design, losses.Logistic(), pen, 1.0, 1e-5, None, {"sparsity": 4, "second": "output"})
    kinds = [kind for kind, _, _ in plan.ledger.events]
    assert kinds == ["exponential", "gaussian"] and plan.ledger.events[0][1] == 4
    assert plan.accountant_epsilon <= 1.0 and plan.params["plan2"].info.p == 5
    # the logistic derivative at the zero model is 1/2: the scores move by 2 * 0.5 * b / n
    assert plan.params["lam"] == pytest.approx(np.full(21, 1.0 / design.n))


def test_run_selects_s_features_then_releases_a_model_on_them():
    design = _design()
    rec = RecordingNoise(0)
    w, report = fit_mechanism(MECH, design, losses.Squared(clip=0.5), norms.build_penalty("l1", 1e-3, 20, True),
                              epsilon=1.0, delta=1e-5, options={"sparsity": 4, "second": "output"}, noise=rec)
    assert [d.values.size for d in rec.of("gumbel")] == [20, 19, 18, 17]
    assert [d.values.size for d in rec.of("gaussian")] == [5]  # output perturbation on 4 features + intercept
    assert np.count_nonzero(w[:-1]) <= 4 and report.accounting_holds


def test_the_default_second_stage_is_the_rules_dp_gd():
    """Named with nothing else, two-stage runs its second stage as the least-squares rule does: DP-GD with its automatic
    clipping norm (one release of its own) and the rule's number of steps; output perturbation's ridge shrank the
    model on the selected features to about the constant predictor (adult: 0.760 against the constant's 0.759)."""
    design = _design()
    rec = RecordingNoise(0)
    w, report = fit_mechanism(MECH, design, losses.Squared(clip=0.5), norms.build_penalty("l1", 1e-3, 20, True),
                              epsilon=1.0, delta=1e-5, options={"sparsity": 4}, noise=rec)
    sizes = [d.values.size for d in rec.of("gaussian")]
    assert sizes == [1] + [5] * auto.GD_STEPS  # the clipping norm, then each step on 4 features + intercept
    assert report.accounting_holds and np.count_nonzero(w[:-1]) <= 4


def test_a_non_separable_penalty_is_refused_before_the_fit():
    design = _design()
    with pytest.raises(ValueError, match="separable"):
        make_plan(MECH, design, losses.Squared(clip=1.0), norms.build_penalty("linf", 1e-3, 20, True), 1.0, 1e-5)


def test_replay_stays_within_the_declared_sensitivities():
    bounds, pairs = audit.neighbouring_pairs(n=21, p=3, classification=True)
    pen = norms.build_penalty("l1", 1e-3, 3, True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for pair in pairs.values():
            ratios = audit.sensitivity_replay("two-stage", pair, bounds, losses.Logistic(), pen,
                                              options={"sparsity": 2}, repeats=3)
            assert max(ratios.values()) <= 1.0 + 1e-9


def test_the_hinge_loss_selects_then_runs_dp_gd_within_its_declared_sensitivities():
    """The hinge loss has no curvature bound, which DP-GD's subgradient steps do not need: two-stage takes it with
    DP-GD second (the selection reads ``f'(0, y) = -y``, bounded by 1) and refuses it with DP-GCD second, naming what
    the second stage lacks."""
    worst = worst_replay("two-stage", losses.Hinge(), {"second": "dp-gd", "sparsity": 2, "n_iter": 3}, p=4)
    assert worst and max(worst.values()) <= 1.0 + 1e-9 and worst["peeling"] >= 0.9
    for second in ("dp-gcd", "output", "adassp"):
        with pytest.raises(ValueError, match=f"mechanism two-stage with second='{second}': mechanism {second} needs"):
            make_plan(MECH, _design(), losses.Hinge(), norms.build_penalty("l1", 1e-3, 20, True), 1.0, 1e-5,
                      options={"second": second})


def test_a_second_stage_that_refuses_the_loss_is_refused_before_anything_is_charged():
    """The private label set is bought before the plan: the second stage's needs are checked with the mechanism's,
    before it."""
    X, y, _, bounds = planted_sparse(n=400, p=20, classification=True)
    budget = PrivacyBudget(1.0, 1e-5)
    est = DPLinearSVC(mechanism="two-stage", mechanism_options={"second": "output"}, budget=budget, random_state=0,
                      bounds=bounds)  # no classes: the label set would be bought privately first
    with pytest.raises(ValueError, match="second='output': mechanism output needs a smooth"):
        est.fit(X, y)
    assert budget.spent == []


@pytest.mark.parametrize("selection_clip", [auto.SELECTION_CLIP, 0.25])
def test_the_least_squares_rules_path_stays_within_its_declared_sensitivities(selection_clip):
    """The selection's scores with the labels clipped at ``selection_clip`` (the squared loss's derivative at the zero
    model, ``clip(-y_i, c)``) and DP-GD second with its automatic clipping norm: every release's change between
    neighbouring datasets is at most its declared sensitivity, and the pairs that move the labels or the record reach
    it to within 10 % for the selection (its sensitivity is tight)."""
    options = {"second": "dp-gd", "sparsity": 2, "selection_share": 0.7, "selection_clip": selection_clip,
               "n_iter": 3}
    worst = worst_replay("two-stage", losses.Squared(clip=1.0), options, p=4, classification=False)
    assert worst and max(worst.values()) <= 1.0 + 1e-9
    assert worst["peeling"] >= 0.9


def test_large_epsilon_recovers_the_planted_support():
    X, y, w, bounds = planted_sparse()
    Xc, yc, wc, bc = planted_sparse(classification=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPLasso(bounds=bounds, clip=0.25, epsilon=50.0, mechanism="two-stage", random_state=0,
                      mechanism_options={"sparsity": 5}).fit(X, y)
        clf = DPLogisticRegression(bounds=bc, classes=[0, 1], epsilon=50.0, mechanism="two-stage", random_state=0,
                                   mechanism_options={"sparsity": 5}).fit(Xc, yc)
    assert set(est.support_) == set(np.flatnonzero(w)) and est.score(X, y) > 0.9
    assert set(clf.support_) == set(np.flatnonzero(wc)) and clf.score(Xc, yc) > 0.8
