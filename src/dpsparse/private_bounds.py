"""Bounds bought with a share of the privacy budget: differentially private quantiles.

When the user has no public bounds, a declared share of the budget (``bounds_share``,
default 10%) buys a range for every feature (and for the label of a regression): its
median, then its ``tail`` and ``1 - tail`` quantiles on either side of the median, each
chosen by the exponential mechanism over a fixed grid of round numbers (``CANDIDATES``); a
regression's label range is capped by Tukey's fences on its two quartiles (``LABEL_FENCE``). Each grid point stands
for itself and the open interval next to it on the quantile's outer side (``_interval_scores``), which keeps values
far from zero beside their spread (a longitude, a temperature in kelvin) off the grid's far ends. The quantile scores
are OpenDP's (``make_quantile_score_candidates``, the utility of Smith 2011, with the replace-one sensitivity OpenDP
derives for a dataset of known size); the choice is report-noisy-max with Gumbel noise drawn by the fit's
``NoiseSource``, each grid step away from the median penalized (a public tie-break among the grid points beyond the
data, which all score alike). Each choice is ``epsilon_q``-DP and ``epsilon_q^2 / 8``-zCDP (bounded range:
Durfee & Rogers 2019, Cesar & Rogers 2021); the choices compose with the fit in one
ledger: zCDP for the mechanisms calibrated in zCDP (the bounds take ``bounds_share`` of
the zCDP budget ``rho``), basic composition otherwise (``bounds_share`` of epsilon). The
analysis is in docs/privacy.md, "Private bounds".

Everything that sets a noise scale or the tail share is public: n, p, the budget, the
share and the grid. The grid is written here, before any data is seen; values outside it
are clipped to its ends.

A score reads a feature only through how many of its values lie below and above each grid
point, so the scores are computed from those counts (``_counts``: one sort of the column),
with OpenDP's formula and its representation of the level (``_scores``; the tests check them
equal to OpenDP's scores of the data), instead of handing OpenDP n values for each of the
``3 p`` selections (its conversion of a Python list took minutes at n = 10^6). On a dask array
one pass over the chunks counts, for every feature, its values at each grid point and strictly
between each two neighbours (``grid_histograms``), which gives the same counts: the same
scores, the same noise, the same bounds as in memory, never the data on the client.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.sparse as sp

from .accounting import Ledger
from .data import Bounds, design_row_norm, prepare
from .distributed import is_dask, row_sum
from .exceptions import InputError

__all__ = ["CANDIDATES", "JOINT_GRID", "JOINT_TAIL", "JointLabelDesign", "JointTighteningDesign",
           "LABEL_WIDTH", "MAX_FEATURES", "SLOTS", "LabelScaleDesign", "PendingDesign", "affordable", "declared_widths",
           "grid_histograms", "joint_affordable", "rank_error", "selection_epsilon", "selections", "tail_share"]

_STEPS = (1.0, 1.25, 1.6, 2.0, 2.5, 3.2, 4.0, 5.0, 6.3, 8.0)  # ten round numbers a decade (Renard series)
_POSITIVE = [s * 10.0**k for k in range(-4, 8) for s in _STEPS]
CANDIDATES = np.array([-v for v in reversed(_POSITIVE)] + [0.0] + _POSITIVE)
"""The public search grid of every private bound: 0 and +-{1, 1.25, ..., 8} x 10^k, k = -4..7."""

SLOTS = np.sort(np.r_[CANDIDATES, (CANDIDATES[:-1] + CANDIDATES[1:]) / 2.0])
"""The grid points and the midpoints between neighbours: slot ``2k`` is ``CANDIDATES[k]``, slot ``2k - 1`` stands
for every value strictly between ``CANDIDATES[k - 1]`` and ``CANDIDATES[k]`` (``grid_histograms``)."""

MAX_FEATURES = 1000
"""Private bounds are refused above this many features: each range costs three selections,
so the budget of one falls with the width (declare bounds for wide data)."""

FAILURE = 0.05
"""beta of the tail-share rule: with probability at least ``1 - beta`` no selection of a
fit misses its target rank by more than the rule's rank error (union bound)."""

MIN_TAIL, MAX_TAIL = 0.005, 0.25

TAIL_DIVISOR = 4.0
"""The tail share is the selections' rank error over ``TAIL_DIVISOR n`` (``tail_share``)."""

SPAN = 120
"""Grid steps over which a bound may have to go from its anchor (the released median) to the data, for the
tie-break's slope: the positive (or negative) half of the grid, twelve decades. A median at 0 or in an empty gap
next to it (the zeros of a one-hot or sparse column) lies 41 steps below a value of 1 and 51 below 10; with four
decades (40, before) the tie-break outweighed the data there whenever the records were few for the budget, and
the upper bound of a one-hot column with 30 % ones fell to about 1e-4 in 80 % of fits at n = 3000, epsilon 1
(the column then clipped to about 0: its feature lost)."""

SOURCE = ("exponential mechanism on OpenDP's quantile scores (Smith 2011); epsilon-DP selection is "
          "epsilon^2/8-zCDP (Cesar & Rogers 2021)")


