"""Private bounds: the accounting of the quantile selections, their noise and sensitivity, their accuracy,
and their composition with the fit and the search."""
import json
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp
from dp_accounting import dp_event
from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant

from doubles import RecordingNoise
from dpsparse import DPLasso, DPLogisticRegression, audit, card, data
from dpsparse.accounting import DATA_BOUNDS, PrivacyBudget, zcdp_budget, zcdp_epsilon
from dpsparse.cli import main
from dpsparse.estimators import BOUNDS_SHARE, JOINT_MAX_FEATURES, JOINT_SHARE, JOINT_SLOPE_BAND
from dpsparse.noise import make_noise
from dpsparse.private_bounds import (
    CANDIDATES,
    JOINT_GRID,
    JOINT_MAX_ERROR,
    JOINT_SLOPE,
    JOINT_TAIL,
    JOINT_TAIL_REGRESSION,
    LABEL_SUMS_L2,
    MAX_TAIL,
    MIN_TAIL,
    JointLabelDesign,
    JointTighteningDesign,
    PendingDesign,
    _counts,
    _interval_scores,
    _joint_utility,
    _level_parts,
    _scores,
    declared_widths,
    joint_affordable,
    tail_share,
)
from dpsparse.tuning import DPSearchCV, search_zcdp


