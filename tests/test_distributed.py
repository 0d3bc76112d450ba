"""Dask arrays: a fit on a 2-worker LocalCluster gives the in-memory model, the data is read chunk by chunk (never
computed whole on the client), and what needs the data in memory is refused by name."""
import dataclasses
import math
import warnings

import numpy as np
import pytest

from dpsparse import DPLasso, DPLogisticRegression, DPSearchCV, PrivacyBudget, data

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
    with cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture
def gathered(monkeypatch):
    """The number of rows of every 2-d array a fit computes onto the client (``dask.compute`` and ``.compute()``)."""
    rows, compute = [], dask.base.compute

    def recorded(*args, **kwargs):
        out = compute(*args, **kwargs)
        rows.extend(np.shape(part)[0] for part in out if np.ndim(part) == 2)
        return out

    monkeypatch.setattr(dask.base, "compute", recorded)
    monkeypatch.setattr(dask, "compute", recorded)
    return rows


def _regression(n=4000, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, (n, p))
    X[0, 0] = 7.0  # outside the bounds: clipped in both fits
    y = X @ np.linspace(-1, 1, p) + 0.3 * rng.standard_normal(n)
    return X, y, data.Bounds(-2 * np.ones(p), 2 * np.ones(p), -8.0, 8.0, row_norm=3.0)


@pytest.mark.parametrize("mechanism,options", [("dp-gd", None), ("dp-gcd", None),
                                               ("dp-gcd", {"clipping_norm": 0.3}), ("dp-sgd", None),
                                               ("two-stage", {"second": "dp-gcd", "sparsity": 3}), ("adassp", None),
                                               ("two-stage", {"second": "adassp", "sparsity": 3})])
def test_same_seed_same_model_as_in_memory_regression(client, gathered, mechanism, options):
    X, y, bounds = _regression()
    kw = dict(bounds=bounds, mechanism=mechanism, max_iter=15, random_state=4, epsilon=1.0,
              mechanism_options=options)
    Xd = da.from_array(X, chunks=(700, 3))  # 6 row chunks, split columns (rechunked by rows)
    on_dask = DPLasso(**kw).fit(Xd, y)
    in_memory = DPLasso(**kw).fit(X, y)
    np.testing.assert_allclose(on_dask.coef_, in_memory.coef_, rtol=1e-9, atol=1e-12)
    assert on_dask.intercept_ == pytest.approx(in_memory.intercept_, rel=1e-9, abs=1e-12)
    assert on_dask.privacy_report_.clipped == in_memory.privacy_report_.clipped
    assert on_dask.privacy_report_.clipped["feature values"] == 1
    assert on_dask.privacy_report_.accountant_epsilon == in_memory.privacy_report_.accountant_epsilon
    pred = on_dask.predict(Xd)
    np.testing.assert_allclose(np.asarray(pred), in_memory.predict(X), rtol=1e-9, atol=1e-9)
    if mechanism == "dp-sgd":
        assert max(gathered, default=0) < X.shape[0] / 10  # its batches
    else:
        assert sum(gathered) == 0  # no rows, not even chunk by chunk


def test_the_least_squares_rule_on_dask_is_the_in_memory_fit(client, gathered):
    """``DPLasso``'s default on more than 30 features (two-stage: the private selection with clipped labels, then
    DP-GD with its automatic clipping norm on the selected features; here 5 steps): the in-memory model."""
    X, y, bounds = _regression(p=35)
    kw = dict(bounds=bounds, max_iter=5, random_state=4)
    on_dask = DPLasso(**kw).fit(da.from_array(X, chunks=(700, 7)), y)
    in_memory = DPLasso(**kw).fit(X, y)
    assert on_dask.privacy_report_.mechanism == "two-stage"
    np.testing.assert_allclose(on_dask.coef_, in_memory.coef_, rtol=1e-9, atol=1e-12)
    assert np.count_nonzero(on_dask.coef_) == 10
    assert on_dask.privacy_report_.noise == pytest.approx(in_memory.privacy_report_.noise, rel=1e-12)  # last bits
    assert sum(gathered) == 0


