"""Privacy audit: sensitivity replay, black-box lower bound on epsilon, mutation check.

Three checks of a registered mechanism on a pair of neighbouring datasets (replace-one):

- ``sensitivity_replay``: the mechanism runs on dataset A with every noise draw replaced
  by zero, recording each released quantity (``NoiseSource.release``, ``select``,
  ``check``); then on dataset B with the history forced to A's (each release returns what
  it returned on A). For each release the change ``|value_B - value_A|`` is divided by
  its declared sensitivity: a ratio above 1 is a broken sensitivity bound.
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
power: one step, a full batch, a strong ridge.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta as _beta

from .data import Bounds, prepare
from .mechanisms import fit_mechanism, get, make_plan
from .noise import NoiseSource

__all__ = [
    "AuditResult",
    "ReplayNoise",
    "ScaledNoise",
    "audit_options",
    "black_box_audit",
    "clopper_pearson",
    "mutation_check",
    "neighbouring_pairs",
    "sensitivity_replay",
]


def _distance(a, b, norm):
    d = np.atleast_1d(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
    return float({"l1": np.sum(np.abs(d)), "l2": np.linalg.norm(d), "linf": np.max(np.abs(d), initial=0.0)}[norm])


class ReplayNoise(NoiseSource):
    """A noise source with zero noise that records every release (``recorded=None``) or
    replays a recording: it forces each release to its recorded output and stores the
    ratio of the change to the declared sensitivity in ``ratios``.

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

    def _next(self, name):
        k = len(self.log)
        if k >= len(self.recorded):
            raise RuntimeError(f"replay: dataset B made more releases than A ({name!r} at {k})")
        return self.recorded[k]

    def _bounded(self, name, value, output, ratio_of):
        if self.recorded is None:
            self.log.append((name, value, output))
            return output
        rec_name, rec_value, rec_output = self._next(name)
        self.log.append((name, value, rec_output))
        self.ratios.append((name, ratio_of(rec_value)))
        return rec_output

    def release(self, value, kind, scale, *, sensitivity, name, norm="l2"):
        return self._bounded(name, np.copy(value), np.copy(value),
                             lambda rec: _distance(value, rec, norm) / float(sensitivity))

    def check(self, value, *, sensitivity, name, norm="l2"):
        """A checked intermediate is replayed like a release (its output is the value itself)."""
        return self.release(value, None, 0.0, sensitivity=sensitivity, name=name, norm=norm)

    def select(self, scores, kind, scale, *, sensitivity, name):
        scores = np.asarray(scores, dtype=float)
        sens = np.broadcast_to(np.asarray(sensitivity, dtype=float), scores.shape)
        return self._bounded(name, scores.copy(), int(np.argmax(scores)),
                             lambda rec: float(np.max(np.abs(scores - rec) / sens)))

    def describe(self):
        return "audit replay: zero noise"


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
        its full sensitivity).
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
    }
    return bounds, pairs


def audit_options(mechanism):
    """Options under which a black-box audit of ``mechanism`` is sharpest.

    One iteration (a single release, or one selection and one update), a full batch for
    DP-SGD (no amplification by subsampling: the pair then differs in every batch), and
    a strong ridge ``mu = 20`` for output perturbation and dual Frank-Wolfe (the ridge
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
        for name, ratio in replay.ratios:
            out[name] = max(out.get(name, 0.0), ratio)
    return out


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
