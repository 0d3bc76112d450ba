"""Privacy audit: sensitivity replay, ledger replay, black-box lower bound on epsilon, mutation check.

Checks of a registered mechanism on a pair of neighbouring datasets (replace-one):

- ``sensitivity_replay``: the mechanism runs on dataset A with every noise draw replaced
  by zero, recording each released quantity (``NoiseSource.release``, ``select``,
  ``check``); then on dataset B with the history forced to A's (each release returns what
  it returned on A). For each release the change ``|value_B - value_A|`` is divided by
  its declared sensitivity: a ratio above 1 is a broken sensitivity bound.
- ``ledger_replay``: one run with every draw logged (``LedgerNoise``: family, scale,
  declared sensitivity and norm, sampling); the log is composed by the accountant
  (``accounting.compose_log``) and must not exceed the epsilon the report claims: the
  sensitivity replay checks each release's sensitivity, this checks that the noise drawn
  on it is the noise the ledger booked.
- ``black_box_audit``: many runs on A and on B with real noise; a one-dimensional
  statistic (a projection of the released model) and a threshold test chosen on one
  half of the runs, evaluated on the other half; Clopper-Pearson bounds give a lower
  bound on epsilon at the claimed delta, ``log((TPR_low - delta) / FPR_high)``, at 95%
  confidence (Jagielski, Ullman & Oprea,
  "Auditing differentially private machine learning: how private is private SGD?",
  NeurIPS 2020). A lower bound above the claim is a privacy violation.
- ``mutation_check``: the same audit with every noise scale multiplied by ``factor``
  (e.g. 0.25): its lower bound should exceed the claim, which shows that the audit has
  the power to catch an under-noised mechanism.

``neighbouring_pairs`` builds pairs at the corners of the public bounds: a label flip, a
record with every feature at its opposite extreme, a record at the row-norm bound with
the intercept column included, and an isolated label flip (the other records at the
origin). ``audit_options`` gives the options under which the black-box audit has its
power: one step, a full batch, a strong ridge. ``black_box_bound`` takes the releases of
anything: ``private_bounds_audit`` (values beyond the grid), ``search_audit`` (the private
search's selected model, score and choice) and ``one_vs_rest_audit`` use it.

- ``one_run_audit`` and ``one_run_audit_pipeline``: a lower bound from one fit on random
  sign canaries (Steinke, Nasr & Jagielski, "Privacy auditing with one (1) training run",
  NeurIPS 2023), for a mechanism or for the default fit of ``dpsparse fit``.
"""
from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta as _beta
from sklearn.model_selection import ParameterGrid

from .accounting import LoggedDraw, compose_log, jsonable, log_ledger
from .data import Bounds, prepare
from .mechanisms import fit_mechanism, get, make_plan
from .noise import NoiseSource, argmax_per_factor
from .private_bounds import JOINT_SLOPE, JOINT_TAIL, JointTighteningDesign, PendingDesign

__all__ = [
    "AuditResult",
    "LedgerCheck",
    "LedgerNoise",
    "OneRunResult",
    "ReplayNoise",
    "ScaledNoise",
    "TranscriptNoise",
    "audit_options",
    "black_box_audit",
    "black_box_bound",
    "check_log",
    "clopper_pearson",
    "default_fit_pairs",
    "default_fit_replay",
    "default_fits",
    "ledger_replay",
    "log_ledger",
    "mutation_check",
    "neighbouring_pairs",
    "one_run_audit",
    "one_run_audit_pipeline",
    "one_run_canaries",
    "one_run_lower_bound",
    "one_run_options",
    "one_run_p_value",
    "one_vs_rest_audit",
    "private_bounds_audit",
    "private_bounds_pairs",
    "private_bounds_replay",
    "search_audit",
    "search_releases",
    "search_replay",
    "sensitivity_replay",
    "transcript_audit",
]