def _regression(n=4000, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform([0.0, -50.0, 1e3][:p], [1.0, 50.0, 5e3][:p], (n, p))
    y = 2.0 + X @ np.array([1.0, 0.01, 1e-3][:p]) + 0.1 * rng.standard_normal(n)
    return X, y


def test_tail_share_closed_form_and_refusal():
    k, n, eps = 10, 20000, 0.05
    r = 2.0 * math.log(CANDIDATES.size * k / 0.05) / eps
    assert tail_share(n, eps, k) == pytest.approx(r / (4 * n))
    assert tail_share(10**9, eps, k) == MIN_TAIL
    with pytest.raises(ValueError, match="bounds='private'.*too few"):
        tail_share(int(r / MAX_TAIL) - 1, eps, k)


def test_candidates_are_sorted_round_numbers_with_zero():
    assert np.all(np.diff(CANDIDATES) > 0) and 0.0 in CANDIDATES
    assert CANDIDATES[-1] == pytest.approx(8e7) and CANDIDATES[0] == -CANDIDATES[-1]


@pytest.mark.parametrize("rho", [1e-3, 0.05])
def test_zcdp_ledger_and_noise_drawn_match_the_claim(rho):
    X, y = _regression()
    pending = PendingDesign(X, y, classification=False, fit_intercept=True, share=0.1).plan_zcdp(rho)
    k = 3 * 3 + 5  # median, lower and upper bound of 3 features and the label, the label's two quartiles
    assert pending.n_quantiles == k
    assert pending.ledger.zcdp() == pytest.approx(rho, rel=1e-12)  # k selections, each epsilon_q^2 / 8
    noise = RecordingNoise(seed=1)
    pending.release(noise)
    gumbel = noise.of("gumbel")
    assert len(gumbel) == k and all(d.values.size == CANDIDATES.size for d in gumbel)
    # exponential mechanism at epsilon_q on a score of sensitivity 1: Gumbel scale 2 / epsilon_q
    assert all(np.allclose(d.scale, 2.0 / math.sqrt(8.0 * rho / k)) for d in gumbel)


def test_pure_budget_splits_epsilon_evenly():
    X, y = _regression()
    pending = PendingDesign(X, y, False, True, 0.1).plan_pure(0.4)
    assert pending.epsilon_q == pytest.approx(0.4 / 14)
    assert pending.ledger.epsilon(1e-6) <= 0.4 * (1 + 1e-9)


def test_score_sensitivity_is_one_on_neighbouring_datasets():
    rng = np.random.default_rng(0)
    for level in (0.02, 0.5, 0.97):
        for _ in range(20):
            x = rng.lognormal(2.0, 2.0, 300) * rng.choice([-1, 1], 300)
            x2 = x.copy()
            x2[rng.integers(300)] = rng.choice([-1e9, 0.0, 1e9, rng.normal()])  # replace one record
            s, sens = _scores(*_counts(x), 300, level)
            s2, _ = _scores(*_counts(x2), 300, level)
            assert np.max(np.abs(s - s2)) / sens <= 1.0 + 1e-9


def test_interval_scores_are_the_best_score_of_a_grid_point_and_its_interval_and_keep_the_sensitivity():
    """A grid point stands for itself and the open interval next to it on the quantile's outer side: its score is at
    most its own and at most OpenDP's score of every point of that interval (brute force over the points between the
    values it holds), and 0 where the target rank lies between the values at or below the interval's lower end and
    those below its upper end. Over every replacement of one record from a small set of values (grid points, points
    between them, beyond the grid) no score moves by more than the sensitivity, and some move by all of it."""
    rng = np.random.default_rng(3)
    domain = np.r_[80.0, 100.0, 81.0, 99.0, 90.0, -1e9, 1e9, 0.0, 0.3]
    for level in (0.5, 0.25, 0.0123456789, 0.75, 0.97):
        x = rng.choice(domain, 40)
        scores, sensitivity = _interval_scores(*_counts(x), 40, level)
        own, _ = _scores(*_counts(x), 40, level)
        a, d = _level_parts(40, level)
        assert np.all(scores <= own)
        for k in (k for k in range(1, CANDIDATES.size - 1) if 0 < CANDIDATES[k] <= 125):  # near the values
            lo, hi = (CANDIDATES[k], CANDIDATES[k + 1]) if level <= 0.5 else (CANDIDATES[k - 1], CANDIDATES[k])
            inside = np.unique(np.r_[lo, hi, x[(x > lo) & (x < hi)]])
            points = (inside[:-1] + inside[1:]) / 2.0  # one point in each gap between the values inside
            assert scores[k] <= min(abs(d * int(np.sum(x < t)) - a * 40) for t in points)
            if scores[k] < own[k]:  # the interval's score: 0 exactly where its ranks reach the target
                assert (scores[k] == 0) == (np.sum(x <= lo) * d <= a * 40 <= np.sum(x < hi) * d)
        moved = 0.0
        for i in range(40):
            for v in domain:
                x2 = x.copy()
                x2[i] = v
                moved = max(moved, np.max(np.abs(_interval_scores(*_counts(x2), 40, level)[0] - scores)) / sensitivity)
        assert moved == pytest.approx(1.0)


def test_a_label_far_from_zero_beside_its_spread_gets_a_range_near_it_where_the_records_are_few():
    """Labels of 76-99 (a percentage, cpusmall's kind) lie between the grid points 80 and 100: every grid point
    alone scores nearly as the furthest, so over the grid points alone the median and the bounds landed anywhere
    (upper bounds up to 8e7 in these 30 draws, and held-out R^2 far below the constant's); standing for the interval
    between them, 80 and 100 score best, and the range stays within a few of the labels' widths of them."""
    rng = np.random.default_rng(0)
    n = 3000
    X = rng.uniform(-1, 1, (n, 4))
    y = np.clip(90 + 5 * (X @ [1.0, -1.0, 0.5, 0.0]) + 2 * rng.standard_normal(n), 0, 99)
    rho = 0.1 * zcdp_budget(1.0, 1 / n**2)
    for seed in range(30):
        b = PendingDesign(X, y, False, True, 0.1).plan_zcdp(rho).release(make_noise(seed)).bounds
        assert 0.0 <= b.label_low <= 80.0 and 100.0 <= b.label_high <= 160.0


@pytest.mark.parametrize("n", [1, 2, 7, 397, 2048, 12345])
def test_scores_from_counts_are_opendps_scores_of_the_data(n):
    """The scores computed from the counts below and above each grid point are, integer for integer, OpenDP's
    ``make_quantile_score_candidates`` on the values (exact and approximated fractions of the level, values on
    grid points and beyond the grid, ties)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    rng = np.random.default_rng(n)
    x = np.round(rng.standard_normal(n) * 10.0 ** rng.integers(-3, 9, n), 1)
    x[: n // 3] = CANDIDATES[rng.integers(0, CANDIDATES.size, n // 3)]
    for level in (0.5, 0.005, 0.0123456789, 0.25, 0.9629, 1.0 - 0.0123456789):
        t = dp.t.make_quantile_score_candidates(dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n),
                                                dp.symmetric_distance(), CANDIDATES.tolist(), level)
        expected = np.asarray(t(np.clip(x, CANDIDATES[0], CANDIDATES[-1]).tolist()), dtype=float)
        scores, sensitivity = _scores(*_counts(x), n, level)
        np.testing.assert_array_equal(scores, expected)
        assert sensitivity == float(t.map(2))


def test_bounds_bracket_the_quantiles_with_a_large_budget():
    X, y = _regression(n=20000)
    pending = PendingDesign(X, y, False, True, 0.5).plan_zcdp(1.0)
    design = pending.release(make_noise(3))
    b = design.bounds
    def index(v):
        return int(np.searchsorted(CANDIDATES, v))

    for j in range(3):  # within two grid steps (25% each) outside, or one inside, of the tail quantiles
        q_lo, q_hi = np.quantile(X[:, j], [pending.tail / 3, 1 - pending.tail / 3])
        Q_lo, Q_hi = np.quantile(X[:, j], [3 * pending.tail, 1 - 3 * pending.tail])
        assert index(q_lo) - 3 <= index(b.feature_low[j]) <= index(Q_lo) + 1
        assert index(Q_hi) - 1 <= index(b.feature_high[j]) <= index(q_hi) + 2
    assert b.label_low < np.median(y) < b.label_high
    assert design.clipped_values <= 4 * pending.tail * X.size


@pytest.mark.parametrize("quantiles,quartiles,declared,expected", [
    ((-320.0, 5.0), (-1.25, 1.25), None, (-5.0, 5.0)),  # an outer quantile far beyond: the fence caps it
    ((63.0, 100.0), (80.0, 320.0), None, (63.0, 100.0)),  # the quartiles apart on a coarse grid: the quantiles
    ((-2.0, 2.0), (50.0, 60.0), None, (-2.0, 2.0)),  # the two do not meet: the quantiles
    ((-320.0, 5.0), (-1.25, 1.25), (-400.0, 400.0), (-320.0, 5.0)),  # a declared range tightened: its quantiles
])
def test_the_label_range_is_the_outer_quantiles_capped_by_tukeys_fences(quantiles, quartiles, declared, expected):
    """The label's median-anchored outer quantiles (as a feature's) intersected with ``[Q1 - 1.5 IQR, Q3 + 1.5
    IQR]`` on its two quartiles; with a declared label range, the quantiles alone (the declaration caps them)."""
    from dpsparse.private_bounds import LABEL_FENCE

    assert LABEL_FENCE == 1.5
    pending = PendingDesign(np.zeros((10, 1)), np.zeros(10), False, True, 0.1)
    drawn = {"median of label": 0.0, "lower bound of label": quantiles[0], "upper bound of label": quantiles[1],
             "lower quartile of label": quartiles[0], "upper quartile of label": quartiles[1]}
    pending.tail, pending._quantile = 0.05, lambda counts, level, noise, name, anchor=None: drawn[name]
    assert pending._label_range(None, None, declared) == pytest.approx(expected)


@pytest.mark.filterwarnings("ignore::dpsparse.FixedSeedWarning")
def test_the_label_range_does_not_land_at_many_times_the_labels_where_the_records_are_few():
    """Near the refusal's edge (n = 3000, 4 features, epsilon 1: each selection may miss its rank by 23 % of the
    records) the label's outer quantiles landed at [-320, 5] for labels within [-6, 6] in 2 of 12 fits (a held-out
    R^2 of -8.9); its quartiles have a quarter of the records beyond them, and the fences stay near the labels."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (3000, 4))
    y = X @ [2.0, -1.0, 0.5, 0.0] + 0.1 * rng.standard_normal(3000)
    rho = 0.1 * zcdp_budget(1.0, 1 / 3000**2)
    for seed in range(12):
        b = PendingDesign(X, y, False, True, 0.1).plan_zcdp(rho).release(make_noise(seed)).bounds
        assert -12.0 < b.label_low < np.quantile(y, 0.25) and np.quantile(y, 0.75) < b.label_high < 12.0


