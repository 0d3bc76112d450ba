"""Noise samplers: the source of every random draw of a mechanism.

Mechanisms take a ``NoiseSource`` (explicit random state, as in optax) and draw from it
only. Two backends (see docs/noise.md; ``"auto"``, the estimators' default, is the second without a seed and the
first with one):

* ``"fast"``: numpy's PCG64 generator; a fixed seed makes a run reproducible and is for experiments only (it says
  so in the report); from OS entropy its textbook floating-point samplers warn (Mironov 2012).
* ``"secure"``: ``SecureNoiseSource``, Laplace and Gaussian draws from OpenDP's exact
  samplers on a discretized grid (no floating-point holes, Mironov 2012), from OS
  entropy only. Optional extra: ``pip install "dpsparse[secure]"``.
"""
from __future__ import annotations

import copy
import math
import warnings
from collections import OrderedDict

import numpy as np

from .exceptions import FixedSeedWarning, WeakGuaranteeWarning, user_stacklevel

__all__ = ["BACKENDS", "NoiseSource", "SecureNoiseSource", "argmax_per_factor", "batched", "make_noise"]

BACKENDS = ("auto", "fast", "secure")

_INSTALL_HINT = 'pip install "dpsparse[secure]"'


def _vector(values):
    """``values`` as OpenDP reads a vector of floats fastest: a contiguous 1-d float64 array, passed to Rust as it is
    (a Python list is converted and checked one element at a time in Python: news20's DP-GCD, 20 classes of 100
    selections over 62,061 scores, spent 200 of its 230 s there)."""
    return np.ascontiguousarray(np.ravel(values), dtype=np.float64)


def _checked_scores(scores, name):
    """``scores`` as floats; a ValueError naming the selection when one is NaN or ``+inf`` (a mechanism's bug: the law
    of report-noisy-max would change silently), ``-inf`` being the way to exclude a candidate."""
    scores = np.asarray(scores, dtype=float)
    if np.any(np.isnan(scores) | (scores == np.inf)):
        raise ValueError(f"{name}: a score is NaN or +inf; report-noisy-max takes finite scores (-inf excludes a "
                         "candidate)")
    return scores


