"""Frank-Wolfe on the dual: convergence, sensitivities, the law of the exact exponential sampling,
noise drawn, calibrations, refusals.

Source: Kumar & Deisenroth, "Differentially Private Empirical Risk
Minimization with Sparsity-Inducing Norms", arXiv 2019, Algorithms 1-2.
"""
import math

import numpy as np
import pytest
from scipy import stats

from conftest import bounded_problem
from doubles import RecordingNoise, ZeroNoise
from dpsparse import losses, norms, solvers
from dpsparse.exceptions import PrivacyCalibrationWarning
from dpsparse.mechanisms import dual_fw as mod
from dpsparse.noise import make_noise


def _penalties(p, alpha=0.05):
    """L1 (|P|(F) = L_inf ball), L_inf (L1 ball) and group L_inf norms; last column unpenalized."""
    q = p - 1
    return {
        "l1": norms.SubmodularNorm(norms.Cardinality(q), alpha, unpenalized=[q]),
        "linf": norms.SubmodularNorm(norms.Nonempty(q), alpha, unpenalized=[q]),
        "group-linf": norms.SubmodularNorm(norms.GroupCount(q, [[0, 1], [2, 3], list(range(4, q))][: 2 + (q > 4)]),
                                           alpha, unpenalized=[q]),
    }


def _problem(classification, n=100, p=5, seed=0):
    X, y = bounded_problem(n=n, p=p, seed=seed, classification=classification)
    return X, y, (losses.Logistic() if classification else losses.Squared())


def _diameter_sq(pen):
    return (2.0 * mod.selection_structure(pen).max_norm) ** 2


# ----------------------------------------------------------------------------- Algorithm 1


@pytest.mark.parametrize("name", ["l1", "linf", "group-linf"])
@pytest.mark.parametrize("classification", [False, True])
def test_dual_frank_wolfe_converges_at_the_fw_rate(name, classification):
    X, y, loss = _problem(classification)
    pen = _penalties(X.shape[1])[name]
    mu = 0.2
    ref = solvers.solve_prox(X, y, loss, pen, mu=mu, tol=1e-12)
    C = _diameter_sq(pen) / mu  # curvature of D: diam(K)^2 times the 1/mu smoothness of L*
    h0 = ref.objective - mod.dual_frank_wolfe(X, y, loss, pen, mu=mu, n_iter=1, tol=np.inf).dual_value
    steps = ["standard", "paper"] if not classification else ["standard"]
    T = 400 if not classification else 25
    for step in steps:
        res = mod.dual_frank_wolfe(X, y, loss, pen, mu=mu, n_iter=T, step=step, inner_tol=1e-9)
        h = ref.objective - res.dual_value  # D* = F* (strong duality)
        if step == "standard":  # Jaggi 2013, Thm 1: h_T <= 2 C / (T + 2)
            bound = 2 * C / (T + 2)
        else:  # rho_t = 1/(t+2): (t+2) h_t <= (t+1) h_{t-1} + C / (2 (t+2))
            bound = (2 * h0 + 0.5 * C * sum(1.0 / (t + 2) for t in range(1, T + 1))) / (T + 2)
        assert -1e-9 <= h <= bound
        # the FW gap is the primal-dual gap of the recovered primal (Eq. 13)
        assert res.gap >= h - 1e-9
        primal = solvers.objective(X, y, res.coef, loss, pen, mu)
        assert primal - res.dual_value == pytest.approx(res.gap, rel=1e-6, abs=1e-12)
        # strong convexity: D* - D(s) >= (mu/2) ||w(s) - w*||^2
        assert np.linalg.norm(res.coef - ref.coef) <= math.sqrt(2 * max(h, 0) / mu) + 1e-6
        assert solvers.objective(X, y, res.coef, loss, pen, mu) - ref.objective <= res.gap + 1e-9