LABEL_FENCE = 1.5
"""A regression's label range is capped by Tukey's fences on its private quartiles, ``[Q1 - c IQR, Q3 + c IQR]``
with this ``c`` (Tukey, "Exploratory data analysis", 1977; 2.7 standard deviations either side of a Gaussian's
median): the range is the median-anchored outer quantiles' (as a feature's) intersected with the fences. The outer
quantiles alone could land at many times the labels' range where the records are few for the budget (every grid
point beyond the data scores alike, ``tail n`` below the best): [-320, 5] for labels within [-6, 6], a held-out
R^2 of -8.9, in 2 of 12 fits at n = 3000, 4 features, epsilon 1. A quartile has a quarter of the records beyond
it. The fences alone fail where the grid is coarse beside the labels' spread (cpusmall's quartiles 81 and 94 lie
between the grid points 80 and 100, the upper one drawn as far as 40,000): each bound guards the other. On
``benchmarks/defaults_rule.py``'s ``raw_family`` (4 features, epsilon 1, 10 seeds) the mean R^2 went from 0.494 to
0.596: at n = 3000 from -0.49 to 0.67 (uniform features), 0.57 to 0.57 (lognormal), 0.57 to 0.66 (mixed), 0.22 to
0.24 (outliers); within 0.016 at n = 6000 and 20,000 (two more selections share the budget); cpusmall (8 splits)
0.333 -> 0.361."""

TIGHTEN_ERROR = 0.1
"""Declared bounds are tightened privately (``affordable``) when every selection's rank error is within this share
of the records."""


def selections(p, classification):
    """Selections of the private bounds of ``p`` features: a median, a lower and an upper bound each, and for a
    regression the label's five: its median and bounds as a feature's, and its two quartiles (``LABEL_FENCE``)."""
    return 3 * p + (0 if classification else 5)


def selection_epsilon(k, rho=None, epsilon=None):
    """``epsilon_q`` of each of ``k`` selections sharing zCDP ``rho`` (``k epsilon_q^2 / 8 = rho``), or pure
    ``epsilon`` by basic composition (``epsilon / k``)."""
    return math.sqrt(8.0 * rho / k) if rho is not None else epsilon / k


def rank_error(epsilon_q, k):
    """``2 ln(K k / beta) / epsilon_q``: with probability ``1 - beta`` no selection of the ``k`` misses its target
    rank by more (McSherry & Talwar 2007, with a union bound), ``K`` the grid's points."""
    return 2.0 * math.log(CANDIDATES.size * k / FAILURE) / epsilon_q


def affordable(n, p, classification, rho=None, epsilon=None):
    """Whether tightening ``p`` declared ranges privately is worth its share (zCDP ``rho``, or pure ``epsilon``):
    every selection within ``TIGHTEN_ERROR n`` ranks of its quantile. Public inputs only."""
    if p > MAX_FEATURES:
        return False
    k = selections(p, classification)
    return rank_error(selection_epsilon(k, rho, epsilon), k) <= TIGHTEN_ERROR * n


def tail_share(n, epsilon_q, k):
    """The quantile level of the lower bound (the upper is ``1 - tail``), from public numbers.

    The exponential mechanism at ``epsilon_q`` (score sensitivity 1, ``K`` candidates)
    misses the target rank by more than ``r = 2 ln(K / b) / epsilon_q`` with probability at
    most ``b`` (McSherry & Talwar 2007); ``b = beta / k`` bounds all ``k`` selections of
    the fit at once (``rank_error``). The tail is ``r / (4 n)``, at least 0.005: a bound is then within
    ``tail`` plus the selection's error of its quantile, between clipping too much (a large
    tail) and keeping the outliers that squash the rest of the range (a small one); ``r / n``
    clipped up to 35% of cpusmall's values, ``r / (4 n)`` 12% (held-out R^2 0.13 and 0.26).

    Raises
    ------
    ValueError
        When ``r / n`` exceeds 0.25: too few records for this budget, the bounds would be
        noise (declare public bounds instead).
    """
    error = rank_error(epsilon_q, k)
    if error / n > MAX_TAIL:
        why = (f"{n} records are too few to buy the {k} private quantiles of the bounds with this share of the "
               f"budget: they would need about {math.ceil(error / MAX_TAIL):,} records at this delta, a few % more "
               f"where delta is the default 1/n^2 (it shrinks as records are added) (at epsilon {epsilon_q:.3g} a "
               f"selection, each could land {error:.0f} records away from its quantile)")
        raise InputError(
            f"bounds='private': {why}. Declare public bounds instead: Bounds(feature_low=[...], feature_high=[...]), "
            f"each feature's range from its documentation (docs/bounds.md; after DPStandardScaler, Bounds(-clip, "
            f"clip), its output's range); or raise bounds_share or epsilon; or, for an experiment without guarantee, "
            f"bounds='from-data'",
            cli=f"{why}.\n  Declare public bounds instead: --bounds FILE, each feature's range from its "
                f"documentation (docs/bounds.md), or --schema FILE for a raw CSV ('dpsparse schema' writes a "
                f"template);\n  or raise --bounds-share or the epsilon;\n  or, for an experiment without guarantee, "
                f"--bounds-from-data")
    return float(max(MIN_TAIL, error / (TAIL_DIVISOR * n)))


def _slot(values):
    """The slot of each value within the grid's ends (``SLOTS``)."""
    k = np.minimum(np.searchsorted(CANDIDATES, values), CANDIDATES.size - 1)  # NaN sorts last; refused after
    return 2 * k - (CANDIDATES[k] != values)


def grid_histograms(X, within=None):
    """How many values of each feature of a dask array fall in each slot of the grid (``SLOTS``), after the
    clipping a selection applies (to the declared range ``within``, then to the grid's ends): one pass.

    Parameters
    ----------
    X : dask array of shape (n, p), chunked by rows
    within : data.Bounds or None

    Returns
    -------
    ndarray of int of shape (p, SLOTS.size)

    Raises
    ------
    ValueError
        X contains NaN or infinity (before anything is released).
    """
    p, width = X.shape[1], SLOTS.size
    low = np.full(p, -np.inf) if within is None else np.asarray(within.feature_low, dtype=float)
    high = np.full(p, np.inf) if within is None else np.asarray(within.feature_high, dtype=float)

    def chunk(xc, _):
        values = np.clip(np.clip(xc, low, high), CANDIDATES[0], CANDIDATES[-1])
        counts = np.bincount((_slot(values) + width * np.arange(p)).ravel(), minlength=p * width)
        return np.r_[counts, np.count_nonzero(~np.isfinite(xc))]

    counts = row_sum(chunk, X, None, p * width + 1)
    if counts[-1]:
        raise ValueError("X contains NaN or infinity; every feature value must be finite")
    return counts[:-1].reshape(p, width).astype(np.int64)


