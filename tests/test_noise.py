"""Noise backends: make_noise's backend selection and the OpenDP-backed SecureNoiseSource.

Distribution tests are KS and chi-square tests at a false-alarm rate of 1e-6 (``ALPHA``; 30,000 draws each).
Tests that need opendp skip when it is not importable, or fail under
DPSPARSE_REQUIRE_DATA=1 (the convention of conftest.shared_data).
"""
import math
import os
import sys
import warnings

import numpy as np
import pytest
from scipy import stats

from conftest import bounded_problem, intercept_weights
from dpsparse import losses, norms
from dpsparse.mechanisms import dp_gcd
from dpsparse.noise import BACKENDS, NoiseSource, SecureNoiseSource, batched, make_noise

ALPHA = 1e-6
"""The error rate of each statistical test (a test of several checks splits it among them): the secure backend
draws from OS entropy (OpenDP's samplers take no seed), so its tests see new draws in every run, and at 1e-3 the
eight of them failed a correct sampler about one CI run in a hundred."""
N_DRAWS = 30000
"""Draws a test, for the power at ``ALPHA``: a Gaussian's scale 10 % off gives KS p-values of 1e-15 to 1e-20 (5 %
off: a median near 1e-5, caught in about a quarter of runs)."""


@pytest.fixture(scope="module")
def secure():
    """A SecureNoiseSource; skips (or fails under DPSPARSE_REQUIRE_DATA=1) without opendp."""
    try:
        import opendp.prelude  # noqa: F401
    except ImportError as exc:
        msg = f'opendp is not importable ({exc}); it is the optional extra: pip install "dpsparse[secure]"'
        if os.environ.get("DPSPARSE_REQUIRE_DATA") == "1":
            pytest.fail(msg + "; DPSPARSE_REQUIRE_DATA=1 makes this a failure")
        pytest.skip(msg)
    return make_noise(None, backend="secure")


# ----------------------------------------------------------------------------- make_noise

def test_fast_backend_keeps_the_existing_behaviour():
    a, b = make_noise(7), make_noise(7, backend="fast")
    assert type(a) is NoiseSource and a.seeded and b.seeded
    np.testing.assert_array_equal(a.laplace(1.0, 5), b.laplace(1.0, 5))
    assert not make_noise().seeded
    g = np.random.default_rng(0)
    assert make_noise(g).rng is g
    src = make_noise(3)
    assert make_noise(src) is src
    with pytest.raises(ValueError, match="random_state"):
        make_noise("seed")
    # scikit-learn's kind of state: a seed drawn from it, reproducible, warned as a seed
    from dpsparse.exceptions import FixedSeedWarning

    with pytest.warns(FixedSeedWarning):
        a, b = make_noise(np.random.RandomState(5)), make_noise(np.random.RandomState(5))
    assert a.seeded and np.array_equal(a.laplace(1.0, 4), b.laplace(1.0, 4))


def test_the_fast_backend_asked_for_without_a_seed_warns_of_its_floating_point_noise():
    """Numpy's textbook samplers leak through their least significant bits (Mironov 2012): asked for by name from OS
    entropy, they warn and say so in the report's noise source line. "auto" without a seed (OpenDP's samplers) and
    a seed (already a FixedSeedWarning: no guarantee at all) do not add it."""
    from dpsparse.exceptions import WeakGuaranteeWarning

    with pytest.warns(WeakGuaranteeWarning, match=r"noise='fast' draws .*\(Mironov 2012"):
        source = make_noise(None, backend="fast", parameter="noise")
    assert "Mironov 2012" in source.describe() and not source.seeded
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakGuaranteeWarning)
        make_noise(0, backend="fast")
        assert "Mironov" not in make_noise(1, backend="fast").describe()


def test_only_a_plain_numpy_source_is_drawn_from_in_batches():
    """Compiled loops draw a plain NoiseSource's noise up front; every subclass (the audit's, the test doubles,
    OpenDP's) keeps seeing each release through ``release`` and ``select``."""
    from dpsparse.audit import LedgerNoise, ReplayNoise

    assert batched(make_noise(0)) and batched(make_noise(np.random.default_rng(1)))
    assert not any(batched(source) for source in (LedgerNoise(0), ReplayNoise(0)))
    assert not batched(type("Sub", (NoiseSource,), {})(np.random.default_rng(0), True))
    assert not batched(SecureNoiseSource.__new__(SecureNoiseSource))


