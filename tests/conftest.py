"""Shared fixtures: the real datasets of ../shared/data and small synthetic problems."""
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpsparse import audit, data, norms

DATA_DIR = Path(os.environ.get("DPSPARSE_DATA_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


@pytest.fixture
def shared_data():
    """Path of ../shared/data; skips (or fails under DPSPARSE_REQUIRE_DATA=1) when absent."""
    if not DATA_DIR.is_dir():
        msg = f"real datasets not found at {DATA_DIR} (they ship beside the project, not with it)"
        if os.environ.get("DPSPARSE_REQUIRE_DATA") == "1":
            pytest.fail(msg + "; DPSPARSE_REQUIRE_DATA=1 makes this a failure")
        pytest.skip(msg)
    return DATA_DIR


def bounded_problem(n=200, p=8, seed=0, classification=True):
    """A design in [-1, 1] with an intercept column and labels (+-1 or in [-1, 1])."""
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(0, 0.5, (n, p)), -1, 1)
    X = np.hstack([X, np.ones((n, 1))])
    w = rng.normal(0, 1, p + 1) * (rng.random(p + 1) < 0.5)
    z = X @ w
    if classification:
        y = np.where(z + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    else:
        y = np.clip(0.3 * z + 0.1 * rng.normal(size=n), -1, 1)
    return X, y


def planted_sparse(n=2000, p=200, s=5, seed=0, classification=False):
    """Planted s-sparse problem: X (Gaussian, sd 0.5, clipped to [-1, 1]), y, w*, declared bounds.

    Regression: ``y = X w* + 0.1 N(0, 1)``, labels declared in [-5, 5]; classification: 0/1 labels
    with ``P(y = 1) = sigmoid(4 <x, w*>)``.
    """
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(0.0, 0.5, (n, p)), -1.0, 1.0)
    w = np.zeros(p)
    w[rng.choice(p, s, replace=False)] = rng.choice([-1.0, 1.0], s)
    z = X @ w
    if classification:
        y = np.where(rng.random(n) < 1 / (1 + np.exp(-4 * z)), 1, 0)
        return X, y, w, data.Bounds(-np.ones(p), np.ones(p))
    return X, z + 0.1 * rng.standard_normal(n), w, data.Bounds(-np.ones(p), np.ones(p), -5.0, 5.0)


def intercept_weights(p):
    """Penalty weights: ones, with the last (intercept) coordinate unpenalized."""
    w = np.ones(p)
    w[-1] = 0.0
    return w


# Public bounds of the real datasets: a-priori ranges with their provenance, in
# examples/bounds/ (what README's commands use), NOT computed from the data.
BOUNDS_DIR = Path(__file__).resolve().parents[1] / "examples" / "bounds"


def a_priori_bounds(name):
    """``data.Bounds`` of a real dataset (``examples/bounds/NAME.json``)."""
    return data.Bounds.from_json(BOUNDS_DIR / f"{name}.json")


REGRESSION_ONLY = {"adassp"}  # least squares from sufficient statistics
CLASSIFICATION_ONLY = {"objective"}  # needs a twice-differentiable loss: logistic


def mechanism_cases():
    """``(name, classification)`` for every registered mechanism and every task it fits."""
    from dpsparse.mechanisms import REGISTRY

    for name in sorted(REGISTRY):
        for classification in (True, False):
            if (classification and name in REGRESSION_ONLY) or (not classification and name in CLASSIFICATION_ONLY):
                continue
            yield name, classification


def mechanism_loss(name, classification):
    """The test loss of a mechanism: logistic, or Huber for regression (the squared loss for AdaSSP)."""
    from dpsparse import losses

    if classification:
        return losses.Logistic()
    return losses.Squared(clip=1.0) if name in REGRESSION_ONLY else losses.Huber(1.0)


def worst_replay(name, loss, options, p=3, classification=True, repeats=2):
    """The largest ratio of each release's change to its declared sensitivity over every neighbouring pair of the
    shipped audit (``audit.sensitivity_replay``, n = 21, an L1 penalty), by release name."""
    bounds, pairs = audit.neighbouring_pairs(n=21, p=p, classification=classification)
    pen = norms.build_penalty("l1", 1e-3, p, True)
    worst = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for pair in pairs.values():
            ratios = audit.sensitivity_replay(name, pair, bounds, loss, pen, options=options,
                                              classification=classification, repeats=repeats)
            for release, ratio in ratios.items():
                worst[release] = max(worst.get(release, 0.0), ratio)
    return worst