def _check_share(share):
    """ValueError unless ``share`` (``bounds_share``) is a number in (0, 1)."""
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise ValueError(f"bounds_share must be in (0, 1), got {share!r}")


class PendingDesign:
    """The public shape of a design whose bounds are bought privately.

    Mechanisms plan on it as on a ``BoundedDesign`` (n, p, unit feature bounds, row
    norm: none of them depends on the bounds' values); ``fit_mechanism`` gives it its
    share of the budget (``plan_zcdp`` or ``plan_pure``), charges the whole, then calls
    ``release``, which buys the bounds and maps the data onto them.

    Parameters
    ----------
    X : ndarray, CSR matrix or dask array (chunked by rows) of shape (n, p)
        A dask array is counted here, in one pass (``grid_histograms``), before anything is charged.
    y : ndarray of shape (n,)
        Labels as ``data.prepare`` takes them.
    classification : bool
    fit_intercept : bool
    share : float in (0, 1)
        Share of the budget spent on the bounds.
    within : data.Bounds or None
        Declared bounds to tighten: each bought range is intersected with the declared one
        (the values clipped to it first), so the result is never wider than what was declared.

    Raises
    ------
    ValueError
        ``share`` outside (0, 1), or more than ``MAX_FEATURES`` features.
    """

    def __init__(self, X, y, classification, fit_intercept, share, within=None):
        _check_share(share)
        if X.shape[1] > MAX_FEATURES:
            raise ValueError(f"private bounds are for at most {MAX_FEATURES} features (each costs three selections), "
                             f"got {X.shape[1]}: declare public bounds (docs/bounds.md)")
        self.X, self.y, self.classification, self.fit_intercept = X, y, classification, fit_intercept
        self.share, self.within = float(share), within
        self.n_quantiles = selections(X.shape[1], classification)
        self.ledger = self.epsilon_q = self.tail = self.design = None
        self.histograms = grid_histograms(X, within) if is_dask(X) else None

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def p(self):
        return self.X.shape[1] + self.fit_intercept

    @property
    def feature_bounds(self):
        return np.ones(self.p)

    @property
    def row_norm(self):
        return math.sqrt(self.p)

    @property
    def buys_label_range(self):
        """Whether this design buys a regression's label range besides the feature ranges (for the report)."""
        return not self.classification

    def plan_zcdp(self, rho):
        """Spend zCDP ``rho`` on the bounds: ``epsilon_q = sqrt(8 rho / k)`` for each of the ``k`` selections."""
        self._plan(selection_epsilon(self.n_quantiles, rho=rho))
        return self

    def plan_pure(self, epsilon):
        """Spend ``epsilon`` (basic composition): ``epsilon_q = epsilon / k`` for each of the ``k`` selections."""
        self._plan(selection_epsilon(self.n_quantiles, epsilon=epsilon))
        return self

    def _plan(self, epsilon_q):
        self.epsilon_q = float(epsilon_q)
        self.tail = tail_share(self.n, self.epsilon_q, self.n_quantiles)
        self.ledger = Ledger().exponential(self.epsilon_q, self.n_quantiles)

    def release(self, noise):
        """Buy the bounds and map the data onto them.

        Returns
        -------
        data.BoundedDesign
            With ``bounds.source`` naming the release.
        """
        lo, hi = self._ranges(noise)
        label = (None, None)
        if not self.classification:
            declared = self._declared(None)
            label = self._label_range(_counts(np.asarray(self.y, dtype=float), declared), noise, declared)
        classes = None if self.within is None else self.within.classes  # a declared label set stays declared
        bounds = Bounds(lo, hi, *label, source=self.describe_source(), classes=classes)
        self.design = prepare(self.X, self.y, bounds, self.classification, self.fit_intercept)
        return self.design

    def _ranges(self, noise):
        column, p = self._column(), self.X.shape[1]
        lo, hi = np.empty(p), np.empty(p)
        for j in range(p):
            lo[j], hi[j] = self._range(column(j), noise, f"feature {j}", self._declared(j))
        return lo, hi

    def _column(self):
        """``j -> (lt, gt)``: how many values of feature ``j`` lie below and above each grid point (``_counts``);
        on a dask array read off its histogram on the grid (module docstring)."""
        if self.histograms is not None:
            return lambda j: _counts_of_histogram(self.histograms[j])
        X = self.X.tocsc() if sp.issparse(self.X) else self.X
        declared = self._declared
        if sp.issparse(X):
            return lambda j: _counts(X[:, j].toarray().ravel(), declared(j))
        return lambda j: _counts(X[:, j], declared(j))

    def _declared(self, j):
        """The declared range of feature ``j`` (None: the label), or None when nothing was declared."""
        w = self.within
        if w is None:
            return None
        return (w.label_low, w.label_high) if j is None else (w.feature_low[j], w.feature_high[j])

    def _range(self, counts, noise, name, declared=None):
        """The median first, then each bound on its side of it (see ``_quantile``); inside ``declared``.
        ``counts``: the values' ``(lt, gt)`` on the grid, after clipping to ``declared`` (``_counts``)."""
        m = self._quantile(counts, 0.5, noise, f"median of {name}")
        a = self._quantile(counts, self.tail, noise, f"lower bound of {name}", anchor=m)
        b = self._quantile(counts, 1.0 - self.tail, noise, f"upper bound of {name}", anchor=m)
        if declared is not None:
            a, b = max(a, declared[0]), min(b, declared[1])
            if not a < b:
                a, b = declared
        return a, b

    def _label_range(self, counts, noise, declared=None):
        """The label's range: its median and outer quantiles as a feature's, inside ``declared``, then (nothing
        declared) intersected with Tukey's fences on its two quartiles (``LABEL_FENCE``), kept where the two do not
        meet. A declared range (tightened) keeps its outer quantiles only: the declaration caps how far they can
        land, and keeps what a fence would clip (cadata's house values, capped at 500,001: held-out R^2 0.651
        with the outer quantiles, 0.641 with the fences alone, 12 splits). The quartiles are still drawn, so
        that the selections (``selections``) do not depend on the declaration's label range."""
        a, b = self._range(counts, noise, "label", declared)
        a, b = (a, b) if a < b else _widen(a)
        q1, q3 = sorted(self._quantile(counts, level, noise, f"{side} quartile of label")
                        for level, side in ((0.25, "lower"), (0.75, "upper")))
        low, high = q1 - LABEL_FENCE * (q3 - q1), q3 + LABEL_FENCE * (q3 - q1)
        if declared is not None or not max(a, low) < min(b, high):
            return a, b
        return max(a, low), min(b, high)

    def _quantile(self, counts, level, noise, name, anchor=None, intervals=True):
        """One selection among the grid points, each standing for itself and the open interval next to it on the
        quantile's outer side (``_interval_scores``; ``intervals=False``: for itself alone, as before ``--study
        slots``). With an ``anchor`` (the released median): only grid points on the bound's side of it, and a public
        tie-break: the grid points beyond the data all score alike (``tail n``), so each grid step away from the
        anchor costs ``slope`` in score, one noise scale at most, and at most ``(1 - 2 tail) n / (2 SPAN)`` so that
        over the ``SPAN`` steps of a half-grid it cannot outweigh the data's own score."""
        scores, sensitivity = (_interval_scores if intervals else _scores)(*counts, self.n, level)
        scale = 2.0 / self.epsilon_q  # exp(-score / scale) = exp(-epsilon_q score / (2 sensitivity))
        utility = -scores / sensitivity
        if anchor is not None:
            steps = np.arange(CANDIDATES.size) - int(np.searchsorted(CANDIDATES, anchor))
            steps = steps if level > 0.5 else -steps
            slope = min(scale, (1.0 - 2.0 * self.tail) * self.n / (2.0 * SPAN))
            utility = np.where(steps >= 0, utility - slope * steps, -np.inf)
        index = noise.select(utility, "gumbel", scale, sensitivity=1.0, name=name)
        return float(CANDIDATES[index])

    def describe_source(self):
        label = "" if self.classification or self.within is not None else (
            f", capped by Tukey's fences ({LABEL_FENCE:g} times the distance of the label's private quartiles)")
        each = "feature" if self.classification else "feature and of the label"
        what = (f"differentially private quantiles ({self.tail:.3g}, {1 - self.tail:.3g}) of each {each}, on a "
                f"fixed grid of round numbers (+-1e-4 to +-8e7) and the intervals between them{label}")
        return what if self.within is None else f"{self.within.source}; tightened by {what}"

    def details(self):
        """Lines for the privacy report."""
        return {
            "bounds: share of the budget": self.share,
            "bounds: selections": self.n_quantiles,
            "bounds: epsilon of one selection": self.epsilon_q,
            "bounds: tail share clipped at each end": self.tail,
            "bounds: source": SOURCE,
            **({} if self.classification or self.within is not None else {
                "bounds: label range": f"its private quantiles, capped by Tukey's fences [Q1 - {LABEL_FENCE:g} IQR, "
                                       f"Q3 + {LABEL_FENCE:g} IQR] on its private quartiles (Tukey, 'Exploratory "
                                       "data analysis', 1977)"}),
        }


