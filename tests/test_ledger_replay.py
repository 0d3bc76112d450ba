"""Ledger replay (dpsparse.audit.ledger_replay): the noise drawn, composed by the accountant, is the noise claimed.

Each release's noise over its declared sensitivity and each selection's scale are logged by
``audit.LedgerNoise`` and composed by ``accounting.compose_log``, independently of the ledger
the mechanism's plan booked.
"""
import dataclasses
import math
import warnings

import numpy as np
import pytest

from conftest import mechanism_cases, mechanism_loss, planted_sparse
from dpsparse import DPLasso, DPLogisticRegression, DPSearchCV, audit, data, losses, norms
from dpsparse.accounting import Ledger, LoggedDraw, compose_log, zcdp_budget
from dpsparse.estimators import JOINT_SHARE
from dpsparse.mechanisms import REGISTRY, auto, fit_mechanism
from dpsparse.mechanisms import dp_iht as dp_iht_module
from dpsparse.tuning import search_zcdp


def _problem(classification, n=60, p=4, seed=0, bounds=None):
    b, pairs = audit.neighbouring_pairs(n=n, p=p, classification=classification, seed=seed)
    X, y = pairs["label flip"][0]
    return data.prepare(X, y, bounds or b, classification, fit_intercept=True)


def _replay(name, design, classification, epsilon=1.0, options=None):
    loss = mechanism_loss(name, classification)
    pen = norms.build_penalty("l1", 0.05, design.p - 1, True)
    if options is None:
        options = {"n_iter": 5} if "n_iter" in REGISTRY[name].option_names else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit.ledger_replay(name, design, loss, pen, epsilon=epsilon, delta=1e-5, options=options)


@pytest.mark.parametrize("name,classification", list(mechanism_cases()))
@pytest.mark.parametrize("epsilon", [0.3, 1.0])
def test_every_mechanisms_draws_compose_to_exactly_its_claim(name, classification, epsilon):
    """Equal feature bounds: every ledger books exactly the draws (objective perturbation through its proof)."""
    check = _replay(name, _problem(classification), classification, epsilon)
    assert check.draws > 0 and check.holds
    assert check.composed == pytest.approx(check.claimed, rel=1e-6)
    assert check.claimed <= epsilon * (1 + 1e-9)


@pytest.mark.parametrize("selection,update", [("laplace", "laplace"), ("gumbel", "laplace")])
def test_dp_gcd_with_laplace_updates_composes_to_its_claim(selection, update):
    """Pure-DP steps: the Laplace update of one coordinate is declared on its L1 sensitivity, which the accountant
    composes (on an L2 one it has no ledger event)."""
    check = _replay("dp-gcd", _problem(True), True, 1.0, {"n_iter": 5, "selection": selection,
                                                          "update_noise": update})
    assert check.draws > 0 and check.holds and check.claimed <= 1.0 * (1 + 1e-9)


def test_dp_iht_with_unequal_bounds_spends_at_most_its_claim():
    """Unequal bounds: a release's L2 sensitivity ||lambda_S|| is below lambda sqrt(s + 1), so it is over-noised."""
    design = _problem(False, p=6)
    b = np.r_[np.linspace(0.2, 1.0, 6), 1.0]
    design = dataclasses.replace(design, X=design.X * b, feature_bounds=b)
    check = _replay("dp-iht", design, False, options={"n_iter": 5, "sparsity": 2})
    assert check.holds and check.composed < check.claimed * (1 - 1e-4)


def _booking_sqrt_s_plus_k_times_less(info):
    """dp-iht's plan before the fix: the releases booked at multiplier ``u sqrt(s + k)``, ``u`` calibrated on that."""
    s, k, T = dp_iht_module._sparsity(info), dp_iht_module._kept(info).size, info.options["n_iter"]

    def ledger(u):
        return Ledger().exponential(2.0 / u, T * s).gaussian(u * math.sqrt(s + k), 1.0, T)

    from dpsparse.accounting import calibrate

    u = calibrate(ledger, info.epsilon, info.delta, 2.0 * math.sqrt(T * s) / info.epsilon)
    plan = dp_iht_module._plan(info)
    lam_max = float(plan.params["lam"].max())
    plan.params.update(beta=u * lam_max, sigma=u * lam_max * math.sqrt(s + k))
    plan.ledger = ledger(u)
    plan.accountant_epsilon = plan.ledger.epsilon(info.delta)
    return plan


def test_the_replay_catches_dp_ihts_former_ledger():
    """The bug of issue 26: the ledger claimed epsilon 1 where the draws compose to about 1.1."""
    mutant = dataclasses.replace(REGISTRY["dp-iht"], plan=_booking_sqrt_s_plus_k_times_less)
    check = audit.ledger_replay(mutant, _problem(False), losses.Huber(1.0), None, epsilon=1.0, delta=1e-5,
                                options={"n_iter": 5, "sparsity": 2})
    assert check.claimed <= 1.0 and not check.holds and check.composed > 1.05