def test_unknown_backend_lists_the_allowed_values():
    with pytest.raises(ValueError) as err:
        make_noise(None, backend="exact")
    for name in BACKENDS:
        assert repr(name) in str(err.value)


@pytest.mark.parametrize("state", [0, np.int64(3), np.random.default_rng(0)])
def test_secure_refuses_a_fixed_seed(state):
    # refused before opendp is imported, so this runs without the extra too
    with pytest.raises(ValueError, match="not reproducible"):
        make_noise(state, backend="secure")


def test_secure_refuses_a_fast_noise_source():
    with pytest.raises(ValueError, match="non-secure"):
        make_noise(make_noise(0), backend="secure")


def test_missing_opendp_names_the_extra(monkeypatch):
    # None in sys.modules makes `import opendp.prelude` raise ImportError
    monkeypatch.setitem(sys.modules, "opendp", None)
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    with pytest.raises(ImportError, match=r'pip install "dpsparse\[secure\]"'):
        make_noise(None, backend="secure")


def test_secure_source_is_passed_through(secure):
    assert make_noise(secure, backend="secure") is secure
    assert make_noise(secure) is secure
    assert isinstance(secure, SecureNoiseSource) and not secure.seeded


# ------------------------------------------------------------------ SecureNoiseSource draws

def test_secure_laplace_is_laplace(secure):
    x = secure.laplace(0.7, N_DRAWS)
    assert stats.kstest(x, stats.laplace(scale=0.7).cdf).pvalue > ALPHA


def test_secure_gaussian_is_normal(secure):
    x = secure.gaussian(2.5, N_DRAWS)
    assert stats.kstest(x, stats.norm(scale=2.5).cdf).pvalue > ALPHA


def test_secure_gumbel_is_gumbel(secure):
    x = secure.gumbel(1.3, N_DRAWS)
    assert stats.kstest(x, stats.gumbel_r(scale=1.3).cdf).pvalue > ALPHA