def _widen(value):
    """A label range around a single grid point: its neighbours on the grid."""
    i = int(np.searchsorted(CANDIDATES, value))
    return float(CANDIDATES[max(i - 1, 0)]), float(CANDIDATES[min(i + 1, CANDIDATES.size - 1)])


_SENSITIVITIES = {}


def _counts(values, declared=None):
    """``(lt, gt)``: how many of ``values`` (clipped to ``declared``, then to the grid's ends, as a selection
    reads them) lie strictly below and strictly above each grid point; int arrays of shape (CANDIDATES.size,)."""
    values = np.asarray(values, dtype=float)
    if declared is not None:
        values = np.clip(values, *declared)
    values = np.sort(np.clip(values, CANDIDATES[0], CANDIDATES[-1]))
    lt = np.searchsorted(values, CANDIDATES, side="left")
    return lt, values.size - np.searchsorted(values, CANDIDATES, side="right")


def _counts_of_histogram(histogram):
    """``_counts`` of the values whose histogram on ``SLOTS`` is ``histogram`` (grid point ``k`` is slot ``2k``)."""
    upto = np.cumsum(histogram)[::2]  # values at or below each grid point
    return upto - histogram[::2], int(histogram.sum()) - upto


def _interval_scores(lt, gt, n, level):
    """``_scores`` of the grid points, each standing for itself and the open interval next to it on the quantile's
    outer side: below ``c_(k+1)`` for a level up to 1/2 (``[c_k, c_(k+1))``), above ``c_(k-1)`` beyond it
    (``(c_(k-1), c_k]``). The interval ``(c_k, c_(k+1))`` scores ``max(0, d L - a n, a n - d U)``, with ``L = n - gt_k``
    the values at or below its lower end and ``U = lt_(k+1)`` those below its upper end: a point inside it has ``r``
    values below it for some ``L <= r <= U``, and OpenDP's score there is ``|d r - a n|``; a grid point takes the
    better of its own score and its interval's. Replacing one record moves ``L`` and ``U`` by one at most, so an
    interval's score, and the better of two scores, move by ``d`` at most: the grid points' sensitivity. Where the
    values lie within one interval (labels of 76-99 between the grid points 80 and 100, a longitude between -125 and
    -100) every grid point alone scores nearly as the furthest, and only the interval stands out; a value exactly at
    a grid point (a one-hot column's 0 and 1) keeps that point's score, and the number of candidates stays ``K``."""
    grid, sensitivity = _scores(lt, gt, n, level)
    a, d = _level_parts(n, level)
    below = [n - int(g) for g in gt[:-1]]  # L: at or below the interval's lower end
    above = [int(v) for v in lt[1:]]  # U: strictly below its upper end
    inner = np.asarray([max(0, d * lo - a * n, a * n - d * hi) for lo, hi in zip(below, above)], dtype=float)
    scores = grid.copy()
    if level > 0.5:
        scores[1:] = np.minimum(grid[1:], inner)
    else:
        scores[:-1] = np.minimum(grid[:-1], inner)
    return scores, sensitivity