def _distance(a, b, norm):
    d = np.atleast_1d(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
    return float({"l1": np.sum(np.abs(d)), "l2": np.linalg.norm(d), "linf": np.max(np.abs(d), initial=0.0)}[norm])


class ReplayNoise(NoiseSource):
    """A noise source with zero noise that records every release (``recorded=None``) or
    replays a recording: it forces each release to its recorded output and stores the
    ratio of the change to the declared sensitivity in ``ratios``. A release whose noise scale
    differs from the recorded one's (a scale read off the data), or that is not the release recorded
    at its place (which releases a run makes depends on the data), is stored with the ratio inf; so
    are releases not recorded (made unforced) and releases recorded but not made (``finish``).

    Index sampling (``rng``) comes from a generator seeded with ``seed``, the same in
    both runs, so data-independent choices (coordinates, batches) coincide.
    """

    def __init__(self, seed=0, recorded=None):
        super().__init__(np.random.default_rng(seed), seeded=True)
        self.recorded = recorded
        self.log = []
        self.ratios = []

    def laplace(self, scale, size=None):
        return 0.0 if size is None else np.zeros(size)

    gaussian = gumbel = laplace

    def _bounded(self, name, value, output, ratio_of, scale):
        scale = np.array(scale, dtype=float)  # a copy: a buffer the caller changes later is not the scale drawn
        if self.recorded is None:
            self.log.append((name, value, output, scale))
            return output
        if len(self.log) >= len(self.recorded):  # a release dataset A did not make: unforced, flagged
            self.log.append((name, value, output, scale))
            self.ratios.append((f"{name} (not made on dataset A)", math.inf))
            return output
        rec_name, rec_value, rec_output, rec_scale = self.recorded[len(self.log)]
        self.log.append((name, value, rec_output, scale))
        if rec_name != name:
            self.ratios.append((f"{name} (recorded at its place: {rec_name})", math.inf))
            return rec_output
        self.ratios.append((name, ratio_of(rec_value)))
        if not np.array_equal(scale, rec_scale, equal_nan=True):
            self.ratios.append((f"{name}: its noise scale", math.inf))
        return rec_output

    def finish(self):
        """Store ``("the number of releases", inf)`` where the replayed run made fewer releases than recorded."""
        if self.recorded is not None and len(self.log) < len(self.recorded):
            self.ratios.append(("the number of releases", math.inf))

    def release(self, value, kind, scale, *, sensitivity, name, norm="l2", sampling=None):
        return self._bounded(name, np.copy(value), np.copy(value),
                             lambda rec: _distance(value, rec, norm) / float(sensitivity), scale)

    def check(self, value, *, sensitivity, name, norm="l2"):
        """A checked intermediate is replayed like a release (its output is the value itself)."""
        return self.release(value, None, 0.0, sensitivity=sensitivity, name=name, norm=norm)

    def select(self, scores, kind, scale, *, sensitivity, name):
        scores = np.asarray(scores, dtype=float)
        sens = np.broadcast_to(np.asarray(sensitivity, dtype=float), scores.shape)
        def ratio(rec):  # an excluded candidate (-inf) in both runs moves by 0; in one run only, without bound
            with np.errstate(invalid="ignore"):
                moved = np.where(scores == rec, 0.0, np.abs(scores - rec))
            return float(np.max(moved / sens))

        return self._bounded(name, scores.copy(), int(np.argmax(scores)), ratio, scale)

    def select_product(self, scores, factor, scale, *, sensitivity, name):
        scores, factor = np.asarray(scores, dtype=float), np.asarray(factor)

        def ratio(rec):  # the largest change of a tuple's score: per factor, the extreme item
            d = scores - rec
            hi = sum(d[factor == f].max() for f in np.unique(factor))
            lo = sum(d[factor == f].min() for f in np.unique(factor))
            return max(hi, -lo) / float(sensitivity)

        return self._bounded(name, scores.copy(), argmax_per_factor(scores, factor), ratio, scale)

    def describe(self):
        return "audit replay: zero noise"


class LedgerNoise(NoiseSource):
    """Real noise, and a log of every private event of the run (``log``, a list of ``accounting.LoggedDraw``):
    the family and scale drawn, the declared sensitivity and norm, the sampling; for the ledger replay.

    A draw outside ``release``, ``select``, ``select_product`` and ``perturbation`` (noise that no
    declaration covers) is logged as ``undeclared`` and makes ``compose_log`` fail.

    Parameters
    ----------
    seed : int
    zero : bool
        Draw zeros (the scales are still logged): the run of the noiseless algorithm.
    """

    def __init__(self, seed=0, zero=False):
        super().__init__(np.random.default_rng(seed), seeded=True)
        self.log, self.zero, self._declared = [], bool(zero), False

    def _primitive(self, kind, scale, size, sample):
        if not self._declared:
            self.log.append(LoggedDraw("undeclared", "raw draw", kind, np.asarray(scale, dtype=float)))
        if self.zero:
            shape = np.shape(scale) if size is None else size
            return 0.0 if shape == () else np.zeros(shape)
        return sample(scale, size)

    def laplace(self, scale, size=None):
        return self._primitive("laplace", scale, size, super().laplace)

    def gaussian(self, sigma, size=None):
        return self._primitive("gaussian", sigma, size, super().gaussian)

    def gumbel(self, scale, size=None):
        return self._primitive("gumbel", scale, size, super().gumbel)

    def _declare(self, entry, call):
        self.log.append(entry)
        self._declared = True
        try:
            return call()
        finally:
            self._declared = False

    def release(self, value, kind, scale, *, sensitivity, name, norm="l2", sampling=None):
        entry = LoggedDraw("release", name, kind, np.copy(scale), sensitivity, norm, sampling)
        return self._declare(entry, lambda: super(LedgerNoise, self).release(
            value, kind, scale, sensitivity=sensitivity, name=name, norm=norm, sampling=sampling))

    def select(self, scores, kind, scale, *, sensitivity, name):
        entry = LoggedDraw("select", name, kind, np.copy(scale), np.copy(sensitivity))
        return self._declare(entry, lambda: super(LedgerNoise, self).select(
            scores, kind, scale, sensitivity=sensitivity, name=name))

    def select_product(self, scores, factor, scale, *, sensitivity, name):
        entry = LoggedDraw("select_product", name, "gumbel", float(scale), sensitivity)
        return self._declare(entry, lambda: super(LedgerNoise, self).select_product(
            scores, factor, scale, sensitivity=sensitivity, name=name))

    def perturbation(self, kind, scale, size, *, epsilon, delta, name):
        entry = LoggedDraw("perturbation", name, kind, np.copy(scale), epsilon=float(epsilon), delta=float(delta))
        return self._declare(entry, lambda: super(LedgerNoise, self).perturbation(
            kind, scale, size, epsilon=epsilon, delta=delta, name=name))

    def describe(self):
        return "ledger replay: numpy PCG64 with a fixed seed, every draw logged"


@dataclass
class LedgerCheck:
    """A ledger replay: the epsilon the run's draws compose to, beside the one its report claims.

    Attributes
    ----------
    claimed : float
        The report's ``accountant_epsilon``.
    composed : float
        ``accounting.compose_log`` of the logged draws, at the report's delta.
    draws : int
        Releases and selections logged.
    """

    claimed: float
    composed: float
    draws: int

    @property
    def holds(self):
        """The draws spend no more than claimed (a relative 1e-6 for the accountants' rounding)."""
        return self.composed <= self.claimed * (1 + 1e-6)


def ledger_replay(mechanism, design, loss, penalty, *, epsilon=1.0, delta=1e-5, calibration=None, options=None,
                  seed=0):
    """Run ``mechanism`` once on ``design`` with every draw logged; compose the log with the accountant.

    The log gives each release's noise over its declared sensitivity and each selection's
    scale: what the run actually spent, independently of the ledger its plan booked. A
    composed epsilon above the claim is a ledger that books less noise cost than was drawn.

    Parameters
    ----------
    design : data.BoundedDesign or private_bounds.PendingDesign

    Returns
    -------
    LedgerCheck
    """
    mech = get(mechanism) if isinstance(mechanism, str) else mechanism
    noise = LedgerNoise(seed)
    _, report = fit_mechanism(mech, design, loss, penalty, epsilon=epsilon, delta=delta, calibration=calibration,
                              options=options, noise=noise)
    return check_log(noise.log, report)


def search_replay(log):
    """zCDP of each base run of a private search (``tuning.DPSearchCV``) from its logged draws.

    The log of a search is: the private bounds' selections (if any), then the constant
    predictor's "label mean" and "validation score", then each base run's fit and its
    "validation score". A base run reads the training part for its fit and the validation
    part for its score, disjoint parts of a split drawn independently of the data, so it is
    ``max(rho_fit, rho_score)``-zCDP (parallel composition).

    Returns
    -------
    bounds_rho : float
        zCDP of the draws before the first base run (0 without private bounds).
    runs : list of (float, float)
        ``(rho of the fit's draws, rho of the score)`` of each base run, the constant predictor first.
    """
    start = next(i for i, d in enumerate(log) if d.name == "label mean")
    bounds_rho = log_ledger(log[:start]).zcdp() if start else 0.0
    runs, fit = [], []
    for d in log[start:]:
        if d.name == "validation score":
            runs.append((log_ledger(fit).zcdp() if fit else 0.0, log_ledger([d]).zcdp()))
            fit = []
        else:
            fit.append(d)
    return bounds_rho, runs


def check_log(log, report):
    """``LedgerCheck`` of a logged run (``LedgerNoise.log``) against its privacy report."""
    return LedgerCheck(float(report.accountant_epsilon), compose_log(log, report.delta), len(log))


class ScaledNoise(NoiseSource):
    """Every noise scale multiplied by ``factor``: the under-noised mutant of the mutation check."""

    def __init__(self, factor, seed=None):
        super().__init__(np.random.default_rng(seed), seeded=seed is not None)
        self.factor = float(factor)

    def laplace(self, scale, size=None):
        return super().laplace(np.asarray(scale) * self.factor, size)

    def gaussian(self, sigma, size=None):
        return super().gaussian(np.asarray(sigma) * self.factor, size)

    def gumbel(self, scale, size=None):
        return super().gumbel(np.asarray(scale) * self.factor, size)

    def describe(self):
        return f"audit mutant: noise scaled by {self.factor:g}"


class TranscriptNoise(ScaledNoise):
    """``ScaledNoise`` that keeps every noisy release of a run, in order: the transcript a black-box audit reads
    (``transcript_audit``). A selection's noisy scores are not kept (its released index is what a caller returns)."""

    def __init__(self, factor, seed=None):
        super().__init__(factor, seed)
        self.transcript = []

    def release(self, value, kind, scale, **kw):
        out = super().release(value, kind, scale, **kw)
        self.transcript.append(np.ravel(np.asarray(out, dtype=float)))
        return out


def transcript_audit(release, pair, epsilon, delta, *, runs=20000, seed=0, noise_factor=1.0, alpha=0.05):
    """``black_box_bound`` of every noisy value that ``release(data, noise)`` draws, on each dataset of ``pair``.

    For the private steps around the mechanisms (a scaler's moments, the label counts, a held-out score): the
    audit sees the whole transcript of noisy releases of one call. The claim covers that transcript, not only
    what the step publishes (the accountant composes every noisy release to ``(epsilon, delta)``; what is
    published is computed from it), so a bound above ``epsilon`` on the transcript breaks the claim.

    Parameters
    ----------
    release : callable (data, noise) -> any
        One run of the private step on ``data`` with ``noise`` (a ``NoiseSource``).
    pair : (data, data)
        Neighbouring datasets, built so that the released values move by their full sensitivity.
    epsilon, delta : float
        The claim.
    runs : int
        Runs a dataset (half choose the test, half evaluate it).
    noise_factor : float
        Every noise scale multiplied by it (below 1: the mutant of the mutation check).

    Returns
    -------
    AuditResult
    """
    noise = TranscriptNoise(noise_factor, seed)

    def transcript(data):
        noise.transcript = []
        release(data, noise)
        return np.concatenate(noise.transcript)

    wa, wb = ([transcript(data) for _ in range(runs)] for data in pair)
    return black_box_bound(wa, wb, epsilon, delta, alpha)


def neighbouring_pairs(n=20, p=3, classification=True, row_norm=None, seed=0):
    """Neighbouring raw datasets at the corners of the bounds ``[-1, 1]^p`` (labels ``+-1`` or in ``[-1, 1]``).

    Returns
    -------
    bounds : Bounds
        ``[-1, 1]`` per feature, label range ``[-1, 1]`` (regression), ``row_norm``.
    pairs : dict name -> ((X_a, y_a), (X_b, y_b))
        ``label flip`` (record 0 at the all-ones corner, label negated), ``feature
        extremes`` (record 0 all ones vs all minus ones, same label), ``row norm with
        intercept`` (record 0 at the row-norm bound in the direction of all ones, vs the
        opposite direction and the opposite label), ``isolated label flip`` (record 0 at
        the all-ones corner, label negated, every other record at the origin with labels
        that cancel: the pair that makes the greedy scores tie and the minimizer move by
        its full sensitivity), ``origin to corner`` (record 0 at the origin vs at the corner, same label: the
        pair that moves the automatic clipping releases, sums of per-record sizes, by their full sensitivity).
    """
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, (n, p))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0) if classification else rng.uniform(-0.5, 0.5, n)
    bounds = Bounds(-np.ones(p), np.ones(p), *(None, None) if classification else (-1.0, 1.0), row_norm=row_norm,
                    source="audit corners")
    corner = np.ones(p) if row_norm is None else np.ones(p) * row_norm / math.sqrt(p)

    def with_record(x0, y0):
        Xr, yr = X.copy(), y.copy()
        Xr[0], yr[0] = x0, y0
        return Xr, yr

    top = 1.0
    pairs = {
        "label flip": (with_record(np.ones(p), top), with_record(np.ones(p), -top)),
        "feature extremes": (with_record(np.ones(p), top), with_record(-np.ones(p), top)),
        "row norm with intercept": (with_record(corner, top), with_record(-corner, -top)),
        "isolated label flip": _isolated(corner, n, classification),
        "origin to corner": (with_record(np.zeros(p), top), with_record(corner, top)),
    }
    return bounds, pairs