def _classification(n=3000, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, (n, p))
    y = np.where(X @ np.linspace(-1, 1, p) + 0.5 * rng.standard_normal(n) > 0, 1, 0)
    return X, y, data.Bounds(-2 * np.ones(p), 2 * np.ones(p), row_norm=3.0, classes=[0, 1])


def _solver_bound(report, prefix=""):
    """Two released minimizers certified to the same gap ``tol`` lie within ``2 sqrt(2 tol / mu)`` (each within
    ``sqrt(2 tol / mu)`` of the exact one, by strong convexity): output perturbation's gap."""
    noise = report.noise
    return 2.0 * math.sqrt(2.0 * noise[prefix + "solver tolerance"] / noise[prefix + "mu"])


EXACT = (1e-9, None)  # the same arithmetic up to the order of the sums
SOLVERS = {  # the bound on the distance between two certified solutions (L2, bounded coordinates)
    "output": lambda report: _solver_bound(report),
    "two-stage": lambda report: _solver_bound(report, "stage 2: "),
    "objective": lambda report: 2.0 * report.noise["shift bound r"],
    "dual-fw": lambda report: 2.0 * 1e-5,  # inner_tol below: each response within it of the exact one
}


@pytest.mark.parametrize("mechanism,options", [
    ("dp-cd", None),  # one pass a coordinate update: 3 epochs of 6
    ("dp-iht", {"sparsity": 2}),
    ("output", None),
    ("objective", None),
    ("dual-fw", {"n_iter": 1, "inner_tol": 1e-5}),  # 2 responses, about 10 passes each
    ("one-pass-sgd", None),
    ("constant", None),
    ("two-stage", {"sparsity": 2, "second": "output"}),  # output perturbation second: the solver of the passes
])
def test_same_seed_same_model_as_in_memory_classification(client, gathered, mechanism, options):
    """Each mechanism on the chunks gives the in-memory model for the same seed: to rounding where the arithmetic
    is the same, to the certified tolerance where an exact minimizer is found by the solver of the passes."""
    X, y, bounds = _classification()
    kw = dict(bounds=bounds, mechanism=mechanism, max_iter=None if "n_iter" in (options or {}) else 3, random_state=5,
              mechanism_options=options)
    Xd = da.from_array(X, chunks=(600, 5))
    on_dask = DPLogisticRegression(**kw).fit(Xd, y)
    in_memory = DPLogisticRegression(**kw).fit(X, y)
    diff = float(np.linalg.norm(on_dask.coef_bounded_ - in_memory.coef_bounded_))
    if mechanism in SOLVERS:
        assert diff <= SOLVERS[mechanism](in_memory.privacy_report_)
    else:
        np.testing.assert_allclose(on_dask.coef_bounded_, in_memory.coef_bounded_, rtol=1e-9, atol=1e-12)
    assert on_dask.privacy_report_.accountant_epsilon == in_memory.privacy_report_.accountant_epsilon
    assert on_dask.privacy_report_.noise == pytest.approx(in_memory.privacy_report_.noise, rel=1e-12)  # last bits
    if mechanism == "one-pass-sgd":
        assert max(gathered, default=0) <= 600  # a row chunk's worth at a time
    else:
        assert sum(gathered) == 0  # no rows, not even chunk by chunk


def test_one_hot_groups_on_dask_give_the_in_memory_dp_gd(client, gathered):
    """One-hot groups (zeros kept, a record bounded by one per group) map the chunks as they map the array in
    memory, a record outside its declaration (two ones in a group) scaled down in both: the same DP-GD model."""
    rng = np.random.default_rng(4)
    n = 3000
    answers = np.zeros((n, 5))
    answers[np.arange(n), rng.integers(0, 3, n)] = 1.0
    answers[np.arange(n), 3 + rng.integers(0, 2, n)] = 1.0
    answers[0] = 1.0
    X = np.c_[answers, rng.uniform(10, 20, n)]
    y = np.where(X[:, 0] + X[:, 3] + 0.3 * rng.standard_normal(n) > 1, 1, 0)
    bounds = data.Bounds([0, 0, 0, 0, 0, 10.0], [1, 1, 1, 1, 1, 20.0], one_hot=[[0, 1, 2], [3, 4]], classes=[0, 1])
    kw = dict(bounds=bounds, mechanism="dp-gd", max_iter=3, random_state=2)
    on_dask = DPLogisticRegression(**kw).fit(da.from_array(X, chunks=(700, 6)), y)
    in_memory = DPLogisticRegression(**kw).fit(X, y)
    np.testing.assert_allclose(on_dask.coef_bounded_, in_memory.coef_bounded_, rtol=1e-9, atol=1e-12)
    assert on_dask.bounds_.one_hot == [[0, 1, 2], [3, 4]] and sum(gathered) == 0