def _scores(lt, gt, n, level):
    """OpenDP's quantile scores of the grid (lower is better) and their replace-one sensitivity, from the
    counts below and above each grid point (``_counts``).

    The scores are ``|(d - a) lt - a gt|`` with ``a / d`` the level as OpenDP represents it for a dataset of
    known size n (``_level_parts``): OpenDP's ``make_quantile_score_candidates``, computed here from the counts
    (it reads nothing else of the data) instead of converting n values for each selection; the tests check
    them equal to OpenDP's on data. The sensitivity is OpenDP's (the map of the transformation at symmetric
    distance 2: replace one record)."""
    import opendp.prelude as dp

    key = (n, level)
    if key not in _SENSITIVITIES:
        dp.enable_features("contrib")
        t = dp.t.make_quantile_score_candidates(dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n),
                                                dp.symmetric_distance(), CANDIDATES.tolist(), float(level))
        _SENSITIVITIES.clear()
        _SENSITIVITIES[key] = float(t.map(2))
    a, d = _level_parts(n, level)
    scores = [abs((d - a) * int(below) - a * int(above)) for below, above in zip(lt, gt)]
    return np.asarray(scores, dtype=float), _SENSITIVITIES[key]


_U64_MAX = 2**64 - 1


def _level_parts(n, level):
    """``(a, d)``, the level ``a / d`` as OpenDP's quantile scores represent it for a dataset of size ``n``
    (its ``score_candidates_constants``): the exact fraction of the float when its denominator is below
    ``floor((2^64 - 1) / n)``, otherwise that denominator and the numerator ``level d`` in floating point,
    truncated (a Rust cast)."""
    a, d = float(level).as_integer_ratio()
    limit = _U64_MAX // n
    if d < limit:
        return a, d
    return int(float(level) * float(limit)), limit


JOINT_GRID = np.arange(1, 17) / 16.0
"""The candidates of the joint tightening (``JointTighteningDesign``): each declared range ``[lo, hi]`` is cut to
``[lo + s (hi - lo), lo + t (hi - lo)]`` with one upper fraction ``t`` from this grid and one lower fraction ``s``
from ``1 -`` it, shared by every feature."""

JOINT_SOURCE = ("exponential mechanism (McSherry & Talwar 2007) on the largest count of a feature's values beyond each "
                "cut, sensitivity 1; epsilon-DP selection is epsilon^2/8-zCDP (Cesar & Rogers 2021)")

JOINT_TAIL = 0.05
"""The joint tightening's target: the feature with the most values above the upper cut (below the lower one) has
this share of the records there (``--study joint-tightening``, docs/defaults.md: 0.02, 0.05 and 0.1 gained +0.011,
+0.017 and +0.023 where a selection's error is below 0.1 of the records, the same within 0.006 above; 0.1's extra gain
is all on the published family, and it clips twice as much as 0.05 on the others)."""

JOINT_TAIL_REGRESSION = 0.01
"""``JOINT_TAIL`` of a regression (``--study regression-cuts``, docs/defaults.md): a regression's extreme feature
values carry the most of its slope, so its cuts clip fewer of them."""

JOINT_SLOPE = 0.5
"""The tie-break between the cuts, in noise scales (``2 / epsilon_q``) for each step of the grid away from the
tightest cut: each cut beyond the data counts no value and scores alike, and the tie-break makes each step further out
``e^-0.5`` times as likely (public, so the utility's sensitivity stays 1; ``--study regression-cuts-slope``,
docs/defaults.md). A classifier's cuts take it from ``n epsilon = JOINT_SLOPE_BAND log p`` only (the estimators'
rule)."""


