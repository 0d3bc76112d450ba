"""Private preprocessing (dpsparse.preprocessing): sensitivity by replay, the noise claimed, the budget shared."""
import math
import warnings

import numpy as np
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

from dpsparse import Bounds, BudgetExceededError, DPLogisticRegression, PrivacyBudget, data
from dpsparse.accounting import zcdp_budget
from dpsparse.noise import NoiseSource
from dpsparse.preprocessing import DPMinMaxScaler, DPStandardScaler


class Released(NoiseSource):
    """Returns each release without noise and records (name, value, scale, sensitivity)."""

    def __init__(self):
        super().__init__(np.random.default_rng(0), seeded=True)
        self.log = []

    def release(self, value, kind, scale, *, sensitivity, name, norm="l2", sampling=None):
        self.log.append((name, np.array(value, dtype=float), float(scale), float(sensitivity)))
        return value


def _releases(X, bounds):
    noise = Released()
    DPStandardScaler(epsilon=1.0, delta=1e-5, bounds=bounds, random_state=noise).fit(X)
    return noise.log


def test_each_moment_moves_by_at_most_its_sensitivity_and_gets_the_claimed_noise():
    rng = np.random.default_rng(0)
    n, p = 50, 4
    bounds = Bounds(-np.ones(p), 2 * np.ones(p))
    X = rng.uniform(-1, 2, (n, p))
    base = _releases(X, bounds)
    rho = zcdp_budget(1.0, 1e-5)
    assert [name for name, *_ in base] == ["scaler means", "scaler second moments"]
    for (_, _, scale, sens), expected in zip(base, [2 * math.sqrt(p) / n, math.sqrt(p) / n]):
        assert sens == pytest.approx(expected) and scale == pytest.approx(sens / math.sqrt(rho))
    worst = [0.0, 0.0]
    for i in range(5):
        for row in (-np.ones(p), 2 * np.ones(p), np.array([-1.0, 2.0, 0.5, 5.0]), 100 * np.ones(p)):
            Xb = X.copy()
            Xb[i] = row
            for k, ((_, v, _, _), (_, v0, _, sens)) in enumerate(zip(_releases(Xb, bounds), base)):
                worst[k] = max(worst[k], float(np.linalg.norm(v - v0)) / sens)
    assert max(worst) <= 1 + 1e-12 and min(worst) > 0.5


def test_the_released_moments_estimate_the_mean_and_scale():
    rng = np.random.default_rng(1)
    X = rng.normal([2.0, -1.0], [0.5, 2.0], (20000, 2))
    bounds = Bounds([-8.0, -12.0], [12.0, 10.0])
    scaler = DPStandardScaler(epsilon=1.0, bounds=bounds, random_state=0).fit(X)
    np.testing.assert_allclose(scaler.mean_, [2.0, -1.0], atol=0.05)
    np.testing.assert_allclose(scaler.scale_, [0.5, 2.0], rtol=0.1)
    Z = scaler.transform(X)
    assert np.all(np.abs(Z) <= 3.0) and scaler.privacy_report_.accounting_holds
    kept = np.all(np.abs(Z) < 3.0, axis=1)  # rows that no clipping moved come back exactly
    np.testing.assert_allclose(scaler.inverse_transform(Z[kept]), X[kept], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 2\)"):
        scaler.inverse_transform(Z[:, :1])


def test_a_pipeline_charges_the_shared_budget_once_per_step_and_fit():
    X, y, bounds, _ = data.load_bundled("breast_cancer")
    budget = PrivacyBudget(1.0, 1e-3)
    pipe = make_pipeline(DPStandardScaler(epsilon=0.1, delta=1e-6, bounds=bounds, budget=budget, random_state=0),
                         DPLogisticRegression(epsilon=0.4, delta=1e-6, bounds=Bounds(-3.0, 3.0), classes=[0, 1],
                                              budget=budget, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(BudgetExceededError):
            cross_val_score(pipe, X, y, cv=3, error_score="raise")
    assert [e for e, _, _ in budget.spent] == [0.1, 0.4, 0.1, 0.4]


def test_the_last_step_of_a_pipeline_states_what_the_pipeline_spends_in_all():
    X, y, bounds, _ = data.load_bundled("breast_cancer")
    pipe = make_pipeline(DPStandardScaler(epsilon=0.2, delta=1e-6, bounds=bounds, random_state=0),
                         DPLogisticRegression(epsilon=0.8, delta=2e-6, bounds=Bounds(-3.0, 3.0), classes=[0, 1],
                                              random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = pipe.fit(X, y)[-1].privacy_report_
    assert report.noise["pipeline total"].startswith(
        "in a pipeline after dpstandardscaler (0.2, 1e-06) on the same records: the pipeline as a whole is (1, "
        "3e-06)-differentially private") and not report.warnings  # a detail, not a warning
    from sklearn.compose import ColumnTransformer

    inside = ColumnTransformer([("scaled", DPStandardScaler(epsilon=0.2, delta=1e-6, bounds=bounds, random_state=0),
                                 list(range(30)))])
    pipe = make_pipeline(inside, DPLogisticRegression(epsilon=0.8, delta=2e-6, bounds=Bounds(-3.0, 3.0),
                                                      classes=[0, 1], random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = pipe.fit(X, y)[-1].privacy_report_
    assert report.noise["pipeline total"].startswith("in a pipeline after scaled (0.2, 1e-06)")


def test_bad_inputs_are_refused_before_charging():
    budget = PrivacyBudget(1.0, 1e-3)
    X = np.ones((10, 2))
    with pytest.raises(ValueError, match="declare each feature's public range"):
        DPStandardScaler(budget=budget).fit(X)
    with pytest.raises(ValueError, match="clip must be"):
        DPStandardScaler(bounds=Bounds([0, 0], [1, 1]), clip=0, budget=budget).fit(X)
    assert budget.spent == []


def test_the_min_max_scaler_maps_the_declared_ranges_and_reads_no_statistic():
    bounds = Bounds([0.0, -5.0], [10.0, 5.0])
    X = np.array([[0.0, -5.0], [10.0, 5.0], [20.0, 0.0]])
    Z = DPMinMaxScaler(bounds=bounds).fit(X[:1]).transform(X)
    np.testing.assert_allclose(Z, [[0.0, 0.0], [1.0, 1.0], [1.0, 0.5]])


def test_the_min_max_scaler_keeps_sparse_input_sparse_where_zero_maps_to_zero():
    import scipy.sparse as sp

    X = sp.random(40, 6, density=0.3, format="csr", random_state=0, data_rvs=lambda k: np.linspace(-5, 5, k))
    bounds = {"feature_low": [-4.0] * 6, "feature_high": [4.0] * 6}
    scaler = DPMinMaxScaler(bounds=bounds, feature_range=(-1.0, 1.0)).fit(X)
    Z = scaler.transform(X)
    assert sp.issparse(Z) and Z.nnz == X.nnz  # zeros stay implicit
    np.testing.assert_allclose(Z.toarray(), scaler.transform(X.toarray()))  # the same map as on the dense array
    with pytest.raises(ValueError, match="would become dense"):  # [0, 1]: 0 goes to 0.5
        DPMinMaxScaler(bounds=bounds).fit(X).transform(X)
