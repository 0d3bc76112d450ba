import json
import math

import numpy as np
import pytest
from scipy.special import comb

from dpsparse import accounting
from dpsparse.accounting import Ledger, PrivacyReport, calibrate, check_privacy_params


def test_single_laplace_mechanism_is_sensitivity_over_scale_dp():
    eps = Ledger().laplace(scale=2.0, sensitivity=0.5).epsilon(1e-12)
    assert eps == pytest.approx(0.25, abs=2e-3)
    assert eps >= 0.25 - 1e-9


def _optimal_composition_delta(eps0, k, eps):
    """Exact delta of k-fold composition of eps0-DP mechanisms (Kairouz, Oh & Viswanath 2015, Thm 3.3)."""
    return sum(comb(k, i) * max(0.0, math.exp((k - i) * eps0) - math.exp(eps + i * eps0))
               for i in range(k + 1)) / (1 + math.exp(eps0)) ** k


@pytest.mark.parametrize("eps0,k,eps", [(0.1, 50, 1.0), (0.5, 10, 2.0), (0.05, 200, 1.2)])
def test_pure_dp_composition_matches_the_optimal_composition_theorem(eps0, k, eps):
    delta = _optimal_composition_delta(eps0, k, eps)
    got = Ledger().pure(eps0, k).epsilon(delta)
    assert got >= eps - 1e-6  # an upper bound on the true epsilon ...
    assert got <= eps + 0.02  # ... and a tight one


def test_composition_adds_up():
    one = Ledger().pure(0.3).epsilon(1e-9)
    two = Ledger().pure(0.3).pure(0.2).epsilon(1e-9)
    assert one == pytest.approx(0.3, abs=1e-3)
    assert two == pytest.approx(0.5, abs=2e-3)


def test_calibrate_finds_the_smallest_scale():
    make = lambda s: Ledger().laplace(s, 1.0, 20)  # noqa: E731
    for target in [0.5, 2.0]:
        for start in [0.01, 1.0, 1000.0]:
            s = calibrate(make, target, 1e-6, start)
            assert make(s).epsilon(1e-6) <= target  # certified on the fine grid
            # the smallest on the coarse one, within the search's stop (epsilon falls as 1 / s)
            assert make(s / (1 + 2e-4 + accounting.CLOSE_ENOUGH)).epsilon(1e-6, coarse=True) > target
            assert make(s / 1.002).epsilon(1e-6) > target  # within the grids' gap of the fine grid's smallest


def test_calibrate_refuses_a_target_that_releases_of_fixed_noise_already_spend():
    """A Gaussian release of multiplier 1 is (4.9, 1e-6)-DP on its own: no scale of the steps after it meets 1 (the
    search widens to ``_NO_SCALE``, then refuses); a target that small noise meets is still found."""
    make = lambda s: Ledger().gaussian(1.0, 1.0).gaussian(s, 1.0, 5)  # noqa: E731
    with pytest.raises(ValueError, match="no noise scale meets the privacy target 1: .* already spend"):
        calibrate(make, 1.0, 1e-6, 1.0)
    assert make(calibrate(make, 6.0, 1e-6, 1.0)).epsilon(1e-6) <= 6.0


@pytest.mark.parametrize("eps,delta,match", [
    (0.0, 1e-5, "epsilon"), (-1.0, 1e-5, "epsilon"), (np.inf, 1e-5, "epsilon"), (np.nan, 1e-5, "epsilon"),
    (1.0, 0.0, "delta"), (1.0, 1.0, "delta"), (1.0, -0.1, "delta"), ("1", 1e-5, "epsilon"),
])
def test_invalid_budgets(eps, delta, match):
    with pytest.raises(ValueError, match=match):
        check_privacy_params(eps, delta)


