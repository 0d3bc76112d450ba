import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import ElasticNet, Lasso, LogisticRegression

from conftest import bounded_problem, intercept_weights
from dpsparse import losses, norms, solvers


def test_lasso_matches_scikit_learn():
    X, y = bounded_problem(classification=False)
    alpha = 0.01
    pen = norms.L1(alpha, intercept_weights(X.shape[1]))
    res = solvers.solve(X, y, losses.Squared(), pen)
    sk = Lasso(alpha=alpha, tol=1e-14, max_iter=100_000).fit(X[:, :-1], y)
    f_sk = solvers.objective(X, y, np.r_[sk.coef_, sk.intercept_], losses.Squared(), pen)
    assert res.objective == pytest.approx(f_sk, rel=1e-6)
    assert res.objective <= f_sk + 1e-12
    assert 0 <= res.gap < 1e-8


def test_elastic_net_matches_scikit_learn():
    X, y = bounded_problem(classification=False, seed=3)
    pen = norms.ElasticNet(0.02, 0.3, intercept_weights(X.shape[1]))
    res = solvers.solve(X, y, losses.Squared(), pen)
    sk = ElasticNet(alpha=0.02, l1_ratio=0.3, tol=1e-14, max_iter=100_000).fit(X[:, :-1], y)
    f_sk = solvers.objective(X, y, np.r_[sk.coef_, sk.intercept_], losses.Squared(), pen)
    assert res.objective == pytest.approx(f_sk, rel=1e-6)


def test_l1_logistic_matches_scikit_learn():
    X, y = bounded_problem(seed=1)
    n, alpha = X.shape[0], 0.01
    pen = norms.L1(alpha, intercept_weights(X.shape[1]))
    res = solvers.solve(X, y, losses.Logistic(), pen)
    sk = LogisticRegression(l1_ratio=1.0, C=1 / (n * alpha), solver="liblinear", tol=1e-12, max_iter=100_000,
                            intercept_scaling=1e4).fit(X[:, :-1], y)
    f_sk = solvers.objective(X, y, np.r_[sk.coef_.ravel(), sk.intercept_], losses.Logistic(), pen)
    assert res.objective == pytest.approx(f_sk, rel=1e-6)
    assert 0 <= res.gap < 1e-8


@pytest.mark.parametrize("loss", [losses.Logistic(), losses.Huber(0.3), losses.Squared()], ids=lambda loss: loss.name)
@pytest.mark.parametrize("pen_cls", [norms.L1, norms.L2])
def test_gap_bounds_the_suboptimality(loss, pen_cls):
    X, y = bounded_problem(seed=2, classification=loss.name == "logistic")
    pen = pen_cls(0.02, intercept_weights(X.shape[1]))
    res = solvers.solve(X, y, loss, pen)
    assert res.gap < 1e-7
    rng = np.random.default_rng(0)
    for scale in [0.0, 0.5, 0.9, 1.1]:
        w = res.coef * scale + 0.01 * rng.normal(size=res.coef.size) * (scale > 0)
        gap = solvers.duality_gap(X, y, w, loss, pen)
        subopt = solvers.objective(X, y, w, loss, pen) - res.objective
        assert gap >= subopt - 1e-9
        assert subopt >= -1e-9


def test_sparse_input_gives_the_same_solution():
    X, y = bounded_problem(seed=4)
    X[np.abs(X) < 0.4] = 0.0
    pen = norms.L1(0.01, intercept_weights(X.shape[1]))
    dense = solvers.solve(X, y, losses.Logistic(), pen)
    sparse = solvers.solve(sp.csr_matrix(X), y, losses.Logistic(), pen)
    assert sparse.objective == pytest.approx(dense.objective, rel=1e-9)
    assert sparse.gap < 1e-8


def _wide_sparse_problem(classification, seed=8):
    """More features than ``solvers.P0``: ``solve`` takes working sets; an intercept column last."""
    rng = np.random.default_rng(seed)
    n, p = 150, solvers.P0 + 300
    S = sp.random(n, p, density=0.05, random_state=seed, format="csc", data_rvs=lambda k: rng.uniform(-1, 1, k))
    X = sp.hstack([S, np.ones((n, 1))], format="csc")
    z = S[:, :5] @ np.ones(5)
    y = np.where(z > 0, 1.0, -1.0) if classification else np.clip(0.5 * z + 0.1 * rng.normal(size=n), -1, 1)
    return X, y