class JointTighteningDesign(PendingDesign):
    """Declared feature ranges cut by two fractions shared by every feature: joint quantiles.

    Where the records are too few for a quantile of each feature (``affordable``), a
    published range can still be far wider than where most of its values lie (the Min and
    Max of a published description: one extreme record each). Two exponential mechanisms
    choose, on the public grid ``JOINT_GRID``, the fraction ``t`` of every declared range
    above which the feature with the most values there has a ``JOINT_TAIL`` share of them,
    and the fraction ``s`` below which as many lie; each range ``[lo, hi]`` becomes
    ``[lo + s (hi - lo), lo + t (hi - lo)]`` (kept as declared when ``s >= t``).

    The utility of a cut is ``-|c - JOINT_TAIL n|``, ``c`` the ``JOINT_ACROSS`` quantile (the
    largest) of the features' counts of values beyond it, over the features with a declared
    width (the rest are constant), less ``slope`` noise scales for each grid step away from the
    tightest cut (a public tie-break). Replacing one record moves each feature's count by at
    most 1, so ``c`` and the utility by at most 1 whatever the record: each choice is
    ``epsilon_q``-DP (McSherry & Talwar 2007), and ``epsilon_q^2 / 8``-zCDP (Cesar & Rogers
    2021), as one quantile of the per-feature design (docs/privacy.md, "Where no quantile of
    each feature is affordable: joint cuts"). Values are clipped to their declared range
    before they are counted, as the fit clips them.

    Parameters
    ----------
    X : ndarray, CSR matrix or dask array (chunked by rows) of shape (n, p)
    y : ndarray of shape (n,)
        Labels as ``data.prepare`` takes them.
    bounds : data.Bounds
        The declared bounds, one range a feature (``Bounds.for_features``), without ``row_norm`` or one-hot groups.
    classification : bool
    fit_intercept : bool
    share : float in (0, 1)
        Share of the budget spent on the two choices.
    slope : float >= 0, optional
        The tie-break, in noise scales a grid step (public); ``JOINT_SLOPE`` where None.
    """

    def __init__(self, X, y, bounds, classification, fit_intercept, share, slope=None):
        _check_share(share)
        self.X, self.y, self.classification, self.fit_intercept = X, y, classification, fit_intercept
        self.bounds, self.share, self.n_quantiles = bounds, float(share), 2
        self.tail = JOINT_TAIL if classification else JOINT_TAIL_REGRESSION
        self.slope_scales = JOINT_SLOPE if slope is None else float(slope)
        self.slope = 0.0  # in the utility's units, set with the noise's scale (``_plan``)
        self.ledger = self.epsilon_q = self.design = self.released = None
        self.low, self.width = np.asarray(bounds.feature_low, dtype=float), declared_widths(bounds)
        # a dask array is counted here, in one pass, before anything is charged (NaN and inf refused then)
        self.counts = _joint_counts(X, self.low, self.width) if is_dask(X) else None

    buys_label_range = False  # the feature ranges only (JointLabelDesign adds the label range)

    def _plan(self, epsilon_q):
        self.epsilon_q = float(epsilon_q)
        self.ledger = Ledger().exponential(self.epsilon_q, self.n_quantiles)
        self.slope = self.slope_scales * 2.0 / self.epsilon_q

    def release(self, noise):
        """Choose the two cuts and map the data onto the cut ranges.

        Returns
        -------
        data.BoundedDesign
        """
        self.design = prepare(self.X, self.y, self._cut(noise), self.classification, self.fit_intercept)
        return self.design

    def _cut(self, noise):
        """The declared bounds with every feature range cut at the two released fractions."""
        lo, width = self.low, self.width
        below, above = self.counts if self.counts is not None else _joint_counts(self.X, lo, width)
        target, scale = self.tail * self.n, 2.0 / self.epsilon_q

        def cut(counts, name):
            return JOINT_GRID[noise.select(_joint_utility(_across(counts), target, self.slope), "gumbel", scale,
                                           sensitivity=1.0, name=name)]

        t, s = cut(above, "upper cut of the declared ranges"), 1.0 - cut(below, "lower cut of the declared ranges")
        s, t = (s, t) if s < t else (0.0, 1.0)
        self.released = (float(s), float(t))
        return dataclasses.replace(self.bounds, feature_low=lo + s * width, feature_high=lo + t * width,
                                   source=JointTighteningDesign.describe_source(self))  # the cuts' own words

    def describe_source(self):
        if self.released is None:
            return f"{self.bounds.source}; cut privately (joint cuts)"
        s, t = self.released
        if (s, t) == (0.0, 1.0):
            return f"{self.bounds.source}; kept as declared (the private joint cuts crossed)"
        return (f"{self.bounds.source}; cut privately (joint cuts): every range kept from {s:.1%} to {t:.1%} of its "
                f"declared width, chosen with noise so that about {self.tail:.0%} of the values of the feature most "
                f"affected lie beyond each cut")

    def details(self):
        """Lines for the privacy report."""
        return {
            "bounds: share of the budget": self.share,
            "bounds: selections": self.n_quantiles,
            "bounds: epsilon of one selection": self.epsilon_q,
            "bounds: joint cuts": "each declared range [lo, hi] cut to [lo + s (hi - lo), lo + t (hi - lo)], t chosen "
                                  "on the grid 1/16, ..., 1 and s on 0, ..., 15/16, aiming at "
                                  f"{self.tail:g} of the values beyond each cut in the feature with the most"
                                  + (f", {self.slope_scales:g} noise scales less for each grid step from the "
                                     "tightest cut (a public tie-break)" if self.slope_scales else "")
                                  + "; kept as declared where s >= t"
                                  + ("" if self.released is None else
                                     f"; released: s = {self.released[0]:g}, t = {self.released[1]:g}"),
            "bounds: source": JOINT_SOURCE,
        }


def declared_widths(bounds):
    """``feature_high - feature_low`` of per-feature ``bounds`` (inf where the difference overflows a float)."""
    with np.errstate(over="ignore"):
        return np.asarray(bounds.feature_high, dtype=float) - np.asarray(bounds.feature_low, dtype=float)


JOINT_MAX_ERROR = 0.5
"""The joint cuts are bought where a selection's typical error, ``2 ln K / (epsilon_q n)`` of the records (``K``
the grid's candidates), is at most this: the largest error measured (``--study joint-tightening``, 0.445; they
gained there); beyond it the selection is close to a uniform draw (breast cancer at epsilon 0.1: 1.46, and 0.025
less accuracy with the cuts)."""