def test_report_prints_and_serializes():
    rep = PrivacyReport(mechanism="m", calibration="tight", epsilon=1.0, delta=1e-5, accountant_epsilon=0.99,
                        iterations=3, noise={"scale": np.float64(0.5)}, clipped={"feature values": 2})
    d = json.loads(rep.to_json())
    assert d["accounting_holds"] is True and d["noise"]["scale"] == 0.5
    assert "(1, 1e-05)-differentially private" in str(rep)
    said = " ".join(str(rep).split())  # what the guarantee means, in words: the odds e^epsilon and delta
    assert "meaning What it means for a person in the data" in said and "at most e^1 = 2.72 times as likely" in said
    assert "plus a probability of at most 1e-05" in said
    rep.bounds_public = False
    assert not rep.accounting_holds and "NO differential-privacy guarantee" in str(rep)
    assert "nothing can be promised" in str(rep) and "2.72 times" not in str(rep)
    rep.bounds_public, rep.accountant_epsilon = True, 1.5
    assert not rep.accounting_holds


def test_the_holders_clipped_counts_stay_in_the_process():
    """Counted on the private data without noise: in no released form, a pickle (of an estimator) or a copy."""
    import copy
    import dataclasses
    import pickle

    rep = PrivacyReport(mechanism="m", calibration="tight", epsilon=1.0, delta=1e-5, accountant_epsilon=0.99,
                        iterations=3, noise={}, clipped={"feature values": 3497, "labels": 199})
    assert rep.clipped["labels"] == 199
    for shown in (str(rep), repr(rep), rep.to_json(), str(dataclasses.asdict(rep))):
        assert "3497" not in shown and "199" not in shown
    for again in (pickle.loads(pickle.dumps(rep)), copy.deepcopy(rep), copy.copy(rep)):
        assert again.clipped == {} and again == rep  # the counts take no part in equality


def _gdp_delta(mu, eps):
    """Exact delta(eps) of mu-GDP (Dong, Roth & Su 2022, Corollary 2.13)."""
    from scipy.stats import norm
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("T,m", [(1, 1.0), (50, 10.0), (400, 20.0)])
def test_gaussian_steps_are_gdp_with_exact_epsilon(T, m):
    """T Gaussian steps with noise/sensitivity m are sqrt(T)/m-GDP: exact (epsilon, delta)."""
    mu, eps = math.sqrt(T) / m, 1.0
    delta = _gdp_delta(mu, eps)
    ledger = Ledger().gaussian(sigma=3.0 * m, sensitivity=3.0, count=T)
    got = ledger.epsilon(delta)
    assert got == pytest.approx(eps, abs=1e-8)
    assert ledger.accountant == "gaussian"
    assert ledger._pld_epsilon(delta) >= got - 1e-9 and ledger._rdp_epsilon(delta) >= got  # both looser


def test_exponential_mechanism_is_composed_as_zcdp():
    """Many small exponential mechanisms: eps^2/8-zCDP beats their pure-DP bound."""
    ledger = Ledger().exponential(0.05, 400)
    eps = ledger.epsilons(1e-6)
    assert ledger.epsilon(1e-6) == min(eps.values()) and ledger.accountant == "rdp"
    pure = Ledger().pure(0.05, 400).epsilon(1e-6)
    assert eps["rdp"] < pure
    # rho = 400 * 0.05^2 / 8; RDP -> (eps, delta) is at most rho + 2 sqrt(rho log(1/delta))
    rho = 400 * 0.05**2 / 8
    assert eps["rdp"] <= rho + 2 * math.sqrt(rho * math.log(1e6))


def test_poisson_subsampled_gaussian_at_full_sampling_is_a_gaussian_with_twice_the_contribution():
    full = Ledger().poisson_gaussian(1.0, sigma=4.0, contribution=1.0, count=10).epsilon(1e-6)
    plain = Ledger().gaussian(sigma=4.0, sensitivity=2.0, count=10).epsilon(1e-6)
    assert full == pytest.approx(plain, rel=2e-3)
    sub = Ledger().poisson_gaussian(0.01, sigma=4.0, contribution=1.0, count=10).epsilon(1e-6)
    assert sub < full / 5  # amplification by subsampling
    assert "rdp" not in Ledger().poisson_gaussian(0.01, 4.0, 1.0).epsilons(1e-6)