def test_group_lasso_uses_its_lmo():
    X, y, loss = _problem(False)
    pen = norms.GroupLasso([[0, 1], [2, 3, 4]], X.shape[1], 0.05)
    ref = solvers.solve_prox(X, y, loss, pen, mu=0.2, tol=1e-12)
    res = mod.dual_frank_wolfe(X, y, loss, pen, mu=0.2, n_iter=400, step="standard")
    assert res.gap < 1e-3 and np.linalg.norm(res.coef - ref.coef) < 1e-2


# ----------------------------------------------------------------------------- sensitivities


def _neighbour(X, y, i, rng, classification):
    """Replace record i by a record on the boundary of the public bounds (|x_j| <= 1)."""
    X2, y2 = X.copy(), y.copy()
    X2[i, :-1] = np.sign(rng.standard_normal(X.shape[1] - 1))
    y2[i] = -y[i] if classification else -np.sign(y[i])
    return X2, y2


@pytest.mark.parametrize("classification", [True, False])
def test_sensitivity_of_the_response_and_the_scores(classification, record_property):
    """||w(s) - w'(s)|| <= 2 L/(n mu) and max_v |<v, w - w'>| <= r_K 2 L/(n mu), same s on both."""
    X, y, _ = _problem(classification, n=60, p=5)
    loss = losses.Logistic() if classification else losses.Squared(clip=1.0)
    n, p = X.shape
    mu, R = 0.05, math.sqrt(p)  # |x_ij| <= 1 and the intercept: ||x_i|| <= sqrt(p)
    dw = mod.response_sensitivity(loss.lipschitz, R, n, mu)
    rng = np.random.default_rng(1)
    worst_w = worst_u = 0.0
    for trial in range(3):
        X2, y2 = _neighbour(X, y, trial, rng, classification)
        a = mod.PrimalResponse(X, y, loss, mu, 1e-6 * dw, private=True)
        b = mod.PrimalResponse(X2, y2, loss, mu, 1e-6 * dw, private=True)
        for pen in _penalties(p, alpha=0.5).values():
            st = mod.selection_structure(pen)
            for _ in range(2):
                s = mod.sample_vertex(rng.standard_normal(p), st, 1.0, make_noise(rng)) * rng.random()
                d = a(s) - b(s)
                worst_w = max(worst_w, np.linalg.norm(d) / dw)
                worst_u = max(worst_u, st.max_score_change(d) / mod.score_sensitivity(st, dw))
    record_property("worst response ratio", worst_w)
    record_property("worst score ratio", worst_u)
    print(f"worst ratios: response {worst_w:.3f}, scores {worst_u:.3f}")
    assert worst_w <= 1.0 + 1e-9 and worst_u <= 1.0 + 1e-9
    assert worst_w > 0.05  # the bound is not vacuous on these neighbours


def test_max_score_change_is_the_max_over_the_vertices():
    rng = np.random.default_rng(0)
    for pen in _penalties(7).values():
        st = mod.selection_structure(pen)
        V = mod.enumerate_vertices(st)
        d = rng.standard_normal(7)
        assert st.max_score_change(d) == pytest.approx(np.max(np.abs(V @ d)))
        assert st.max_norm == pytest.approx(np.max(np.linalg.norm(V, axis=1)))


# ----------------------------------------------------------------------------- exact sampling