@pytest.mark.filterwarnings("ignore::dpsparse.FixedSeedWarning")
def test_a_column_of_zeros_and_ones_keeps_its_ones_where_the_records_are_few_for_the_budget():
    """A one-hot column (30 % ones) and one half zeros, half in [5, 10]: the median lies at 0 or in the empty gap
    above it, 41-50 grid steps below the upper bound's quantile. The tie-break's slope must not outweigh the data
    over that way (n = 3000 and epsilon 1 with the default share, where the slope is below one noise scale): with
    the earlier four-decade slope the one-hot column's upper bound fell to about 1e-4 in 24 of these 30 draws."""
    n = 3000
    rng = np.random.default_rng(0)
    X = np.c_[(rng.random(n) < 0.3).astype(float), np.where(rng.random(n) < 0.5, rng.uniform(5.0, 10.0, n), 0.0)]
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    rho = 0.1 * zcdp_budget(1.0, 1.0 / n**2)
    highs = []
    for seed in range(30):
        b = PendingDesign(X, y, True, True, 0.1).plan_zcdp(rho).release(make_noise(seed)).bounds
        assert b.feature_low[0] <= 0.0 and b.feature_low[1] <= 0.0
        highs.append(b.feature_high)
    highs = np.array(highs)
    assert np.all(highs[:, 0] >= 1.0) and np.all(highs[:, 1] >= 6.3)  # the 99th percentiles: 1 and 9.9
    assert np.median(highs[:, 0]) <= 1.25 and np.median(highs[:, 1]) <= 12.5  # within a grid step or two


def test_estimator_composes_bounds_and_fit_in_zcdp():
    X, y = _regression(n=20000)
    budget = PrivacyBudget(1.0, 1e-6)
    est = DPLasso(epsilon=1.0, delta=1e-6, bounds="private", random_state=0, budget=budget).fit(X, y)
    rep = est.privacy_report_
    rho = zcdp_budget(1.0, 1e-6)
    assert rep.noise["bounds: share of the budget"] == 0.1
    assert rep.accountant_epsilon == pytest.approx(zcdp_epsilon(rho, 1e-6), rel=1e-9)
    assert rep.accountant_epsilon <= 1.0 + 1e-4 and rep.accounting_holds
    assert "differentially private quantiles" in rep.bounds_source and rep.bounds_public
    assert budget.spent[0][0] == 1.0  # the target (the accountant gives at most it)
    assert est.bounds_.label_low < est.bounds_.label_high
    assert est.score(X, y) > 0.9  # the signal survives (constant predictor: 0; public bounds: 0.97)


def test_estimator_basic_composition_for_a_mechanism_without_zcdp():
    X, y = _regression(n=20000)
    est = DPLasso(epsilon=1.0, delta=1e-6, bounds="private", mechanism="dp-sgd", max_iter=20,
                  random_state=0).fit(X, y)
    rep = est.privacy_report_
    assert rep.noise["bounds: budget"].startswith("epsilon=0.1")
    assert rep.accountant_epsilon <= 1.0 + 1e-9


def test_search_composes_the_bounds_in_its_event():
    rng = np.random.default_rng(0)
    X = rng.normal(0, 2, (6000, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=6000) > 0).astype(int)
    grid = {"mechanism": ["dp-gcd"], "max_iter": [10, 30]}
    s = DPSearchCV(DPLogisticRegression(bounds="private", classes=[0, 1]), grid, epsilon=1.0, delta=1e-6,
                   mean_repetitions=4, random_state=0).fit(X, y)
    rep = s.privacy_report_
    rho_b = 0.1 * zcdp_budget(1.0, 1e-6)
    acc = RdpAccountant()
    rho = rep.noise["zCDP budget of each candidate fit (rho)"]
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.ZCDpEvent(rho), 4.0, 1.0))
    acc.compose(dp_event.ZCDpEvent(rho))
    acc.compose(dp_event.ZCDpEvent(rho_b))
    assert rep.accountant_epsilon == pytest.approx(acc.get_epsilon(1e-6), rel=1e-9)
    assert rep.accountant_epsilon <= 1.0 + 1e-4
    assert s.score(X, y) > 0.8


def test_refusal_before_the_data_is_used():
    X, y = _regression(n=50)
    budget = PrivacyBudget(1.0, 1e-3)
    with pytest.raises(ValueError, match="too few"):
        DPLasso(bounds="private", budget=budget, random_state=0).fit(X, y)
    assert budget.spent == []
    with pytest.raises(ValueError, match="bounds_share"):
        DPLasso(bounds="private", bounds_share=1.5).fit(X, y)
    with pytest.raises(ValueError, match="bounds_share=0 buys nothing, but bounds='private' buys every range"):
        DPLasso(bounds="private", bounds_share=0, budget=budget).fit(X, y)
    assert budget.spent == []