def test_budget_refuses_an_overdraft_and_charges_nothing():
    from dpsparse.accounting import BudgetExceededError, PrivacyBudget

    budget = PrivacyBudget(1.0, 1e-5)
    budget.spend(0.6, 5e-6, "first")
    with pytest.raises(BudgetExceededError, match="second asks for.*: epsilon exceeded$"):
        budget.spend(0.5, 1e-6, "second")
    with pytest.raises(BudgetExceededError, match="third asks for.*: delta exceeded .*smaller delta="):
        budget.spend(0.1, 6e-6, "third")
    assert budget.remaining == pytest.approx((0.4, 5e-6))
    budget.spend(0.4, 5e-6)
    with pytest.raises(BudgetExceededError):
        budget.spend(1e-9, 1e-12)


def test_huge_per_step_epsilons_do_not_overflow():
    ledger = Ledger().exponential(900.0, 3).gaussian(1.0, 1.0, 2)
    eps = ledger.epsilon(1e-6)
    assert math.isfinite(eps) and eps > 1000 and ledger.accountant == "rdp"


@pytest.mark.parametrize("sampling", [1.0, 0.01])
@pytest.mark.parametrize("m", [0.0026, 0.05, 0.5])
def test_a_gaussian_steps_pld_spans_a_bounded_number_of_grid_points(m, sampling):
    """The grid follows the loss's reach (``_loss_span``), so a step's PLD has a bounded number of points whatever its
    multiplier (dp-accounting's tails reach about 20 spans): with ``1 / m`` alone a step of multiplier 0.0026 spanned
    10^6 to 4 10^6 points (80 s to build and compose in DP-SGD's calibration at epsilon 1000)."""
    ledger = Ledger().poisson_gaussian(sampling, sigma=m, contribution=1.0, count=1)
    kind, _, params = ledger.events[0]
    grid = max(accounting._PLD_COARSE, accounting._loss_span(kind, params) / accounting._PLD_POINTS)
    pld = ledger._pld_step(kind, params, grid)
    assert pld._pmf_remove.size <= 20 * accounting._PLD_POINTS  # dp-accounting's PMF, private attribute

@pytest.mark.parametrize("multiplier", [0.3, 1.24, 10.0])
@pytest.mark.parametrize("q", [0.001, 0.1, 1.0])
def test_the_subsampled_gaussians_pld_is_dp_accountings(multiplier, q):
    """The vectorized inverse privacy loss gives dp-accounting's replace-one PLD of a Poisson-subsampled Gaussian:
    the inverse equal to its per-point one, the PMF to rounding (the connect-the-dots differences amplify a last-bit
    change of a delta about 1,000 times on this grid), the epsilon to 1e-10."""
    from dp_accounting import privacy_accountant
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld import privacy_loss_mechanism as plm

    loss = plm.GaussianPrivacyLoss(multiplier, sampling_prob=q, adjacency_type=plm.AdjacencyType.REPLACE)
    bounds = loss.connect_dots_bounds()
    eps = np.r_[np.linspace(bounds.epsilon_lower, bounds.epsilon_upper, 301), 0.0]
    want = np.array([loss.inverse_privacy_loss(e) for e in eps])
    # where the inverse crosses 0 both forms cancel terms of size multiplier^2 (each is within 1.5e-10 relative of
    # a 40-digit evaluation there, and they differ by 5.6e-12 at multiplier 10 with dp-accounting 0.6)
    np.testing.assert_allclose(accounting._replace_inverse_loss(eps, multiplier, q), want, rtol=1e-12,
                               atol=1e-13 * multiplier**2)
    ours = accounting._poisson_gaussian_pld(multiplier, q, 1e-3)
    theirs = pld.from_gaussian_mechanism(multiplier, sampling_prob=q, value_discretization_interval=1e-3,
                                         neighboring_relation=privacy_accountant.NeighboringRelation.REPLACE_ONE)
    a, b = ours._pmf_remove.to_dense_pmf(), theirs._pmf_remove.to_dense_pmf()  # dp-accounting's PMFs (private)
    assert a._lower_loss == b._lower_loss and a._probs.size == b._probs.size
    np.testing.assert_allclose(a._probs, b._probs, rtol=0, atol=1e-12)
    for delta in (1e-5, 1e-9):
        assert ours.get_epsilon_for_delta(delta) == pytest.approx(theirs.get_epsilon_for_delta(delta), rel=1e-10)