@pytest.mark.parametrize("name,p", [("l1", 7), ("linf", 7), ("group-linf", 6)])
def test_product_sampling_is_the_exponential_mechanism_over_all_vertices(name, p):
    pen = _penalties(p, alpha=0.7)[name] if name != "group-linf" else norms.SubmodularNorm(
        norms.GroupCount(p - 1, [[0, 1], [2, 3, 4]], [1.0, 2.0]), 0.7, unpenalized=[p - 1])
    st = mod.selection_structure(pen)
    V = mod.enumerate_vertices(st)
    assert V.shape[0] == round(math.exp(st.log_n_vertices)) and V.shape[0] <= 2**6
    rng = np.random.default_rng(3)
    w, beta = rng.standard_normal(p), 0.8
    brute = np.exp(V @ w / beta - np.max(V @ w / beta))
    brute /= brute.sum()
    plus, minus = mod.product_probabilities(w, st, beta)
    index = {tuple(v): k for k, v in enumerate(V)}
    product = np.ones(V.shape[0])
    for k, v in enumerate(V):
        for c, j in enumerate(st.coords):
            if v[j] > 0:
                product[k] *= plus[c]
            elif v[j] < 0:
                product[k] *= minus[c]
    np.testing.assert_allclose(product, brute, rtol=1e-10)
    noise = make_noise(np.random.default_rng(4))
    draws = 20_000
    counts = np.zeros(V.shape[0])
    for _ in range(draws):
        counts[index[tuple(mod.sample_vertex(w, st, beta, noise))]] += 1
    expected = brute * draws
    keep = expected >= 5  # pool the rare cells
    obs = np.r_[counts[keep], counts[~keep].sum()]
    exp_ = np.r_[expected[keep], expected[~keep].sum()]
    if exp_[-1] == 0:
        obs, exp_ = obs[:-1], exp_[:-1]
    assert stats.chisquare(obs, exp_).pvalue > 1e-3


def test_zero_temperature_sampling_is_the_greedy_lmo():
    rng = np.random.default_rng(0)
    for pen in _penalties(7).values():
        w = rng.standard_normal(7)
        v = mod.sample_vertex(w, mod.selection_structure(pen), 0.0, None)
        assert v @ w == pytest.approx(pen.alpha * pen.lmo_dual_ball(w) @ w)


# ----------------------------------------------------------------------------- the mechanism


def _private_setup(n=300, p=5):
    X, y = bounded_problem(n=n, p=p, seed=0, classification=True)
    return X, y, losses.Logistic(), _penalties(X.shape[1]), np.ones(X.shape[1])


def test_noise_drawn_is_declared():
    X, y, loss, pens, bounds = _private_setup()
    n, p = X.shape
    T, mu, eps, delta = 8, 0.5, 1.0, 1e-5
    dw = mod.response_sensitivity(1.0, math.sqrt(p), n, mu)
    # exponential mechanism (L_inf-ball K)
    rec = RecordingNoise(0)
    _, rep = mod.dual_fw(X, y, loss, pens["l1"], bounds, epsilon=eps, delta=delta, n_iter=T, mu=mu, noise=rec)
    m = rep.noise["noise multiplier"]
    delta_w = rep.noise["response sensitivity"]
    assert dw <= delta_w <= dw * (1 + 3e-4)  # + 2 x the certified inner accuracy
    gumbel = [d for d in rec.draws if d[0] == "gumbel"]
    gauss = [d for d in rec.draws if d[0] == "gaussian"]
    assert len(gumbel) == T and len(gauss) == 1
    r_K = pens["l1"].alpha * math.sqrt(p - 1)
    assert all(sc == pytest.approx(m * r_K * delta_w) for _, sc, _ in gumbel)
    assert rep.noise["gumbel scale"] == pytest.approx(m * r_K * delta_w)
    assert rep.noise["epsilon of one selection"] == pytest.approx(2 / m)
    assert gauss[0][1] == pytest.approx(m * delta_w) and gauss[0][2].size == p
    assert rep.noise["release sigma"] == pytest.approx(m * delta_w)
    # Gaussian selection (group Lasso): T + 1 Gaussian vectors of sd m Delta_w
    rec = RecordingNoise(1)
    glasso = norms.GroupLasso([[0, 1], [2, 3]], p, 0.05)
    _, rep = mod.dual_fw(X, y, loss, glasso, bounds, epsilon=eps, delta=delta, n_iter=T, mu=mu, noise=rec)
    m, delta_w = rep.noise["noise multiplier"], rep.noise["response sensitivity"]
    assert [d[0] for d in rec.draws] == ["gaussian"] * (T + 1)
    assert all(sc == pytest.approx(m * delta_w) for _, sc, _ in rec.draws)
    values = np.concatenate([v for _, _, v in rec.draws]) / (m * delta_w)
    assert stats.kstest(values, "norm").pvalue > 1e-3
    # paper: Kumar & Deisenroth's Laplace scale L Gamma_K sqrt(8 T log(1/delta)) / (n eps), Gamma_K = 2 r_K
    rec = RecordingNoise(2)
    with pytest.warns(PrivacyCalibrationWarning):
        _, rep = mod.dual_fw(X, y, loss, pens["linf"], bounds, epsilon=eps, delta=delta, n_iter=T, mu=mu,
                             calibration="paper", noise=rec)
    b = 1.0 * math.sqrt(p) * 2 * pens["linf"].alpha * math.sqrt(8 * T * math.log(1 / delta)) / (n * eps)
    lap = [d for d in rec.draws if d[0] == "laplace"]
    assert len(lap) == T and all(sc == pytest.approx(b) for _, sc, _ in lap)
    assert all(v.size == 2 * (p - 1) for _, _, v in lap)  # one Laplace draw per vertex of the L1 ball


