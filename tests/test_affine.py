"""Sparse input mapped onto [-1, 1] implicitly (``affine.ShiftedSparse``): the operations against the dense
mapped array, and every mechanism's model on sparse input against the one on dense input."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import mechanism_cases, mechanism_loss
from dpsparse import data, norms
from dpsparse._arrays import uniform_view
from dpsparse.affine import ShiftedSparse, gram
from dpsparse.mechanisms import REGISTRY, fit_mechanism
from dpsparse.noise import make_noise

# asymmetric ranges (the zeros map to -1, or outside [-1, 1] and get clipped), a symmetric one (zeros stay),
# a constant column, and a row-norm bound that clips some rows
LOW = np.array([0.0, 0.0, -1.0, 0.5, -2.0, 3.0])
HIGH = np.array([1.0, 4.0, 1.0, 2.0, 2.0, 3.0])


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, LOW.size, density=0.4, random_state=seed, format="csr")
    X.data = rng.uniform(-1.0, 5.0, X.data.size)  # some values outside their range
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return X, y


def _designs(row_norm, classification=True, fit_intercept=True):
    X, y = _data()
    if not classification:
        y = y * 1.5
    bounds = data.Bounds(LOW, HIGH, -2.0, 2.0, row_norm=row_norm)
    return (data.prepare(X, y, bounds, classification, fit_intercept),
            data.prepare(X.toarray(), y, bounds, classification, fit_intercept))


@pytest.mark.parametrize("row_norm", [None, 1.2])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_shifted_design_equals_the_dense_mapped_array(row_norm, fit_intercept):
    sparse, dense = _designs(row_norm, fit_intercept=fit_intercept)
    assert isinstance(sparse.X, ShiftedSparse)
    np.testing.assert_allclose(sparse.X.toarray(), dense.X, atol=1e-15)
    assert (sparse.clipped_values, sparse.clipped_rows) == (dense.clipped_values, dense.clipped_rows)
    assert sparse.clipped_values > 0 and (row_norm is None or sparse.clipped_rows > 0)
    rng = np.random.default_rng(1)
    w, v = rng.normal(size=dense.p), rng.normal(size=dense.n)
    np.testing.assert_allclose(sparse.X @ w, dense.X @ w, atol=1e-13)
    np.testing.assert_allclose(sparse.X.T @ v, dense.X.T @ v, atol=1e-13)
    np.testing.assert_allclose(sparse.X @ np.c_[w, 2 * w], dense.X @ np.c_[w, 2 * w], atol=1e-13)
    np.testing.assert_allclose(sparse.X.row_norms(), np.linalg.norm(dense.X, axis=1), atol=1e-13)
    np.testing.assert_allclose(gram(sparse.X, v), gram(dense.X, v), atol=1e-12)
    np.testing.assert_allclose(gram(sparse.X), dense.X.T @ dense.X, atol=1e-12)
    rows, cols = [5, 0, 5, 17], [4, 1]
    np.testing.assert_allclose(sparse.X[rows].toarray(), dense.X[rows], atol=1e-15)
    np.testing.assert_allclose(sparse.X[:, cols].toarray(), dense.X[:, cols], atol=1e-15)
    for j in range(dense.p):
        np.testing.assert_allclose(sparse.X.column(j), dense.X[:, j], atol=1e-15)
    clip = rng.uniform(0.05, 0.5, dense.p)
    np.testing.assert_allclose(sparse.X.clipped_gradient_sum(v, clip),
                               np.clip(dense.X * v[:, None], -clip, clip).sum(axis=0), atol=1e-12)


@pytest.mark.parametrize("exceptions", [None, {3: (-1.0, 2.0)}], ids=["one-range", "one-other-range"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("one_threshold", [True, False], ids=["one-threshold", "per-column"])
def test_the_clipped_gradient_of_a_shifted_design_is_the_dense_one(exceptions, fit_intercept, one_threshold):
    """The compiled clipped gradient (``_kernels.shifted_clipped_rmatvec`` and the shift's part from one sorted
    pass) equals the brute-force sum on the dense design, with the shift and the threshold given as one number
    for every column or not (0/1 data declared on [0, 1]: every zero maps to -1), and columns with no stored
    value first, in the middle and last."""
    rng = np.random.default_rng(7)
    X = sp.random(200, 50, density=0.1, format="csc", random_state=1, data_rvs=lambda k: rng.uniform(0, 1, k))
    X[:, [0, 20, 21, 49]] = 0.0
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    y = np.where(rng.random(200) < 0.5, 1.0, -1.0)
    bounds = data.Bounds(0.0, 1.0, exceptions=exceptions)
    sparse, dense = (data.prepare(Z, y, bounds, True, fit_intercept) for Z in (X, X.toarray()))
    v = rng.uniform(-1, 1, 200)
    clip = 0.3 if one_threshold else rng.uniform(0.05, 0.5, dense.p)
    np.testing.assert_allclose(sparse.X.clipped_gradient_sum(v, clip),
                               np.clip(dense.X * v[:, None], -clip, clip).sum(axis=0), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name,classification", list(mechanism_cases()))
def test_every_mechanism_fits_sparse_input_as_dense(name, classification):
    """The same noise draws on the implicit and the dense design give the same model (to rounding)."""
    mech = REGISTRY[name]
    loss = mechanism_loss(name, classification)
    options = {"n_iter": 4} if "n_iter" in mech.option_names else {}
    fits = []
    for design in _designs(1.2, classification):
        penalty = norms.build_penalty("l1", 0.05, LOW.size, True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(fit_mechanism(mech, design, loss, penalty, epsilon=1.0, delta=1e-5, options=options,
                                      noise=make_noise(7))[0])
    np.testing.assert_allclose(fits[0], fits[1], rtol=1e-7, atol=1e-9)


def test_search_on_sparse_input_selects_and_fits_as_on_dense():
    from dpsparse import DPLogisticRegression, DPSearchCV

    X, y, bounds, _ = data.load_bundled("breast_cancer")
    X = np.where(X > np.median(X, axis=0), X, 0.0)  # half zeros: sparse enough to stay sparse
    grid = {"mechanism": ["dp-gcd", "dp-cd", "fw"], "max_iter": [5, 20]}
    est = DPLogisticRegression(bounds=bounds, classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dense = DPSearchCV(est, grid, epsilon=2.0, random_state=5).fit(X, y)
        sparse = DPSearchCV(est, grid, epsilon=2.0, random_state=5).fit(sp.csr_matrix(X), y)
    assert sparse.best_params_ == dense.best_params_ and sparse.best_score_ == pytest.approx(dense.best_score_)
    np.testing.assert_allclose(sparse.best_estimator_.coef_, dense.best_estimator_.coef_, rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))


def test_sparse_predictions_clip_the_zeros_outside_their_range():
    """A zero outside its feature's range counts as the range's nearest end, as in training."""
    rng = np.random.default_rng(3)
    X = sp.random(40, LOW.size, density=0.5, random_state=3, format="csr")
    X.data = rng.uniform(-1.0, 5.0, X.data.size)
    coef, bounds = rng.normal(size=LOW.size), data.Bounds(LOW, HIGH)
    expected = np.clip(X.toarray(), LOW, HIGH) @ coef + 0.5
    np.testing.assert_allclose(data.linear_decision(X, coef, 0.5, bounds), expected, atol=1e-12)
    np.testing.assert_allclose(data.linear_decision(X.toarray(), coef, 0.5, bounds), expected, atol=1e-12)


def test_only_a_matrix_smaller_dense_is_densified():
    X = sp.random(30, 10, density=0.5, random_state=0, format="csr")
    assert data.dense_if_dense(X) is X
    full = sp.csr_matrix(np.arange(1.0, 301.0).reshape(30, 10))
    assert isinstance(data.dense_if_dense(full), np.ndarray)
    np.testing.assert_array_equal(data.dense_if_dense(full), full.toarray())


@pytest.mark.parametrize("block", [None, 5])
def test_abs_sum_is_the_brute_force_sum_on_every_kind_of_design(block, monkeypatch):
    """``sum_ij |x_ij|`` over the first k columns, whole or read ``block`` values at a time: dense, CSC, CSR and
    a ``ShiftedSparse`` with shifted and unshifted columns (the shift's cells off the stored values too), or with
    one shift and row factors of 1 (given to the compiled sum as numbers)."""
    from dpsparse.mechanisms import _common

    if block is not None:
        monkeypatch.setattr(_common, "_BLOCK", block)
    rng = np.random.default_rng(0)
    S = sp.random(40, 6, density=0.3, random_state=1, format="csc", data_rvs=lambda k: rng.uniform(-1, 1, k))
    c, f = np.array([0.0, 0.5, 0.0, -1.0, 0.0, 2.0]), rng.uniform(-1, 1, 40)
    dense = S.toarray() + np.outer(f, c)
    one = uniform_view(np.full(6, -0.5)), uniform_view(np.ones(40))  # one shift, row factors 1 (0/1 data)
    designs = [(S.toarray(), S.toarray()), (S, S.toarray()), (S.tocsr(), S.toarray()),
               (ShiftedSparse(S, c, f), dense), (ShiftedSparse(S, *one), S.toarray() - 0.5)]
    for X, brute in designs:
        for k in (0, 1, 4, 6):
            assert _common.abs_sum(X, k) == pytest.approx(np.abs(brute[:, :k]).sum(), rel=1e-12, abs=1e-12)