def test_sampling_with_replacement_bound():
    # one index drawn from one record: always present once, a Gaussian of sensitivity 2 * contribution
    exact = Ledger().replacement_gaussian(1, 1, sigma=4.0, contribution=1.0, count=10).epsilon(1e-6)
    assert exact == pytest.approx(Ledger().gaussian(4.0, 2.0, 10)._rdp_epsilon(1e-6), rel=1e-9)
    # rarer participation: less privacy loss; never below the Poisson accountant at the same rate
    eps = [Ledger().replacement_gaussian(1000, m, 8.0, 1.0, 50).epsilon(1e-6) for m in (1, 10, 100)]
    assert eps[0] < eps[1] < eps[2] < exact * 10
    assert eps[1] >= Ledger().poisson_gaussian(0.01, 8.0, 1.0, 50).epsilon(1e-6)
    # after a Gaussian release (an automatic clipping norm): the RDP curves add, here those of 11 equal Gaussians
    assert Ledger().gaussian(4.0, 2.0).replacement_gaussian(1, 1, 4.0, 1.0, 10).epsilon(1e-6) == pytest.approx(
        Ledger().gaussian(4.0, 2.0, 11)._rdp_epsilon(1e-6), rel=1e-9)
    with pytest.raises(ValueError, match="only with events of its own kind"):
        Ledger().replacement_gaussian(100, 5, 8.0, 1.0).exponential(1.0).epsilon(1e-6)


@pytest.mark.parametrize("eps_of_scale,evaluations", [
    (lambda s: 3.0 / s**2 + 0.1 / s, 8),  # smooth: the secant steps close the bracket quickly
    (lambda s: float(np.ceil(40.0 / s)) / 20.0, 40),  # a staircase: falls back to bisection, still a bracket
])
def test_the_calibration_search_returns_a_bracket_of_the_target(eps_of_scale, evaluations):
    from dpsparse.accounting import _bisect

    calls = []

    def counted(s):
        calls.append(s)
        return eps_of_scale(s)

    lo, hi = _bisect(counted, 1.0, 0.5, 40.0, 1e-4)
    assert eps_of_scale(lo) > 1.0 >= eps_of_scale(hi) and hi / lo <= 1.0 + 1e-4
    assert len(set(calls)) == len(calls) <= evaluations  # each scale evaluated once


def test_the_calibration_search_stops_once_epsilon_is_close_enough_below_the_target():
    """With ``enough``, a scale whose epsilon lies in ``[1 - enough, 1]`` of the target ends the search: it meets the
    target, and it costs fewer evaluations (each a PLD composition) than closing the bracket to ``rtol``."""
    from dpsparse.accounting import _bisect

    def eps_of_scale(s):
        calls.append(s)
        return 3.0 / s**1.7 + 0.1 / s

    calls = []
    full = _bisect(eps_of_scale, 1.0, 0.5, 40.0, 1e-4)[1]
    n_full, calls = len(calls), []
    hi = _bisect(eps_of_scale, 1.0, 0.5, 40.0, 1e-4, enough=2e-4)[1]
    assert 1.0 - 2e-4 <= eps_of_scale(hi) <= 1.0 and hi >= full
    assert len(calls) - 1 < n_full


@pytest.mark.parametrize("make,delta,keeps_coarse", [
    (lambda: Ledger().poisson_gaussian(141 / 20000, 2.52, 1.0, 1000), 1e-9, False),  # the coarse grid is 0.27% loose
    (lambda: Ledger().gaussian(30.0, 1.0).poisson_gaussian(0.01, 1.5, 1.0, 300), 1e-9, True),  # 0.04%: kept
    (lambda: Ledger().laplace(300.0, 1.0, 200), 1e-8, False),  # 1%
])
def test_the_fine_epsilon_is_within_a_thousandth_of_the_finest_grids(make, delta, keeps_coarse):
    """The grid ``epsilon`` picks (``_fine_grid``) is as tight as the finest one to 0.1%, the coarse one itself where
    that is already so (no finer PLD built), and never looser than the coarse grid."""
    ledger = make()
    finest = ledger._pld_epsilon(delta, 2e-5)
    got = ledger.epsilon(delta)
    coarse = ledger.epsilon(delta, coarse=True)
    assert ledger.accountant == "pld"
    assert got <= finest * (1 + 1e-3) and got <= coarse
    assert (ledger._fine_grid(delta, coarse) == accounting._PLD_COARSE) == keeps_coarse


