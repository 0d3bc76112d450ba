"""DP-SGD and one-pass noisy SGD: sensitivities, noise drawn, calibration, utility.

One-pass noisy SGD: Arora, Marinov & Ullah, "Private Stochastic Convex Optimization: Efficient
Algorithms for Non-smooth Objectives", arXiv 2020, Algorithm 1.
"""
import math

import numpy as np
import pytest
from scipy import stats

from conftest import bounded_problem, intercept_weights
from doubles import RecordingNoise
from dpsparse import losses, norms, solvers
from dpsparse.accounting import Ledger
from dpsparse.mechanisms import dp_gcd, dp_gd, dp_sgd, one_pass_sgd
from dpsparse.noise import make_noise


def _problem(n=2000, seed=0):
    X, y = bounded_problem(n=n, p=6, seed=seed)
    return X, y, losses.Logistic(), norms.L1(1e-3, intercept_weights(X.shape[1]))


def test_clipped_gradient_sum_of_neighbouring_batches_differs_by_at_most_twice_the_clip():
    rng = np.random.default_rng(0)
    X, y, loss, _ = _problem(n=100)
    worst = 0.0
    for _ in range(200):
        C = rng.uniform(0.05, 3.0)
        w = rng.normal(0, 2, X.shape[1])
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(100)
        X2[i, :-1], y2[i] = rng.choice([-1.0, 1.0], X.shape[1] - 1), -y[i]
        a = dp_sgd.clipped_gradient_sum(X, X @ w, y, loss, C)
        b = dp_sgd.clipped_gradient_sum(X2, X2 @ w, y2, loss, C)
        ratio = np.linalg.norm(a - b) / (2 * C)
        assert ratio <= 1 + 1e-9
        worst = max(worst, ratio)
    assert worst > 0.5  # the bound is nearly attained


def test_dp_sgd_noise_and_calibration():
    X, y, loss, pen = _problem()
    noise = RecordingNoise(1)
    T = 50
    _, rep = dp_sgd.dp_sgd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-6, n_iter=T,
                           batch_size=100, clipping_norm=0.5, noise=noise)
    assert 1.0 - 1e-3 <= rep.accountant_epsilon <= 1.0
    m = rep.noise["noise multiplier"]
    assert rep.noise["gaussian std (sum)"] == pytest.approx(m * 0.5)
    assert rep.noise["sampling rate"] == pytest.approx(100 / X.shape[0])
    assert len(noise.of("gaussian")) == T
    z = np.concatenate([d.values / d.scale for d in noise.of("gaussian")])
    assert all(d.scale == pytest.approx(m * 0.5) for d in noise.of("gaussian"))
    assert stats.kstest(z, stats.norm.cdf).pvalue > 1e-3
    # the calibrated multiplier is the smallest: 0.1% less noise misses the target
    assert Ledger().poisson_gaussian(100 / X.shape[0], m / 1.001, 1.0, T).epsilon(1e-6) > 1.0


def test_dp_sgd_approaches_the_optimum_at_large_epsilon():
    X, y, loss, pen = _problem(n=5000)
    ref = solvers.solve(X, y, loss, pen)
    rel = lambda w: ((solvers.objective(X, y, w, loss, pen) - ref.objective)  # noqa: E731
                     / (solvers.objective(X, y, 0 * w, loss, pen) - ref.objective))
    errs = {eps: rel(dp_sgd.dp_sgd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=eps, delta=1e-6, n_iter=300,
                                   noise=make_noise(0))[0]) for eps in [0.05, 1e3]}
    assert errs[1e3] < 0.1 < errs[0.05]


def test_dp_sgd_refuses_paper_calibration_and_bad_options():
    X, y, loss, pen = _problem(n=100)
    kw = dict(epsilon=1.0, delta=1e-5, noise=make_noise(0))
    with pytest.raises(ValueError, match="unknown calibration"):
        dp_sgd.dp_sgd(X, y, loss, pen, np.ones(X.shape[1]), calibration="paper", **kw)
    with pytest.raises(ValueError, match="batch_size"):
        dp_sgd.dp_sgd(X, y, loss, pen, np.ones(X.shape[1]), batch_size=1000, **kw)
    with pytest.raises(ValueError, match="clip"):
        dp_sgd.dp_sgd(X, y, loss, pen, np.ones(X.shape[1]), clipping_norm=-1.0, **kw)


def test_one_pass_usage_probability_by_simulation():
    """The index process alone: a fixed record is used with probability ceil(n/2)/n (binomial test)."""
    n, runs = 11, 20_000
    rng = np.random.default_rng(0)
    used = 0
    for _ in range(runs):
        seen = set()
        while len(seen) < math.ceil(n / 2):
            seen.add(int(rng.integers(n)))
        used += 0 in seen
    q = one_pass_sgd.usage_probability(n)
    assert q == 6 / 11
    assert stats.binomtest(used, runs, q).pvalue > 1e-3


