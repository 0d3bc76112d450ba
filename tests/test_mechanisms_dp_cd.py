"""DP-CD (Mangold et al., ICML 2022): noise scales, sensitivity, calibration, convergence, refusals."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from conftest import bounded_problem, intercept_weights
from doubles import RecordingNoise
from dpsparse import losses, norms, solvers
from dpsparse.accounting import Ledger
from dpsparse.exceptions import PrivacyCalibrationWarning
from dpsparse.mechanisms import dp_cd as mod
from dpsparse.noise import make_noise

T, DELTA = 20, 1e-5  # shared by the tests that calibrate, so the cached tight noise is reused


def _setup(classification=True, n=300, p=6, seed=0, alpha=0.01):
    X, y = bounded_problem(n=n, p=p, seed=seed, classification=classification)
    loss = losses.Logistic() if classification else losses.Squared(clip=1.0)
    return X, y, loss, norms.L1(alpha, intercept_weights(X.shape[1]))


def _uneven_bounds(p):
    """Valid public bounds (the design is in [-1, 1]) that differ across coordinates."""
    return np.linspace(1.0, 3.0, p)


# --- calibration -----------------------------------------------------------------------------

def test_paper_calibration_uses_the_formula():
    """sigma_j^2 = 12 C_j^2 T K log(1/delta) / (n^2 epsilon^2), per coordinate."""
    X, y, loss, pen = _setup()
    n, p = X.shape
    b = _uneven_bounds(p)
    for eps, K, clip in [(1.0, None, None), (0.5, 3, 0.4 * b)]:
        noise = RecordingNoise(0)
        _, rep = mod.dp_cd(X, y, loss, pen, b, epsilon=eps, delta=DELTA, n_iter=T, calibration="paper",
                           noise=noise, updates_per_epoch=K, clipping_norm=clip)
        K = p if K is None else K
        C = b if clip is None else clip  # logistic: sup|f'| = 1
        sigma = np.sqrt(12 * C**2 * T * K * math.log(1 / DELTA) / (n**2 * eps**2))
        assert rep.noise["noise std"] == pytest.approx(sigma.max(), rel=1e-12)
        assert rep.noise["paper noise std"] == pytest.approx(sigma.max(), rel=1e-12)
        assert rep.noise["noise multiplier"] == pytest.approx(sigma[0] / (2 * C[0] / n), rel=1e-12)
        assert rep.noise["coordinate updates"] == T * K and rep.iterations == T
        coords = np.concatenate(noise.coords)
        scales = np.concatenate([d.scale for d in noise.of("gaussian")])
        np.testing.assert_allclose(scales, sigma[coords], rtol=1e-12)  # sigma_j of the drawn coordinate
        assert rep.accountant_epsilon <= eps and rep.accounting_holds and not rep.warnings


def test_paper_formula_is_the_rdp_bound_of_its_theorem():
    """The re-derivation in the module docstring: RDP alone meets epsilon for epsilon <= 1, delta < 1/3."""
    for eps in [0.05, 0.3, 1.0]:
        for delta in [0.33, 1e-3, 1e-8]:
            for N in [1, 50, 10_000]:
                ledger = Ledger().gaussian(mod.paper_multiplier(N, eps, delta), 1.0, N)
                assert ledger._rdp_epsilon(delta) <= eps


def test_tight_calibration_meets_the_target_with_less_noise():
    X, y, loss, pen = _setup()
    for eps in [0.5, 2.0]:
        kw = dict(epsilon=eps, delta=DELTA, n_iter=T, noise=make_noise(0))
        _, paper = mod.dp_cd(X, y, loss, pen, np.ones(X.shape[1]), calibration="paper", **kw)
        _, tight = mod.dp_cd(X, y, loss, pen, np.ones(X.shape[1]), calibration="tight", **kw)
        assert eps - 1e-3 <= tight.accountant_epsilon <= eps
        assert tight.accounting_holds and paper.accounting_holds
        assert tight.noise["noise std"] < paper.noise["noise std"]
        assert tight.noise["paper noise std"] == pytest.approx(paper.noise["noise std"])


def test_paper_calibration_warns_when_it_misses_the_target():
    """Far outside the theorem's epsilon <= 1 the formula is short of the target."""
    X, y, loss, pen = _setup()
    with pytest.warns(PrivacyCalibrationWarning, match="calibration='tight'"):
        _, rep = mod.dp_cd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=40.0, delta=1e-6, n_iter=30,
                           calibration="paper", noise=make_noise(0))
    assert rep.accountant_epsilon > 40.0 and not rep.accounting_holds and rep.warnings


