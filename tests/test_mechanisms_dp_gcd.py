"""DP-GCD: noise scales, sensitivities, the law of the selection, convergence.

Source: Mangold, Bellet, Salmon & Tommasi, "High-Dimensional Private Empirical Risk Minimization
by Greedy Coordinate Descent", AISTATS 2023.
"""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from conftest import bounded_problem, intercept_weights
from doubles import RecordingNoise
from dpsparse import losses, norms, solvers
from dpsparse.exceptions import PrivacyCalibrationWarning
from dpsparse.mechanisms import dp_gcd as mod
from dpsparse.noise import make_noise

RULES = mod.RULES


def _setup(classification=True, n=300, p=6, seed=0, alpha=0.01):
    X, y = bounded_problem(n=n, p=p, seed=seed, classification=classification)
    loss = losses.Logistic() if classification else losses.Squared(clip=1.0)
    return X, y, loss, norms.L1(alpha, intercept_weights(X.shape[1]))


def test_paper_calibration_uses_the_seed_formula():
    X, y, loss, pen = _setup()
    n, T, eps, delta = X.shape[0], 20, 1.0, 1e-5
    _, rep = mod.dp_gcd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=eps, delta=delta, n_iter=T,
                        calibration="paper", noise=make_noise(0))
    lam = 8 * 1.0 * math.sqrt(T * math.log(1 / delta)) / (n * eps)  # L_j = 1 for logistic, |x_j| <= 1
    assert rep.noise["noise scale of each update"] == pytest.approx(lam, rel=1e-12)
    assert rep.noise["noise scale of each selection"] == pytest.approx(lam / math.sqrt(0.25), rel=1e-12)  # M_j = 1/4
    # per-step privacy: update Delta/b = (2L/n)/lam; selection (2 Delta_score)/b_score = 2 (2L/n)/lam
    assert rep.noise["update noise / sensitivity"] == pytest.approx(lam / (2 / n))
    assert rep.noise["epsilon of one selection"] == pytest.approx(2 * (2 / n) / lam)
    assert rep.accountant_epsilon <= eps  # the paper's constant is conservative at this budget


def test_tight_calibration_meets_the_target_with_less_noise():
    X, y, loss, pen = _setup()
    for eps in [0.5, 2.0]:
        kw = dict(epsilon=eps, delta=1e-5, n_iter=30, noise=make_noise(0))
        _, paper = mod.dp_gcd(X, y, loss, pen, np.ones(X.shape[1]), calibration="paper", **kw)
        for selection in mod.SELECTIONS:
            for update in mod.UPDATES:
                _, tight = mod.dp_gcd(X, y, loss, pen, np.ones(X.shape[1]), calibration="tight",
                                      selection=selection, update_noise=update, **kw)
                assert eps - 1e-3 <= tight.accountant_epsilon <= eps
                assert tight.accounting_holds
                if update == "laplace":  # same noise family as the paper: strictly less noise
                    assert tight.noise["noise scale of each update"] < paper.noise["noise scale of each update"]


class UnevenSmoothness(losses.Logistic):
    """Logistic loss with a (valid, looser) smoothness bound that differs across coordinates."""

    def coordinate_smoothness(self, feature_bounds):
        M = super().coordinate_smoothness(feature_bounds)
        M[0] *= 1e4
        return M


def test_step_epsilon_of_the_selection_with_uneven_score_scales():
    """(Delta_j + max_k Delta_k) / b_j: the coordinate with the smallest score scale decides."""
    X, y, _, pen = _setup()
    n, p = X.shape
    L, M = np.ones(p), UnevenSmoothness().coordinate_smoothness(np.ones(p))
    s = 0.3
    eps_select, ratio = mod.step_epsilons(s, L, M, n)
    delta_score, b = 2 * L / (n * np.sqrt(M)), s * L / np.sqrt(M)
    brute = max((delta_score[j] + delta_score.max()) / b[j] for j in range(p))
    assert eps_select == pytest.approx(brute) and eps_select == pytest.approx((2 / n) * (1 + 100) / s)
    assert ratio == pytest.approx(s * n / 2)