def test_tight_meets_the_target_with_less_noise_than_a_conservative_paper_run():
    X, y, loss, pens, bounds = _private_setup()
    kw = dict(epsilon=1.0, delta=1e-5, n_iter=10, noise=make_noise(0))
    for name in ["l1", "linf"]:
        _, paper = mod.dual_fw(X, y, loss, pens[name], bounds, mu=4.0, calibration="paper", **kw)
        _, tight = mod.dual_fw(X, y, loss, pens[name], bounds, mu=4.0, **kw)
        assert paper.accounting_holds and not paper.warnings  # mu >= ~1: the missing 1/mu does not bite
        assert 1.0 - 1e-3 <= tight.accountant_epsilon <= 1.0 and tight.accounting_holds
        assert tight.noise["noise multiplier"] <= paper.noise["noise multiplier"]


def test_paper_calibration_under_noises_for_small_mu():
    X, y, loss, pens, bounds = _private_setup()
    with pytest.warns(PrivacyCalibrationWarning, match="1/mu"):
        _, rep = mod.dual_fw(X, y, loss, pens["linf"], bounds, epsilon=1.0, delta=1e-5, n_iter=10, mu=0.05,
                             calibration="paper", noise=make_noise(0))
    assert rep.accountant_epsilon > 1.0 and not rep.accounting_holds and rep.warnings


def test_with_the_noise_off_the_private_path_converges_to_the_optimum():
    X, y, loss, pens, bounds = _private_setup(n=100)
    mu, T = 0.2, 40
    for name in ["l1"]:
        pen = pens[name]
        w, _ = mod.dual_fw(X, y, loss, pen, bounds, epsilon=1.0, delta=1e-5, n_iter=T, mu=mu, step="standard",
                           noise=ZeroNoise())
        ref = solvers.solve_prox(X, y, loss, pen, mu=mu, tol=1e-12)
        h_bound = 2 * _diameter_sq(pen) / mu / (T + 2)
        assert np.linalg.norm(w - ref.coef) <= math.sqrt(2 * h_bound / mu)
        assert solvers.duality_gap(X, y, w, loss, pen, mu) < 5e-3
    # Gaussian selection path too (group Lasso)
    glasso = norms.GroupLasso([[0, 1], [2, 3]], X.shape[1], 0.05)
    w, _ = mod.dual_fw(X, y, loss, glasso, bounds, epsilon=1.0, delta=1e-5, n_iter=T, mu=mu, step="standard",
                       noise=ZeroNoise())
    ref = solvers.solve_prox(X, y, loss, glasso, mu=mu, tol=1e-12)
    assert np.linalg.norm(w - ref.coef) < 3e-2


