import numpy as np
import pytest

from dpsparse import losses

LOSSES = [losses.Logistic(), losses.Huber(0.7), losses.Squared(clip=0.5)]


def _labels(loss, rng, n):
    return rng.choice([-1.0, 1.0], n) if loss.name == "logistic" else rng.uniform(-1, 1, n)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda loss: loss.name)
def test_derivative_matches_finite_differences(loss):
    rng = np.random.default_rng(0)
    z, y = rng.uniform(-3, 3, 50), _labels(loss, rng, 50)
    h = 1e-6
    fd = (loss.value(z + h, y) - loss.value(z - h, y)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(z, y), fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda loss: loss.name)
def test_public_constants_bound_the_derivatives(loss):
    rng = np.random.default_rng(1)
    z, y = rng.uniform(-20, 20, 10_000), _labels(loss, rng, 10_000)
    assert np.max(np.abs(loss.bounded_derivative(z, y))) <= loss.lipschitz
    h = 1e-4
    second = (loss.derivative(z + h, y) - loss.derivative(z - h, y)) / (2 * h)
    assert np.max(second) <= loss.smoothness * (1 + 1e-6)
    # the constants are attained (not loose): sup |f'| and sup f'' are reached
    assert np.max(np.abs(loss.bounded_derivative(z, y))) > 0.99 * loss.lipschitz
    assert np.max(second) > 0.99 * loss.smoothness


@pytest.mark.parametrize("loss", LOSSES, ids=lambda loss: loss.name)
def test_conjugate_fenchel_young_equality(loss):
    """f(z) + f*(f'(z)) = z f'(z), and f(z') + f*(u) >= z' u elsewhere."""
    rng = np.random.default_rng(2)
    z, y = rng.uniform(-3, 3, 200), _labels(loss, rng, 200)
    u = loss.derivative(z, y)
    np.testing.assert_allclose(loss.value(z, y) + loss.conjugate(u, y), z * u, atol=1e-9)
    z2 = rng.uniform(-3, 3, 200)
    assert np.all(loss.value(z2, y) + loss.conjugate(u, y) >= z2 * u - 1e-9)


def test_coordinate_constants_from_feature_bounds():
    b = np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(losses.Logistic().coordinate_lipschitz(b), b)
    np.testing.assert_allclose(losses.Logistic().coordinate_smoothness(b), b**2 / 4)
    np.testing.assert_allclose(losses.Huber(3.0).coordinate_lipschitz(b), 3 * b)


def test_squared_loss_without_clipping_has_no_lipschitz_constant():
    with pytest.raises(ValueError, match="clip"):
        _ = losses.Squared().lipschitz


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_invalid_thresholds(bad):
    with pytest.raises(ValueError, match="tau"):
        losses.Huber(bad)
    with pytest.raises(ValueError, match="clip"):
        losses.Squared(clip=bad)


def test_unknown_loss():
    with pytest.raises(ValueError, match="unknown loss 'hinge2'"):
        losses.make_loss("hinge2")
