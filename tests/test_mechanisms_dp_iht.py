"""Noisy iterative hard thresholding with peeling (mechanism dp-iht)."""
import warnings

import numpy as np
import pytest

from conftest import planted_sparse
from doubles import RecordingNoise
from dpsparse import DPLasso, DPLogisticRegression, audit, data, losses, norms
from dpsparse.accounting import Ledger
from dpsparse.mechanisms import REGISTRY, fit_mechanism, make_plan
from dpsparse.mechanisms.dp_iht import _tight_scale, default_steps

MECH = REGISTRY["dp-iht"]


def _design(n=300, p=20, seed=0):
    X, y, _, bounds = planted_sparse(n, p, 3, seed)
    return data.prepare(X, y, bounds, classification=False)


def test_plan_composes_t_s_peeling_draws_and_t_gaussian_releases():
    design = _design()
    loss, pen = losses.Squared(clip=0.5), norms.build_penalty("l1", 0.0, 20, True)
    plan = make_plan(MECH, design, loss, pen, 1.0, 1e-5, None, {"n_iter": 4, "sparsity": 3})
    u = _tight_scale(4, 3, 1.0, 1e-5)
    # each release: noise u lambda sqrt(s + 1) on an L2 sensitivity lambda sqrt(s + 1) (equal bounds): multiplier u
    expected = Ledger().exponential(2.0 / u, 12).gaussian(u, 1.0, 4)
    assert plan.ledger.events == expected.events
    assert plan.accountant_epsilon <= 1.0 and _tight_scale(4, 3, 1.0 * 1.01, 1e-5) < u
    factor = default_steps(loss, design.n, design.p, 1.0)[0]
    lam = 2.0 * factor * 0.5 * 1.0 / design.n  # 2 eta c b / n, eta = factor / f'' (f'' = 1), c = clip, b = 1
    assert plan.details["score sensitivity (L_inf)"] == pytest.approx(lam)
    assert plan.details["noise std"] == pytest.approx(u * lam * 2.0)


def test_run_peels_s_coordinates_per_iteration_with_the_declared_noise():
    design = _design()
    loss, pen = losses.Squared(clip=0.5), norms.build_penalty("l1", 0.0, 20, True)
    rec = RecordingNoise(0)
    w, report = fit_mechanism(MECH, design, loss, pen, epsilon=1.0, delta=1e-5, options={"n_iter": 3, "sparsity": 4},
                              noise=rec)
    gumbel, gauss = rec.of("gumbel"), rec.of("gaussian")
    assert [d.values.size for d in gumbel] == [20, 19, 18, 17] * 3  # the intercept is never a candidate
    assert len(gauss) == 3 and all(d.values.size == 5 for d in gauss)
    assert [float(np.max(d.scale)) for d in gumbel] == pytest.approx([report.noise["gumbel scale"]] * 12)
    assert [float(np.max(d.scale)) for d in gauss] == pytest.approx([report.noise["noise std"]] * 3)
    assert np.count_nonzero(w[:-1]) == 4 and report.accounting_holds