# --- the noise drawn -------------------------------------------------------------------------

@pytest.mark.parametrize("calibration,eps", [("paper", 0.5), ("tight", 0.5), ("tight", 2.0)])
def test_noise_drawn_matches_the_declared_scale(calibration, eps):
    X, y, loss, pen = _setup()
    n, p = X.shape
    b = _uneven_bounds(p)
    noise = RecordingNoise(1)
    _, rep = mod.dp_cd(X, y, loss, pen, np.ones(p), epsilon=eps, delta=DELTA, n_iter=T, calibration=calibration,
                       noise=noise)
    scales = np.concatenate([d.scale for d in noise.of("gaussian")])
    values = np.concatenate([d.values for d in noise.of("gaussian")])
    assert scales.size == T * p == rep.noise["coordinate updates"]  # one draw per update
    np.testing.assert_allclose(scales, rep.noise["noise std"], rtol=1e-12)
    np.testing.assert_allclose(scales, rep.noise["noise multiplier"] * 2 / n, rtol=1e-12)
    assert stats.kstest(values / scales, stats.norm.cdf).pvalue > 1e-3
    # uneven bounds: sigma_j = m 2 C_j / n for the coordinate drawn, the same m
    noise = RecordingNoise(2)
    _, rep2 = mod.dp_cd(X, y, loss, pen, b, epsilon=eps, delta=DELTA, n_iter=T, calibration=calibration,
                        noise=noise)
    coords = np.concatenate(noise.coords)
    scales = np.concatenate([d.scale for d in noise.of("gaussian")])
    np.testing.assert_allclose(scales, rep2.noise["noise multiplier"] * 2 * b[coords] / n, rtol=1e-12)
    assert rep2.noise["noise multiplier"] == pytest.approx(rep.noise["noise multiplier"], rel=1e-12)


def test_coordinates_are_drawn_uniformly():
    """Chi-square goodness of fit of the coordinates drawn, false-alarm rate 1e-3."""
    X, y, loss, pen = _setup()
    p = X.shape[1]
    noise = RecordingNoise(3)
    mod.cd(X, y, loss.derivative, pen, np.ones(p), np.ones(p), 2000, p, np.zeros(p), noise)
    counts = np.bincount(np.concatenate(noise.coords), minlength=p)
    assert counts.sum() == 2000 * p
    assert stats.chisquare(counts).pvalue > 1e-3


# --- sensitivity -----------------------------------------------------------------------------

def _neighbours(classification, seed):
    """Two datasets differing in one record; the replacement is an extreme record."""
    X, y, loss, pen = _setup(classification=classification, seed=seed)
    rng = np.random.default_rng(seed)
    X2, y2 = X.copy(), y.copy()
    i = rng.integers(X.shape[0])
    X2[i, :-1] = rng.choice([-1.0, 1.0], X.shape[1] - 1)
    y2[i] = -y[i] if classification else -np.sign(y[i])
    return X, y, X2, y2, loss


