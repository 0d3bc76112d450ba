"""Output perturbation: sensitivity, noise, calibration, refusals.

Sources: Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 1;
Kumar & Deisenroth, "Differentially Private Empirical Risk Minimization with Sparsity-Inducing
Norms", arXiv 2019, section 4.1.
"""
import math

import numpy as np
import pytest
from scipy import stats

from conftest import bounded_problem, intercept_weights
from doubles import RecordingNoise
from dpsparse import losses, norms, solvers
from dpsparse.mechanisms import output_perturbation as mod
from dpsparse.noise import NoiseSource

EPS, DELTA = 1.0, 1e-5


def _setup(n=200, p=6, seed=0, alpha=0.02):
    X, y = bounded_problem(n=n, p=p, seed=seed)
    return X, y, losses.Logistic(), norms.L1(alpha, intercept_weights(X.shape[1])), np.ones(X.shape[1])


def _fit(X, y, loss, pen, b, noise, **kw):
    kw.setdefault("mu", 0.1)
    return mod.output_perturbation(X, y, loss, pen, b, epsilon=kw.pop("epsilon", EPS), delta=DELTA, noise=noise, **kw)


# --- calibration ---------------------------------------------------------------------------

@pytest.mark.parametrize("eps,delta", [(0.5, 1e-5), (1.0, 1e-6), (4.0, 1e-3)])
def test_tight_calibration_is_the_analytic_gaussian(eps, delta):
    """The PLD-calibrated sigma meets Balle & Wang's delta(eps) and is within 0.2% of the smallest that does."""
    m = mod._tight_multiplier(eps, delta)
    assert mod.analytic_gaussian_delta(m, 1.0, eps) <= delta * (1 + 1e-6)
    assert mod.analytic_gaussian_delta(m / 1.002, 1.0, eps) > delta


def test_paper_calibration_is_the_classic_gaussian_and_refuses_large_epsilon():
    X, y, loss, pen, b = _setup()
    rec = RecordingNoise()
    _, rep = _fit(X, y, loss, pen, b, rec, calibration="paper", epsilon=0.5)
    sens = rep.noise["sensitivity (L2)"]
    assert rec.draws[0].scale == pytest.approx(sens * math.sqrt(2 * math.log(1.25 / DELTA)) / 0.5)
    assert rep.accountant_epsilon <= 0.5 and rep.accounting_holds
    with pytest.raises(ValueError, match="epsilon < 1"):
        _fit(X, y, loss, pen, b, rec, calibration="paper", epsilon=1.0)


def test_declared_sensitivity_formula_and_report():
    X, y, loss, pen, b = _setup()
    rec = RecordingNoise()
    _, rep = _fit(X, y, loss, pen, b, rec, mu=0.2, tol=1e-9)
    n, R = X.shape[0], math.sqrt(X.shape[1])
    assert rep.noise["sensitivity (L2)"] == pytest.approx(2 * R / (n * 0.2) + 2 * math.sqrt(2e-9 / 0.2))
    assert "certified gap" not in rep.noise  # a data-dependent number: never in the report
    assert rep.accountant_epsilon <= EPS * (1 + 1e-9) and rep.accounting_holds
    assert rec.draws[0].scale == pytest.approx(rep.noise["noise std"])


# --- sensitivity ---------------------------------------------------------------------------

def test_released_minimizers_of_neighbours_move_at_most_the_sensitivity():
    """Replace one record (adversarially: flipped label, extreme row) and re-solve: ||w - w'|| <= Delta_2."""
    X, y, loss, pen, b = _setup(n=100)
    mu, tol = 0.05, 1e-12
    ratios = []
    rng = np.random.default_rng(1)
    for _ in range(6):
        X2, y2 = X.copy(), y.copy()
        i = int(rng.integers(len(y)))
        X2[i, :-1] = rng.choice([-1.0, 1.0], X.shape[1] - 1)
        y2[i] = -y[i]
        w1 = solvers.solve_prox(X, y, loss, pen, mu=mu, tol=tol)
        w2 = solvers.solve_prox(X2, y2, loss, pen, mu=mu, tol=tol)
        assert w1.gap <= tol and w2.gap <= tol
        sens = mod.sensitivity(math.sqrt(X.shape[1]), len(y), mu, tol)
        ratios.append(np.linalg.norm(w1.coef - w2.coef) / sens)
    assert max(ratios) <= 1.0
    print(f"worst ||w - w'|| / Delta_2 = {max(ratios):.3f}")


# --- noise ----------------------------------------------------------------------------------