def test_an_undeclared_draw_cannot_be_composed():
    mech = REGISTRY["output"]

    def run(design, plan, noise, callback):
        return mech.run(design, plan, noise, callback) + noise.gaussian(1.0, design.p)

    with pytest.raises(ValueError, match="undeclared"):
        audit.ledger_replay(dataclasses.replace(mech, run=run), _problem(True), losses.Logistic(),
                            norms.build_penalty("l1", 0.05, 4, True), epsilon=1.0, delta=1e-5)


def test_compose_log_closed_forms():
    """Each draw's cost from its scale and declared sensitivity."""
    gauss = LoggedDraw("release", "g", "gaussian", 2.0, 0.5)
    assert compose_log([gauss] * 3, 1e-5) == pytest.approx(Ledger().gaussian(4.0, 1.0, 3).epsilon(1e-5), rel=1e-12)
    # Laplace report-noisy-max, non-monotone, per-score scales: max_j (Delta_j + max Delta) / b_j
    rnm = LoggedDraw("select", "s", "laplace", np.array([1.0, 2.0]), np.array([0.1, 0.3]))
    assert compose_log([rnm], 1e-5) == pytest.approx(max(0.4 / 1.0, 0.6 / 2.0), rel=1e-3)
    gumbel = LoggedDraw("select", "s", "gumbel", 0.5, np.array([0.1, 0.2]))
    assert Ledger().exponential(0.8).events == audit.log_ledger([gumbel]).events
    with pytest.raises(ValueError, match="needs an L1 sensitivity"):
        compose_log([LoggedDraw("release", "l", "laplace", 1.0, 1.0, norm="l2")], 1e-5)


def test_one_vs_rest_spends_at_most_its_claim():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 4))
    y = np.argmax(X[:, :3], axis=1)
    noise = audit.LedgerNoise(0)
    est = DPLogisticRegression(epsilon=1.0, delta=1e-5, bounds={"feature_low": [-1] * 4, "feature_high": [1] * 4},
                               classes=[0, 1, 2], mechanism="dp-gcd", max_iter=5, random_state=noise).fit(X, y)
    check = audit.check_log(noise.log, est.privacy_report_)
    assert check.holds and 0.9 < check.composed and check.claimed <= 1.0


@pytest.mark.parametrize("mechanism", ["dp-gcd", "output"])
def test_private_bounds_and_the_fit_spend_at_most_the_claim(mechanism):
    X, y, _, _ = planted_sparse(n=4000, p=5, s=2)
    noise = audit.LedgerNoise(0)
    est = DPLasso(epsilon=1.0, delta=1e-6, bounds="private", bounds_share=0.3, mechanism=mechanism,
                  random_state=noise).fit(X, y)
    names = [d.name for d in noise.log]
    assert sum(n.startswith("median of") for n in names) == 6  # five features and the label
    assert sum(n.endswith("quartile of label") for n in names) == 2  # the label's two quartiles
    check = audit.check_log(noise.log, est.privacy_report_)
    assert check.holds and check.composed > 0.9


def test_each_base_run_of_the_search_is_within_its_rho():
    X, y, _, bounds = planted_sparse(n=600, p=6, s=2, classification=True)
    noise = audit.LedgerNoise(0)
    grid = {"mechanism": ["dp-gcd", "fw", "dp-iht"], "max_iter": [3, 6]}
    search = DPSearchCV(DPLogisticRegression(bounds=bounds, classes=[0, 1]), grid, epsilon=1.0, delta=1e-5,
                        mean_repetitions=5, random_state=noise).fit(X, y)
    bounds_rho, runs = audit.search_replay(noise.log)
    # the declared ranges cut jointly before the runs (two selections, each eps_q^2 / 8 of JOINT_SHARE of the budget)
    assert [d.name for d in noise.log[:2]] == ["upper cut of the declared ranges", "lower cut of the declared ranges"]
    assert bounds_rho == pytest.approx(JOINT_SHARE * zcdp_budget(1.0, 1e-5), rel=1e-9) and len(runs) >= 2
    rho = search_zcdp(1.0, 1e-5, 5, bounds_rho=bounds_rho)  # what the cuts leave
    for rho_fit, rho_score in runs[1:]:
        assert rho_fit == pytest.approx(rho, rel=1e-3) and rho_fit <= rho * (1 + 1e-9)
        assert rho_score == pytest.approx(rho, rel=1e-9)
    assert runs[0][0] == pytest.approx(rho, rel=1e-9)  # the constant predictor's label mean
    assert search.privacy_report_.accounting_holds