AUDIT_CLIP = 0.25
"""The per-coordinate clipping threshold of the audit's DP-GCD and DP-CD: below what a corner record's term reaches at
the zero start (half its feature value for the logistic loss, up to all of it for the Huber and squared losses), so
that both records of the isolated pair are clipped, to opposite signs."""


def audit_options(mechanism):
    """Options under which a black-box audit of ``mechanism`` is sharpest.

    One iteration (a single release, or one selection and one update), a full batch for
    DP-SGD (no amplification by subsampling: the pair then differs in every batch), and
    a clipping threshold of ``AUDIT_CLIP`` where the mechanism's own default clips nothing (DP-GCD, DP-CD; the
    estimators clip, and the replay's isolated pair then reaches the bound ``2 C / n``, where the logistic
    derivative at the zero start, 1/2, reached only half the unclipped ``2 L / n``), a strong ridge ``mu = 20``
    for output perturbation and dual Frank-Wolfe (the ridge
    then dominates the curvature of the loss, and the minimizer moves by nearly its full
    sensitivity ``2 L / (n mu)`` on the isolated label flip of ``n = 10`` records), and for
    the two-stage method one selected feature with 10% of the budget, then a DP-GCD step
    (the isolated pair moves every feature alike, so the selection reveals little; the
    audit then sees the second stage). Other options keep their defaults.

    Parameters
    ----------
    mechanism : str or Mechanism

    Returns
    -------
    dict
    """
    mech = get(mechanism) if isinstance(mechanism, str) else mechanism
    names = mech.option_names
    options = {"n_iter": 1} if "n_iter" in names else {}
    if "batch_size" in names:
        options["batch_size"] = 10.0
    if "mu" in names:
        options["mu"] = 20.0
    if "second" in names:  # two-stage: one feature, 10% on its selection, then a DP-GCD step
        options.update(second="dp-gcd", selection_share=0.1, sparsity=1)
    if "clipping_norm" in names and mech.option("clipping_norm").default is None:
        options["clipping_norm"] = AUDIT_CLIP
    return options