@pytest.mark.parametrize("case", ["logistic", "logistic clipped", "squared raw, clipped"])
def test_clipped_coordinate_gradient_changes_by_at_most_its_sensitivity(case):
    """|g_j(D) - g_j(D')| <= 2 C_j / n at the same iterate, and the bound is nearly attained."""
    classification = case.startswith("logistic")
    worst = 0.0
    for seed in range(10):
        X, y, X2, y2, loss = _neighbours(classification, seed)
        n, p = X.shape
        if case == "logistic":
            derivative, C = loss.derivative, np.ones(p)  # default C_j = sup|f'| b_j: nothing clipped
        elif case == "logistic clipped":
            derivative, C = loss.derivative, np.linspace(0.1, 0.5, p)
        else:  # Squared() has no bound on f' = z - y: only the coordinate clipping bounds the terms
            derivative, C = losses.Squared().derivative, np.linspace(0.5, 2.0, p)
        rng = np.random.default_rng(seed)
        for _ in range(20):
            w = rng.normal(0, 3, p) * (rng.random(p) < 0.7)
            z, z2 = X @ w, X2 @ w
            for j in range(p):
                g = mod.coordinate_gradient(X, z, y, derivative, j, C[j])
                g2 = mod.coordinate_gradient(X2, z2, y2, derivative, j, C[j])
                ratio = abs(g - g2) / (2 * C[j] / n)
                assert ratio <= 1 + 1e-12
                worst = max(worst, ratio)
    assert worst > (0.9 if "clipped" in case else 0.5)  # an inflated sensitivity claim would be caught


def test_coordinate_gradient_is_the_gradient_when_nothing_is_clipped():
    X, y, loss, _ = _setup()
    Xs = sp.csc_matrix(np.where(np.abs(X) < 0.3, 0.0, X))
    w = np.random.default_rng(0).normal(size=X.shape[1])
    for A in [X, Xs]:
        z = A @ w
        full = np.asarray(A.T @ loss.derivative(z, y)).ravel() / X.shape[0]
        got = [mod.coordinate_gradient(A if sp.issparse(A) else np.asfortranarray(A), z, y, loss.derivative, j, 1.0)
               for j in range(X.shape[1])]
        np.testing.assert_allclose(got, full, atol=1e-14)


# --- optimization ----------------------------------------------------------------------------

def test_without_noise_l1_logistic_converges_to_the_optimum():
    X, y, loss, pen = _setup(alpha=0.02)
    p = X.shape[1]
    M = loss.coordinate_smoothness(np.ones(p))
    ref = solvers.solve(X, y, loss, pen)
    w = mod.cd(X, y, loss.derivative, pen, M, np.ones(p), 300, p, np.zeros(p), make_noise(0))
    assert solvers.objective(X, y, w, loss, pen) - ref.objective < 1e-8
    w_avg = mod.cd(X, y, loss.derivative, pen, M, np.ones(p), 300, p, np.zeros(p), make_noise(0), average=True)
    assert solvers.objective(X, y, w_avg, loss, pen) - ref.objective < 1e-6


def test_without_noise_lasso_with_inactive_clipping_converges_to_the_optimum():
    """Squared() (raw residual) with thresholds C_j far above every |r_i x_ij|: the Lasso."""
    X, y, _, pen = _setup(classification=False, alpha=0.02)
    p = X.shape[1]
    loss = losses.Squared()
    C = np.full(p, 1e3)
    seen = []
    w = mod.cd(X, y, loss.derivative, pen, loss.coordinate_smoothness(np.ones(p)), C, 300, p, np.zeros(p),
               make_noise(0), callback=lambda t, w: seen.append(np.max(np.abs((X @ w - y)[:, None] * X))))
    assert max(seen) < 1e-2 * C[0]  # the clipping never acted
    ref = solvers.solve(X, y, loss, pen)
    assert solvers.objective(X, y, w, loss, pen) - ref.objective < 1e-8


def test_averaged_variant_matches_a_naive_implementation():
    """Algorithm 1 written naively (full gradient, explicit average of the K inner iterates)."""
    X, y, loss, pen = _setup(n=100, p=4)
    n, p = X.shape
    M, C = loss.coordinate_smoothness(np.ones(p)), np.full(p, 0.3)
    stds = np.linspace(0.01, 0.05, p)
    Tn, K = 5, 9
    got = mod.cd(X, y, loss.derivative, pen, M, C, Tn, K, stds, make_noise(4), average=True)
    rng = np.random.default_rng(4)
    w = np.zeros(p)
    for _ in range(Tn):
        coords = rng.integers(p, size=K)
        etas = rng.normal(0.0, stds[coords])
        theta, inner = w.copy(), []
        for j, eta in zip(coords, etas):
            g = np.mean(np.clip(loss.derivative(X @ theta, y) * X[:, j], -C[j], C[j]))
            v = theta.copy()
            v[j] -= (g + eta) / M[j]
            theta[j] = pen.prox(v, 1.0 / M)[j]
            inner.append(theta.copy())
        w = np.mean(inner, axis=0)
    np.testing.assert_allclose(got, w, atol=1e-12)


