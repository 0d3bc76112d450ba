"""Dask arrays: a fit on a 2-worker LocalCluster gives the in-memory model, the data is read chunk by chunk, and
what needs the data in memory is refused by name."""
import warnings

import numpy as np
import pytest

from dpsparse import DPLasso, DPLogisticRegression, DPSearchCV, data

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


def _regression(n=4000, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, (n, p))
    X[0, 0] = 7.0  # outside the bounds: clipped in both fits
    y = X @ np.linspace(-1, 1, p) + 0.3 * rng.standard_normal(n)
    return X, y, data.Bounds(-2 * np.ones(p), 2 * np.ones(p), -8.0, 8.0, row_norm=3.0)


@pytest.mark.parametrize("mechanism,options", [("dp-gd", None), ("dp-gcd", None),
                                               ("dp-gcd", {"clipping_norm": 0.3}), ("dp-sgd", None),
                                               ("two-stage", {"second": "dp-gcd", "sparsity": 3})])
def test_same_seed_same_model_as_in_memory_regression(client, mechanism, options):
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


def test_same_seed_same_model_as_in_memory_one_vs_rest(client):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (3000, 4))
    k = np.argmax(X[:, :3], axis=1)
    kw = dict(bounds=data.Bounds(-1.0, 1.0), mechanism="dp-gd", max_iter=10, random_state=2, classes=[0, 1, 2])
    on_dask = DPLogisticRegression(**kw).fit(da.from_array(X, chunks=500), k)
    in_memory = DPLogisticRegression(**kw).fit(X, k)
    np.testing.assert_allclose(on_dask.coef_, in_memory.coef_, rtol=1e-9, atol=1e-12)
    assert on_dask.score(X, k) == in_memory.score(X, k) > 0.5


def test_what_needs_the_data_in_memory_is_refused(client):
    X, y, bounds = _regression(n=800)
    Xd = da.from_array(X, chunks=200)
    with pytest.raises(ValueError, match="mechanism dp-cd needs the data in memory.*dp-gcd, dp-gd, dp-sgd"):
        DPLasso(bounds=bounds, mechanism="dp-cd").fit(Xd, y)
    with pytest.raises(ValueError, match="mechanism two-stage needs the data in memory with these options"):
        DPLasso(bounds=bounds, mechanism="two-stage").fit(Xd, y)  # its default second stage: output perturbation
    with pytest.raises(ValueError, match="bounds='private' needs the data in memory"):
        DPLasso(bounds="private", mechanism="dp-gd").fit(Xd, y)
    with pytest.raises(ValueError, match="DPSearchCV needs the data in memory"):
        DPSearchCV(DPLasso(bounds=bounds), {"max_iter": [5]}).fit(Xd, y)
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        DPLasso(bounds=bounds, mechanism="dp-gd").fit(da.from_array(X, chunks=200), y)
    with pytest.raises(ValueError, match="different numbers of samples"):
        DPLasso(bounds=bounds, mechanism="dp-gd").fit(Xd, y[:-1])