def test_noise_drawn_is_the_declared_gaussian():
    """The released point minus the solver's point, over the declared std, is N(0, 1) (KS)."""
    X, y, loss, pen, b = _setup(n=100, p=60)
    z = []
    for s in range(4):
        rec = RecordingNoise(seed=s)
        w, rep = _fit(X, y, loss, pen, b, rec)
        _, sigma, draw = rec.draws[0]
        assert np.all(sigma == rep.noise["noise std"]) and draw.shape == (X.shape[1],)
        z.append(draw / sigma)
    assert stats.kstest(np.concatenate(z), "norm").pvalue > 1e-3


def test_zero_noise_returns_the_non_private_optimum():
    X, y, loss, pen, b = _setup()
    w, rep = _fit(X, y, loss, pen, b, RecordingNoise(zero=True), mu=0.1, tol=1e-10)
    ref = solvers.solve_prox(X, y, loss, pen, mu=0.1, tol=1e-12)
    assert solvers.objective(X, y, w, loss, pen, 0.1) - ref.objective <= 1e-10 + ref.gap
    assert np.linalg.norm(w - ref.coef) <= math.sqrt(2 * 2e-10 / 0.1)


def test_structured_norm_and_excess_risk_bound_holds():
    X, y, loss, _, b = _setup(n=300, p=5)
    p = X.shape[1]
    pen = norms.SubmodularNorm(norms.Nonempty(p - 1), alpha=0.01, unpenalized=[p - 1])
    mu = 0.1
    ref = solvers.solve_prox(X, y, loss, pen, mu=mu, tol=1e-12)
    excess, sig = [], None
    for s in range(10):
        w, rep = _fit(X, y, loss, pen, b, NoiseSource(np.random.default_rng(s), True), mu=mu, tol=1e-10)
        sig = rep.noise["noise std"]
        excess.append(solvers.objective(X, y, w, loss, pen, mu) - ref.objective)
    bound = mod.theorem1_excess_risk_bound(loss, pen, b, sigma=sig, mu=mu, tol=1e-10)
    assert np.mean(excess) <= bound["bound"]
    l1 = mod.theorem1_excess_risk_bound(loss, norms.L1(0.01, intercept_weights(p)), b, sigma=1.0, mu=0.0)
    assert l1["penalty"] == pytest.approx(0.01 * (p - 1) * math.sqrt(2 / math.pi))


# --- refusals -------------------------------------------------------------------------------

@pytest.mark.parametrize("mu", [0.0, -1.0])
def test_refuses_mu_not_positive(mu):
    X, y, loss, pen, b = _setup()
    with pytest.raises(ValueError, match="option mu must be"):
        _fit(X, y, loss, pen, b, RecordingNoise(), mu=mu)


def test_refuses_non_smooth_and_unbounded_losses():
    X, y, _, pen, b = _setup()
    with pytest.raises(ValueError, match="not smooth"):
        _fit(X, y, losses.Hinge(), pen, b, RecordingNoise())
    Xr, yr = bounded_problem(n=100, p=4, classification=False)
    with pytest.raises(ValueError, match="not Lipschitz"):
        _fit(Xr, yr, losses.Squared(), norms.L1(0.01), np.ones(5), RecordingNoise())
    w, rep = _fit(Xr, yr, losses.Squared(clip=1.0), norms.L1(0.01), np.ones(5), RecordingNoise())
    assert rep.accounting_holds


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_public_iteration_count_reaches_the_tolerance_whatever_the_data(seed):
    """V-FISTA run for exactly ``linear_rate_iterations`` (no early stop) is within tol of F*:
    the sensitivity needs no data-dependent certificate, so a fit never fails on the data."""
    X, y = bounded_problem(n=150, p=6, seed=seed, classification=False)
    loss, mu, tol = losses.Huber(1.0), 0.05, 1e-6
    pen = norms.make_penalty("l1", 0.02, intercept_weights(X.shape[1]))
    R2 = X.shape[1]
    smooth = loss.smoothness * R2 + mu
    k = solvers.linear_rate_iterations(smooth, mu, 2.0 * mod.zero_loss_bound(loss), tol)
    grad = lambda w: X.T @ loss.derivative(X @ w, y) / X.shape[0] + mu * w  # noqa: E731
    w, it = solvers.accelerated_proximal_gradient(grad, pen.prox, np.zeros(X.shape[1]), 1.0 / smooth, k,
                                                  strong_convexity=mu)
    ref = solvers.solve_prox(X, y, loss, pen, mu=mu, tol=1e-13)
    assert it == k
    assert solvers.objective(X, y, w, loss, pen, mu) - ref.objective <= tol