def test_output_perturbation_regression_and_a_structured_norm(client, gathered):
    """The solver of the passes handles the Huber loss of a clipped regression and any penalty with a prox."""
    X, y, bounds = _regression(n=2000)
    kw = dict(bounds=bounds, mechanism="output", random_state=1)
    on_dask = DPLasso(**kw).fit(da.from_array(X, chunks=500), y)
    in_memory = DPLasso(**kw).fit(X, y)
    assert np.linalg.norm(on_dask.coef_bounded_ - in_memory.coef_bounded_) <= _solver_bound(in_memory.privacy_report_)
    Xc, yc, bounds_c = _classification(n=2000)
    kw = dict(bounds=bounds_c, mechanism="output", random_state=1, penalty="group-l2", groups=[[0, 1], [2, 3, 4]],
              alpha=0.05)
    on_dask = DPLogisticRegression(**kw).fit(da.from_array(Xc, chunks=500), yc)
    in_memory = DPLogisticRegression(**kw).fit(Xc, yc)
    assert np.linalg.norm(on_dask.coef_bounded_ - in_memory.coef_bounded_) <= _solver_bound(in_memory.privacy_report_)
    assert sum(gathered) == 0


def test_same_seed_same_model_as_in_memory_one_vs_rest(client):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (3000, 4))
    k = np.argmax(X[:, :3], axis=1)
    kw = dict(bounds=data.Bounds(-1.0, 1.0), mechanism="dp-gd", max_iter=10, random_state=2, classes=[0, 1, 2])
    on_dask = DPLogisticRegression(**kw).fit(da.from_array(X, chunks=500), k)
    in_memory = DPLogisticRegression(**kw).fit(X, k)
    np.testing.assert_allclose(on_dask.coef_, in_memory.coef_, rtol=1e-9, atol=1e-12)
    assert on_dask.score(X, k) == in_memory.score(X, k) > 0.5
    Xd = da.from_array(X, chunks=500)  # predictions on a dask array are dask arrays, computed lazily (docs/scale.md)
    for method in ("predict", "predict_proba", "decision_function"):
        lazy = getattr(on_dask, method)(Xd)
        assert isinstance(lazy, da.Array)
        np.testing.assert_allclose(lazy.compute(), getattr(in_memory, method)(X), rtol=1e-9, atol=1e-12)
    binary = DPLogisticRegression(**{**kw, "classes": [0, 1]}).fit(X, (k == 0).astype(int))
    for method in ("predict", "predict_proba"):
        lazy = getattr(binary, method)(Xd)
        assert isinstance(lazy, da.Array) and np.array_equal(lazy.compute(), getattr(binary, method)(X))