def test_private_fit_approaches_the_optimum_at_large_epsilon():
    X, y, loss, pen = _setup(n=2000)
    p = X.shape[1]
    ref = solvers.solve(X, y, loss, pen)
    rel = lambda w: ((solvers.objective(X, y, w, loss, pen) - ref.objective)  # noqa: E731
                     / (solvers.objective(X, y, 0 * w, loss, pen) - ref.objective))
    Tn = 10
    exact = rel(mod.cd(X, y, loss.derivative, pen, loss.coordinate_smoothness(np.ones(p)), np.ones(p), Tn, p,
                       np.zeros(p), make_noise(0)))
    # paper calibration (fast to account) at epsilon = 20, where it still meets its target
    errs = {eps: np.mean([rel(mod.dp_cd(X, y, loss, pen, np.ones(p), epsilon=eps, delta=1e-6, n_iter=Tn,
                                        calibration="paper", noise=make_noise(seed))[0]) for seed in range(3)])
            for eps in [0.2, 20.0]}
    assert errs[20.0] < exact + 0.01 < errs[0.2]


def test_sparse_and_dense_inputs_give_the_same_iterates():
    X, y, loss, pen = _setup()
    X[np.abs(X) < 0.3] = 0.0
    kw = dict(epsilon=1.0, delta=DELTA, n_iter=15, calibration="paper", clipping_norm=0.5)
    w1, _ = mod.dp_cd(X, y, loss, pen, np.ones(X.shape[1]), noise=make_noise(7), **kw)
    w2, _ = mod.dp_cd(sp.csr_matrix(X), y, loss, pen, np.ones(X.shape[1]), noise=make_noise(7), **kw)
    np.testing.assert_allclose(w1, w2, atol=1e-12)


def test_report_and_callback_count_epochs():
    X, y, loss, pen = _setup()
    calls = []
    _, rep = mod.dp_cd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=1.0, delta=DELTA, n_iter=7, calibration="paper",
                       noise=make_noise(0), updates_per_epoch=3, average=True, callback=lambda t, w: calls.append(t))
    assert calls == list(range(7)) and rep.iterations == 7
    assert rep.noise["coordinate updates"] == 21 and rep.noise["updates per epoch"] == 3
    assert rep.noise["iterate"] == "average of each epoch" and "Mangold" in rep.noise["source"]
    assert rep.accountant in ("pld", "rdp", "gaussian")


# --- refusals --------------------------------------------------------------------------------

@pytest.mark.parametrize("kw,match", [
    (dict(calibration="loose"), "unknown calibration"), (dict(n_iter=0), "n_iter"), (dict(n_iter=2.5), "n_iter"),
    (dict(epsilon=0.0), "epsilon"), (dict(delta=1.0), "delta"), (dict(updates_per_epoch=0), "updates_per_epoch"),
    (dict(clipping_norm=0.0), "clip"), (dict(clipping_norm=[1.0, 2.0]), "clip"), (dict(clipping_norm=np.inf), "clip"),
])
def test_invalid_arguments(kw, match):
    X, y, loss, pen = _setup()
    args = dict(epsilon=1.0, delta=DELTA, n_iter=5, noise=make_noise(0)) | kw
    with pytest.raises(ValueError, match=match):
        mod.dp_cd(X, y, loss, pen, np.ones(X.shape[1]), **args)