def _isolated(corner, n, classification):
    """Record 0 at ``corner`` with its label flipped; the others at the origin with labels that
    cancel (``+-1`` alternating, or 0), so that only record 0 moves the gradient of a feature."""
    X = np.zeros((n, corner.size))
    X[0] = corner
    y = np.where(np.arange(n) % 2 == 1, 1.0, -1.0) if classification else np.zeros(n)
    ya, yb = y.copy(), y.copy()
    ya[0], yb[0] = 1.0, -1.0
    return (X, ya), (X.copy(), yb)


def _design(Xy, bounds, classification):
    X, y = Xy
    return prepare(X, y, bounds, classification, fit_intercept=True)


def sensitivity_replay(mechanism, pair, bounds, loss, penalty, *, epsilon=1.0, delta=1e-5, calibration=None,
                       options=None, classification=True, seed=0, repeats=1):
    """Sensitivity replay of ``mechanism`` (a name or a ``Mechanism``) on one neighbouring pair.

    Parameters
    ----------
    repeats : int >= 1
        Replays with seeds ``seed, ..., seed + repeats - 1``; the largest ratio is kept.
        Mechanisms that touch a random subset of the records (DP-SGD's batches, one-pass
        SGD's half pass) may never touch the record that differs under one seed.

    Returns
    -------
    dict name -> float
        For each kind of release, the largest ratio of its change between the two
        datasets (at the same history) to its declared sensitivity. Above 1: the
        declared sensitivity is broken; 0: no release saw the differing record.
    """
    mech = get(mechanism) if isinstance(mechanism, str) else mechanism
    design_a, design_b = (_design(d, bounds, classification) for d in pair)
    kw = dict(epsilon=epsilon, delta=delta, calibration=calibration, options=options)
    out = {}
    for s in range(seed, seed + repeats):
        record = ReplayNoise(s)
        fit_mechanism(mech, design_a, loss, penalty, noise=record, **kw)
        replay = ReplayNoise(s, recorded=record.log)
        fit_mechanism(mech, design_b, loss, penalty, noise=replay, **kw)
        replay.finish()
        for name, ratio in replay.ratios:
            out[name] = max(out.get(name, 0.0), ratio)
    return out


def default_fit_pairs(n=20000, p=4, seed=0):
    """Neighbouring datasets for the replay of the default fits (``default_fit_replay``): ``n`` records uniform on
    [-1, 1]^p with a linear label (0/1 and real), record 0 replaced three ways: from the origin to the all-ones corner
    with its label flipped (or moved from the top of the label range to the bottom), from one corner to the other,
    and far outside every bound (1e6 against -1e6, labels alike). ``(classification pairs, regression pairs)``: name
    -> ((X_a, y_a), (X_b, y_b)). The classification pairs add one whose labels are a Python list of integers, one of
    them written ``1.0`` on the other side (the same class, but numpy reads the list as floats: a label set selected
    privately must not show it)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, p))
    score = X @ np.linspace(1.0, -1.0, p) + 0.3 * rng.standard_normal(n)
    rows = {"origin to corner": (np.zeros(p), np.ones(p)), "corner to corner": (np.ones(p), -np.ones(p)),
            "far outside the bounds": (np.full(p, 1e6), np.full(p, -1e6))}
    out = []
    for y, (top, bottom) in (((score > 0).astype(int), (1, 0)), (np.clip(score, -3.0, 3.0), (3.0, -3.0))):
        pairs = {}
        for name, (a, b) in rows.items():
            ya, yb = y.copy(), y.copy()
            ya[0], yb[0] = (top, bottom) if name != "far outside the bounds" or y.dtype.kind == "i" else (1e6, -1e6)
            Xa, Xb = X.copy(), X.copy()
            Xa[0], Xb[0] = a, b
            pairs[name] = ((Xa, ya), (Xb, yb))
        out.append(pairs)
    labels = (score > 0).astype(int).tolist()  # as a Python list: its type is each label's own
    written = list(labels)
    written[labels.index(1)] = 1.0  # a record of the class 1, its label written 1.0: the same class
    out[0]["a label 1 written 1.0"] = ((X, labels), (X, written))
    return tuple(out)


FILL_FIT, FILL_SIZE = "lasso, few records, many features", (560, 40)
"""The default fit of ``default_fits`` whose rule reads the records' fill of their box (``auto.reads_fill``), and
the records and features of its pairs (``n epsilon / log p`` = 152 at epsilon 1); too few for a quantile of each
feature, it also cuts its 40 declared ranges jointly before narrowing its label range (``JointLabelDesign``)."""

GCD_FIT, GCD_SIZE = "classifier, many features", (3000, 150)
"""The default fit of ``default_fits`` on more than ``auto.FEW`` features, and its pairs' records and features: the
logistic rule's DP-GCD (``n epsilon / log p`` = 599 at epsilon 1, below ``auto.GCD_BAND``: 50 steps started from
the constant predictor's intercept, a noisy label mean), with its automatic clipping threshold."""

CONSTANT_FIT, CONSTANT_SIZE = "classifier, too few records", (10, 4)
"""The default fit of ``default_fits`` below the logistic rule's floor (``n epsilon < auto.FLOOR_FEW log p``), and
its pairs' records and features: the constant predictor, a noisy label mean."""

SIZES = {FILL_FIT: FILL_SIZE, GCD_FIT: GCD_SIZE, CONSTANT_FIT: CONSTANT_SIZE}
"""The default fits whose pairs are not ``default_fit_replay``'s ``n`` and ``p``: name -> (records, features)."""


def default_fits(p=4):
    """The default fits whose releases ``default_fit_replay`` checks: name -> a function making the estimator. Only
    epsilon and what a user declares: the bounds and the classes; the bounds bought privately; the label set
    selected privately; the hinge loss; a classifier on ``GCD_SIZE`` and one on ``CONSTANT_SIZE`` records and
    features; a regression with its label range; a regression on ``FILL_SIZE`` records and features, whose rule
    releases the records' fill of their box before the fit."""
    from .estimators import DPLasso, DPLinearSVC, DPLogisticRegression

    def box(features, labels=()):
        return Bounds(-np.ones(features), np.ones(features), *labels)

    sizes = {name: size[1] for name, size in SIZES.items()}
    return {"classifier, bounds and classes declared": lambda: DPLogisticRegression(bounds=box(p), classes=[0, 1]),
            "classifier, bounds bought privately": lambda: DPLogisticRegression(classes=[0, 1]),
            "classifier, label set selected privately": lambda: DPLogisticRegression(bounds=box(p)),
            "linear SVM, bounds and classes declared": lambda: DPLinearSVC(bounds=box(p), classes=[0, 1]),
            GCD_FIT: lambda: DPLogisticRegression(bounds=box(sizes[GCD_FIT]), classes=[0, 1]),
            CONSTANT_FIT: lambda: DPLogisticRegression(bounds=box(sizes[CONSTANT_FIT]), classes=[0, 1]),
            "lasso, label range declared": lambda: DPLasso(bounds=box(p, (-3.0, 3.0))),
            FILL_FIT: lambda: DPLasso(bounds=box(sizes[FILL_FIT], (-3.0, 3.0)))}