def test_secure_laplace_per_coordinate_scales(secure):
    # as report_noisy_max calls it: laplace(scales_array, shape), here draws in rows
    scales = np.array([0.1, 2.0, 0.1, 30.0])
    x = secure.laplace(np.tile(scales, (N_DRAWS // 4, 1)), (N_DRAWS // 4, 4))
    assert x.shape == (N_DRAWS // 4, 4)
    level = ALPHA / (scales.size + 1)  # five tests, Bonferroni: the test's error rate is ALPHA
    for j, s in enumerate(scales):
        assert stats.kstest(x[:, j], stats.laplace(scale=s).cdf).pvalue > level
    # the standardized draws pooled are Laplace(1)
    assert stats.kstest((x / scales).ravel(), stats.laplace.cdf).pvalue > level


@pytest.mark.parametrize("kind,norm,law", [("gaussian", "l2", stats.norm), ("laplace", "l1", stats.laplace)])
def test_secure_release_hands_the_value_to_opendp_and_leaves_it_on_its_grid(secure, kind, norm, law):
    """A release at one scale with its sensitivity in the family's norm is OpenDP's measurement on the value: the
    output lies on the grid ``2**k`` whatever the value's low bits (Mironov's attack reads them), its noise has the
    declared law, and a scalar stays a float."""
    values = np.linspace(-3.0, 3.0, N_DRAWS) + np.pi * 1e-7  # low bits that no grid of 2^-40 or coarser keeps
    out = secure.release(values, kind, 0.8, sensitivity=0.3, name="test", norm=norm)
    k = next(key[3] for key in secure._measurements if key[:3] == ("value", kind, 0.8))
    assert k <= math.log2(0.8) - 50 and np.all(np.mod(out / 2.0**k, 1.0) == 0.0)
    assert stats.kstest((out - values) / 0.8, law.cdf).pvalue > ALPHA
    assert isinstance(secure.release(0.25, kind, 0.8, sensitivity=0.3, name="test", norm=norm), float)
    assert secure.release(np.empty(0), kind, 0.8, sensitivity=0.3, name="test", norm=norm).shape == (0,)


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_secure_release_spends_at_most_what_its_ledger_accounts(secure, kind):
    """OpenDP's privacy map of the value's measurement (which counts the rounding to its grid) at the declared
    sensitivity is at most the continuous mechanism's that the ledger composes (zCDP ``D^2 / (2 s^2)``, or
    ``D / s``), and within a millionth of it: the grid and the scale's margin cost nothing measurable."""
    for size, scale, sensitivity in ((1, 1.0, 1.0), (113, 110.0, 1.9), (10_000, 0.01, 1e-4), (50, 3e7, 1.0)):
        meas = secure._value_measurement(kind, scale, sensitivity, size)
        claim = sensitivity**2 / (2 * scale**2) if kind == "gaussian" else sensitivity / scale
        assert claim * (1 - 1e-6) < meas.map(sensitivity) <= claim
        assert meas.map(sensitivity * (1 + 1e-6)) > claim  # the check compares the right quantities


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_secure_release_refuses_a_grid_whose_rounding_spends_more_than_the_ledger_accounts(secure, kind):
    """The run-time check is live: on a grid as coarse as a tenth of the scale, rounding a neighbour's value moves
    it by up to a grid step, which OpenDP's map counts; the map exceeds the ledger's claim and the measurement is
    refused instead of released."""
    k = math.floor(math.log2(0.1))
    with pytest.raises(ValueError, match=f"OpenDP's {kind} measurement at scale 1 on the grid 2\\^{k} spends .* "
                                         "more than the"):
        secure._checked_value_measurement(kind, 1.0, 0.5, 10, k)


def test_secure_release_adds_a_draw_where_opendp_cannot_take_the_value(secure):
    """Per-coordinate scales, an undeclared sensitivity or one in another norm keep the draw added in numpy, and
    make no OpenDP measurement of the value."""
    values = np.full(N_DRAWS, np.pi)
    secure._measurements.clear()
    for kw in ({"scale": np.full(N_DRAWS, 0.5), "sensitivity": 1.0, "norm": "l2"},
               {"scale": 0.5, "sensitivity": float("nan"), "norm": "l2"},
               {"scale": 0.5, "sensitivity": None, "norm": "l2"},
               {"scale": 0.5, "sensitivity": 1.0, "norm": "linf"}):
        out = secure.release(values, "gaussian", name="test", **kw)
        assert stats.kstest((out - values) / 0.5, stats.norm.cdf).pvalue > ALPHA / 4  # four checks: ALPHA in all
    assert secure._measurements and not any(key[0] == "value" for key in secure._measurements)


def test_secure_gumbel_max_selects_with_softmax_probabilities(secure):
    # the use in dp_gcd: argmax(scores + gumbel(scale)) ~ softmax(scores / scale)
    scores, scale = np.array([0.0, 0.5, 1.0, -1.0]), 0.8
    picks = np.argmax(scores + secure.gumbel(scale, (N_DRAWS, scores.size)), axis=1)
    p = np.exp(scores / scale) / np.exp(scores / scale).sum()
    counts = np.bincount(picks, minlength=scores.size)
    assert stats.chisquare(counts, N_DRAWS * p).pvalue > ALPHA


def test_secure_shapes_as_the_mechanisms_call_them(secure):
    lap = secure.laplace(0.5)
    assert isinstance(lap, float)
    assert isinstance(secure.gaussian(1.0), float)
    assert isinstance(secure.gumbel(1.0), float)
    p = 6
    scores = np.zeros(p)
    assert secure.laplace(np.linspace(0.1, 1.0, p), np.shape(scores)).shape == (p,)
    assert secure.gumbel(0.3, np.shape(scores)).shape == (p,)
    assert secure.gaussian(1.5, p).shape == (p,)
    assert secure.gaussian(np.array([0.5, 1.0, 0.5])).shape == (3,)  # dp_cd: gaussian(stds[coords])
    assert secure.laplace(1.0, (2, 3)).shape == (2, 3)
    assert secure.laplace(np.array([1.0, 2.0])).shape == (2,)
    assert secure.laplace(1.0, 0).shape == (0,)
    np.testing.assert_array_equal(secure.laplace(0.0, 3), np.zeros(3))
    np.testing.assert_array_equal(secure.laplace(np.array([0.0, 1.0]), 2)[:1], [0.0])
    assert np.all(np.isfinite(secure.gumbel(1e-3, 50)))


@pytest.mark.parametrize("scale", [-1.0, np.inf, np.nan])
def test_secure_rejects_invalid_scales(secure, scale):
    for draw in (secure.laplace, secure.gaussian, secure.gumbel):
        with pytest.raises(ValueError, match="scale"):
            draw(scale, 3)


def test_secure_caches_measurements_by_family_and_scale(secure):
    secure._measurements.clear()
    secure.laplace(0.25, 10)
    secure.laplace(0.25, 20)
    secure.laplace(0.25)
    secure.gaussian(0.25, 5)
    assert set(secure._measurements) == {("laplace", 0.25), ("gaussian", 0.25)}
    small = SecureNoiseSource(max_cached=2)
    for s in (1.0, 2.0, 3.0):
        small.laplace(s, 2)
    assert list(small._measurements) == [("laplace", 2.0), ("laplace", 3.0)]


def test_secure_index_sampling_rng_and_describe(secure):
    assert isinstance(secure.rng, np.random.Generator)
    assert 0 <= int(secure.rng.integers(10)) < 10
    assert secure.rng.random(5).shape == (5,)
    text = secure.describe()
    assert "OpenDP" in text and secure.opendp_version in text and "OS entropy" in text
    assert "fixed seed" not in text


def test_dp_gcd_runs_on_the_secure_backend(secure):
    # paper calibration: Laplace selection with per-coordinate scales and Laplace updates;
    # gumbel selection: Gumbel selection and Gaussian updates (DP-SGD's tight calibration
    # alone takes seconds of accounting, so the Gaussian vector path is tested above)
    X, y = bounded_problem(n=150, p=4, seed=1)
    pen = norms.L1(0.01, intercept_weights(X.shape[1]))
    for kw in (dict(calibration="paper"), dict(selection="gumbel")):
        w, rep = dp_gcd.dp_gcd(X, y, losses.Logistic(), pen, np.ones(X.shape[1]), epsilon=1.0, delta=1e-5,
                               n_iter=5, noise=secure, **kw)
        assert w.shape == (X.shape[1],) and np.all(np.isfinite(w))
        assert rep.noise_source == secure.describe()


def test_a_fixed_seed_warns_that_it_is_for_experiments_only():
    import warnings as _w

    from dpsparse.exceptions import FixedSeedWarning
    from dpsparse.noise import make_noise as _make

    for seed in [0, np.random.default_rng(0)]:
        with pytest.warns(FixedSeedWarning, match="experiments only"):
            _make(seed)
    with _w.catch_warnings():
        _w.simplefilter("error", FixedSeedWarning)
        _make(None)  # OS entropy: no warning


def test_the_secure_report_noisy_max_is_the_gumbel_max_and_never_selects_minus_infinity():
    """OpenDP's make_noisy_max behind SecureNoiseSource.select: the selection frequencies of scores (0, 1, 2)
    at scale 1 are the softmax (0.090, 0.245, 0.665) by a chi-square test at error rate 1e-3; -inf never wins."""
    pytest.importorskip("opendp")
    from scipy.stats import chisquare

    from dpsparse.noise import SecureNoiseSource

    noise = SecureNoiseSource()
    scores = np.array([0.0, 1.0, -np.inf, 2.0])
    picks = np.array([noise.select(scores, "gumbel", 1.0, sensitivity=1.0, name="test") for _ in range(3000)])
    assert not np.any(picks == 2)
    counts = np.array([np.sum(picks == k) for k in (0, 1, 3)])
    expected = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum() * picks.size
    assert chisquare(counts, expected).pvalue > 1e-3


def test_the_default_backend_is_exact_for_a_release_and_numpy_for_a_seeded_experiment():
    pytest.importorskip("opendp")
    from dpsparse import DPLogisticRegression, FixedSeedWarning, data
    from dpsparse.noise import SecureNoiseSource, make_noise

    assert isinstance(make_noise(None), SecureNoiseSource)
    with pytest.warns(FixedSeedWarning):
        assert not isinstance(make_noise(0), SecureNoiseSource)
    X, y, bounds, _ = data.load_bundled("breast_cancer")
    est = DPLogisticRegression(bounds=bounds, classes=[0, 1]).fit(X, y)
    assert est.get_params()["noise"] == "auto" and "OpenDP" in est.privacy_report_.noise_source


@pytest.mark.parametrize("source", [NoiseSource(np.random.default_rng(0), seeded=True), SecureNoiseSource()])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_report_noisy_max_refuses_a_nan_or_infinite_score_and_skips_minus_infinity(source, bad):
    with pytest.raises(ValueError, match="selection x: a score is NaN or \\+inf"):
        source.select(np.array([0.0, bad, 1.0]), "gumbel", 1.0, sensitivity=1.0, name="selection x")
    picks = {source.select(np.array([0.0, -np.inf, 0.0]), "gumbel", 1.0, sensitivity=1.0, name="x")
             for _ in range(30)}
    assert picks == {0, 2}