def _heavy_tailed(n=3000, p=4, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(0.0, 1.5, (n, p))
    X[0, 0] = 1e9  # beyond the grid of the private bounds: clipped to its end in both
    return X, X[:, :2] @ np.array([1.0, -0.5]) + 0.3 * rng.standard_normal(n)


@pytest.mark.parametrize("estimator,kw,classify,expected", [
    (DPLasso, dict(bounds="private", mechanism="dp-gd"), False, "quantiles"),  # the features' and the label's
    (DPLasso, dict(bounds=data.Bounds(-10.0, 10.0, -20.0, 20.0), mechanism="dp-gd", epsilon=8.0), False,
     "tightened by differentially private quantiles"),
    (DPLogisticRegression, dict(bounds=data.Bounds(-10.0, 10.0, row_norm=15.0, classes=[0, 1])), True,
     "dp-gd"),  # mechanism="auto": dp-gd with clipping_norm="auto" (few features)
    (DPLogisticRegression, dict(bounds=data.Bounds(-10.0, 10.0, row_norm=15.0, classes=[0, 1]), mechanism="dp-gcd",
                                mechanism_options={"clipping_norm": "auto"}), True, "dp-gcd"),
    (DPLogisticRegression, dict(bounds=data.Bounds(-10.0, 10.0, classes=[0, 1]), epsilon=0.002), True,
     "constant"),  # mechanism="auto": too few records for the budget
])
def test_private_preprocessing_gives_the_in_memory_release(client, gathered, estimator, kw, classify, expected):
    """Private bounds (one pass of grid histograms), declared bounds tightened privately, the private clipping
    threshold and ``mechanism="auto"`` (the labels' private moments of ``clip="auto"``: the regression test above):
    the same releases as in memory for the same seed."""
    X, y = _heavy_tailed()
    y = y > 0 if classify else y
    on_dask = estimator(random_state=4, max_iter=4, **kw).fit(da.from_array(X, chunks=(700, 2)), y)
    in_memory = estimator(random_state=4, max_iter=4, **kw).fit(X, y)
    np.testing.assert_allclose(on_dask.coef_bounded_, in_memory.coef_bounded_, rtol=1e-9, atol=1e-12)
    assert on_dask.bounds_.to_dict() == in_memory.bounds_.to_dict()
    # the same releases; a released float may differ in its last bit (the chunks' sums in another order)
    assert on_dask.privacy_report_.noise == pytest.approx(in_memory.privacy_report_.noise, rel=1e-12)
    assert expected in f"{on_dask.privacy_report_.mechanism} {on_dask.bounds_.source}"
    assert sum(gathered) == 0


def test_private_bounds_refuse_non_finite_values_before_the_charge(client):
    X, y = _heavy_tailed(n=1000)
    X[5, 1], X[7, 2] = np.inf, np.nan
    budget = PrivacyBudget(1.0, 1e-6)
    with pytest.raises(ValueError, match="NaN or infinity"):  # found by the histograms' pass
        DPLasso(bounds="private", mechanism="dp-gd", budget=budget, delta=1e-7).fit(da.from_array(X, chunks=300), y)
    assert budget.spent == []


def test_what_needs_the_data_in_memory_is_refused(client, monkeypatch):
    from dpsparse.mechanisms import REGISTRY, two_stage

    X, y, bounds = _regression(n=800)
    Xd = da.from_array(X, chunks=200)
    # every mechanism runs on dask: one that did not would be refused by name, before any data is read
    monkeypatch.setitem(REGISTRY, "dp-cd", dataclasses.replace(REGISTRY["dp-cd"], dask=False))
    with pytest.raises(ValueError, match="mechanism dp-cd needs the data in memory.*use adassp, constant, dp-gcd, "
                                         "dp-gd, dp-iht, dp-sgd, dual-fw, fw, objective, one-pass-sgd, output, or "
                                         "two-stage"):
        DPLasso(bounds=bounds, mechanism="dp-cd").fit(Xd, y)
    # every second stage runs on dask: one that did not would make two-stage refuse it too
    monkeypatch.setitem(two_stage.SECOND, "adassp", dataclasses.replace(two_stage.SECOND["adassp"], dask=False))
    with pytest.raises(ValueError, match="mechanism two-stage needs the data in memory with these options"):
        DPLasso(bounds=bounds, mechanism="two-stage", mechanism_options={"second": "adassp"}).fit(Xd, y)
    with pytest.raises(ValueError, match="DPSearchCV needs the data in memory"):
        DPSearchCV(DPLasso(bounds=bounds), {"max_iter": [5]}).fit(Xd, y)
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        DPLasso(bounds=bounds, mechanism="dp-gd").fit(da.from_array(X, chunks=200), y)
    with pytest.raises(ValueError, match="different numbers of samples"):
        DPLasso(bounds=bounds, mechanism="dp-gd").fit(Xd, y[:-1])
    import scipy.sparse as sp
    with pytest.raises(ValueError, match="a dask array of csr_matrix chunks; dask input takes dense numpy chunks"):
        DPLasso(bounds=bounds, mechanism="dp-gd").fit(Xd.map_blocks(sp.csr_matrix), y)


@pytest.fixture
def synchronous():
    """Passes computed in this process, without a cluster's latency: for tests of many passes."""
    with dask.config.set(scheduler="synchronous"):
        yield


def _not_certified(oracle, prox, x0, step, max_evaluations):
    return np.array(x0, dtype=float), False


@pytest.mark.parametrize("mechanism,module,options", [
    ("output", "output_perturbation", None),
    ("objective", "objective_perturbation", {"radius": 0.5}),
    ("dual-fw", "dual_fw", {"n_iter": 1, "inner_tol": 1e-5}),
])
def test_the_public_iterations_certify_when_the_quasi_newton_steps_do_not(synchronous, monkeypatch, mechanism, module,
                                                                           options):
    """Where the spectral (or L-BFGS) steps do not certify the gap, V-FISTA runs for the public iteration count as in
    memory, one pass a step: the released point is within the same tolerance."""
    from dpsparse import mechanisms

    monkeypatch.setattr(getattr(mechanisms, module), "spectral_gradient", _not_certified, raising=False)
    monkeypatch.setattr(mechanisms.dual_fw._PassResponse, "_lbfgs", lambda self, s, maxfun: np.zeros(self.p))
    X, y, bounds = _classification(n=1000)
    kw = dict(bounds=bounds, mechanism=mechanism, random_state=2, mechanism_options=options)
    on_dask = DPLogisticRegression(**kw).fit(da.from_array(X, chunks=250), y)
    in_memory = DPLogisticRegression(**kw).fit(X, y)
    bound = SOLVERS[mechanism](in_memory.privacy_report_)
    assert np.linalg.norm(on_dask.coef_bounded_ - in_memory.coef_bounded_) <= bound


def test_one_pass_sgd_reads_its_rows_ahead_in_blocks(client, gathered):
    """The stand-in of the noise source foresees the index draws: a few blocks of at most a row chunk each, with the
    fast source and with OpenDP's (whose noise does not come from the index generator)."""
    X, y, bounds = _classification(n=3000)
    Xd = da.from_array(X, chunks=(500, 5))
    for noise in ("fast", "secure"):
        gathered.clear()
        DPLogisticRegression(bounds=bounds, mechanism="one-pass-sgd", noise=noise,
                             random_state=1 if noise == "fast" else None).fit(Xd, y)
        assert 1 <= len(gathered) <= 6 and max(gathered) <= 500  # about n / (2 x 500) reads


def test_one_pass_sgd_unforeseen_draws_are_read_one_by_one(synchronous, gathered):
    """A noise source whose draws the stand-in cannot foresee (the audit's, drawing zeros) gets the same model: the
    rows are read as they are drawn."""
    from dpsparse.audit import LedgerNoise

    X, y, bounds = _classification(n=300)
    kw = dict(bounds=bounds, mechanism="one-pass-sgd")
    on_dask = DPLogisticRegression(random_state=LedgerNoise(3, zero=True), **kw).fit(da.from_array(X, chunks=100), y)
    in_memory = DPLogisticRegression(random_state=LedgerNoise(3, zero=True), **kw).fit(X, y)
    np.testing.assert_allclose(on_dask.coef_bounded_, in_memory.coef_bounded_, rtol=1e-9, atol=1e-12)
    assert gathered[0] <= 100 and set(gathered[1:]) == {1}  # one block read ahead in vain, then row by row


def test_grid_histograms_give_the_quantile_scores_of_the_data(synchronous):
    """A feature's histogram on the grid gives the counts below and above each grid point of the feature itself,
    hence OpenDP's scores at every level: values on grid points, between them and beyond the grid, clipped to a
    declared range or not."""
    from dpsparse.private_bounds import _counts, _counts_of_histogram, grid_histograms

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(-3, 4, 500).astype(float), rng.normal(0.0, 30.0, 500),
                         np.r_[rng.uniform(-1.0, 1.0, 498), 1e12, -1e12]])
    within = data.Bounds([-2.2, -10.0, -1.0], [2.0, 10.0, 1.0])  # -2.2: between grid points; 2.0: on one
    for declared in (None, within):
        counts = grid_histograms(da.from_array(X, chunks=(120, 3)), declared)
        for j in range(3):
            interval = None if declared is None else (within.feature_low[j], within.feature_high[j])
            for got, expected in zip(_counts_of_histogram(counts[j]), _counts(X[:, j], interval)):
                np.testing.assert_array_equal(got, expected)