@pytest.mark.parametrize("second", ["output", "dp-gcd", "dp-gd"])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_two_stage_spends_its_whole_target(second, epsilon):
    """The two stages are calibrated jointly in zCDP: the accountant's epsilon is the target, not 0.76 of it (DP-GD
    second with its automatic clipping norm, a release of its own, as the least-squares rule runs it)."""
    design = _problem(False, n=200, p=12)
    options = {"second": second, "sparsity": 4, **({"n_iter": 5} if second == "dp-gd" else {})}
    check = _replay("two-stage", design, False, epsilon, options=options)
    assert check.claimed == pytest.approx(epsilon, rel=1e-3) and check.claimed <= epsilon
    assert check.composed == pytest.approx(check.claimed, rel=1e-6)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_the_least_squares_rules_two_stage_composes_to_its_claim(epsilon):
    """The options ``mechanism="auto"`` gives the least squares above its floor (``auto.least_squares_selection``:
    the selection's labels clipped at ``SELECTION_CLIP``, its share of the budget, DP-GD second with its automatic
    clipping norm), on the squared loss: the draws compose to the claim, and the claim is the target."""
    design = _problem(False, n=200, p=12)
    options = {**auto.least_squares_selection(200, 12, epsilon), "n_iter": 5}
    assert options["second"] == "dp-gd" and options["selection_clip"] == auto.SELECTION_CLIP
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check = audit.ledger_replay("two-stage", design, losses.Squared(clip=1.0),
                                    norms.build_penalty("l1", 0.05, 12, True), epsilon=epsilon, delta=1e-5,
                                    options=options)
    assert check.draws > options["sparsity"] and check.holds
    assert check.composed == pytest.approx(check.claimed, rel=1e-6)
    assert check.claimed == pytest.approx(epsilon, rel=1e-3) and check.claimed <= epsilon


def test_two_stage_selection_share_is_its_share_of_rho():
    design = _problem(False, n=200, p=12)
    rec = audit.LedgerNoise(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_mechanism(REGISTRY["two-stage"], design, losses.Huber(1.0), norms.build_penalty("l1", 0.05, 12, True),
                      epsilon=1.0, delta=1e-5, options={"sparsity": 4, "selection_share": 0.4}, noise=rec)
    rho = zcdp_budget(1.0, 1e-5)
    selection = [d for d in rec.log if d.name == "peeling"]
    assert len(selection) == 4
    assert audit.log_ledger(selection).zcdp() == pytest.approx(0.4 * rho, rel=1e-9)
    assert audit.log_ledger(rec.log).zcdp() == pytest.approx(rho, rel=1e-3)


@pytest.mark.parametrize("mechanism", ["dp-gd", "dp-sgd"])
@pytest.mark.parametrize("clipping_norm", ["auto", None])
def test_one_hot_groups_stay_within_the_declared_sensitivities(mechanism, clipping_norm):
    """DP-GD and DP-SGD on a design with one-hot groups (``Bounds.one_hot``: zeros kept, records bounded by
    sqrt(groups + other features)): between neighbouring datasets whose differing record gives opposite answers,
    or breaks the declaration (two ones in a group, scaled down to the bound), every release moves by at most its
    declared sensitivity, and the gradient sums by a good part of it (0.46 of the corner's ``2 C`` for DP-GD without
    automatic clipping: with indicators that are never negative and the intercept, two records' gradients cannot be
    opposite)."""
    rng = np.random.default_rng(3)
    n = 21
    answers = np.zeros((n, 5))
    answers[np.arange(n), rng.integers(0, 3, n)] = 1.0
    answers[np.arange(n), 3 + rng.integers(0, 2, n)] = 1.0
    X = np.c_[answers, rng.uniform(10, 20, n)]
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    bounds = data.Bounds([0, 0, 0, 0, 0, 10.0], [1, 1, 1, 1, 1, 20.0], one_hot=[[0, 1, 2], [3, 4]])
    records = {"opposite answers": ([1, 0, 0, 1, 0, 20.0], 1.0, [0, 0, 1, 0, 1, 10.0], -1.0),
               "outside the declaration": ([1, 1, 1, 1, 1, 20.0], 1.0, [0, 0, 1, 0, 1, 10.0], -1.0)}
    pen = norms.build_penalty("l1", 1e-3, 6, True)
    worst = {}
    for xa, ya, xb, yb in records.values():
        pair = []
        for x0, y0 in ((xa, ya), (xb, yb)):
            Xr, yr = X.copy(), y.copy()
            Xr[0], yr[0] = x0, y0
            pair.append((Xr, yr))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ratios = audit.sensitivity_replay(mechanism, pair, bounds, losses.Logistic(), pen, repeats=3,
                                              options={"n_iter": 3, "clipping_norm": clipping_norm})
        for name, ratio in ratios.items():
            worst[name] = max(worst.get(name, 0.0), ratio)
    assert worst and max(worst.values()) <= 1.0 + 1e-9
    assert max(worst.values()) >= 0.4