def test_a_ledger_with_pure_steps_keeps_the_finest_grid():
    """Randomized response's point masses follow no square law in the grid's width: no extrapolation for them."""
    ledger = Ledger().pure(0.01, 100).laplace(150.0, 1.0, 100)
    assert ledger._fine_grid(1e-9, ledger.epsilon(1e-9, coarse=True)) == accounting._PLD_DISCRETIZATION


def test_calibrate_on_a_grid_that_moves_with_the_scale_meets_the_target_tightly():
    """Laplace steps: the fine grid is chosen per scale, yet the returned scale is certified and within 0.1%."""
    make = lambda s: Ledger().laplace(s, 1.0, 200)  # noqa: E731
    s = calibrate(make, 0.5, 1e-8, 1.0)
    assert 0.5 * (1 - 1e-3) <= make(s).epsilon(1e-8) <= 0.5


def test_a_small_epsilon_gets_the_zcdp_budget_of_the_closed_form_conversion():
    """Below about 0.0116 (at delta 2.5e-9) dp-accounting's RDP conversion of zCDP levels off (its largest order is
    too small); Bun & Steinke's rho + 2 sqrt(rho log(1/delta)) keeps falling, and the budget is its root."""
    from dpsparse.accounting import epsilon_of_zcdp, zcdp_budget, zcdp_epsilon

    rho = zcdp_budget(0.01, 2.5e-9)
    assert zcdp_epsilon(rho, 2.5e-9) <= 0.01
    root = (math.sqrt(math.log(1 / 2.5e-9) + 0.01) - math.sqrt(math.log(1 / 2.5e-9))) ** 2  # rho + 2 sqrt(rho L) = 0.01
    assert rho == pytest.approx(root, rel=2e-4) and epsilon_of_zcdp(root, 2.5e-9) == pytest.approx(0.01)
    assert zcdp_budget(1.0, 1e-6) == pytest.approx(0.024355, rel=1e-4)  # where the RDP conversion is the tighter


def test_a_pure_dp_ledger_is_bounded_by_its_sum_below_the_grid():
    """One Laplace step of epsilon 1e-5 rounds up to about 3.9e-5 on the PLD's grid; basic composition gives 1e-5."""
    from dpsparse.accounting import BASIC

    ledger = Ledger().laplace(1e5, 1.0)
    assert ledger.epsilon(1e-9) == pytest.approx(1e-5) and ledger.accountant == BASIC
    assert Ledger().laplace(2.0, 1.0, 20).epsilons(1e-6)[BASIC] == pytest.approx(10.0)
    assert Ledger().laplace(2.0, 1.0, 20).epsilon(1e-6) < 10.0  # the PLD's, tighter for many steps


def test_odds_in_words_keep_the_digits_a_small_epsilon_moves():
    from dpsparse.accounting import odds

    assert odds(1e-6) == "e^1e-06 = 1.000001" and odds(1.0) == "e^1 = 2.72" and odds(0.1) == "e^0.1 = 1.105"
    assert odds(800) == "e^800"  # beyond a float: the power alone


def test_the_report_glosses_the_noise_multiplier_where_a_line_uses_it():
    from dpsparse.accounting import MULTIPLIER_WORDS

    def report(noise):
        return str(PrivacyReport(mechanism="m", calibration="tight", epsilon=1.0, delta=1e-6, accountant_epsilon=1.0,
                                 iterations=3, noise=noise))

    assert f"terms              {MULTIPLIER_WORDS}" in report({"stage 2: noise multiplier": 2.5})
    assert "terms" not in report({"laplace scale": 2.0})
    shares = report({"bounds: share of the budget": 0.05, "label range: share of the budget": 0.1})
    assert shares.count("terms  ") == 1 and "share of the budget: of the zCDP budget rho" in shares