def test_one_pass_noise_sensitivity_and_calibration():
    X, y, loss, pen = _problem(n=500)
    noise = RecordingNoise(2)
    _, rep = one_pass_sgd.one_pass_sgd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-6, noise=noise)
    L = math.sqrt(X.shape[1])  # logistic: |f'| <= 1, rows bounded by ||b||_2 = sqrt(p)
    assert rep.noise["sensitivity (L2)"] == pytest.approx(2 * L)
    sigma = rep.noise["gaussian std"]
    q = one_pass_sgd.usage_probability(500)
    # delta_G(epsilon) of one Gaussian mechanism (sigma, sensitivity 2L) times q meets delta
    eps_at = Ledger().gaussian(sigma, 2 * L).epsilon(1e-6 / q)
    assert 1.0 - 1e-3 <= eps_at <= 1.0
    assert len(noise.of("gaussian")) == rep.iterations and rep.iterations >= 250
    z = np.concatenate([d.values / d.scale for d in noise.of("gaussian")])
    assert stats.kstest(z, stats.norm.cdf).pvalue > 1e-3


def test_one_pass_gradient_sensitivity():
    rng = np.random.default_rng(3)
    X, y, loss, _ = _problem(n=50)
    L = math.sqrt(X.shape[1])
    for loss in [losses.Logistic(), losses.Hinge(), losses.Huber(0.5)]:
        for _ in range(100):
            w = rng.normal(0, 3, X.shape[1])
            x1, x2 = rng.choice([-1.0, 1.0], (2, X.shape[1]))
            y1, y2 = rng.choice([-1.0, 1.0], 2)
            g1 = loss.bounded_derivative(np.array([x1 @ w]), np.array([y1]))[0] * x1
            g2 = loss.bounded_derivative(np.array([x2 @ w]), np.array([y2]))[0] * x2
            assert np.linalg.norm(g1 - g2) <= 2 * loss.lipschitz * L + 1e-12


def test_one_pass_works_with_the_hinge_loss():
    X, y, _, _ = _problem(n=4000)
    w, rep = one_pass_sgd.one_pass_sgd(X, y, losses.Hinge(), None, np.ones(X.shape[1]), epsilon=10.0, delta=1e-6,
                                       noise=make_noise(0), radius=5.0)
    assert rep.accounting_holds and np.mean(np.sign(X @ w) == y) > 0.7


def test_dp_gcd_refuses_non_smooth_losses():
    X, y, _, pen = _problem(n=50)
    with pytest.raises(ValueError, match="hinge loss is not smooth"):
        dp_gcd.dp_gcd(X, y, losses.Hinge(), pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-5, noise=make_noise(0))


def test_mirror_maps_are_inverse_and_the_l1_variant_runs():
    from dpsparse.mechanisms.one_pass_sgd import _L1Mirror, _mirror
    rng = np.random.default_rng(0)
    m = _L1Mirror(radius=1e9, p=100)
    for _ in range(20):
        w = rng.normal(size=100)
        np.testing.assert_allclose(_mirror(_mirror(w, m.q), m.q_dual), w, rtol=1e-9)
    X, y, _, _ = _problem(n=3000)
    noise = RecordingNoise(0)
    w, rep = one_pass_sgd.one_pass_sgd(X, y, losses.Hinge(), None, np.ones(X.shape[1]), epsilon=20.0, delta=1e-6,
                                       noise=noise, radius=5.0, geometry="l1")
    _, euclid = one_pass_sgd.one_pass_sgd(X, y, losses.Hinge(), None, np.ones(X.shape[1]), epsilon=20.0,
                                          delta=1e-6, noise=make_noise(0), radius=5.0)
    assert rep.noise["gaussian std"] == euclid.noise["gaussian std"]  # same privacy, other geometry
    assert np.linalg.norm(w, m.q) <= 5.0 + 1e-9 and np.mean(np.sign(X @ w) == y) > 0.6
    with pytest.raises(ValueError, match="unknown geometry"):
        one_pass_sgd.one_pass_sgd(X, y, losses.Hinge(), None, np.ones(X.shape[1]), epsilon=1.0, delta=1e-6,
                                  noise=make_noise(0), geometry="l3")