def joint_affordable(n, rho=None, epsilon=None):
    """Whether the joint cuts' two selections, sharing zCDP ``rho`` (or pure ``epsilon``), each miss their target by
    at most ``JOINT_MAX_ERROR`` of the ``n`` records typically. Public inputs only."""
    return 2.0 * math.log(JOINT_GRID.size) / (selection_epsilon(2, rho, epsilon) * n) <= JOINT_MAX_ERROR


JOINT_ACROSS = 1.0
"""The quantile level over the features that makes a cut's count: 1.0, the feature with the most values beyond it, so
that the widest-spread features set the cuts (``--study joint-tightening``: with the mean over the features, the
many narrow ones set the cuts and clip the few wide ones that carry the label, madelon's kind: -0.034 against -0.010
on that family). An order statistic of the features' counts moves by at most the largest change of one count: 1 when
a record is replaced."""


def _across(counts):
    """One count a cut from the features' counts (shape (features, JOINT_GRID.size)): their ``JOINT_ACROSS``
    quantile."""
    if counts.shape[0] == 0:
        return np.zeros(JOINT_GRID.size)
    return np.quantile(counts, JOINT_ACROSS, axis=0)


def _joint_utility(beyond, target, slope=0.0):
    """The utility of each cut: minus the distance of the count of values beyond it from the target, and ``slope``
    for each step of the grid away from its tightest cut (a public tie-break: every cut beyond the data counts 0)."""
    return -np.abs(beyond - target) - slope * np.arange(beyond.size)


def _joint_counts(X, lo, width, rows=4096):
    """``(below, above)``: for each feature of width > 0 and each fraction ``g`` of ``JOINT_GRID``, how many of its
    values lie below ``lo + (1 - g) width`` and above ``lo + g width`` (values clipped to their declared range first).
    Arrays of shape (features of width > 0, JOINT_GRID.size). One pass over blocks of ``rows`` records (a
    dense array, a CSR matrix) or over a dask array's chunks, with the same counts.

    Raises
    ------
    ValueError
        X contains NaN or infinity (before anything is released).
    """
    varying = np.flatnonzero(width > 0)
    low, span, k, m = lo[varying], width[varying], JOINT_GRID.size, varying.size

    def chunk(xc, _=None):
        xc = xc.toarray() if sp.issparse(xc) else np.asarray(xc, dtype=float)
        z = (np.clip(xc[:, varying], low, low + span) - low) / span
        below = [np.count_nonzero(z < 1.0 - g, axis=0) for g in JOINT_GRID]
        above = [np.count_nonzero(z > g, axis=0) for g in JOINT_GRID]
        return np.r_[np.ravel(below), np.ravel(above), np.count_nonzero(~np.isfinite(xc))]

    if is_dask(X):
        counts = row_sum(chunk, X, None, 2 * k * m + 1)
    else:
        counts = sum(chunk(X[i:i + rows]) for i in range(0, X.shape[0], rows))
    if counts[-1]:
        raise ValueError("X contains NaN or infinity; every feature value must be finite")
    return counts[:k * m].reshape(k, m).T, counts[k * m:2 * k * m].reshape(k, m).T


LABEL_WIDTH = 2.0
"""The label range kept around the private mean: this many private standard deviations each way."""
LABEL_SUMS_L2, LABEL_SUMS_L1 = 2.0, 2.25
"""Replace-one sensitivities of ``(sum u_i, sum u_i^2)`` for labels ``u_i`` in [-1, 1] (``LabelScaleDesign``)."""