def default_fit_replay(epsilon=1.0, seed=0, repeats=2, n=20000, p=4):
    """The sensitivity replay of every release a default fit makes (``default_fits``: the private bounds, the label
    set's counts, the records' fill, the automatic clipping threshold, the warm start and the mechanism the rule
    chooses: DP-GD, DP-GCD, the selection and DP-GD, the constant predictor), on each pair of ``default_fit_pairs``
    (of ``SIZES`` records and features where given), through the estimators as a user calls them. The second fit of
    each pair replays the first's releases: its noise scales must be the first's, it must make the same releases in
    the same order, and its model and privacy report must come out the same (``RELEASED``); each difference is
    an entry with the ratio inf.

    Returns
    -------
    dict (fit, pair) -> dict release name -> float
        The largest ratio of a release's change to its declared sensitivity over ``repeats`` seeds (above 1 breaks
        the claim).
    """
    out = {}
    for fit, make in default_fits(p).items():
        pairs = default_fit_pairs(*SIZES.get(fit, (n, p)), seed)[1 if fit.startswith("lasso") else 0]
        for pair, (a, b) in pairs.items():
            ratios = {}
            for s in range(seed, seed + repeats):
                record = ReplayNoise(s)
                first = _quiet(make().set_params(epsilon=epsilon, random_state=record).fit, *a)
                replay = ReplayNoise(s, recorded=record.log)
                second = _quiet(make().set_params(epsilon=epsilon, random_state=replay).fit, *b)
                replay.finish()
                if _released(first) != _released(second):
                    replay.ratios.append((RELEASED, math.inf))
                for name, ratio in replay.ratios:
                    ratios[name] = max(ratios.get(name, 0.0), ratio)
            out[(fit, pair)] = ratios
    return out


RELEASED = "the model and report beyond the noisy releases"
"""``default_fit_replay``'s entry (ratio inf) where the two fits' model or privacy report differ though every release
was forced to the first fit's output: something computed from the records reached them without noise."""


def _released(estimator):
    """What a fitted estimator releases, as text: its coefficients, intercept, fitted bounds, classes or label range,
    and its privacy report's released form."""
    model = {name: getattr(estimator, name, None) for name in ("coef_", "intercept_", "coef_bounded_", "classes_",
                                                                 "label_range_", "alpha_", "bounds_share_")}
    model |= {"bounds_": estimator.bounds_.to_dict(), "report": estimator.privacy_report_.to_dict()}
    return json.dumps(model, default=jsonable, sort_keys=True)