class NoiseSource:
    """Laplace, Gumbel and Gaussian draws from a ``numpy.random.Generator``.

    Parameters
    ----------
    rng : numpy.random.Generator
    seeded : bool
        Whether the generator was seeded by the caller (reproducible, experiments only).
    """

    def __init__(self, rng, seeded):
        self.rng = rng
        self.seeded = seeded

    def laplace(self, scale, size=None):
        """Draws of Laplace(0, scale): density ``exp(-|x| / scale) / (2 scale)``."""
        return self.rng.laplace(0.0, scale, size)

    def gumbel(self, scale, size=None):
        """Draws of Gumbel(0, scale).

        ``argmax_j s_j + Gumbel(scale)`` samples ``j`` with probability proportional to ``exp(s_j / scale)``.
        """
        return self.rng.gumbel(0.0, scale, size)

    def gaussian(self, sigma, size=None):
        """Draws of N(0, sigma**2)."""
        return self.rng.normal(0.0, sigma, size)

    def draw(self, kind, scale, size=None):
        """Draws of the family ``kind`` ("laplace", "gaussian" or "gumbel") at ``scale``."""
        return {"laplace": self.laplace, "gaussian": self.gaussian, "gumbel": self.gumbel}[kind](scale, size)

    def release(self, value, kind, scale, *, sensitivity, name, norm="l2", sampling=None):
        """``value`` plus noise of family ``kind`` and ``scale``: every noisy release of a mechanism.

        ``sensitivity`` (in the ``norm``, "l1", "l2" or "linf") is the declared bound on how
        much ``value`` moves when one record is replaced, at the same history of earlier
        releases; the audit (``dpsparse.audit``) replays it, and its ledger replay composes
        ``scale / sensitivity`` with the accountant (``accounting.compose_log``). A zero
        scale adds nothing.

        ``sampling`` says which records the value reads, when not all of them (the privacy
        analysis depends on it): ``("poisson", q)``, a Poisson sample of rate ``q``;
        ``("replacement", n, m)``, ``m`` indices drawn with replacement from ``n``;
        ``("disjoint", q)``, every record in at most one release of this name, used with
        probability at most ``q``; ``("chain", None)``, Gaussian noise on an approximate
        minimizer, within ``sensitivity`` of a minimizer whose privacy is a proof
        (``perturbation``). None: every record.

        Returns
        -------
        float or ndarray shaped like ``value``
        """
        if not np.any(np.asarray(scale) > 0):
            return value
        return value + self.draw(kind, scale, np.shape(value) or None)

    def select(self, scores, kind, scale, *, sensitivity, name):
        """Report-noisy-max: ``argmax_j scores_j + noise_j`` (``kind`` "laplace" or "gumbel").

        ``sensitivity``: declared bound on ``|scores_j(D) - scores_j(D')|``, a number or
        one per score. A zero scale gives the exact argmax.

        Returns
        -------
        int
        """
        scores = _checked_scores(scores, name)
        if not np.any(np.asarray(scale) > 0):
            return int(np.argmax(scores))
        return int(np.argmax(scores + self.draw(kind, scale, scores.shape)))

    def select_product(self, scores, factor, scale, *, sensitivity, name):
        """One exponential mechanism over a product set, by Gumbel-max in each factor.

        The candidates are the tuples that take one item of each factor; a tuple's score is
        the sum of its items' ``scores``. ``argmax`` of ``scores + Gumbel(scale)`` within each
        factor samples the tuple with probability proportional to ``exp(score / scale)``.

        Parameters
        ----------
        scores : ndarray of shape (k,)
        factor : ndarray of int of shape (k,)
            The factor of each item.
        scale : float
            Gumbel scale ``beta`` (0: the exact maximizer).
        sensitivity : float
            Declared bound on how much a tuple's score moves when one record is replaced:
            the draw is ``2 sensitivity / beta``-DP.

        Returns
        -------
        ndarray of int
            The chosen item of each factor, in the order of the factors' first items.
        """
        scores = np.asarray(scores, dtype=float)
        if scale > 0:
            scores = scores + self.draw("gumbel", scale, scores.shape)
        return argmax_per_factor(scores, factor)

    def perturbation(self, kind, scale, size, *, epsilon, delta, name):
        """Noise drawn into an objective (objective perturbation), whose privacy is a proof.

        The draw is not a release: the mechanism's theorem says that what it releases from
        it is (``epsilon``, ``delta``)-DP, and the ledger replay books that pair as declared.

        Returns
        -------
        ndarray of shape ``size``
        """
        return self.draw(kind, scale, size)

    def check(self, value, *, sensitivity, name, norm="l2"):
        """A bounded intermediate the privacy analysis rests on (no noise): returned as is.

        Declares that ``value`` moves by at most ``sensitivity`` when one record is replaced
        (at the same history); the audit replays it.
        """
        return value

    def describe(self):
        """One line for the privacy report."""
        if self.seeded:
            return "numpy PCG64 with a fixed seed: reproducible, for experiments only"
        return ("numpy PCG64 seeded from OS entropy: textbook floating-point samplers, whose least significant bits "
                "can tell neighbouring datasets apart (Mironov 2012): the guarantee is the ideal mechanism's")

    def lookahead(self):
        """A stand-in whose ``rng`` is a copy of this one's and advances as it does through the same calls: it reads
        the data-independent index draws ahead (the one-pass SGD prefetches the rows of a dask array). What it
        draws is thrown away, never released, and this source is left as it was."""
        return NoiseSource(copy.deepcopy(self.rng), self.seeded)


class _IndexDraws(NoiseSource):
    """The ``rng`` of a source whose noise comes from elsewhere: its noise draws are zeros."""

    def draw(self, kind, scale, size=None):
        return np.zeros(np.shape(scale) if size is None else size)


def batched(noise):
    """Whether a mechanism may draw from ``noise`` in batches of its own, outside ``release`` and ``select``.

    True for a plain ``NoiseSource`` only: its draws are numpy's, so a compiled loop may draw a run's noise
    up front (standard draws times the public scales, one uniform per exponential mechanism), the same laws
    in another order of the stream. A subclass (the audit's sources, the test doubles, OpenDP's) sees every
    release through ``release`` and ``select``.
    """
    return type(noise) is NoiseSource


