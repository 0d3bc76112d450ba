"""The private score (dpsparse.scoring): its sensitivity by replay on neighbours, its noise, its mean."""
import math
import warnings

import numpy as np
import pytest

from dpsparse import DPLasso, DPLogisticRegression, NoBetterThanConstantWarning, data
from dpsparse.accounting import zcdp_budget
from dpsparse.noise import NoiseSource
from dpsparse.scoring import private_score


class Released(NoiseSource):
    """Returns the released vector without noise and records the claimed scale and sensitivity."""

    def __init__(self):
        super().__init__(np.random.default_rng(0), seeded=True)
        self.claims = []

    def release(self, value, kind, scale, *, sensitivity, name, norm="l2", sampling=None):
        self.claims.append((kind, float(scale), float(sensitivity), name))
        self.value = np.asarray(value, dtype=float)
        return value


def _fitted(classification):
    name = "breast_cancer" if classification else "diabetes"
    X, y, bounds, _ = data.load_bundled(name)
    est = (DPLogisticRegression(bounds=bounds, classes=[0, 1], random_state=0) if classification
           else DPLasso(bounds=bounds, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X[:400], y[:400])
    return est, X[400:], y[400:], bounds


def _vector(est, X, y):
    noise = Released()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBetterThanConstantWarning)  # 42 held-out records: a noisy R^2
        private_score(est, X, y, 1.0, 1e-5, noise)
    return noise.value, noise.claims[0]


@pytest.mark.parametrize("classification", [True, False])
def test_the_released_vector_moves_by_at_most_its_sensitivity_on_neighbours(classification):
    """Replace-one neighbours of the held-out part, the replacement at the bounds' corners and with every label:
    the vector moves by at most the declared L2 sensitivity, and the noise is sensitivity / sqrt(2 rho)."""
    est, X, y, bounds = _fitted(classification)
    base, (kind, scale, sensitivity, name) = _vector(est, X, y)
    m = y.shape[0]
    assert kind == "gaussian" and name == "private score"
    assert scale == pytest.approx(sensitivity / math.sqrt(2 * zcdp_budget(1.0, 1e-5)), rel=1e-12)
    assert sensitivity == pytest.approx(math.sqrt(3 if classification else 21) / m)
    rng = np.random.default_rng(0)
    labels = [0, 1] if classification else [bounds.label_low, bounds.label_high, float(np.mean(y))]
    worst = 0.0
    for i in rng.choice(m, 10, replace=False):
        for corner in (bounds.feature_low, bounds.feature_high, X[(i + 1) % m]):
            for label in labels:
                Xb, yb = X.copy(), y.astype(float).copy()
                Xb[i], yb[i] = corner, label
                moved, _ = _vector(est, Xb, yb.astype(y.dtype) if classification else yb)
                worst = max(worst, float(np.linalg.norm(moved - base)))
    assert 0 < worst <= sensitivity * (1 + 1e-12)


def test_the_score_is_unbiased_for_the_held_out_accuracy():
    """Over 400 draws the mean of the noisy accuracy is within 4 standard errors of the exact one."""
    est, X, y, _ = _fitted(True)
    exact = float(np.mean(est.predict(X) == y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draws = [private_score(est, X, y, 1.0, 1e-5, NoiseSource(np.random.default_rng(s), seeded=True))
                 for s in range(400)]
    values = np.array([d["model"] for d in draws])
    assert abs(values.mean() - exact) < 4 * draws[0]["noise_sd"] / math.sqrt(400)
    assert values.std() == pytest.approx(draws[0]["noise_sd"], rel=0.15)


def test_a_model_no_better_than_the_constant_warns():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, 3))
    y = (rng.random(2000) < 0.8).astype(int)  # labels independent of X
    bounds = data.Bounds(-np.ones(3), np.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPLogisticRegression(bounds=bounds, classes=[0, 1], random_state=0).fit(X[:1500], y[:1500])
    with pytest.warns(NoBetterThanConstantWarning, match="does not show the model beating the constant predictor"):
        private_score(est, X[1500:], y[1500:], 1.0, 1e-5, NoiseSource(np.random.default_rng(0), seeded=True))


def test_the_private_r2_floors_a_noisy_variance_near_zero():
    """Held-out labels all equal: the label variance is 0, and its noisy release can be 0 or below. The R^2 then
    divides by ``VARIANCE_FLOOR`` (public) instead of a near-zero divisor (-1e11 before), and says so."""
    from dpsparse.scoring import VARIANCE_FLOOR

    est, X, y, _ = _fitted(False)
    flat = np.full_like(y, float(np.mean(y)), dtype=float)
    noise = Released()  # no noise: the variance released is exactly 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBetterThanConstantWarning)
        score = private_score(est, X, flat, 1.0, 1e-5, noise)
    mse = noise.value[0]
    assert score["variance_floored"] and score["model"] == pytest.approx(1.0 - mse / VARIANCE_FLOOR)
    assert score["model"] >= 1.0 - 4.0 / VARIANCE_FLOOR
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBetterThanConstantWarning)
        assert not private_score(est, X, y, 1.0, 1e-5, Released())["variance_floored"]  # diabetes: a real spread