def test_invalid_bounds():
    X, y, loss, pen = _setup()
    for b in [np.ones(3), np.zeros(X.shape[1]), np.full(X.shape[1], np.nan)]:
        with pytest.raises(ValueError, match="feature_bounds"):
            mod.dp_cd(X, y, loss, pen, b, epsilon=1.0, delta=DELTA, noise=make_noise(0))


def test_refuses_a_non_separable_penalty():
    X, y, loss, _ = _setup()

    class Ball(norms.Penalty):
        def prox(self, x, step):
            return x

    for pen in [Ball(), norms.GroupLasso([[0, 1], [2, 3]], X.shape[1], alpha=0.1)]:
        with pytest.raises(ValueError, match="separable"):
            mod.dp_cd(X, y, loss, pen, np.ones(X.shape[1]), epsilon=1.0, delta=DELTA, noise=make_noise(0))


def test_refuses_a_non_smooth_loss():
    X, y, _, pen = _setup()
    with pytest.raises(ValueError, match="smooth"):
        mod.dp_cd(X, y, losses.Hinge(), pen, np.ones(X.shape[1]), epsilon=1.0, delta=DELTA, noise=make_noise(0))


def test_unbounded_squared_loss_needs_clip():
    X, y, _, pen = _setup(classification=False)
    with pytest.raises(ValueError, match="clip"):
        mod.dp_cd(X, y, losses.Squared(), pen, np.ones(X.shape[1]), epsilon=1.0, delta=DELTA, noise=make_noise(0))
    # with explicit thresholds the raw residual is clipped coordinate-wise, and the fit is private
    _, rep = mod.dp_cd(X, y, losses.Squared(), pen, np.ones(X.shape[1]), epsilon=1.0, delta=DELTA, n_iter=T,
                       calibration="paper", noise=make_noise(0), clipping_norm=2.0)
    assert rep.accounting_holds and rep.noise["clipping threshold"] == 2.0


@pytest.mark.parametrize("layout", ["dense", "csc", "shifted"])
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("loss", [losses.Logistic(), losses.Huber(0.5), losses.Squared(clip=0.7)],
                         ids=lambda loss: loss.name)
@pytest.mark.parametrize("per_coordinate", [False, True], ids=["one-number", "per-coordinate"])
def test_the_compiled_epoch_matches_the_python_loop_draw_for_draw(layout, average, loss, per_coordinate):
    """Same seed, same draws: the compiled epoch (plain NoiseSource) and the loop through noise.release (any
    subclass, as the audit's) give the same model, for every loss kernel, penalty weights, the average, and a
    dense, CSC or shifted sparse design (``S + f c^T``, some columns unshifted); with the steps, thresholds, noise
    and row factors the same on every coordinate (given to the kernel as numbers) or not."""
    from dpsparse.affine import ShiftedSparse
    from dpsparse.noise import NoiseSource

    class Loop(NoiseSource):
        pass

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 40))
    if layout != "dense":
        X[rng.random(X.shape) < 0.7] = 0.0
    X = np.asfortranarray(X) if layout == "dense" else sp.csc_matrix(X)
    if layout == "shifted":
        c = np.where(rng.random(40) < 0.5, rng.uniform(-0.5, 0.5, 40), 0.0)
        X = ShiftedSparse(X * 0.5, c, rng.uniform(0.5, 1.0, 300) if per_coordinate else np.full(300, 0.8))
    y = np.sign(rng.standard_normal(300))
    penalty = norms.ElasticNet(0.02, 0.5, weights=np.r_[np.ones(39), 0.0])
    b = rng.uniform(0.5, 1.0, 40) if per_coordinate else np.ones(40)
    args = (X, y, loss.bounded_derivative, penalty, loss.coordinate_smoothness(b), loss.coordinate_lipschitz(b), 3,
            50, 0.01 * b)
    fast = mod.cd(*args, NoiseSource(np.random.default_rng(1), True), average=average,
                  kernel=loss.derivative_kernel())
    loop = mod.cd(*args, Loop(np.random.default_rng(1), True), average=average, kernel=loss.derivative_kernel())
    assert np.abs(fast).max() > 0.01
    np.testing.assert_allclose(fast, loop, rtol=0, atol=1e-12)