def test_dp_sgd_with_replacement_sampling():
    X, y, loss, pen = _problem(n=1000)
    noise = RecordingNoise(5)
    _, rep = dp_sgd.dp_sgd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-6, n_iter=30,
                           batch_size=20, sampling="replacement", noise=noise, clipping_norm=None)
    m = rep.noise["noise multiplier"]
    assert rep.accountant == "rdp" and 1.0 - 1e-3 <= rep.accountant_epsilon <= 1.0
    assert Ledger().replacement_gaussian(1000, 20, m / 1.001, 1.0, 30).epsilon(1e-6) > 1.0
    assert all(d.scale == pytest.approx(m * rep.noise["clipping norm"]) for d in noise.of("gaussian"))
    with pytest.raises(ValueError, match="unknown sampling"):
        dp_sgd.dp_sgd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-6, sampling="bernoulli",
                      noise=make_noise(0))


def test_poisson_batches_include_each_record_independently_with_probability_q():
    """O(batch) sampling (binomial size, then a uniform subset) is Poisson sampling: each record with
    probability q, pairs with q^2 (5-sigma tolerances over 20000 draws: false alarm below 1e-5)."""
    from dpsparse.mechanisms.dp_sgd import _poisson_batch

    rng = np.random.default_rng(0)
    n, q, draws = 20, 0.3, 20000
    member = np.zeros((draws, n), dtype=bool)
    for k in range(draws):
        member[k, _poisson_batch(rng, n, q)] = True
    tol = 5 * np.sqrt(q * (1 - q) / draws)
    np.testing.assert_allclose(member.mean(axis=0), q, atol=tol)
    pairs = (member[:, :, None] & member[:, None, :]).mean(axis=0)[np.triu_indices(n, 1)]
    np.testing.assert_allclose(pairs, q * q, atol=5 * np.sqrt(q * q * (1 - q * q) / draws))


def test_the_calibration_starts_near_the_multiplier_it_finds():
    """The search's start (small-q Renyi DP) is a few percent above the PLD's multiplier: a start at 1 cost two more
    compositions at this setting (the speed benchmark's)."""
    n, m, T, eps, delta = 20000, 141.0, 200, 1.0, 1e-9
    found = dp_sgd._tight_sigma(n, m, T, eps, delta, "poisson")
    assert 1.0 <= dp_sgd.start_multiplier(m / n, T, eps, delta) / found <= 1.1


def test_the_step_on_a_loss_without_smoothness_minimizes_subgradient_descents_bound():
    """``dp_gd.lipschitz_step`` is the step that minimizes ``D^2 / (2 eta T) + eta G^2 / 2`` with
    ``G^2 = C^2 (1 + 4 p m^2 / n^2)`` (brute force over a grid of steps), and shrinks as the noise grows."""
    C, m, n, p, T, D = 2.5, 40.0, 1000, 30, 200, 3.0
    eta = dp_gd.lipschitz_step(C, m, n, p, T, D)
    G2 = C**2 * (1.0 + 4.0 * p * m**2 / n**2)
    grid = np.geomspace(eta / 100, eta * 100, 40001)
    bound = D**2 / (2.0 * grid * T) + grid * G2 / 2.0
    assert grid[np.argmin(bound)] == pytest.approx(eta, rel=1e-3)
    assert dp_gd.lipschitz_step(C, 0.0, n, p, T, D) == pytest.approx(D / (C * math.sqrt(T)))
    assert dp_gd.lipschitz_step(C, 4 * m, n, p, T, D) < eta


def test_dp_gd_on_the_hinge_loss_steps_by_the_released_clipping_norm():
    """On the hinge loss (no smoothness) DP-GD's default step is ``lipschitz_step`` of the clipping norm: the public
    one when it is set (in the plan), the released one with ``clipping_norm="auto"`` (post-processing, in the report
    as released); a step the user sets is kept."""
    X, y = bounded_problem(n=500, p=6, seed=1)
    pen = norms.L1(1e-3, intercept_weights(X.shape[1]))
    bounds = np.ones(X.shape[1])
    kw = dict(epsilon=1.0, delta=1e-6, noise=make_noise(0), n_iter=20)
    _, fixed = dp_gd.dp_gd(X, y, losses.Hinge(), pen, bounds, clipping_norm=0.5, step_radius=3.0, **kw)
    m = fixed.noise["noise multiplier"]
    assert fixed.noise["learning rate"] == pytest.approx(dp_gd.lipschitz_step(0.5, m, 500, X.shape[1], 20, 3.0))
    _, auto = dp_gd.dp_gd(X, y, losses.Hinge(), pen, bounds, **kw)
    C = auto.noise["clipping norm (released)"]
    assert auto.noise["learning rate (released)"] == pytest.approx(
        dp_gd.lipschitz_step(C, auto.noise["noise multiplier"], 500, X.shape[1], 20, 10.0))
    _, given = dp_gd.dp_gd(X, y, losses.Hinge(), pen, bounds, learning_rate=0.01, **kw)
    assert given.noise["learning rate"] == 0.01 and "learning rate (released)" not in given.noise