def test_release_dual_returns_the_dual_iterate_without_the_extra_event():
    X, y, loss, pens, bounds = _private_setup()
    rec = RecordingNoise(0)
    s, rep = mod.dual_fw(X, y, loss, pens["l1"], bounds, epsilon=1.0, delta=1e-5, n_iter=5, release="dual",
                         noise=rec)
    assert not any(d[0] == "gaussian" for d in rec.draws)
    assert pens["l1"].dual_norm(s) <= pens["l1"].alpha * (1 + 1e-12) and s[-1] == 0.0
    _, rep2 = mod.dual_fw(X, y, loss, pens["l1"], bounds, epsilon=1.0, delta=1e-5, n_iter=5, noise=make_noise(0))
    assert rep.noise["noise multiplier"] < rep2.noise["noise multiplier"]


def test_refusals():
    X, y, loss, pens, bounds = _private_setup(n=50)
    kw = dict(epsilon=1.0, delta=1e-5, noise=make_noise(0))
    with pytest.raises(ValueError, match="option mu must be"):
        mod.dual_fw(X, y, loss, pens["l1"], bounds, mu=0.0, **kw)
    with pytest.raises(ValueError, match="option mu must be"):
        mod.dual_frank_wolfe(X, y, loss, pens["l1"], mu=-1.0)
    with pytest.raises(ValueError, match="cardinality function"):
        mod.dual_fw(X, y, loss, norms.L1(0.1), bounds, **kw)
    with pytest.raises(ValueError, match="lmo_dual_ball"):
        mod.dual_frank_wolfe(X, y, loss, norms.L1(0.1), mu=1.0)
    with pytest.raises(ValueError, match="smooth"):
        mod.dual_fw(X, y, losses.Hinge(), pens["l1"], bounds, **kw)
    with pytest.raises(ValueError, match="clip"):
        mod.dual_fw(X, y, losses.Squared(), pens["l1"], bounds, **kw)
    glasso = norms.GroupLasso([[0, 1]], X.shape[1], 0.1)
    with pytest.raises(ValueError, match="enumerable"):
        mod.dual_fw(X, y, loss, glasso, bounds, calibration="paper", **kw)
    with pytest.raises(ValueError, match="selection='gaussian'"):
        mod.dual_fw(X, y, loss, glasso, bounds, selection="exponential", **kw)
    big = norms.SubmodularNorm(norms.Cardinality(20), 0.1)
    Xb = np.clip(np.random.default_rng(0).normal(0, 0.5, (50, 20)), -1, 1)
    with pytest.raises(ValueError, match="enumerates the vertices"):
        mod.dual_fw(Xb, y, loss, big, np.ones(20), calibration="paper", **kw)
    for bad in [dict(calibration="exact"), dict(selection="laplace"), dict(step="2/t"), dict(release="both"),
                dict(n_iter=0), dict(alpha_bad=None)]:
        if "alpha_bad" in bad:
            with pytest.raises(ValueError, match="alpha > 0"):
                mod.dual_fw(X, y, loss, norms.SubmodularNorm(norms.Cardinality(5), 0.0), bounds, **kw)
            continue
        with pytest.raises(ValueError):
            mod.dual_fw(X, y, loss, pens["l1"], bounds, **kw, **bad)


def test_theorem4_helpers():
    n, eps, delta, G, L, Gw, logS = 1000, 1.0, 1e-5, 2.0, 1.5, 3.0, 10 * math.log(2)
    T = mod.theorem4_iterations(n, eps, G, L, Gw)
    assert T == math.ceil(G ** (4 / 3) * (n * eps) ** (2 / 3) / (L * Gw) ** (2 / 3))
    bound = mod.theorem4_bound(n, eps, delta, G, L, Gw, logS)
    assert bound == pytest.approx(G ** (2 / 3) * (L * Gw) ** (2 / 3) * math.log(n * 2**10)
                                  * math.sqrt(math.log(1 / delta)) / (n * eps) ** (2 / 3))
    assert mod.paper_laplace_scale(1.0, 2.0, 100, 1.0, 1e-5, 4) == pytest.approx(
        2.0 * math.sqrt(32 * math.log(1e5)) / 100)