def argmax_per_factor(scores, factor):
    """Index of the largest score within each factor, in the order of the factors (ties: the first)."""
    factor = np.asarray(factor)
    order = np.lexsort((-np.asarray(scores, dtype=float), factor))  # by factor, best first
    return order[np.r_[0, np.flatnonzero(np.diff(factor[order])) + 1]]


def _import_opendp():
    """``opendp.prelude`` with the ``contrib`` feature enabled, or an ImportError naming the extra.

    ``contrib`` is required by ``make_laplace`` and ``make_gaussian`` (OpenDP gates every
    measurement that has not yet been through its vetting process behind it). The
    ``floating-point`` feature is NOT enabled: these samplers do not need it, and it
    would opt in to constructions whose proofs assume idealized float arithmetic,
    the very weakness this backend avoids. ``enable_features`` is process-wide.
    """
    try:
        import opendp.prelude as dp
    except ImportError as exc:
        raise ImportError(f'noise="secure" needs the optional dependency opendp: {_INSTALL_HINT}') from exc
    dp.enable_features("contrib")
    return dp


def _opendp_version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("opendp")
    except PackageNotFoundError:  # pragma: no cover - importable but not installed as a distribution
        return "unknown version"


class SecureNoiseSource(NoiseSource):
    """Floating-point-safe draws from OpenDP's samplers (Mironov 2012), OS entropy only.

    * ``laplace``: ``opendp.measurements.make_laplace`` on
      ``vector_domain(atom_domain(T=float, nan=False))`` applied to a vector of zeros:
      an exact discrete Laplace on the grid ``2**k`` (``k`` left at OpenDP's default, the
      finest float grid ``2**-1074``) rounded once to the nearest float, so every draw is
      a correctly rounded Laplace sample with full support (no holes, untruncated tails).
    * ``gaussian``: ``make_gaussian`` on the same domain (exact discrete Gaussian,
      Canonne, Kamath and Steinke 2020, on the same grid).
    * ``gumbel``: OpenDP has no sampler that returns Gumbel values (its ``make_noisy_max``
      returns only the index), so ``Gumbel(scale) = -scale * log(E)`` with
      ``E = |Laplace(1)| ~ Exp(1)`` drawn as above. ``E`` is exact down to the smallest
      floats, so the upper tail reaches about ``744 * scale``, where numpy's
      ``-log(-log(U))`` with a 53-bit uniform ``U`` stops near ``36.7 * scale``; the log
      and the product are ordinary float operations (monotone, a few ulps).

    One OpenDP call per vector and per distinct scale (an array of scales is grouped by
    value); measurements are cached by ``(family, scale)`` (the vector domain has no
    fixed size, so one measurement serves every size), and those applied to a value by its family, scale, grid,
    size and sensitivity; least recently used evicted.

    ``release`` at one scale with a declared sensitivity in its family's norm hands the value itself to OpenDP
    (rounded to a grid ``2**k``, exact discrete noise, one rounding: ``_value_measurement``); other releases add
    the exact draws with numpy float arithmetic, outside OpenDP; see docs/noise.md for what that leaves.

    ``rng`` (a numpy PCG64 Generator seeded from OS entropy) is only for the
    mechanisms' data-independent index sampling (``rng.integers(n)``, Poisson
    subsampling ``rng.random(n) < q``): those draws do not depend on the data, so the
    floating-point exactness of how they are generated does not affect privacy.

    Parameters
    ----------
    max_cached : int
        Number of OpenDP measurements kept (one per family and distinct scale).
    """

    def __init__(self, max_cached=4096):
        self._dp = _import_opendp()
        super().__init__(np.random.default_rng(), seeded=False)
        self.opendp_version = _opendp_version()
        self.max_cached = int(max_cached)
        self._measurements = OrderedDict()
        space = self._dp.vector_domain(self._dp.atom_domain(T=float, nan=False))
        self._spaces = {"laplace": (space, self._dp.l1_distance(T=float)),
                        "gaussian": (space, self._dp.l2_distance(T=float))}

    def _cached(self, key, make):
        """The measurement of ``key``, made by ``make()`` on first use; the least recently used beyond
        ``max_cached`` evicted."""
        meas = self._measurements.get(key)
        if meas is None:
            meas = self._measurements[key] = make()
            if len(self._measurements) > self.max_cached:
                self._measurements.popitem(last=False)
        else:
            self._measurements.move_to_end(key)
        return meas

    def _measurement(self, family, scale):
        dp = self._dp
        if family == "noisy max":  # Gumbel noise, argmax returned (the exponential mechanism, zCDP measure)
            return self._cached((family, scale), lambda: dp.m.make_noisy_max(
                dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float),
                dp.zero_concentrated_divergence(), scale=scale))
        make = dp.m.make_laplace if family == "laplace" else dp.m.make_gaussian
        return self._cached((family, scale), lambda: make(*self._spaces[family], scale=scale))

    def _sample(self, family, scale, n):
        """``n`` draws of ``family`` at one scale: one OpenDP call."""
        if scale == 0.0 or n == 0:
            return np.zeros(n)
        return np.asarray(self._measurement(family, scale)(np.zeros(n)), dtype=float)

    def _draw(self, family, scale, size):
        """Draws shaped like numpy's ``rng.laplace(0, scale, size)``: a float when both are scalars."""
        scale = np.asarray(scale, dtype=float)
        if not np.all(np.isfinite(scale)) or np.any(scale < 0):
            raise ValueError(f"{family} scale must be finite and >= 0, got {scale}")
        shape = scale.shape if size is None else tuple(np.atleast_1d(size).astype(int))
        if scale.ndim == 0:
            out = self._sample(family, float(scale), int(np.prod(shape, dtype=int)))
            return float(out[0]) if size is None else out.reshape(shape)
        scales = np.broadcast_to(scale, shape).ravel()
        out = np.empty(scales.size)
        values, inverse = np.unique(scales, return_inverse=True)
        for i, value in enumerate(values):
            where = inverse.ravel() == i
            out[where] = self._sample(family, float(value), int(where.sum()))
        return out.reshape(shape)

    def release(self, value, kind, scale, *, sensitivity, name, norm="l2", sampling=None):
        """``value`` plus noise (``NoiseSource.release``). A release at one scale whose declared sensitivity is in
        its family's norm (Gaussian: L2, Laplace: L1) is one OpenDP measurement applied to the value itself
        (``_value_measurement``): OpenDP rounds the value to the grid ``2**k``, adds the exact discrete noise and
        rounds once to a float, so no low bit of the value survives in the output (the float addition that the
        other releases still make is docs/noise.md's gap). Any other release adds a draw as before."""
        if not (_VALUE_NORMS.get(kind) == norm and np.size(value) and _positive_number(scale)
                and _positive_number(sensitivity)):
            return super().release(value, kind, scale, sensitivity=sensitivity, name=name, norm=norm,
                                   sampling=sampling)
        v = np.asarray(value, dtype=float)
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name}: the value to release must be finite")
        out = np.asarray(self._value_measurement(kind, float(scale), float(sensitivity), v.size)(_vector(v)),
                         dtype=float).reshape(v.shape)
        return float(out) if np.ndim(value) == 0 else out

    def _value_measurement(self, kind, scale, sensitivity, size):
        """OpenDP's ``make_gaussian`` / ``make_laplace`` on vectors of ``size`` floats, on the grid ``2**k`` with ``k``
        at most ``log2(scale) - 50`` and small enough that rounding to it moves a neighbour's value by at most
        ``1e-10`` of the sensitivity (``2**k sqrt(size)``, L2; ``2**k size``, L1; a sampled release, charged per
        contribution, half the sensitivity: ``2e-10`` of it), at the scale times ``1 + 2e-9``:
        its privacy map at ``sensitivity`` (which counts the rounding) is checked to be at most the continuous
        mechanism's that the ledger accounts (zCDP ``sensitivity^2 / (2 scale^2)``, or ``sensitivity / scale``),
        else ValueError. Far coarser than the finest float grid, the draws are 3-4 times faster (docs/noise.md)."""
        spread = math.sqrt(size) if kind == "gaussian" else float(size)
        k = math.floor(min(math.log2(scale) - 50, math.log2(1e-10 * sensitivity / spread)))
        return self._cached(("value", kind, scale, k, size, sensitivity),  # the check is at this sensitivity
                            lambda: self._checked_value_measurement(kind, scale, sensitivity, size, k))

    def _checked_value_measurement(self, kind, scale, sensitivity, size, k):
        """``_value_measurement``'s OpenDP measurement, its privacy map checked against the ledger's claim."""
        dp = self._dp
        make, distance = ((dp.m.make_gaussian, dp.l2_distance) if kind == "gaussian"
                          else (dp.m.make_laplace, dp.l1_distance))
        meas = make(dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size), distance(T=float),
                    scale=scale * (1.0 + 2e-9), k=k)
        claim = sensitivity**2 / (2.0 * scale**2) if kind == "gaussian" else sensitivity / scale
        if not meas.map(sensitivity) <= claim:
            raise ValueError(f"OpenDP's {kind} measurement at scale {scale:.6g} on the grid 2^{k} spends "
                             f"{meas.map(sensitivity):.6g} at sensitivity {sensitivity:.6g}, more than the "
                             f"{claim:.6g} its release is accounted for")
        return meas

    def select(self, scores, kind, scale, *, sensitivity, name):
        """Report-noisy-max; with Gumbel noise at one scale, OpenDP's ``make_noisy_max`` (exact Gumbel-max in
        Rust, the index only: about 100 times faster than drawing each Gumbel here), over the finite scores
        (a ``-inf`` score is never selected)."""
        if kind != "gumbel" or np.ndim(scale) or not float(scale) > 0:
            return super().select(scores, kind, scale, sensitivity=sensitivity, name=name)
        scores = _checked_scores(scores, name)
        finite = np.flatnonzero(np.isfinite(scores))
        return int(finite[self._measurement("noisy max", float(scale))(_vector(scores[finite]))])

    def laplace(self, scale, size=None):
        """Draws of Laplace(0, scale) from OpenDP's ``make_laplace`` (exact, discretized)."""
        return self._draw("laplace", scale, size)

    def gaussian(self, sigma, size=None):
        """Draws of N(0, sigma**2) from OpenDP's ``make_gaussian`` (exact discrete Gaussian)."""
        return self._draw("gaussian", sigma, size)

    def gumbel(self, scale, size=None):
        """Draws of Gumbel(0, scale) as ``-scale * log(E)``, ``E ~ Exp(1)`` from OpenDP (class docstring)."""
        scale = np.asarray(scale, dtype=float)
        if not np.all(np.isfinite(scale)) or np.any(scale < 0):
            raise ValueError(f"gumbel scale must be finite and >= 0, got {scale}")
        shape = scale.shape if size is None else tuple(np.atleast_1d(size).astype(int))
        e = np.abs(self._sample("laplace", 1.0, int(np.prod(shape, dtype=int))))
        while np.any(e == 0.0):  # probability about 2**-1074 per draw; log(0) would be -inf
            zero = e == 0.0
            e[zero] = np.abs(self._sample("laplace", 1.0, int(zero.sum())))
        out = -np.broadcast_to(scale, shape) * np.log(e).reshape(shape)
        if size is None and scale.ndim == 0:
            return float(out)
        return out

    def lookahead(self):
        """The noise comes from OpenDP, ``rng`` draws the indices only: a stand-in whose noise draws are zeros."""
        return _IndexDraws(copy.deepcopy(self.rng), False)

    def describe(self):
        """One line for the privacy report."""
        return (f"OpenDP {self.opendp_version} exact samplers (make_laplace, make_gaussian on a "
                "2^k grid; report-noisy-max by make_noisy_max; other Gumbel draws as -log of an OpenDP "
                "exponential), OS entropy; index sampling by numpy PCG64 seeded from OS entropy")