def test_paper_calibration_warns_when_it_misses_the_target():
    X, y, _, pen = _setup()
    with pytest.warns(PrivacyCalibrationWarning, match="calibration='tight'"):
        _, rep = mod.dp_gcd(X, y, UnevenSmoothness(), pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-5,
                            n_iter=5, calibration="paper", noise=make_noise(0))
    assert rep.accountant_epsilon > 1.0 and not rep.accounting_holds and rep.warnings
    _, tight = mod.dp_gcd(X, y, UnevenSmoothness(), pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-5,
                          n_iter=5, noise=make_noise(0))
    assert tight.accounting_holds


LAWS = {"laplace": stats.laplace.cdf, "gumbel": stats.gumbel_r.cdf, "gaussian": stats.norm.cdf}


@pytest.mark.parametrize("calibration,selection,update", [
    ("paper", None, None), ("tight", None, None), ("tight", "laplace", "laplace"), ("tight", "gumbel", "laplace"),
])
def test_noise_drawn_matches_the_declared_scales(calibration, selection, update):
    X, y, loss, pen = _setup()
    noise = RecordingNoise(1)
    T = 40
    _, rep = mod.dp_gcd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-5, n_iter=T,
                        calibration=calibration, selection=selection, update_noise=update, noise=noise)
    select = [d for d in noise.draws if d[1].size == X.shape[1]]
    upd = [d for d in noise.draws if d[1].size == 1]
    assert len(select) == len(upd) == T
    assert rep.noise["selection"].split()[0] == select[0][0] and rep.noise["update"].split()[0] == upd[0][0]
    for draws, key in [(select, "noise scale of each selection"), (upd, "noise scale of each update")]:
        for _, scales, _ in draws:
            np.testing.assert_allclose(scales, rep.noise[key], rtol=1e-12)
        family = draws[0][0]
        standardized = np.concatenate([v / s for _, s, v in draws])
        assert stats.kstest(standardized, LAWS[family]).pvalue > 1e-3


def test_default_tight_noise_is_gumbel_selection():
    X, y, loss, pen = _setup()
    _, rep = mod.dp_gcd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-5, n_iter=20, noise=make_noise(0))
    assert rep.noise["selection"] == "gumbel report-noisy-max"
    assert rep.noise["update"] == f"{mod.TIGHT_DEFAULT[1]} noise"
    with pytest.raises(ValueError, match="paper's Laplace noise"):
        mod.dp_gcd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-5, calibration="paper",
                   selection="gumbel", noise=make_noise(0))


def test_gumbel_report_noisy_max_is_the_exponential_mechanism():
    """P(j) = exp(s_j / b) / sum_k exp(s_k / b): chi-square, false-alarm rate 1e-3."""
    scores, b = np.array([0.0, 0.3, 0.5, 1.0, 1.2]), 0.4
    law = np.exp(scores / b) / np.exp(scores / b).sum()
    noise, N = make_noise(99), 20_000
    counts = np.bincount([mod.report_noisy_max(scores, b, noise, "gumbel") for _ in range(N)], minlength=5)
    assert stats.chisquare(counts, N * law).pvalue > 1e-3


def _neighbours(classification, seed):
    """Two datasets differing in one record; the replacement is an extreme record."""
    X, y, loss, pen = _setup(classification=classification, seed=seed)
    rng = np.random.default_rng(seed)
    X2, y2 = X.copy(), y.copy()
    i = rng.integers(X.shape[0])
    X2[i, :-1] = rng.choice([-1.0, 1.0], X.shape[1] - 1)
    y2[i] = -y[i] if classification else -np.sign(y[i])
    return X, y, X2, y2, loss, pen


