"""The privacy audit (dpsparse.audit): sensitivity replay of every mechanism, black-box bounds, mutations."""
import dataclasses
import warnings

import pytest

from dpsparse import audit, losses, norms
from dpsparse.mechanisms import REGISTRY


def _config(name, classification):
    loss = losses.Logistic() if classification else losses.Huber(1.0)
    options = {"n_iter": 4} if "n_iter" in REGISTRY[name].option_names else {}
    return loss, norms.build_penalty("l1", 0.05, 3, True), options


def _replay(name, classification, row_norm, pair_name):
    bounds, pairs = audit.neighbouring_pairs(n=21, p=3, classification=classification, row_norm=row_norm)
    loss, pen, options = _config(name, classification)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit.sensitivity_replay(name, pairs[pair_name], bounds, loss, pen, options=options,
                                        classification=classification)


def _cases(names):
    for name in names:
        for classification in (True, False):
            if name == "objective" and not classification:
                continue  # needs a twice-differentiable loss: logistic only
            yield name, classification


@pytest.mark.parametrize("name,classification", list(_cases(sorted(REGISTRY))))
def test_replay_of_every_mechanism_stays_within_its_declared_sensitivities(name, classification):
    ratios = _replay(name, classification, 1.0, "row norm with intercept")
    assert ratios and max(ratios.values()) <= 1.0 + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("name,classification", list(_cases(sorted(REGISTRY))))
@pytest.mark.parametrize("row_norm", [None, 1.0])
@pytest.mark.parametrize("pair_name", ["label flip", "feature extremes", "row norm with intercept"])
def test_replay_on_every_neighbouring_pair(name, classification, row_norm, pair_name):
    assert max(_replay(name, classification, row_norm, pair_name).values()) <= 1.0 + 1e-9


def test_replay_catches_an_understated_sensitivity():
    """A DP-GCD variant declaring half the true sensitivity of its update is caught (ratio > 1)."""
    mech = REGISTRY["dp-gcd"]

    def run(design, plan, noise, callback):
        plan.params["update_sensitivity"] = plan.params["update_sensitivity"] / 2
        return mech.run(design, plan, noise, callback)

    bounds, pairs = audit.neighbouring_pairs(n=21, p=3, classification=False)
    loss, pen, options = _config("dp-gcd", False)
    ratios = audit.sensitivity_replay(dataclasses.replace(mech, run=run), pairs["label flip"], bounds, loss, pen,
                                      options=options, classification=False)
    assert ratios["coordinate gradient"] > 1.5


def test_clopper_pearson_matches_its_definition():
    lo, hi = audit.clopper_pearson(7, 50, 0.05)
    from scipy.stats import binom
    assert binom.sf(6, 50, lo) == pytest.approx(0.025, rel=1e-6)
    assert binom.cdf(7, 50, hi) == pytest.approx(0.025, rel=1e-6)


def _black_box(name, factor, runs, options):
    bounds, pairs = audit.neighbouring_pairs(n=10, p=2, classification=False)
    pen = norms.build_penalty("l1", 0.05, 2, True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit.black_box_audit(name, pairs["label flip"], bounds, losses.Huber(1.0), pen, epsilon=1.0,
                                     delta=1e-3, options=options, classification=False, runs=runs, seed=1,
                                     noise_factor=factor)


@pytest.mark.slow
def test_black_box_audit_of_dp_gcd_respects_the_claim_and_catches_the_quarter_noise_mutant():
    assert _black_box("dp-gcd", 1.0, 20000, {"n_iter": 1}).epsilon_lower_bound <= 1.0
    assert _black_box("dp-gcd", 0.25, 20000, {"n_iter": 1}).epsilon_lower_bound > 1.0


@pytest.mark.slow
@pytest.mark.parametrize("name,options", [("output", {"mu": 20.0}), ("dp-sgd", {"n_iter": 1, "batch_size": 10}),
                                          ("fw", {"n_iter": 1}), ("objective", {})])
def test_black_box_audit_respects_the_claim(name, options):
    if name == "objective":
        bounds, pairs = audit.neighbouring_pairs(n=10, p=2, classification=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = audit.black_box_audit(name, pairs["label flip"], bounds, losses.Logistic(),
                                        norms.build_penalty("l1", 0.05, 2, True), epsilon=1.0, delta=1e-3,
                                        runs=1000, seed=1)
    else:
        res = _black_box(name, 1.0, 2000, options)
    assert res.epsilon_lower_bound <= 1.0