def test_predictions_clip_features_to_the_model_bounds():
    X, y = _regression()
    est = DPLasso(bounds=data.Bounds([0, -50, 1e3], [1, 50, 5e3], -10, 20), random_state=0).fit(X, y)
    far = X[:5].copy()
    far[:, 1] = 1e6
    inside = far.copy()
    inside[:, 1] = 50.0
    assert np.allclose(est.predict(far), est.predict(inside))


def test_cli_buys_bounds_by_default_on_a_user_file(tmp_path):
    X, y = _regression(n=6000)
    csv = tmp_path / "d.csv"
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header="a,b,c,label", comments="")
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(csv), "--target", "label", "--seed", "0", "--out", str(out),
                 "--iterations", "20", "--loss", "squared"]) == 0
    model = json.loads(out.read_text())
    assert "differentially private quantiles" in model["privacy_report"]["bounds_source"]
    assert model["privacy_report"]["bounds_public"] and model["bounds"]["label_low"] is not None
    pred = tmp_path / "p.csv"
    assert main(["predict", "--model", str(out), "--data", str(csv), "--target", "label", "--out", str(pred)]) == 0
    assert len(pred.read_text().split()) == 6000


def test_cli_bounds_options_are_checked_before_reading(tmp_path, capsys):
    missing = tmp_path / "nothing.csv"  # never read: the checks come first
    assert main(["fit", "--data", str(missing), "--target", "y", "--bounds-share", "1"]) == 2
    assert "--bounds-share must be in [0, 1) or 'auto'" in capsys.readouterr().err
    assert main(["fit", "--data", str(missing), "--target", "y", "--bounds-share", "0"]) == 2
    assert "--bounds-share 0 buys nothing, but without --bounds or --schema" in capsys.readouterr().err
    assert main(["fit", "--data", str(missing), "--target", "y", "--bounds-from-data", "--bounds", "b.json"]) == 2
    assert "--bounds-from-data replaces declared bounds" in capsys.readouterr().err


def test_cli_bounds_from_data_says_no_guarantee(tmp_path, capsys):
    X, y = _regression(n=300)
    csv = tmp_path / "d.csv"
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header="a,b,c,label", comments="")
    assert main(["fit", "--data", str(csv), "--target", "label", "--bounds-from-data", "--seed", "0",
                 "--iterations", "5", "--out", str(tmp_path / "m.json")]) == 0
    shown = capsys.readouterr()
    # said once, with the remedy (the report's own words stay in the model file, not a second time on the terminal)
    assert (shown.out + shown.err).count("--bounds-from-data: the bounds are read off the private data, so the "
                                         "model has NO privacy guarantee") == 1
    assert (shown.out + shown.err).count(DATA_BOUNDS) == 1  # the headline's reason why no guarantee holds
    assert DATA_BOUNDS in json.loads((tmp_path / "m.json").read_text())["privacy_report"]["warnings"]


@pytest.mark.parametrize("n,epsilon", [(2000, 1.0), (20000, 0.5), (50000, 0.5)])
def test_the_automatic_share_is_the_smallest_that_affords_the_tightening(n, epsilon):
    """``bounds_share="auto"``: 0.1, or 0.2 where only 0.2 makes narrowing the declared bounds affordable (the
    public test ``private_bounds.affordable`` of n, p and the budget), and where neither does, the joint cuts' 0.05
    before the label range's 0.1; the report names the share, and the preprocessing and the fit together stay
    within epsilon."""
    from dpsparse.estimators import AUTO_BOUNDS_SHARES, BOUNDS_SHARE, JOINT_SHARE
    from dpsparse.private_bounds import affordable

    rng = np.random.default_rng(n)
    X = rng.uniform(-0.3, 0.3, (n, 8))
    y = X @ np.linspace(-1, 1, 8) + 0.1 * rng.standard_normal(n)
    bounds = data.Bounds(-np.ones(8), np.ones(8), -5.0, 5.0)
    est = DPLasso(epsilon=epsilon, bounds=bounds, max_iter=3, random_state=0).fit(X, y)
    rho = zcdp_budget(epsilon, 1.0 / n**2)
    affords = [s for s in AUTO_BOUNDS_SHARES if affordable(n, 8, False, rho=s * rho)]
    assert est.bounds_share_ == pytest.approx(affords[0] if affords else JOINT_SHARE + BOUNDS_SHARE)
    assert ("cut privately (joint cuts)" in est.bounds_.source) == (not affords)
    assert [affordable(n, 8, False, rho=s * rho) for s in AUTO_BOUNDS_SHARES] == {
        2000: [False, False], 20000: [False, True], 50000: [True, True]}[n]
    noise = est.privacy_report_.noise
    if affords:
        assert noise["bounds: share of the budget"] == affords[0]
        assert "tightened by differentially private quantiles" in est.bounds_.source
        spent, _ = card._plain_spending(json.loads(est.privacy_report_.to_json()))  # the label's range bought too
        assert any(w.startswith("the feature and label ranges, read from the records with noise") for w in spent)
    spent, whole = map(float, re.match(r"zCDP rho=([0-9.e-]+) of ([0-9.e-]+) ", noise["bounds: budget"]).groups())
    cost = float(re.search(r" cost ([0-9.e-]+) of epsilon", noise["bounds: budget"]).group(1))
    assert "for the bounds and the label range;" in noise["bounds: budget"]  # a regression's: both bought
    assert cost == pytest.approx(epsilon - zcdp_epsilon(whole - spent, 1.0 / n**2), abs=0.01)  # in epsilon's units
    assert spent == pytest.approx(est.bounds_share_ * whole, rel=1e-3) and whole == pytest.approx(rho, rel=1e-3)
    assert est.privacy_report_.accountant_epsilon <= epsilon * (1 + 1e-9)