@pytest.mark.parametrize("classification", [True, False])
def test_released_quantities_change_by_at_most_their_sensitivity(classification):
    """Gradient coordinates (update) and scores (selection) of neighbouring datasets, same iterate."""
    worst_g, worst_s = 0.0, {r: 0.0 for r in RULES}
    for seed in range(10):
        X, y, X2, y2, loss, pen = _neighbours(classification, seed)
        n, p = X.shape
        b = np.ones(p)
        L, M = loss.coordinate_lipschitz(b), loss.coordinate_smoothness(b)
        sens_g = 2 * L / n
        sens_s = 2 * L / (n * np.sqrt(M))
        rng = np.random.default_rng(seed)
        for _ in range(20):
            w = rng.normal(0, 2, p) * (rng.random(p) < 0.6)
            g = X.T @ loss.bounded_derivative(X @ w, y) / n
            g2 = X2.T @ loss.bounded_derivative(X2 @ w, y2) / n
            assert np.all(np.abs(g - g2) <= sens_g * (1 + 1e-12))
            worst_g = max(worst_g, np.max(np.abs(g - g2) / sens_g))
            for rule in RULES:
                s = mod.selection_scores(g, w, M, pen, rule)
                s2 = mod.selection_scores(g2, w, M, pen, rule)
                assert np.all(np.abs(s - s2) <= sens_s * (1 + 1e-9))
                worst_s[rule] = max(worst_s[rule], np.max(np.abs(s - s2) / sens_s))
    # the declared sensitivities are nearly attained: the test would catch an inflated claim
    assert worst_g > 0.5 and min(worst_s.values()) > 0.5


def _rnm_law(scores, scale):
    """P(argmax_j scores_j + Lap(scale) = j), by numerical integration."""
    pdf = lambda x, m: stats.laplace.pdf(x, m, scale)  # noqa: E731
    cdf = lambda x, m: stats.laplace.cdf(x, m, scale)  # noqa: E731
    probs = []
    for j, sj in enumerate(scores):
        others = np.delete(scores, j)
        f = lambda x, sj=sj, others=others: pdf(x, sj) * np.prod([cdf(x, sk) for sk in others])  # noqa: E731
        pts = sorted(set(scores))
        probs.append(sum(integrate.quad(f, a, b, limit=200)[0] for a, b in zip([-np.inf] + pts, pts + [np.inf])))
    return np.array(probs)


def test_report_noisy_max_frequencies_follow_their_law():
    """Chi-square goodness of fit, false-alarm rate 1e-3."""
    scores = np.array([0.0, 0.3, 0.5, 1.0, 1.2])
    scale = 0.4
    law = _rnm_law(scores, scale)
    assert law.sum() == pytest.approx(1.0, abs=1e-6)
    noise = make_noise(12345)
    N = 20_000
    counts = np.bincount([mod.report_noisy_max(scores, np.full(5, scale), noise) for _ in range(N)], minlength=5)
    assert stats.chisquare(counts, N * law).pvalue > 1e-3


@pytest.mark.parametrize("selection,update", [("gumbel", "gaussian"), ("laplace", "laplace")])
def test_the_compiled_steps_draw_the_laws_of_the_declared_ones(selection, update):
    """A plain NoiseSource's steps (scores compiled, noise drawn up front): the coordinate by the exponential
    mechanism (Gumbel) or Laplace report-noisy-max over the rule's scores, the update noise of the declared
    family and scale. Chi-square and Kolmogorov-Smirnov, false-alarm rate 1e-3 each."""
    rng = np.random.default_rng(0)
    p, N = 5, 20_000
    g, w = rng.normal(0, 0.5, p), np.array([0.3, 0.0, -0.2, 0.0, 0.1])
    M = np.array([0.25, 0.5, 0.25, 1.0, 0.25])
    pen = norms.ElasticNet(0.1, 0.7, intercept_weights(p))
    scores = mod.selection_scores(g, w, M, pen, "gs-q")
    scale, upd = 0.2, np.linspace(0.1, 0.5, p)
    choose = mod._compiled_steps(make_noise(3), N, M, pen, "gs-q", selection,
                                 scale if selection == "gumbel" else np.full(p, scale), update, upd, np.empty(p))
    picks = [choose(t, g, w) for t in range(N)]
    j = np.array([k for k, _ in picks])
    law = np.exp(scores / scale) / np.exp(scores / scale).sum() if selection == "gumbel" else _rnm_law(scores, scale)
    assert stats.chisquare(np.bincount(j, minlength=p), N * law).pvalue > 1e-3
    standardized = np.array([(v - g[k]) / upd[k] for k, v in picks])
    assert stats.kstest(standardized, LAWS[update]).pvalue > 1e-3