_VALUE_NORMS = {"gaussian": "l2", "laplace": "l1"}
"""The families whose releases ``SecureNoiseSource`` hands to OpenDP with the value, and the norm of their
sensitivity."""


def _positive_number(x):
    """Whether ``x`` is one finite number above 0 (not None, not an array)."""
    return x is not None and np.ndim(x) == 0 and math.isfinite(float(x)) and float(x) > 0


FLOATING_POINT = ("{fast} draws the privacy noise with numpy's textbook floating-point samplers, whose least "
                  "significant bits can tell neighbouring datasets apart (Mironov 2012, 'On significance of the "
                  "least significant bits for differential privacy'): the guarantee is the ideal mechanism's; for a "
                  "model you release, use {auto} (OpenDP's exact samplers, docs/noise.md)")
"""The warning of the ``"fast"`` backend asked for by name without a seed (``{fast}`` and ``{auto}``: how the
caller names the two choices)."""


def make_noise(random_state=None, backend="auto", parameter="backend"):
    """``NoiseSource`` from None (OS entropy), an int seed, a Generator, a RandomState (a seed drawn from it, as
    scikit-learn's estimators take one) or a NoiseSource.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator, numpy.random.RandomState or NoiseSource
        A NoiseSource is returned as it is (with ``backend="secure"`` it must be a
        ``SecureNoiseSource``).
    backend : {"auto", "fast", "secure"}
        ``"fast"``: numpy PCG64. ``"secure"``: ``SecureNoiseSource`` (OpenDP); it refuses
        a seed or a Generator, since OpenDP draws from OS entropy and is not reproducible.
    parameter : str
        The name the caller gives ``backend`` in its errors (the estimators' and ``DPSearchCV``'s ``noise``).
        ``"auto"`` (the default): ``"secure"`` without a seed (a release), ``"fast"`` with one
        (an experiment, already warned).

    Raises
    ------
    ValueError
        Unknown backend; a seed, a Generator or a non-secure NoiseSource with ``"secure"``.

    Warns
    -----
    FixedSeedWarning
        An int seed, a Generator or a RandomState: reproducible noise is for experiments only.
    WeakGuaranteeWarning
        ``"fast"`` without a seed: floating-point noise (``FLOATING_POINT``).
    ImportError
        ``"secure"`` without opendp installed (``pip install "dpsparse[secure]"``).
    """
    if backend not in BACKENDS:
        raise ValueError(f"{parameter} must be one of {BACKENDS}, got {backend!r}")
    if backend == "auto":  # a release (no seed) gets the exact samplers; a seed is for experiments
        backend = "secure" if random_state is None else "fast"
    if backend == "secure":
        if isinstance(random_state, SecureNoiseSource):
            return random_state
        if random_state is None:
            return SecureNoiseSource()
        if isinstance(random_state, NoiseSource):
            raise ValueError(f'{parameter}="secure" got a non-secure NoiseSource ({random_state.describe()}); '
                             "pass random_state=None")
        raise ValueError(f'{parameter}="secure" cannot use random_state={random_state!r}: OpenDP draws from '
                         f'OS entropy and is not reproducible; pass random_state=None, or use '
                         f'{parameter}="fast" with a seed for experiments')
    if isinstance(random_state, NoiseSource):
        return random_state
    if random_state is None:  # "fast" asked for by name: a release's noise in floating point
        warnings.warn(FLOATING_POINT.format(fast=f"{parameter}='fast'", auto=f"{parameter}='auto'"),
                      WeakGuaranteeWarning, stacklevel=user_stacklevel())
        return NoiseSource(np.random.default_rng(), seeded=False)
    if isinstance(random_state, np.random.Generator):
        rng = random_state
    elif isinstance(random_state, np.random.RandomState):  # scikit-learn's kind of state: a seed drawn from it
        rng = np.random.default_rng(int(random_state.randint(np.iinfo(np.int64).max, dtype=np.int64)))
    elif isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        rng = np.random.default_rng(int(random_state))
    else:
        raise ValueError(f"random_state must be None, an int, a numpy Generator or RandomState, or a NoiseSource, "
                         f"got {random_state!r}")
    warnings.warn("a fixed random_state makes the privacy noise reproducible, so the fit has NO privacy guarantee: "
                  "for experiments only, never for a model you release", FixedSeedWarning, stacklevel=user_stacklevel())
    return NoiseSource(rng, seeded=True)