# The joint tightening: declared ranges cut by two fractions shared by every feature (joint quantiles)

def _published(n=400, p=6, seed=0):
    """Right-skewed positive features declared on ranges far wider than most of their values (a published
    description's Min and Max), a label that follows the first feature."""
    rng = np.random.default_rng(seed)
    X = rng.lognormal(0.0, 0.6, (n, p)) * np.arange(1, p + 1)
    y = (np.log(X[:, 0]) + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y, data.Bounds(np.zeros(p), 12.0 * np.arange(1, p + 1))


@pytest.mark.parametrize("rho", [1e-3, 0.05])
def test_joint_cuts_ledger_and_noise_drawn_match_the_claim(rho):
    X, y, bounds = _published()
    pending = JointTighteningDesign(X, y, bounds, True, True, 0.05).plan_zcdp(rho)
    assert pending.n_quantiles == 2 and pending.ledger.zcdp() == pytest.approx(rho, rel=1e-12)
    noise = RecordingNoise(seed=1)
    pending.release(noise)
    gumbel = noise.of("gumbel")
    assert len(gumbel) == 2 and all(d.values.size == JOINT_GRID.size for d in gumbel)
    assert all(np.allclose(d.scale, 2.0 / math.sqrt(8.0 * rho / 2)) for d in gumbel)  # epsilon_q^2 / 8 each


@pytest.mark.parametrize("name", list(audit.joint_bounds_pairs()))
def test_joint_cuts_keep_their_sensitivity_on_neighbouring_datasets(name):
    ratio = audit.private_bounds_replay(audit.joint_bounds_pairs()[name], joint=True)
    assert 0.5 < ratio <= 1.0 + 1e-9  # the record moves the utilities by at most their sensitivity, 1


def test_joint_cuts_with_a_large_budget_are_the_brute_force_choice():
    rng = np.random.default_rng(3)
    n = 300
    X = np.column_stack([50 + 20 * rng.standard_normal(n), 50 + 8 * rng.standard_normal(n),
                         50 + 5 * rng.standard_normal(n), np.full(n, 5.0)])  # the first spreads widest
    y = (X[:, 0] > 50).astype(int)
    bounds = data.Bounds([0.0, 0.0, 0.0, 5.0], [100.0, 100.0, 100.0, 5.0])  # the last constant
    lo, hi = bounds.feature_low[:3], bounds.feature_high[:3]
    Z = (np.clip(X[:, :3], lo, hi) - lo) / (hi - lo)
    target = JOINT_TAIL * n
    # each cut's count: the feature with the most values beyond it (JOINT_ACROSS = 1)
    above = [abs(max(np.sum(Z[:, j] > g) for j in range(3)) - target) for g in JOINT_GRID]
    below = [abs(max(np.sum(Z[:, j] < 1 - g) for j in range(3)) - target) for g in JOINT_GRID]
    t, s = JOINT_GRID[int(np.argmin(above))], 1 - JOINT_GRID[int(np.argmin(below))]
    assert 0 < s < t < 1
    assert t != JOINT_GRID[int(np.argmin([abs(np.sum(Z > g) / 3 - target) for g in JOINT_GRID]))]  # not the mean's
    pending = JointTighteningDesign(X, y, bounds, True, True, 0.05).plan_pure(1e9)
    b = pending.release(make_noise(0)).bounds
    np.testing.assert_allclose(b.feature_low, np.r_[lo + s * (hi - lo), 5.0])
    np.testing.assert_allclose(b.feature_high, np.r_[hi - (1 - t) * (hi - lo), 5.0])
    assert pending.released == (s, t) and f"kept from {s:.1%} to {t:.1%} of its declared width" in b.source


def test_crossed_joint_cuts_keep_the_declared_ranges_and_say_so():
    X, y, bounds = _published(n=300, p=3)
    pending = JointTighteningDesign(X, y, bounds, True, True, 0.05).plan_pure(1e-9)  # the cuts: nearly uniform
    for seed in range(40):
        b = pending.release(make_noise(seed)).bounds
        if pending.released == (0.0, 1.0):
            break
    assert pending.released == (0.0, 1.0), "no crossing in 40 draws of a nearly uniform pair (probability < 1e-6)"
    np.testing.assert_array_equal(b.feature_low, bounds.feature_low)
    np.testing.assert_array_equal(b.feature_high, bounds.feature_high)
    assert "kept as declared" in b.source and "released: s = 0, t = 1" in pending.details()["bounds: joint cuts"]


def test_the_classifier_cuts_declared_ranges_jointly_where_no_quantile_of_each_feature_is_affordable():
    X, y, bounds = _published(n=400, p=30)
    est = DPLogisticRegression(epsilon=1.0, bounds=bounds, classes=[0, 1], random_state=0).fit(X, y)
    rep = est.privacy_report_
    assert est.bounds_share_ == JOINT_SHARE and rep.noise["bounds: selections"] == 2
    assert "cut privately (joint cuts)" in rep.bounds_source and rep.bounds_public
    assert rep.accountant_epsilon <= 1.0 + 1e-4 and rep.accounting_holds
    s, t = est.bounds_.feature_low[0] / 12.0, est.bounds_.feature_high[0] / 12.0
    assert s in 1 - JOINT_GRID and t in JOINT_GRID[:-1]  # the published ranges cut: t < 1
    np.testing.assert_allclose(est.bounds_.feature_high, t * bounds.feature_high)  # one fraction for every feature
    # a number given for the share is spent as given
    est = DPLogisticRegression(epsilon=1.0, bounds=bounds, classes=[0, 1], bounds_share=0.2, random_state=0).fit(X, y)
    assert est.privacy_report_.noise["bounds: share of the budget"] == 0.2


def _published_regression(n=2000, p=6, seed=0):
    """``_published``'s features, a continuous label that follows the first, declared within [-5, 5]."""
    X, _, bounds = _published(n, p, seed)
    y = np.log(X[:, 0]) + 0.3 * np.random.default_rng(seed + 1).standard_normal(n)
    return X, y, data.Bounds(bounds.feature_low, bounds.feature_high, -5.0, 5.0)


@pytest.mark.parametrize("rho", [1e-3, 0.05])
def test_a_regressions_cuts_and_label_range_ledger_and_noise_drawn_match_the_claim(rho):
    """``JointLabelDesign``: the cuts' two selections with a third of the share's rho (0.05 of 0.15), the label sums'
    Gaussian with the rest, composed in one ledger; the cuts first, the label range narrowed inside the declared
    one after them, each said once in the bounds' source."""
    X, y, bounds = _published_regression()
    pending = JointLabelDesign(X, y, bounds, True, 0.05, 0.1).plan_zcdp(rho)
    assert pending.share == pytest.approx(0.15) and pending.ledger.zcdp() == pytest.approx(rho, rel=1e-12)
    noise = RecordingNoise(seed=1)
    design = pending.release(noise)
    assert [d.family for d in noise.draws] == ["gumbel", "gumbel", "gaussian"]
    gumbel, (sums,) = noise.of("gumbel"), noise.of("gaussian")
    assert all(np.allclose(d.scale, 2.0 / math.sqrt(8.0 * (rho / 3) / 2)) for d in gumbel)  # epsilon_q^2 / 8 each
    assert sums.values.size == 2 and np.allclose(sums.scale, LABEL_SUMS_L2 / math.sqrt(2.0 * 2 * rho / 3))
    s, t = pending.released
    np.testing.assert_allclose(design.bounds.feature_high, bounds.feature_low + t * declared_widths(bounds))
    np.testing.assert_allclose(design.bounds.feature_low, bounds.feature_low + s * declared_widths(bounds))
    assert -5.0 <= design.bounds.label_low < design.bounds.label_high <= 5.0
    source = design.bounds.source
    assert source.count("cut privately (joint cuts)") == 1 and source.count("label range narrowed") == 1
    assert f"about {JOINT_TAIL_REGRESSION:.0%} of the values" in source  # a regression's tail: fewer values clipped
    details = pending.details()  # each part's own share: the cuts' 0.05, the label range's 0.1
    assert details["bounds: share of the budget"] == pytest.approx(0.05)
    assert details["label range: share of the budget"] == pytest.approx(0.1) and "label range: noise" in details
    pure = JointLabelDesign(X, y, bounds, True, 0.05, 0.1).plan_pure(0.3)
    assert pure.epsilon_q == pytest.approx(0.1 / 2) and pure.label.scale == pytest.approx(2.25 / 0.2)


def test_the_cuts_prefer_the_tightest_of_cuts_that_score_alike():
    """Every cut beyond the data counts no value: the utility falls by its public slope, half a noise scale, for each
    grid step away from the tightest cut, so each step further out is e^-0.5 times as likely; the slope is the same
    for neighbouring datasets (the sensitivity stays 1), and the design gives a classifier's cuts at the same budget
    the same slope where the estimators pass it none (from ``JOINT_SLOPE_BAND``)."""
    X, y, bounds = _published_regression(n=400)
    pending = JointLabelDesign(X, y, bounds, True, 0.05, 0.1).plan_zcdp(0.01)
    scale = 2.0 / pending.epsilon_q
    assert pending.slope == pytest.approx(JOINT_SLOPE * scale) and JOINT_SLOPE == 0.5
    flat = _joint_utility(np.zeros(JOINT_GRID.size), 4.0, pending.slope)
    np.testing.assert_allclose(np.exp(np.diff(flat) / scale), np.exp(-0.5))  # the Gumbel max's odds, step by step
    other = JointLabelDesign(X[::-1] * 0.5, -y, bounds, True, 0.05, 0.1).plan_zcdp(0.01)
    assert other.slope == pending.slope  # set by the budget alone: the same whatever the records
    classifier = JointTighteningDesign(X, (y > 0).astype(int), bounds, True, True, 0.05).plan_zcdp(0.01 / 3)
    assert classifier.epsilon_q == pytest.approx(pending.epsilon_q) and classifier.slope == pytest.approx(pending.slope)


@pytest.mark.parametrize("epsilon, slope", [(1.0, 0.0), (1.6, 0.0), (1.8, JOINT_SLOPE)])
def test_a_classifiers_cuts_take_the_tie_break_from_its_band(epsilon, slope):
    """A classifier's cuts take the tie-break from ``n epsilon = JOINT_SLOPE_BAND log p`` (400 records on 30
    features: epsilon 1.7); a regressor's at any epsilon. Public inputs only: the records do not enter."""
    X, y, bounds = _published(n=400, p=30)
    assert 400 * 1.6 / np.log(30) < JOINT_SLOPE_BAND <= 400 * 1.8 / np.log(30)
    budget = (epsilon, 1e-6, True, None)
    est = DPLogisticRegression(epsilon=epsilon, bounds=bounds, classes=[0, 1])
    for records in (X, X[::-1] * 0.5):
        assert est._joint(records, np.where(y == 1, 1.0, -1.0), bounds, budget).slope_scales == slope
    Xr, yr, declared = _published_regression(n=400, p=30)
    assert DPLasso(epsilon=epsilon, bounds=declared)._joint(Xr, yr, declared, budget).slope_scales == JOINT_SLOPE
    said = est.fit(X, y).privacy_report_.noise["bounds: joint cuts"]  # the fit's own epsilon, and the report says so
    assert ("0.5 noise scales less for each grid step from the tightest cut" in said) == (slope > 0)


def test_the_regressor_cuts_declared_ranges_jointly_before_narrowing_its_label_range():
    X, y, bounds = _published_regression()
    noise = audit.LedgerNoise(0)
    est = DPLasso(epsilon=1.0, bounds=bounds, random_state=noise).fit(X, y)
    rep = est.privacy_report_
    assert est.bounds_share_ == pytest.approx(JOINT_SHARE + BOUNDS_SHARE) and rep.noise["bounds: selections"] == 2
    assert "cut privately (joint cuts)" in rep.bounds_source and "label range narrowed" in rep.bounds_source
    assert rep.accountant_epsilon <= 1.0 + 1e-9 and audit.check_log(noise.log, rep).holds  # every draw charged
    t = est.bounds_.feature_high[0] / 12.0
    assert t in JOINT_GRID[:-1]  # the published ranges cut
    spent, _ = card._plain_spending(json.loads(rep.to_json()))  # the card's words: each part its own share, 15 %
    assert any(w.startswith("cuts of the declared feature ranges, chosen from the records with noise (5% of the")
               for w in spent) and any(w.startswith("the label range, narrowed") and "(10% of the" in w for w in spent)
    # a number given for the share is the whole, split as "auto" splits it; with a clip given, the cuts alone
    est = DPLasso(epsilon=1.0, bounds=bounds, bounds_share=0.3, random_state=0).fit(X, y)
    assert est.bounds_share_ == pytest.approx(0.3) and est.privacy_report_.noise[
        "label range: share of the budget"] == pytest.approx(0.2)
    est = DPLasso(epsilon=1.0, bounds=bounds, clip=1.0, random_state=0).fit(X, y)
    assert est.bounds_share_ == JOINT_SHARE and "label range: noise" not in est.privacy_report_.noise
    assert "cut privately (joint cuts)" in est.privacy_report_.bounds_source
    assert est.privacy_report_.noise["bounds: budget"].count("for the bounds;") == 1  # no label range bought
    # where they were not measured: without an intercept, on more than JOINT_MAX_FEATURES features
    est = DPLasso(epsilon=1.0, bounds=bounds, fit_intercept=False, random_state=0).fit(X, y)
    assert "bounds: joint cuts" not in est.privacy_report_.noise and est.bounds_share_ == BOUNDS_SHARE
    wide = np.tile(X, (1, JOINT_MAX_FEATURES // X.shape[1] + 1))
    reg = data.Bounds(0.0, 12.0 * X.shape[1], -5.0, 5.0)
    est = DPLasso(epsilon=1.0, bounds=reg, random_state=0).fit(wide, y)
    assert "bounds: joint cuts" not in est.privacy_report_.noise


def test_the_joint_cuts_are_the_same_on_sparse_input():
    X, y, bounds = _published(n=400, p=30)
    X = np.where(X > np.median(X, axis=0), X, 0.0)  # half of each feature's values stored
    dense = DPLogisticRegression(bounds=bounds, classes=[0, 1], random_state=0).fit(X, y)
    sparse = DPLogisticRegression(bounds=bounds, classes=[0, 1], random_state=0).fit(sp.csr_matrix(X), y)
    assert "bounds: joint cuts" in sparse.privacy_report_.noise
    np.testing.assert_array_equal(sparse.bounds_.feature_high, dense.bounds_.feature_high)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)


def test_the_joint_cuts_are_not_bought_where_they_were_not_measured():
    X, y, bounds = _published(n=400, p=30)
    with_norm = data.Bounds(bounds.feature_low, bounds.feature_high, row_norm=2.0)
    assert "bounds: budget" not in DPLogisticRegression(bounds=with_norm, classes=[0, 1], random_state=0).fit(
        X, y).privacy_report_.noise
    wide = np.tile(X, (1, 2))[:, :JOINT_MAX_FEATURES + 1]
    rep = DPLogisticRegression(bounds=data.Bounds(0.0, 500.0), classes=[0, 1], random_state=0).fit(
        wide, y).privacy_report_
    assert "bounds: budget" not in rep.noise
    rep = DPLogisticRegression(bounds=data.Bounds(0.0, 500.0), classes=[0, 1], random_state=0).fit(
        wide[:, :JOINT_MAX_FEATURES], y).privacy_report_
    assert "bounds: joint cuts" in rep.noise
    reg = data.Bounds(bounds.feature_low, bounds.feature_high, -5.0, 5.0)
    rep = DPLasso(bounds=reg, clip=1.0, random_state=0).fit(X, np.log(X[:, 0])).privacy_report_
    assert rep.mechanism == "constant" and "bounds: budget" not in rep.noise  # nothing read, nothing to cut
    # at epsilon 0.1 each of 400 records' selections could miss by more than JOINT_MAX_ERROR of them: nearly uniform
    rep = DPLogisticRegression(epsilon=0.1, bounds=bounds, classes=[0, 1], random_state=0).fit(X, y).privacy_report_
    assert "bounds: budget" not in rep.noise
    # bounds_share=0: the declared ranges as they are, nothing spent on them
    est = DPLogisticRegression(bounds=bounds, classes=[0, 1], bounds_share=0, random_state=0).fit(X, y)
    assert "bounds: budget" not in est.privacy_report_.noise and est.bounds_share_ == 0.0
    np.testing.assert_array_equal(est.bounds_.feature_high, bounds.feature_high)
    reg = data.Bounds(bounds.feature_low, bounds.feature_high, -5.0, 5.0)  # nor the label range of clip="auto"
    lasso = DPLasso(bounds=reg, bounds_share=0, random_state=0).fit(X, np.log(X[:, 0]))
    assert "label range: share of the budget" not in lasso.privacy_report_.noise and lasso.label_range_ == (-5.0, 5.0)
    # a model through the origin keeps the origin in its ranges
    est = DPLogisticRegression(bounds=bounds, classes=[0, 1], fit_intercept=False, random_state=0).fit(X, y)
    assert "bounds: budget" not in est.privacy_report_.noise


def test_the_private_search_buys_the_cuts_once_for_its_candidates():
    """``DPSearchCV`` cuts declared ranges jointly where a single fit would, before its candidates, inside its
    epsilon: the cuts' zCDP first, the search's candidates and scores with the rest (``search_zcdp``'s
    ``bounds_rho``); every candidate fits the cut ranges; the logged draws match the report."""
    X, y, bounds = _published(n=400, p=30)
    noise = audit.LedgerNoise(0)
    search = DPSearchCV(DPLogisticRegression(bounds=bounds, classes=[0, 1]), {"max_iter": [10, 20]}, epsilon=1.0,
                        repetitions="each", random_state=noise).fit(X, y)
    rep = search.privacy_report_
    assert rep.noise["bounds: selections"] == 2 and "cut privately (joint cuts)" in rep.bounds_source
    assert rep.accounting_holds and rep.accountant_epsilon <= 1.0 + 1e-4
    cuts = noise.log[:2]  # drawn first, before the split and any candidate
    assert [d.name for d in cuts] == ["upper cut of the declared ranges", "lower cut of the declared ranges"]
    rho, delta = zcdp_budget(1.0, 1 / 400**2), 1 / 400**2
    eps_q = math.sqrt(8.0 * JOINT_SHARE * rho / 2)
    assert all(np.allclose(d.scale, 2.0 / eps_q) for d in cuts)  # each eps_q-DP: eps_q^2 / 8-zCDP
    # the search's own draws take what the cuts leave: its validation score's noise grows as 1 / sqrt(rho)
    declared = audit.LedgerNoise(0)
    DPSearchCV(DPLogisticRegression(bounds=bounds, classes=[0, 1], bounds_share=0), {"max_iter": [10, 20]},
               epsilon=1.0, repetitions="each", random_state=declared).fit(X, y)
    [with_cuts], [without] = ([d.scale for d in log if d.name == "validation score"][:1] for log in (noise.log,
                                                                                                    declared.log))
    left = search_zcdp(1.0, delta, 2, bounds_rho=2 * eps_q**2 / 8, each=True)
    assert with_cuts / without == pytest.approx(math.sqrt(search_zcdp(1.0, delta, 2, each=True) / left), rel=1e-3)


def test_the_joint_cuts_are_the_same_on_a_dask_array():
    da = pytest.importorskip("dask.array")
    X, y, bounds = _published(n=400, p=30)
    dense = DPLogisticRegression(bounds=bounds, classes=[0, 1], mechanism="dp-gd", random_state=0).fit(X, y)
    lazy = DPLogisticRegression(bounds=bounds, classes=[0, 1], mechanism="dp-gd", random_state=0).fit(
        da.from_array(X, chunks=(97, 30)), da.from_array(y, chunks=97))
    assert "bounds: joint cuts" in lazy.privacy_report_.noise
    np.testing.assert_array_equal(lazy.bounds_.feature_low, dense.bounds_.feature_low)
    np.testing.assert_array_equal(lazy.bounds_.feature_high, dense.bounds_.feature_high)


def test_nan_on_a_dask_array_is_refused_before_the_joint_cuts_charge_anything():
    da = pytest.importorskip("dask.array")
    X, y, bounds = _published(n=400, p=30)
    X[5, 3] = np.nan
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(ValueError, match="NaN or infinity"):
        DPLogisticRegression(bounds=bounds, classes=[0, 1], mechanism="dp-gd", budget=budget, delta=1e-5,
                             random_state=0).fit(da.from_array(X, chunks=(97, 30)), da.from_array(y, chunks=97))
    assert budget.spent == []


def test_the_joint_cuts_are_affordable_where_a_selection_misses_by_at_most_half_the_records():
    """``2 ln K / (epsilon_q n) <= JOINT_MAX_ERROR`` with ``epsilon_q = sqrt(8 rho / 2)``: the largest error the
    study measured."""
    rho, n = 1e-3, 400
    edge = 2.0 * math.log(JOINT_GRID.size) / (math.sqrt(4.0 * rho) * JOINT_MAX_ERROR)  # 175.4 records
    assert joint_affordable(1.001 * edge, rho=rho) and not joint_affordable(0.999 * edge, rho=rho)
    assert joint_affordable(n, epsilon=2 * 2.0 * math.log(JOINT_GRID.size) / (JOINT_MAX_ERROR * n))  # pure: eps/2
    assert not joint_affordable(n, epsilon=0.99 * 2 * 2.0 * math.log(JOINT_GRID.size) / (JOINT_MAX_ERROR * n))


@pytest.mark.slow
def test_the_joint_cuts_stay_within_their_claim_and_their_mutant_is_caught():
    pair = audit.joint_bounds_pairs()["a record that tips the cuts"]
    eps = audit.TIPPING_EPSILON
    real = audit.private_bounds_audit(pair, epsilon=eps, runs=1000, joint=True)  # 0.27; the x0.1 mutant 4.23
    mutant = audit.private_bounds_audit(pair, epsilon=eps, runs=1000, noise_factor=0.1, joint=True)
    assert real.epsilon_lower_bound <= eps < mutant.epsilon_lower_bound