@pytest.mark.parametrize("loss, pen", [(losses.Logistic(), norms.L1(0.01, intercept_weights(801))),
                                       (losses.Squared(), norms.L1(0.005, intercept_weights(801))),
                                       (losses.Squared(), norms.ElasticNet(0.005, 0.7, intercept_weights(801)))],
                         ids=["l1-logistic", "lasso", "elastic-net"])
def test_working_sets_reach_the_optimum_of_the_whole_problem(loss, pen):
    X, y = _wide_sparse_problem(loss.name == "logistic")
    res = solvers.solve(X, y, loss, pen, tol=1e-9)
    assert 0 <= res.gap <= 1e-9
    assert res.gap == pytest.approx(solvers.duality_gap(X, y, res.coef, loss, pen), abs=1e-15)
    assert 0 < np.count_nonzero(res.coef) < X.shape[1] // 2
    dense = solvers.solve(X.toarray(), y, loss, pen, tol=1e-9)  # the same optimum, read dense
    assert abs(res.objective - dense.objective) <= 2e-9


def test_an_unreachable_target_returns_the_best_certificate():
    X, y = bounded_problem(seed=9, classification=False)
    pen = norms.L1(0.01, intercept_weights(X.shape[1]))
    res = solvers.solve(X, y, losses.Squared(), pen, tol=0.0)  # rounding stops it (PATIENCE), not max_iter
    assert 0 <= res.gap < 1e-12
    assert res.gap == solvers.duality_gap(X, y, res.coef, losses.Squared(), pen)


def test_unpenalized_column_must_be_an_intercept():
    X, y = bounded_problem()
    w = intercept_weights(X.shape[1])
    w[0] = 0.0
    with pytest.raises(ValueError, match="at most one unpenalized"):
        solvers.duality_gap(X, y, np.zeros(X.shape[1]), losses.Logistic(), norms.L1(0.1, w))


def test_solve_prox_matches_solve_on_l1():
    X, y = bounded_problem(seed=5)
    p = X.shape[1]
    ref = solvers.solve(X, y, losses.Logistic(), norms.L1(0.01, intercept_weights(p)))
    for pen in [norms.L1(0.01, intercept_weights(p)),
                norms.SubmodularNorm(norms.Cardinality(p - 1), 0.01, unpenalized=[p - 1])]:
        res = solvers.solve_prox(X, y, losses.Logistic(), pen)
        assert res.objective == pytest.approx(ref.objective, rel=1e-6)
        assert 0 <= res.gap <= 1e-8


def _cvxpy_reference(X, y, loss, omega, mu=0.0):
    cp = pytest.importorskip("cvxpy")
    n = X.shape[0]
    w = cp.Variable(X.shape[1])
    z = X @ w
    fit = cp.sum(cp.logistic(cp.multiply(-y, z))) if loss.name == "logistic" else 0.5 * cp.sum_squares(z - y)
    prob = cp.Problem(cp.Minimize(fit / n + omega(w) + 0.5 * mu * cp.sum_squares(w)))
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@pytest.mark.parametrize("mu", [0.0, 0.05])
def test_solve_prox_matches_cvxpy_on_group_and_linf_norms(mu):
    import cvxpy as cp

    X, y = bounded_problem(n=60, p=8, seed=6, classification=False)
    groups = [[0, 1, 2], [3, 4], [5, 6, 7]]
    overlap = [[0, 1, 2], [2, 3, 4], [4, 5, 6, 7]]
    cases = [
        (norms.GroupLasso(groups, 9, alpha=0.03),
         lambda w: 0.03 * sum(np.sqrt(len(g)) * cp.norm(w[g], 2) for g in groups)),
        (norms.SubmodularNorm(norms.Nonempty(8), 0.05, unpenalized=[8]), lambda w: 0.05 * cp.norm(w[:8], "inf")),
        (norms.SubmodularNorm(norms.GroupCount(8, overlap), 0.02, unpenalized=[8]),
         lambda w: 0.02 * sum(cp.norm(w[g], "inf") for g in overlap)),
    ]
    for loss in [losses.Squared(), losses.Logistic()]:
        yy = y if loss.name == "squared" else np.where(y > 0, 1.0, -1.0)
        for pen, omega in cases:
            res = solvers.solve_prox(X, yy, loss, pen, mu=mu)
            ref = _cvxpy_reference(X, yy, loss, omega, mu)
            assert 0 <= res.gap <= 1e-8
            assert res.objective == pytest.approx(ref, rel=1e-6)


