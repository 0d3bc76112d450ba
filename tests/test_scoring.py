"""The private score (dpsparse.scoring): its sensitivity by replay on neighbours, its noise, its mean."""
import math
import warnings

import numpy as np
import pytest

from dpsparse import DPLasso, DPLogisticRegression, NoBetterThanConstantWarning, data
from dpsparse.accounting import zcdp_budget
from dpsparse.noise import NoiseSource
from dpsparse.scoring import noisy_square, private_score


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


def test_the_score_is_the_held_out_accuracy_with_gaussian_noise_clipped_to_0_1():
    """Over 400 draws the noisy accuracy's mean is within 4 standard errors of the mean of the exact accuracy plus
    Gaussian noise of ``noise_sd`` clipped to [0, 1] (a reference of 10^6 draws), its spread that one's within 15 %,
    and no draw leaves [0, 1]."""
    est, X, y, _ = _fitted(True)
    exact = float(np.mean(est.predict(X) == y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draws = [private_score(est, X, y, 1.0, 1e-5, NoiseSource(np.random.default_rng(s), seeded=True))
                 for s in range(400)]
    values, sd = np.array([d["model"] for d in draws]), draws[0]["noise_sd"]
    reference = np.clip(exact + sd * np.random.default_rng(1).standard_normal(10**6), 0.0, 1.0)
    assert exact + 2 * sd > 1  # the clip binds on some draws: the test sees it
    assert abs(values.mean() - reference.mean()) < 4 * reference.std() / math.sqrt(400)
    assert values.std() == pytest.approx(reference.std(), rel=0.15)
    assert values.min() >= 0 and values.max() <= 1


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


def test_an_accuracy_drowned_in_its_noise_is_no_score():
    """Noise sd of at least a quarter (RELIABLE of them span [0, 1]): ``unreliable``, with its own warning; breast
    cancer's 169 held-out records at epsilon 1 give an sd of 0.02: a score."""
    from dpsparse.scoring import RELIABLE

    est, X, y, _ = _fitted(True)
    noise = NoiseSource(np.random.default_rng(0), seeded=True)
    with pytest.warns(NoBetterThanConstantWarning, match="the private accuracy at epsilon 1 is not a score here"):
        few = private_score(est, X[:5], y[:5], 1.0, 1e-5, noise)
    assert few["unreliable"] and RELIABLE * few["noise_sd"] >= 1.0 and few["model"] is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        many = private_score(est, X, y, 1.0, 1e-5, noise)
    assert not many["unreliable"] and RELIABLE * many["noise_sd"] < 1.0


def test_the_private_r2_floors_a_noisy_variance_near_zero():
    """Held-out labels all equal: the label variance is 0, and its noisy release can be 0 or below. Its spread then
    divides by ``VARIANCE_FLOOR`` (public) instead of a near-zero divisor (an R^2 of -1e11 before), and no R^2 is
    released (``unreliable``: None, not a number that would read as a score)."""
    from dpsparse.scoring import VARIANCE_FLOOR

    est, X, y, _ = _fitted(False)
    flat = np.full_like(y, float(np.mean(y)), dtype=float)
    noise = Released()  # no noise: the variance released is exactly 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBetterThanConstantWarning)
        score = private_score(est, X, flat, 1.0, 1e-5, noise)
    sigma = score["noise_sd"]
    assert score["variance_floored"] and score["unreliable"] and score["model"] is None
    assert score["model_sd"] == pytest.approx(math.hypot(sigma / VARIANCE_FLOOR, noise.value[0] * sigma * math.sqrt(
        1.0 + 4.0 * noise.value[1] ** 2) / VARIANCE_FLOOR**2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBetterThanConstantWarning)
        assert not private_score(est, X, y, 1.0, 1e-5, Released())["variance_floored"]  # diabetes: a real spread


def test_the_private_r2_spread_is_its_noise_and_a_noise_dominated_ratio_is_no_score():
    """Where the held-out labels' variance is well above its noise (5000 records), the R^2's draws spread as its
    first-order ``model_sd`` says (within 20 %, 300 draws) around the exact R^2, the mean squared error's as
    ``mse_sd``; on 42 held-out diabetes records the variance is within its noise: ``unreliable``, and the warning
    says the R^2 is not a score."""
    from sklearn.metrics import mean_squared_error, r2_score

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (7000, 3))
    y = X @ [2.0, -1.0, 0.5] + 0.5 * rng.standard_normal(7000)
    bounds = data.Bounds(-np.ones(3), np.ones(3), label_low=-5.0, label_high=5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPLasso(epsilon=5.0, bounds=bounds, random_state=0).fit(X[:2000], y[:2000])
        draws = [private_score(est, X[2000:], y[2000:], 1.0, 1e-5, NoiseSource(np.random.default_rng(s), seeded=True))
                 for s in range(300)]
    held = np.clip(y[2000:], *est.label_range_)  # scored on the released label range, as predict clips to it
    pred = est.predict(X[2000:])
    r2, mse = np.array([d["model"] for d in draws]), np.array([d["model_mse"] for d in draws])
    assert not any(d["unreliable"] for d in draws)
    assert r2.std() == pytest.approx(draws[0]["model_sd"], rel=0.2)
    assert abs(r2.mean() - r2_score(held, pred)) < 4 * r2.std() / math.sqrt(300) + 1e-3  # + the ratio's bias
    assert mse.std() == pytest.approx(draws[0]["mse_sd"], rel=0.2)
    assert abs(mse.mean() - mean_squared_error(held, pred)) < 4 * draws[0]["mse_sd"] / math.sqrt(300)
    est, X, y, _ = _fitted(False)
    with pytest.warns(NoBetterThanConstantWarning, match="the private R\\^2 at epsilon .* is not a score here") as said:
        score = private_score(est, X, y, 1.0, 1e-5, NoiseSource(np.random.default_rng(0), seeded=True))
    assert score["unreliable"] and score["model"] is None  # no number that would read as a score
    shown = noisy_square(score["model_mse"], score["mse_sd"])  # the errors to the digits their noise leaves
    assert f"the model's {shown} against" in str(said[0].message) and shown.endswith("000")  # sd 1.7e4


def test_a_floored_variance_is_never_a_score_and_each_mse_has_its_own_noise():
    """A variance below ``VARIANCE_FLOOR`` with tiny noise (many records) is still no divisor (the floor would set
    the R^2); the constant's mean squared error is the noisy variance, whose noise is ``sigma sqrt(1 + 4 mean^2)``."""
    from dpsparse.scoring import VARIANCE_FLOOR, _r2

    mean = 0.9
    score = _r2(np.array([4e-4, mean, mean**2 + 5e-4]), 1e-6, 60.0)
    assert 5e-4 < VARIANCE_FLOOR and score["variance_floored"] and score["unreliable"]
    score = _r2(np.array([0.1, mean, mean**2 + 0.2]), 1e-3, 2.0)
    assert not score["unreliable"] and score["model"] == pytest.approx(0.5)
    assert score["mse_sd"] == pytest.approx(4e-3) and score["constant_mse_sd"] == pytest.approx(4e-3 * math.sqrt(4.24))
    score = _r2(np.array([-0.3, 0.0, -0.2]), 0.1, 2.0)  # noise below zero: no negative mean squared error released
    assert score["unreliable"] and score["model_mse"] == score["constant_mse"] == 0.0 and score["model"] is None