@pytest.mark.parametrize("rule", RULES)
def test_the_compiled_steps_give_the_iterates_of_the_declared_ones_without_noise(rule):
    """At zero noise a plain NoiseSource (compiled scores) and a subclass (numpy scores through noise.select)
    take the same steps: dense and CSC designs, an elastic net, coordinate-wise clipping."""
    import scipy.sparse as sp

    from dpsparse.noise import NoiseSource

    class Declared(NoiseSource):
        pass

    X, y, loss, _ = _setup(p=10)
    pen = norms.ElasticNet(0.02, 0.6, intercept_weights(X.shape[1]))
    M, zeros = loss.coordinate_smoothness(np.ones(X.shape[1])), np.zeros(X.shape[1])
    for XX, clip in [(X, None), (sp.csc_matrix(np.where(np.abs(X) < 0.3, 0.0, X)), np.full(X.shape[1], 0.2))]:
        runs = [mod.gcd(XX, y, loss, pen, M, 40, rule, 0.0, zeros, source(np.random.default_rng(0), True),
                        selection="gumbel", clip=clip) for source in (NoiseSource, Declared)]
        np.testing.assert_array_equal(runs[0], runs[1])
        assert np.count_nonzero(runs[0]) > 2


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("classification", [True, False])
def test_without_noise_greedy_cd_converges_to_the_optimum(rule, classification):
    X, y, loss, pen = _setup(classification=classification, alpha=0.02)
    M = loss.coordinate_smoothness(np.ones(X.shape[1]))
    zeros = np.zeros(X.shape[1])
    w = mod.gcd(X, y, loss, pen, M, 2000, rule, zeros, zeros, make_noise(0))
    ref_loss = losses.Logistic() if classification else losses.Squared()
    ref = solvers.solve(X, y, ref_loss, pen)
    assert solvers.objective(X, y, w, ref_loss, pen) - ref.objective < 1e-6


def test_private_fit_approaches_the_optimum_at_large_epsilon():
    X, y, loss, pen = _setup(n=2000)
    ref = solvers.solve(X, y, loss, pen)
    rel = lambda w: ((solvers.objective(X, y, w, loss, pen) - ref.objective)  # noqa: E731
                     / (solvers.objective(X, y, 0 * w, loss, pen) - ref.objective))
    T, zeros = 60, np.zeros(X.shape[1])
    exact = rel(mod.gcd(X, y, loss, pen, loss.coordinate_smoothness(np.ones(X.shape[1])), T, "gs-r", zeros,
                        zeros, make_noise(0)))
    errs = {eps: np.mean([rel(mod.dp_gcd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=eps, delta=1e-6,
                                         n_iter=T, noise=make_noise(seed))[0]) for seed in range(3)])
            for eps in [0.2, 100.0]}
    assert errs[100.0] < exact + 0.01 < errs[0.2]


def test_sparse_and_dense_inputs_give_the_same_iterates():
    import scipy.sparse as sp
    X, y, loss, pen = _setup()
    X[np.abs(X) < 0.3] = 0.0
    kw = dict(epsilon=1.0, delta=1e-5, n_iter=15, calibration="paper")
    w1, _ = mod.dp_gcd(X, y, loss, pen, np.ones(X.shape[1]), noise=make_noise(7), **kw)
    w2, _ = mod.dp_gcd(sp.csr_matrix(X), y, loss, pen, np.ones(X.shape[1]), noise=make_noise(7), **kw)
    np.testing.assert_allclose(w1, w2, atol=1e-12)


@pytest.mark.parametrize("kw,match", [
    (dict(rule="gs-x"), "unknown rule"), (dict(calibration="loose"), "unknown calibration"),
    (dict(n_iter=0), "n_iter"), (dict(n_iter=2.5), "n_iter"), (dict(epsilon=0.0), "epsilon"),
    (dict(delta=1.0), "delta"),
])
def test_invalid_arguments(kw, match):
    X, y, loss, pen = _setup()
    args = dict(epsilon=1.0, delta=1e-5, n_iter=5, noise=make_noise(0)) | kw
    with pytest.raises(ValueError, match=match):
        mod.dp_gcd(X, y, loss, pen, np.ones(X.shape[1]), **args)


