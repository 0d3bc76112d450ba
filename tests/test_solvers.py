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


@pytest.mark.parametrize("loss", [losses.Logistic(), losses.Huber(0.3), losses.Squared()], ids=lambda l: l.name)
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


def test_unpenalized_column_must_be_an_intercept():
    X, y = bounded_problem()
    w = intercept_weights(X.shape[1])
    w[0] = 0.0
    with pytest.raises(ValueError, match="at most one unpenalized"):
        solvers.duality_gap(X, y, np.zeros(X.shape[1]), losses.Logistic(), norms.L1(0.1, w))