def test_replay_stays_within_the_declared_sensitivities_on_every_pair():
    bounds, pairs = audit.neighbouring_pairs(n=21, p=3, classification=False)
    pen = norms.build_penalty("l1", 0.0, 3, True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for pair in pairs.values():
            ratios = audit.sensitivity_replay("dp-iht", pair, bounds, losses.Huber(1.0), pen,
                                              options={"n_iter": 3, "sparsity": 2}, classification=False, repeats=3)
            assert max(ratios.values()) <= 1.0 + 1e-9


def test_sparsity_larger_than_the_features_is_refused_before_the_fit():
    design = _design(p=20)
    with pytest.raises(ValueError, match="sparsity must be at most the number of features \\(20\\)"):
        make_plan(MECH, design, losses.Squared(clip=1.0), norms.build_penalty("l1", 0.0, 20, True), 1.0, 1e-5,
                  None, {"sparsity": 21})


def test_large_epsilon_recovers_the_planted_support_through_the_estimators():
    X, y, w, bounds = planted_sparse()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPLasso(bounds=bounds, epsilon=50.0, clip=0.25, mechanism="dp-iht", random_state=0,
                      mechanism_options={"sparsity": 5, "n_iter": 80}).fit(X, y)  # the default step is short
    assert set(est.support_) == set(np.flatnonzero(w))
    assert est.score(X, y) > 0.9
    Xc, yc, wc, bc = planted_sparse(classification=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = DPLogisticRegression(bounds=bc, epsilon=50.0, mechanism="dp-iht", random_state=0, classes=[0, 1],
                                   mechanism_options={"sparsity": 5}).fit(Xc, yc)
    assert set(clf.support_) == set(np.flatnonzero(wc)) and clf.score(Xc, yc) > 0.8


def test_a_sparse_design_runs_sparse():
    X, y, _, bounds = planted_sparse(n=400, p=50)
    import scipy.sparse as sp

    from dpsparse.noise import make_noise

    design = data.prepare(sp.csr_matrix(np.where(np.abs(X) > 0.4, X, 0.0)), y, bounds, classification=False)
    assert not np.any(design.X.c) and sp.issparse(design.X.S)  # symmetric ranges: the zeros stay zeros
    w, _ = fit_mechanism(REGISTRY["dp-iht"], design, losses.Squared(clip=1.0), None, epsilon=5.0, delta=1e-6,
                         options={"sparsity": 10}, noise=make_noise(0))
    assert np.count_nonzero(w[:-1]) == 10 and np.all(np.isfinite(w))


def test_named_with_nothing_else_set_it_does_not_diverge_on_features_off_the_middle_of_their_range():
    """Features filling 30 % of [-1, 1] around centres off 0 are nearly collinear with the kept intercept: with the
    former step 1 / sup f'' (10 iterations) the noisy iteration blew up at epsilon 1 (R^2 about -7); the default
    (``STEPS``) stays near or above the constant predictor."""
    rng = np.random.default_rng(2035)
    n, p = 2000, 30
    Z = rng.uniform(-1, 1, (n, p))
    X = np.clip(rng.uniform(-0.7, 0.7, p) + 0.3 * (0.8 * Z + 0.2 * Z[:, rng.integers(p, size=p)]), -1, 1)
    w = np.zeros(p)
    w[:5] = rng.choice([-1.0, 1.0], 5) * rng.uniform(0.5, 1.5, 5)
    y = X @ w + 0.3 * (X @ w).std() * rng.standard_normal(n)
    half = 5.0 * y.std()
    bounds = data.Bounds(feature_low=-np.ones(p), feature_high=np.ones(p), label_low=-half, label_high=half)
    scores = {}
    for name, options in (("former", {"learning_rate": 1.0, "n_iter": 10}), ("default", {})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = DPLasso(bounds=bounds, epsilon=1.0, mechanism="dp-iht", random_state=0,
                          mechanism_options=options or None).fit(X, y)
        scores[name] = est.score(X, y)
    assert scores["former"] < -1.0 and scores["default"] > -0.5, scores  # -7.6 and -0.05


def test_the_default_steps_follow_the_loss_and_n_epsilon_over_log_p():
    """``dp_iht.STEPS``: an eighth of ``1 / sup f''`` and 20 iterations, and for least squares a quarter and 40 from
    ``n epsilon = 800 log p``; the plan takes them unless ``learning_rate`` or ``n_iter`` is given."""
    import math

    squared = losses.Squared(clip=0.5)
    assert default_steps(squared, 2000, 31, 1.0) == (0.125, 20)
    assert default_steps(squared, 10_000, 31, 1.0) == (0.25, 40)
    assert default_steps(losses.Huber(1.0), int(800 * math.log(100)) + 1, 100, 1.0) == (0.25, 40)
    assert default_steps(losses.Logistic(), 10**6, 31, 1.0) == (0.125, 20)
    for n, factor, T in ((400, 0.125, 20), (5000, 0.25, 40)):
        design = _design(n=n)
        loss, pen = losses.Squared(clip=0.5), norms.build_penalty("l1", 0.0, 20, True)
        plan = make_plan(MECH, design, loss, pen, 1.0, 1e-5, None, {})
        assert plan.iterations == T and plan.details["learning rate"] == pytest.approx(factor)
        plan = make_plan(MECH, design, loss, pen, 1.0, 1e-5, None, {"n_iter": 7, "learning_rate": 0.3})
        assert plan.iterations == 7 and plan.details["learning rate"] == pytest.approx(0.3)