def test_gap_with_ridge_term_bounds_the_suboptimality():
    X, y = bounded_problem(seed=7)
    pen = norms.SubmodularNorm(norms.Range(8), 0.005, unpenalized=[8])
    res = solvers.solve_prox(X, y, losses.Logistic(), pen, mu=0.01, tol=1e-10)
    assert res.gap <= 1e-10
    rng = np.random.default_rng(1)
    for scale in [0.0, 0.5, 1.1]:
        w = scale * res.coef + 0.01 * rng.normal(size=9) * (scale > 0)
        gap = solvers.duality_gap(X, y, w, losses.Logistic(), pen, mu=0.01)
        assert gap >= solvers.objective(X, y, w, losses.Logistic(), pen, mu=0.01) - res.objective - 1e-12


def _bardet(shared_data):
    import warnings

    from dpsparse import data
    from dpsparse.exceptions import PrivacyLeakWarning

    X, y = data.load_svmlight(shared_data / "regression" / "bardet.svm.gz", n_features=100)
    with pytest.warns(PrivacyLeakWarning):
        bounds = data.bounds_from_data(X, y, regression=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return data.prepare(X, y, bounds, classification=False)


@pytest.mark.slow
def test_group_lasso_on_bardet(shared_data):
    d = _bardet(shared_data)
    assert d.X.shape == (120, 101)
    pen = norms.GroupLasso([range(5 * g, 5 * g + 5) for g in range(20)], 101, alpha=0.01)
    res = solvers.solve_prox(d.X, d.y, losses.Squared(), pen, tol=1e-9)
    assert res.gap < 1e-6
    active = [g for g in range(20) if np.any(res.coef[5 * g: 5 * g + 5] != 0)]
    assert 0 < len(active) < 20
    assert np.all(res.coef[[5 * g + k for g in active for k in range(5)]] != 0)  # whole groups


@pytest.mark.slow
def test_group_lasso_on_birthwt(shared_data):
    import pandas as pd

    df = pd.read_csv(shared_data / "regression" / "birthwt.csv")
    spec = pd.read_csv(shared_data / "regression" / "birthwt.groups.csv")
    cols = spec["column"].tolist()
    X = np.hstack([df[cols].to_numpy(dtype=float), np.ones((len(df), 1))])
    y = df["bwt"].to_numpy(dtype=float)
    y = y - y.mean()
    groups = [[cols.index(c) for c in spec.loc[spec["group"] == g, "column"]] for g in spec["group"].unique()]
    assert len(groups) == 8 and sum(map(len, groups)) == 16
    pen = norms.GroupLasso(groups, X.shape[1], alpha=0.02)
    res = solvers.solve_prox(X, y, losses.Squared(), pen)
    assert res.gap < 1e-8
    zero = [g for g in groups if np.all(res.coef[g] == 0)]
    assert 0 < len(zero) < len(groups)


def test_inner_criterion_is_not_tighter_than_the_target_at_the_start_and_always_moves():
    from types import SimpleNamespace

    tol, safety = 1e-8, solvers.SAFETY
    far = SimpleNamespace(gap=0.5)  # the zero start: a gap far above the largest violation
    assert solvers._inner_tol(far, 0.05, tol, True, start=True) == pytest.approx(safety * tol)
    near = SimpleNamespace(gap=1e-6)  # near the optimum the violation exceeds the gap: the linear model
    assert solvers._inner_tol(near, 1e-4, tol, True, start=False) == pytest.approx(safety * tol * 1e-4 / 1e-6)
    # after a solve, a gap 178 times the violation (news20's L1-logistic) is taken at its word: below safety * tol
    settled = SimpleNamespace(gap=1.157e-6)
    expected = safety * tol * 6.5e-9 / 1.157e-6
    assert solvers._inner_tol(settled, 6.5e-9, tol, True, start=False) == pytest.approx(expected)
    failed = SimpleNamespace(gap=2e-8)  # a certificate above the target with a violation already below it
    assert solvers._inner_tol(failed, 3e-9, tol, True, start=False) <= safety * 3e-9
    assert solvers._inner_tol(far, 0.05, tol, False, start=True) == pytest.approx(solvers.RELAX * 0.05)