def _quiet(fit, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit(*args)


def private_bounds_pairs(n=200):
    """Neighbouring one-feature datasets for the private bounds: ``n - 1`` values spread over [-1, 1] and one
    record replaced by a value beyond the grid of candidates (the patterns of SmartNoise's approx-bounds leak:
    values past the histogram's ends, the largest float). NaN and inf are refused before any draw
    (``tests/test_audit.py``); beyond the grid, values are clipped to its ends."""
    base = np.linspace(-1.0, 1.0, n - 1)
    big = np.finfo(float).max
    return {name: (np.append(base, a), np.append(base, b)) for name, (a, b) in {
        "beyond both ends of the grid": (1e12, -1e12), "beyond the grid and at its middle": (1e12, 0.0),
        "the largest floats": (big, -big)}.items()}


def joint_bounds_pairs(n=200, p=3):
    """Neighbouring datasets for the joint tightening (``private_bounds.JointTighteningDesign``) of ``p`` features
    declared on [-1, 1]: ``n - 1`` records, and one record replaced: spread over the range, with the record at the
    opposite corners, beyond the declared range or in the middle, or at the largest floats; the record that moves
    the upper cut by one grid step (the black-box audit's pair, at ``TIPPING_EPSILON``); the record that changes
    which feature is widest. Every feature's count beyond each cut moves by one at most."""
    spread = np.tile(np.linspace(-1.0, 1.0, n - 1)[:, None], (1, p))
    # the black-box audit's pair, for the tie-break of one count a step at TIPPING_EPSILON: the upper
    # cuts at -0.75 and -0.625 count one value more and one less than the target in the dataset without the record
    # (at -0.8, with the bulk below -0.75), so the first wins by the tie-break's step; the record at -0.55 adds one
    # to both counts, and the second wins by as much. Every other cut is far from the target or steps behind.
    target = int(round(JOINT_TAIL * n))
    tipping = np.vstack([np.ones((target - 1, p)), np.full((2, p), -0.7), np.full((n - target - 2, p), -0.8)])
    # the widest feature moves with the record: from the first column (twice as wide) to the second
    widest = spread * np.r_[1.0, np.full(p - 1, 0.5)]
    corner = np.r_[1.0, -np.ones(p - 1)]
    pairs = {"opposite corners": (spread, -1.0, 1.0), "beyond the declared range and the middle": (spread, 1e12, 0.0),
             "the largest floats": (spread, np.finfo(float).max, -np.finfo(float).max),
             "a record that tips the cuts": (tipping, -0.55, -0.8), "the widest feature changes": (widest, corner,
                                                                                                 -corner)}
    return {name: (np.vstack([base, np.broadcast_to(a, (1, p))]), np.vstack([base, np.broadcast_to(b, (1, p))]))
            for name, (base, a, b) in pairs.items()}


TIPPING_EPSILON = 4.0 * JOINT_SLOPE
"""The pure epsilon of the black-box audit of the joint cuts (``joint_bounds_pairs``' tipping pair): half a cut, so
the tie-break's step (``private_bounds.JOINT_SLOPE`` noise scales of ``4 / epsilon`` each) is one count."""


class _Selections:
    """A noise source that keeps the index of each selection it makes (the rest is the wrapped source's)."""

    def __init__(self, noise):
        self.noise, self.chosen = noise, []

    def select(self, *args, **kwargs):
        self.chosen.append(self.noise.select(*args, **kwargs))
        return self.chosen[-1]

    def __getattr__(self, name):
        return getattr(self.noise, name)


def _bounds_release(values, epsilon, noise):
    """The private range ``(low, high)`` of one feature, bought with pure ``epsilon`` (its three selections), and the
    median it was anchored at: a selection the claim covers, though only the range is published (each grid point
    standing for the interval next to it, the range itself barely moves on these pairs)."""
    X, y = values.reshape(-1, 1), np.where(np.arange(values.size) % 2 == 1, 1.0, -1.0)
    kept = _Selections(noise)
    bounds = PendingDesign(X, y, True, False, share=0.5).plan_pure(epsilon).release(kept).bounds
    return np.array([bounds.feature_low[0], bounds.feature_high[0], kept.chosen[0]])


def _joint_release(X, epsilon, noise):
    """The ranges of ``X``'s features declared on [-1, 1], cut jointly with pure ``epsilon`` (two selections)."""
    y = np.where(np.arange(X.shape[0]) % 2 == 1, 1.0, -1.0)
    declared = Bounds(-np.ones(X.shape[1]), np.ones(X.shape[1]))
    bounds = JointTighteningDesign(X, y, declared, True, False, 0.5).plan_pure(epsilon).release(noise).bounds
    return np.r_[bounds.feature_low, bounds.feature_high]


def private_bounds_replay(pair, epsilon=1.5, joint=False):
    """The sensitivity replay of the private bounds on ``pair`` (of one feature, ``private_bounds_pairs``; with
    ``joint``, the joint tightening's, ``joint_bounds_pairs``): the largest score change of a selection over its
    declared sensitivity (above 1 breaks the claim)."""
    release = _joint_release if joint else _bounds_release
    record = ReplayNoise(0)
    release(pair[0], epsilon, record)
    replay = ReplayNoise(0, recorded=record.log)
    release(pair[1], epsilon, replay)
    replay.finish()
    return max(ratio for _, ratio in replay.ratios)


def private_bounds_audit(pair, *, epsilon=1.5, runs=5000, seed=0, noise_factor=1.0, alpha=0.05, joint=False):
    """``black_box_bound`` of the released ranges (pure ``epsilon``, delta 0) on ``pair``: one feature's and its
    median (``private_bounds_pairs``), or with ``joint`` the joint tightening's (``joint_bounds_pairs``)."""
    release = _joint_release if joint else _bounds_release
    noise = ScaledNoise(noise_factor, seed)
    wa, wb = ([release(values, epsilon, noise) for _ in range(runs)] for values in pair)
    return black_box_bound(wa, wb, epsilon, 0.0, alpha)


def one_vs_rest_audit(mechanism, loss, penalty, *, n=10, p=2, n_classes=3, epsilon=1.0, delta=1e-3, options=None,
                      runs=1000, seed=0, noise_factor=1.0, alpha=0.05):
    """``black_box_bound`` of a one-vs-rest fit (all ``n_classes`` rows released) on an isolated pair.

    Record 0 sits at the all-ones corner of ``[-1, 1]^p`` and moves from class 0 to class 1, which flips its
    label in two of the binary problems; the others sit at the origin with classes in turn. ``options`` default
    to ``audit_options(mechanism)``. The hinge loss gives the audit its power: its derivative at the start
    (margin 0) is the largest a record can have, so the flip moves the gradient by its whole sensitivity
    (the logistic loss's is half of it).
    """
    from .mechanisms import fit_one_vs_rest

    mech = get(mechanism) if isinstance(mechanism, str) else mechanism
    X = np.zeros((n, p))
    X[0] = 1.0
    classes = np.arange(n) % n_classes
    bounds = Bounds(-np.ones(p), np.ones(p), source="audit: [-1, 1]^p")
    design = prepare(X, np.where(classes == 0, 1.0, -1.0), bounds, True, fit_intercept=True)
    kw = dict(epsilon=epsilon, delta=delta, options=audit_options(mech) if options is None else options,
              noise=ScaledNoise(noise_factor, seed))
    releases = []
    for first in (0, 1):
        labels = classes.copy()
        labels[0] = first
        releases.append([fit_one_vs_rest(mech, design, labels, n_classes, loss, penalty, **kw)[0].ravel()
                         for _ in range(runs)])
    return black_box_bound(*releases, epsilon, delta, alpha)


def search_releases(pair, runs, *, epsilon=1.0, delta=1e-3, grid=None, mean_repetitions=2.0, seed=0,
                    noise_factor=1.0):
    """``runs`` releases of ``DPSearchCV`` (Papernot & Steinke's random number of base runs, hidden) on each
    dataset of ``pair``: the selected model's coefficients and intercept, its noisy validation score and the
    index of the selected grid point (-1: the constant predictor), every draw scaled by ``noise_factor``.

    The base estimator is a Huber regression (``DPLinearRegression``) with the bounds ``[-1, 1]^p`` and the label
    range ``[-1, 1]`` declared; ``grid`` defaults to DP-GCD with one or two iterations.
    """
    from .estimators import DPLinearRegression
    from .tuning import DPSearchCV

    grid = {"mechanism": ["dp-gcd"], "max_iter": [1, 2]} if grid is None else grid
    points = list(ParameterGrid(grid))
    noise = ScaledNoise(noise_factor, seed)
    out = []
    for X, y in pair:
        p = X.shape[1]
        base = DPLinearRegression(loss="huber", bounds=Bounds(-np.ones(p), np.ones(p), -1.0, 1.0, source="audit"))
        search = DPSearchCV(base, grid, epsilon=epsilon, delta=delta, mean_repetitions=mean_repetitions,
                            random_state=noise)
        rows = []
        for _ in range(runs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(X, y)
            best = search.best_estimator_
            chosen = -1 if search.best_params_ is None else points.index(search.best_params_)
            rows.append(np.concatenate([np.ravel(best.coef_), np.ravel(best.intercept_), [search.best_score_, chosen]]))
        out.append(np.array(rows))
    return out


def search_audit(pair, *, runs=2000, epsilon=1.0, delta=1e-3, seed=0, noise_factor=1.0, alpha=0.05, **kw):
    """``black_box_bound`` of the private search's releases (``search_releases``) on ``pair``."""
    wa, wb = search_releases(pair, runs, epsilon=epsilon, delta=delta, seed=seed, noise_factor=noise_factor, **kw)
    return black_box_bound(wa, wb, epsilon, delta, alpha)


def clopper_pearson(k, n, alpha):
    """Two-sided ``1 - alpha`` Clopper-Pearson interval of a binomial proportion ``k / n``."""
    lo = 0.0 if k == 0 else float(_beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(_beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def _epsilon_bound(tp, fp, n, delta, alpha):
    """``log((TPR_low - delta) / FPR_high)`` with Clopper-Pearson bounds (each at ``alpha / 2``)."""
    tpr_lo = clopper_pearson(tp, n, alpha)[0]
    fpr_hi = clopper_pearson(fp, n, alpha)[1]
    return max(0.0, math.log((tpr_lo - delta) / fpr_hi)) if tpr_lo > delta else 0.0


def _directions(difference):
    """Candidate statistics ``<w, d>``: the mean difference, its signs, and each coordinate it moves."""
    moved = np.flatnonzero(np.abs(difference) > 0)
    return [difference, np.sign(difference)] + [np.eye(len(difference))[j] for j in moved]


def _best_test(sa, sb, delta, alpha):
    """Threshold and direction of the test ``s > t`` that maximize the Clopper-Pearson bound on these samples.

    The candidates are the quantiles of both samples; both directions are tried (A over B, and
    B over A by negating and swapping). Returns ``(bound, t, sign)``.
    """
    best = (-np.inf, 0.0, 1.0)
    n = len(sa)
    for sign in (1.0, -1.0):  # sign -1: B over A
        xa, xb = (sa, sb) if sign > 0 else (-sb, -sa)
        xa_sorted, xb_sorted = np.sort(xa), np.sort(xb)
        levels = 1.0 - np.geomspace(0.5, min(0.5, 50.0 / n), 40)
        for t in np.unique(np.quantile(np.concatenate([xa, xb]), levels)):
            tp = n - int(np.searchsorted(xa_sorted, t, side="right"))
            fp = n - int(np.searchsorted(xb_sorted, t, side="right"))
            e = _epsilon_bound(tp, fp, n, delta, alpha)
            if e > best[0]:
                best = (e, float(t), sign)
    return best


@dataclass
class AuditResult:
    """A black-box audit: the lower bound on epsilon and how it was obtained.

    Attributes
    ----------
    epsilon_lower_bound : float
        At 95% confidence; compare with ``claimed_epsilon``.
    claimed_epsilon, delta : float
    runs : int
        Runs per dataset (half choose the test, half evaluate it).
    threshold : float
    true_positives, false_positives : int
        On the evaluation half.
    """

    epsilon_lower_bound: float
    claimed_epsilon: float
    delta: float
    runs: int
    threshold: float
    true_positives: int
    false_positives: int


def _outputs(mech, design, loss, penalty, noise, runs, kw):
    """``runs`` releases of the mechanism on ``design`` (planned once: the plan is public and deterministic)."""
    plan = make_plan(mech, design, loss, penalty, kw["epsilon"], kw["delta"], kw["calibration"], kw["options"])
    return np.array([np.asarray(mech.run(design, plan, noise, None), dtype=float) for _ in range(runs)])


def black_box_audit(mechanism, pair, bounds, loss, penalty, *, epsilon=1.0, delta=1e-5, calibration=None,
                    options=None, classification=True, runs=1000, alpha=0.05, seed=0, noise_factor=1.0):
    """Lower bound on the epsilon of ``mechanism`` from ``runs`` fits on each dataset of ``pair``.

    The statistic is a projection ``<w, d>`` of the released model ``w``; the candidate
    directions ``d`` are the difference of the mean models of the first half of the runs,
    its signs, and each coordinate it moves. The direction, the threshold (among 40
    quantiles, leaving at least 50 runs in the tail) and the sense of the test (A over B or
    B over A) maximize the Clopper-Pearson bound on the first half; the second half,
    untouched by that choice, gives the reported bound (confidence ``1 - alpha`` for the
    pair of rates).

    Returns
    -------
    AuditResult
    """
    mech = get(mechanism) if isinstance(mechanism, str) else mechanism
    design_a, design_b = (_design(d, bounds, classification) for d in pair)
    kw = dict(epsilon=epsilon, delta=delta, calibration=calibration, options=options)
    noise = ScaledNoise(noise_factor, seed)
    wa = _outputs(mech, design_a, loss, penalty, noise, runs, kw)
    wb = _outputs(mech, design_b, loss, penalty, noise, runs, kw)
    return black_box_bound(wa, wb, epsilon, delta, alpha)


def black_box_bound(wa, wb, epsilon, delta, alpha=0.05):
    """The black-box lower bound of ``black_box_audit`` from the releases ``wa`` and ``wb`` (arrays of shape
    ``(runs, d)``) of any mechanism on two neighbouring datasets, against its claimed (epsilon, delta).

    Returns
    -------
    AuditResult
    """
    wa, wb = (np.asarray(w, dtype=float).reshape(len(w), -1) for w in (wa, wb))
    runs = len(wa)
    half = runs // 2
    directions = _directions(wa[:half].mean(axis=0) - wb[:half].mean(axis=0))
    tests = [(_best_test(wa[:half] @ d, wb[:half] @ d, delta, alpha), d) for d in directions]
    (_, t, sign), direction = max(tests, key=lambda test: test[0][0])
    sa, sb = wa @ direction, wb @ direction
    ea, eb = (sa[half:], sb[half:]) if sign > 0 else (-sb[half:], -sa[half:])
    tp, fp = int(np.sum(ea > t)), int(np.sum(eb > t))
    m = runs - half
    return AuditResult(_epsilon_bound(tp, fp, m, delta, alpha), float(epsilon), float(delta), runs, float(t), tp, fp)


def mutation_check(mechanism, pair, bounds, loss, penalty, *, factor=0.25, **kw):
    """``black_box_audit`` of the mechanism with every noise scale multiplied by ``factor``.

    Returns
    -------
    AuditResult
        Its lower bound should exceed the claimed epsilon: the audit catches the mutant.
    """
    return black_box_audit(mechanism, pair, bounds, loss, penalty, noise_factor=factor, **kw)


def one_run_p_value(m, r, v, epsilon, delta):
    """Probability of at least ``v`` correct guesses out of ``r`` (``m`` canaries) under (epsilon, delta)-DP.

    Steinke, Nasr & Jagielski, "Privacy auditing with one (1) training run", NeurIPS 2023, Theorem 3.3 and its
    algorithm for delta > 0: the tail of Binomial(r, e^eps / (1 + e^eps)) plus ``2 m delta`` times the largest
    average of the binomial's mass just below ``v``.
    """
    from scipy.stats import binom

    q = 1.0 / (1.0 + math.exp(-epsilon))
    beta = float(binom.sf(v - 1, r, q))
    alpha = below = 0.0
    for i in range(1, v + 1):
        below += float(binom.pmf(v - i, r, q))
        alpha = max(alpha, below / i)
    return min(beta + 2.0 * m * delta * alpha, 1.0)


def one_run_lower_bound(m, r, v, delta, alpha=0.05):
    """The largest epsilon whose p-value of ``v`` correct guesses of ``r`` is still below ``alpha`` (0 if none)."""
    if r == 0 or one_run_p_value(m, r, v, 0.0, delta) > alpha:
        return 0.0
    lo, hi = 0.0, 1.0
    while one_run_p_value(m, r, v, hi, delta) <= alpha and hi < 100:
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if one_run_p_value(m, r, v, mid, delta) <= alpha else (lo, mid)
    return lo


@dataclass
class OneRunResult:
    """One fit's audit: ``v`` correct guesses of ``r`` on ``m`` canaries, and the epsilon lower bound (95%)."""

    claim_epsilon: float
    lower_bound: float
    canaries: int
    guesses: int
    correct: int


ONE_RUN_STEPS_PER_CANARY = 2  # DP-GCD's iterations per canary in the one-run audit (one coordinate per step)


def one_run_options(mechanism, canaries):
    """The options of the one-run audit: the mechanism's defaults, but DP-GCD updates one coordinate per step.

    A canary moves every coordinate's gradient a little; DP-GCD's released model carries it only in the
    coordinates it updated, so the audit runs ``ONE_RUN_STEPS_PER_CANARY`` steps per canary (each step's noise
    grows with the steps, the canary's share of the model with the coordinates updated).
    """
    return {"n_iter": ONE_RUN_STEPS_PER_CANARY * canaries} if mechanism.name == "dp-gcd" else {}


def one_run_audit(mechanism, loss, *, epsilon=1.0, delta=1e-5, canaries=1000, features=None, options=None,
                  classification=True, seed=0, noise_factor=1.0, alpha=0.05, guess_share=0.1):
    """A lower bound on ``mechanism``'s epsilon from one fit (Steinke, Nasr & Jagielski, NeurIPS 2023).

    The data are ``canaries`` records, one per slot: slot ``i`` holds ``(x_i, +1)`` or, with probability 1/2,
    its label flip ``(x_i, -1)`` (replace-one neighbours, so ``n`` and the plan do not depend on the draw).
    The ``x_i`` are public random sign vectors over ``features`` columns (default ``2 * canaries``), at the
    corners of the declared bounds ``[-1, 1]``: each canary moves the gradient of every coordinate, so a
    mechanism that updates or perturbs a few coordinates at a time (DP-GCD) still carries it. One fit; the
    auditor scores each canary by the released model's margin ``<w, x_i>``, guesses the label of the
    ``guess_share`` of canaries with the largest nonzero ``|<w, x_i>|`` from its sign and abstains elsewhere
    (a function of the output only); the number of correct guesses gives the bound through
    ``one_run_p_value``. ``noise_factor`` < 1 audits the under-noised mutant.

    Returns
    -------
    OneRunResult
    """
    from . import norms

    mech = get(mechanism) if isinstance(mechanism, str) else mechanism
    X, signs = one_run_canaries(canaries, features, seed)
    p = X.shape[1]
    bounds = Bounds(-np.ones(p), np.ones(p), *(() if classification else (-1.0, 1.0)),
                    source="one-run audit: random sign canaries at the corners of [-1, 1]^p")
    design = prepare(X, signs, bounds, classification, fit_intercept=True)
    penalty = norms.build_penalty("l1", 1e-6, p, True)
    options = one_run_options(mech, canaries) if options is None else options
    plan = make_plan(mech, design, loss, penalty, epsilon, delta, None, options)
    w = np.asarray(mech.run(design, plan, ScaledNoise(noise_factor, None if seed is None else seed + 1), None),
                   dtype=float)[:p]
    return _one_run_guesses(X, signs, w, epsilon, delta, alpha, guess_share)


def one_run_canaries(canaries, features=None, seed=0):
    """The one-run audit's data: ``canaries`` random sign rows over ``features`` columns (default twice as many),
    and their labels, each +1 or -1 with probability 1/2 (a record or its replace-one neighbour)."""
    rng = np.random.default_rng(seed)
    signs = np.where(rng.random(canaries) < 0.5, 1.0, -1.0)
    X = np.where(rng.random((canaries, 2 * canaries if features is None else features)) < 0.5, 1.0, -1.0)
    return X, signs


def _one_run_guesses(X, signs, w, epsilon, delta, alpha, guess_share):
    """Guess the labels of the canaries with the largest nonzero margins ``|<w, x_i>|``, abstain elsewhere."""
    score = X @ w
    confident = np.argsort(-np.abs(score), kind="stable")[:max(1, int(guess_share * signs.size))]
    guessed = confident[score[confident] != 0]
    correct = int(np.sum(np.sign(score[guessed]) == signs[guessed]))
    bound = one_run_lower_bound(signs.size, guessed.size, correct, delta, alpha)
    return OneRunResult(float(epsilon), bound, signs.size, int(guessed.size), correct)


def _check_label_selection(canaries, epsilon, delta):
    """ValueError naming ``--canaries`` when the default fit could not select the label set privately on that
    many canaries (``private_labels.plan_share``; public numbers only)."""
    from .private_labels import budget, plan_share, records_for_selection

    def needed(delta):
        return records_for_selection(*budget(epsilon, delta))

    try:
        plan_share(canaries, *budget(epsilon, delta))
    except ValueError:
        least, follows = needed(delta), delta == 1.0 / canaries**2
        while follows and (more := needed(1.0 / least**2)) > least:  # the default delta, 1 / n^2, falls with n
            least = more
        raise ValueError(f"--canaries {canaries}: the default fit selects the label set privately, which at epsilon "
                         f"{epsilon:g} takes at least {least} records" + (" (delta 1/n^2)" if follows else
                                                                         f" (delta {delta:.3g})")
                         + f"; give --canaries {least} or more, or a larger --epsilon") from None


def one_run_audit_pipeline(*, epsilon=1.0, delta=None, canaries=1000, features=None, private_bounds=True, seed=0,
                           noise_factor=1.0, alpha=0.05, guess_share=0.1):
    """The one-run audit of the default fit of ``dpsparse fit`` on a classification file.

    ``DPLogisticRegression(epsilon, delta, alpha=1e-3, classes="private")`` with nothing else declared, as the
    command builds it: the bounds bought privately, the label set selected privately, the mechanism and its
    options from the public defaults rule, the automatic clip; every noise draw of all of them scaled by
    ``noise_factor`` for the mutant. The canaries, the guesses and the bound are those of ``one_run_audit``;
    ``delta`` defaults to ``1 / n^2`` as the estimator's.
    """
    from .estimators import DPLogisticRegression

    delta = 1.0 / canaries**2 if delta is None else delta
    _check_label_selection(canaries, epsilon, delta)
    X, signs = one_run_canaries(canaries, features, seed)
    bounds = "private" if private_bounds else Bounds(-np.ones(X.shape[1]), np.ones(X.shape[1]), source="declared")
    est = DPLogisticRegression(epsilon=epsilon, delta=delta, alpha=1e-3, classes="private", bounds=bounds,
                               random_state=ScaledNoise(noise_factor, None if seed is None else seed + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, signs)
    return _one_run_guesses(X, signs, est.coef_.ravel(), epsilon, delta, alpha, guess_share)
