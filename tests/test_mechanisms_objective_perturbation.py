"""Objective perturbation: constants, noise, routes, refusals.

Sources: Kifer, Smith & Thakurta 2012 (KST), Algorithm 1 / Theorem 2;
Kumar & Deisenroth, "Differentially Private Empirical Risk Minimization with Sparsity-Inducing
Norms", arXiv 2019, section 4.3, Proposition 2.
"""
import math

import numpy as np
import pytest
from scipy import stats

from conftest import bounded_problem, intercept_weights
from doubles import RecordingNoise
from dpsparse import losses, norms
from dpsparse.mechanisms import objective_perturbation as mod

EPS, DELTA = 1.0, 1e-5


def _setup(n=200, p=6, seed=0):
    X, y = bounded_problem(n=n, p=p, seed=seed)
    return X, y, losses.Logistic(), norms.L1(1.0, intercept_weights(X.shape[1])), np.ones(X.shape[1])


def _fit(X, y, loss, pen, b, noise, **kw):
    kw.setdefault("radius", 2.0)
    return mod.objective_perturbation(X, y, loss, pen, b, epsilon=kw.pop("epsilon", EPS), delta=DELTA,
                                      noise=noise, **kw)


# --- constants ------------------------------------------------------------------------------

def test_kst_constants_match_the_formulas():
    k = mod.kst_constants(losses.Logistic(), 2.0, 0.5, 1e-6)
    assert k["zeta"] == 2.0 and k["lambda_max"] == pytest.approx(0.25 * 4)
    assert k["Delta_min"] == pytest.approx(2 * 1.0 / 0.5)
    assert k["beta_kst"] ** 2 == pytest.approx(4.0 * (8 * math.log(2 / 1e-6) + 4 * 0.5) / 0.25)
    assert k["beta"] == pytest.approx(2 * k["beta_kst"])


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_replace_one_gaussian_tail_is_below_delta_with_two_zeta(eps, delta):
    """With the shift 2 zeta of replace-one, KST's beta (zeta -> 2 zeta) keeps the tail of the proof below delta/2;
    the printed beta (zeta) does not."""
    k = mod.kst_constants(losses.Logistic(), 1.0, eps, delta)
    assert mod.replace_one_tail(k["beta"], 2 * k["zeta"], eps, dim=2) <= delta / 2
    assert mod.replace_one_tail(k["beta_kst"], 2 * k["zeta"], eps, dim=2) > delta


def test_report_budget_split_and_declared_delta():
    X, y, loss, pen, b = _setup()
    rec = RecordingNoise()
    w, rep = _fit(X, y, loss, pen, b, rec)
    eps_1, delta_1, eps_g, delta_g = mod._split(EPS, DELTA, 0.05)
    assert delta_1 * math.exp(eps_g) + delta_g * (1 + math.exp(eps_1 + eps_g)) == pytest.approx(DELTA)
    k = mod.kst_constants(loss, math.sqrt(X.shape[1]), eps_1, delta_1)
    assert rep.noise["Delta"] == pytest.approx(k["Delta_min"])
    assert rec.draws[0].scale == pytest.approx(k["beta"])
    assert rep.accounting_holds and rep.accountant_epsilon <= EPS * (1 + 1e-9)
    assert "certified gap" not in rep.noise  # a data-dependent number: never in the report
    assert np.abs(w[:-1]).sum() <= 2.0 + 6 * rep.noise["output noise std"] * math.sqrt(X.shape[1])


# --- noise ----------------------------------------------------------------------------------

def test_noise_drawn_is_the_declared_gaussian():
    X, y, loss, pen, b = _setup(n=100, p=40)
    zb, zo = [], []
    for s in range(4):
        rec = RecordingNoise(seed=s)
        _, rep = _fit(X, y, loss, pen, b, rec)
        (_, beta, bdraw), (_, sig2, odraw) = rec.draws
        assert sig2 == pytest.approx(rep.noise["output noise std"])
        zb.append(bdraw / beta)
        zo.append(odraw / sig2)
    assert stats.kstest(np.concatenate(zb), "norm").pvalue > 1e-3
    assert stats.kstest(np.concatenate(zo), "norm").pvalue > 1e-3