class LabelScaleDesign(PendingDesign):
    """Declared bounds, with a regression's label range narrowed to the labels' private spread.

    A declared label range is often much wider than the labels (a published range, a
    physical limit); mapped onto [-1, 1] the labels then fill a small part of it, and every
    residual clip, label bound and score sensitivity of the mechanisms is sized for the
    whole range. This buys the labels' mean and spread: ``(sum_i y_i, sum_i y_i^2)`` of the
    labels mapped onto [-1, 1] by the declared range, one release. Replacing a label ``u`` by
    ``u'`` moves the pair by ``(d, d s)`` with ``d = u' - u``, ``s = u' + u``, ``|d| + |s| <= 2``:
    its L2 norm ``|d| sqrt(1 + s^2)`` is at most 2 (increasing in ``|d|`` along ``|s| = 2 - |d|``,
    reached at ``u = -1, u' = 1``) and its L1 norm ``|d| (1 + |s|)`` at most 2.25 (``d = 1.5``);
    Gaussian noise in zCDP, Laplace noise in pure DP. The
    label range becomes ``mean +- (LABEL_WIDTH sd + e)`` inside the declared one, ``e`` twice
    the noise's standard deviation over ``n`` and ``sd^2`` the released variance plus ``e``
    (an upper estimate: a range too narrow clips the labels, one too wide only dilutes;
    post-processing);
    labels outside it are clipped, which the fit's analysis covers as it covers any public
    range.

    Parameters
    ----------
    X, y, fit_intercept, share
        As ``PendingDesign`` (regression only).
    bounds : data.Bounds
        The declared bounds, with a label range.
    """

    def __init__(self, X, y, bounds, fit_intercept, share):
        _check_share(share)
        self.X, self.y, self.classification, self.fit_intercept = X, y, False, fit_intercept
        self.bounds, self.share = bounds, float(share)
        self.n_quantiles = 0
        self.ledger = self.scale = self.family = self.design = None

    @property
    def row_norm(self):
        """The design's bound, as ``prepare`` will give it (a declared ``row_norm``, one-hot groups)."""
        return design_row_norm(self.X.shape[1], self.bounds.record_norm(self.X.shape[1]), self.fit_intercept)

    def plan_zcdp(self, rho):
        """Gaussian noise of zCDP ``rho`` on the two sums (L2 sensitivity 2; Bun & Steinke 2016, Prop. 1.6)."""
        self.family, self.scale = "gaussian", LABEL_SUMS_L2 / math.sqrt(2.0 * rho)
        self.ledger = Ledger().gaussian(self.scale, LABEL_SUMS_L2)
        return self

    def plan_pure(self, epsilon):
        """Laplace noise, ``epsilon``-DP on the two sums (L1 sensitivity 2.25)."""
        self.family, self.scale = "laplace", LABEL_SUMS_L1 / epsilon
        self.ledger = Ledger().laplace(self.scale, LABEL_SUMS_L1)
        return self

    def release(self, noise):
        """Buy the mean and spread of the labels and map the data onto the narrowed range."""
        b = self.bounds
        centre, half = (b.label_low + b.label_high) / 2.0, (b.label_high - b.label_low) / 2.0
        u = np.clip((np.asarray(self.y, dtype=float) - centre) / half, -1.0, 1.0)
        norm = "l2" if self.family == "gaussian" else "l1"
        sums = noise.release(np.array([u.sum(), (u * u).sum()]), self.family, self.scale,
                             sensitivity=LABEL_SUMS_L2 if norm == "l2" else LABEL_SUMS_L1, norm=norm,
                             name="label sums")
        n = self.n
        err = LABEL_WIDTH * self.scale * (1.0 if self.family == "gaussian" else math.sqrt(2.0)) / n  # 2 noise sd
        mean = float(np.clip(sums[0] / n, -1.0, 1.0))
        sd = math.sqrt(max(sums[1] / n - mean * mean, 0.0) + err)  # the variance's upper estimate
        lo, hi = max(-1.0, mean - LABEL_WIDTH * sd - err), min(1.0, mean + LABEL_WIDTH * sd + err)
        if hi - lo < 1e-3:  # a degenerate release: keep a sliver of the declared range around the mean
            lo, hi = max(-1.0, mean - 5e-4), min(1.0, mean + 5e-4)
        self.released = (mean, sd)
        narrowed = dataclasses.replace(b, label_low=centre + half * lo, label_high=centre + half * hi,
                                       source=self.describe_source())
        self.design = prepare(self.X, self.y, narrowed, False, self.fit_intercept)
        return self.design

    def describe_source(self):
        return (f"{self.bounds.source}; the label range narrowed to the labels' private mean +- {LABEL_WIDTH:g} "
                f"private standard deviations")

    def details(self):
        return {
            "label range: share of the budget": self.share,
            "label range: noise": f"{self.family}, scale {self.scale:.4g} on (sum u, sum u^2), u the labels mapped "
                                  f"linearly from the declared range [{self.bounds.label_low:g}, "
                                  f"{self.bounds.label_high:g}] onto [-1, 1]",
            "label range: source": "private mean and second moment (Gaussian or Laplace mechanism); the range is "
                                   f"mean +- {LABEL_WIDTH:g} sd, clipped to the declared one",
        }


class JointLabelDesign(JointTighteningDesign):
    """A regression's declared feature ranges cut jointly (``JointTighteningDesign``) and its declared label range
    narrowed to the labels' private spread (``LabelScaleDesign``): both releases, one after the other, in one
    share of the budget, split between them in proportion to ``joint_share`` and ``label_share``.

    The two choices of the cuts and the noisy label sums compose (zCDP: ``epsilon_q^2 / 4 + 2^2 / (2 sigma^2)``,
    Bun & Steinke 2016, Lemma 1.7; pure DP: basic composition); the label sums are taken of the labels as
    declared, which the cuts do not move (docs/privacy.md, "Where no quantile of each feature is affordable: joint
    cuts").

    Parameters
    ----------
    X, y, bounds, fit_intercept
        As ``JointTighteningDesign`` (a regression: ``bounds`` with a label range).
    joint_share, label_share : float
        The shares of the budget for the cuts and for the label range; the design spends their sum.
    """

    def __init__(self, X, y, bounds, fit_intercept, joint_share, label_share):
        super().__init__(X, y, bounds, False, fit_intercept, joint_share + label_share)
        self.label = LabelScaleDesign(X, y, bounds, fit_intercept, label_share)
        self.part = joint_share / (joint_share + label_share)

    buys_label_range = True

    def plan_zcdp(self, rho):
        """The cuts' two selections with ``part rho``, the label sums' Gaussian noise with the rest."""
        super().plan_zcdp(self.part * rho)
        return self._composed(self.label.plan_zcdp((1.0 - self.part) * rho))

    def plan_pure(self, epsilon):
        """The cuts' two selections with ``part epsilon``, the label sums' Laplace noise with the rest."""
        super().plan_pure(self.part * epsilon)
        return self._composed(self.label.plan_pure((1.0 - self.part) * epsilon))

    def _composed(self, label):
        """The cuts' ledger with the label sums' events added: both releases in one ledger."""
        self.ledger.events += label.ledger.events
        return self

    def release(self, noise):
        """Cut the feature ranges, then narrow the label range; the data mapped onto both."""
        self.label.bounds = self._cut(noise)
        self.design = self.label.release(noise)
        return self.design

    def describe_source(self):
        return self.label.describe_source() if self.released is not None else super().describe_source()

    def details(self):
        """Lines for the privacy report: the cuts' share and the label range's, each its own (they add up to
        ``share``, the "bounds: budget" line of the fit's report)."""
        return {**super().details(), "bounds: share of the budget": self.part * self.share,  # the cuts'; the
                **self.label.details()}                                                          # label's below