def test_refuses_a_non_separable_penalty():
    class Ball(norms.Penalty):
        def prox(self, x, step):
            return x

        def coordinate_values(self, w):
            return 0 * w

        def subdiff_distance(self, g, w):
            return abs(g)

    X, y, loss, _ = _setup()
    with pytest.raises(ValueError, match="separable"):
        mod.dp_gcd(X, y, loss, Ball(), np.ones(X.shape[1]), epsilon=1.0, delta=1e-5, noise=make_noise(0))


def test_squared_loss_needs_clipping():
    X, y, _, pen = _setup(classification=False)
    with pytest.raises(ValueError, match="clip"):
        mod.dp_gcd(X, y, losses.Squared(), pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-5, noise=make_noise(0))


@pytest.mark.parametrize("kind", ["rows", "columns", "sparse"])
def test_clipped_gradient_is_the_brute_force_sum_of_clipped_terms(kind):
    """On a dense X stored by rows or by columns (read in its own order) and on a sparse one."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (30, 6))
    X[rng.random(X.shape) < 0.5] = 0.0
    d, clip = rng.uniform(-1, 1, 30), np.array([0.1, 0.2, 0.5, 1.0, 0.05, 2.0])
    brute = [sum(min(max(d[i] * X[i, j], -clip[j]), clip[j]) for i in range(30)) / 30 for j in range(6)]
    got = mod.clipped_gradient({"rows": X, "columns": np.asfortranarray(X), "sparse": sp.csc_matrix(X)}[kind], d, clip)
    np.testing.assert_allclose(got, brute, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("classification", [True, False])
def test_coordinate_clipping_shrinks_the_noise_and_its_sensitivity_holds_on_replay(classification):
    """With clipping_norm C below L_j the noise scales by C / L_j, and the replay on neighbouring datasets
    moves each release by at most the clipped sensitivity, reaching most of it."""
    import warnings

    from dpsparse import audit

    bounds, pairs = audit.neighbouring_pairs(n=10, p=2, classification=classification)
    loss = losses.Logistic() if classification else losses.Huber(1.0)
    pen = norms.build_penalty("l1", 1e-6, 2, True)
    worst = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for pair in pairs.values():
            ratios = audit.sensitivity_replay("dp-gcd", pair, bounds, loss, pen, delta=1e-3, repeats=3,
                                              options={"n_iter": 3, "clipping_norm": 0.3},
                                              classification=classification)
            worst = max(worst, *ratios.values())
    assert 0.5 <= worst <= 1.0 + 1e-9
    from dpsparse.data import BoundedDesign

    X, y = pairs["label flip"][0]
    design = BoundedDesign.from_arrays(np.c_[X, np.ones(len(X))], np.asarray(y, float), np.ones(3))
    from dpsparse.mechanisms import make_plan

    plain = make_plan(mod.MECHANISM, design, loss, pen, 1.0, 1e-3, None, {"n_iter": 3})
    clipped = make_plan(mod.MECHANISM, design, loss, pen, 1.0, 1e-3, None, {"n_iter": 3, "clipping_norm": 0.3})
    ratio = clipped.details["noise scale of each update"] / plain.details["noise scale of each update"]
    assert ratio == pytest.approx(0.3 / loss.lipschitz, rel=1e-3)


def test_the_automatic_threshold_scales_every_drawn_noise_as_the_report_says():
    """With ``clipping_norm="auto"`` the report gives the scales per unit of the threshold and the released threshold:
    every selection and update draw is at their product (the first draw is the threshold's own release)."""
    X, y, loss, pen = _setup()
    noise = RecordingNoise(1)
    _, rep = mod.dp_gcd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-5, n_iter=10,
                        clipping_norm="auto", noise=noise)
    threshold = rep.noise["clipping threshold (released)"]
    assert 0.0 < threshold < 0.5
    steps = noise.draws[1:]
    select = [d for d in steps if d[1].size == X.shape[1]]
    update = [d for d in steps if d[1].size == 1]
    assert len(select) == len(update) == 10
    for draws, key in [(select, "noise scale of each selection"), (update, "noise scale of each update")]:
        for d in draws:
            np.testing.assert_allclose(d[1], threshold * rep.noise[f"{key} (per unit of the threshold)"], rtol=1e-12)