# --- solver: certified gap, shift bound, zero noise -----------------------------------------

def test_zero_noise_returns_the_constrained_optimum_within_the_shift_bound():
    X, y, loss, pen, b = _setup()
    w, rep = _fit(X, y, loss, pen, b, RecordingNoise(zero=True))
    Delta = rep.noise["Delta"]
    ref, gap, _ = mod.perturbed_constrained(X, y, loss, pen, 2.0, Delta, np.zeros(X.shape[1]), tol=1e-14)
    assert gap <= 1e-14
    r_ref = math.sqrt(2 * X.shape[0] * 1e-14 / Delta)
    assert np.linalg.norm(w - ref) <= rep.noise["shift bound r"] + r_ref
    assert np.abs(w[:-1]).sum() <= 2.0


def test_submodular_ball_and_certified_gap():
    X, y, loss, _, b = _setup(p=5)
    p = X.shape[1]
    pen = norms.SubmodularNorm(norms.Nonempty(p - 1), alpha=1.0, unpenalized=[p - 1])  # L_inf ball
    bvec = np.random.default_rng(3).normal(0, 5, p)
    w, gap, _ = mod.perturbed_constrained(X, y, loss, pen, 0.3, 2.0, bvec, tol=1e-12)
    assert gap <= 1e-12 and np.max(np.abs(w[:-1])) <= 0.3
    w2, gap2, _ = mod.perturbed_constrained(X, y, loss, pen, 0.3, 2.0, bvec, tol=1e-6)
    assert np.linalg.norm(w2 - w) <= math.sqrt(2 * X.shape[0] * gap2 / 2.0) + 1e-5


# --- Proposition 2 --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["l1", "linf", "group"])
def test_primal_and_dual_routes_agree_with_the_same_noise(kind):
    X, y, loss, _, _ = _setup(n=150, p=6, seed=2)
    p = X.shape[1]
    if kind == "l1":
        pen = norms.L1(0.03, intercept_weights(p))
    elif kind == "linf":
        pen = norms.SubmodularNorm(norms.Nonempty(p - 1), alpha=0.05, unpenalized=[p - 1])
    else:
        pen = norms.GroupLasso([[0, 1], [2, 3, 4], [5]], p, alpha=0.04)
    bvec = np.random.default_rng(7).normal(0, 4.0, p)
    wp = mod.perturbed_penalized_primal(X, y, loss, pen, 3.0, bvec)
    wd, s = mod.perturbed_penalized_dual(X, y, loss, pen, 3.0, bvec)
    assert np.max(np.abs(wp - wd)) <= 1e-6
    assert pen.conjugate(s) == 0.0  # s in K = d psi(0)
    assert pen.conjugate(1.001 * s) == np.inf  # s on the boundary of K: the penalty is active


# --- refusals -------------------------------------------------------------------------------

@pytest.mark.parametrize("loss,match", [(losses.Hinge(), "not differentiable"),
                                        (losses.Squared(), "not twice differentiable"),
                                        (losses.Squared(clip=1.0), "jumps at the threshold"),
                                        (losses.Huber(1.0), "jumps at the threshold")])
def test_refuses_losses_outside_kst(loss, match):
    X, y, _, pen, b = _setup()
    with pytest.raises(ValueError, match=match):
        _fit(X, y, loss, pen, b, RecordingNoise())


def test_refuses_small_delta_non_norm_penalty_and_tight_calibration():
    X, y, loss, pen, b = _setup()
    with pytest.raises(ValueError, match="Delta must be"):
        _fit(X, y, loss, pen, b, RecordingNoise(), Delta=0.1)
    with pytest.raises(ValueError, match="needs a norm"):
        _fit(X, y, loss, norms.ElasticNet(1.0, 0.5), b, RecordingNoise())
    with pytest.raises(ValueError, match="unknown calibration"):
        _fit(X, y, loss, pen, b, RecordingNoise(), calibration="tight")
