"""Private hyperparameter selection: ``DPSearchCV``.

The search follows Papernot & Steinke, "Hyperparameter tuning with Renyi differential
privacy", ICLR 2022 (Theorem 2, truncated negative binomial with shape 1: the geometric
distribution). One *base run* picks a candidate of the grid uniformly at random, trains it
privately on a training part of the data and scores it privately on a disjoint validation
part. The search repeats the base run ``K ~ Geometric(1 / mean_repetitions)`` times (``K``
drawn independently of the data) and releases the candidate with the best noisy score.

Accounting (docs/privacy.md, "Private hyperparameter search"):

- every candidate's mechanism is calibrated to the same zCDP target ``rho``
  (``accounting.calibrate(..., rho=)``); a base run picks its candidate independently of the
  data, so it is ``rho``-zCDP (Renyi divergence is jointly quasi-convex);
- the score is a Gaussian mechanism of the same ``rho`` on the validation part. The two parts
  are disjoint and the split is drawn independently of the data, so a replace-one neighbour
  changes one part only: the base run is ``rho``-zCDP, not ``2 rho`` (parallel composition);
- the intercept-only model (the constant predictor) is always a candidate: one more
  ``rho``-zCDP run (a noisy label mean on the training part, a noisy score on the validation
  part), composed with the search;
- the whole search is the dp-accounting event
  ``Composed(RepeatAndSelect(ZCDp(rho), mean, shape=1), ZCDp(rho))``, whose epsilon at
  delta is given by dp-accounting's RDP accountant; ``rho`` is the largest meeting the target.

Only the selected model and its noisy score are released; the other scores and the number of
base runs ``K`` are not (the theorem covers the selection with ``K`` hidden).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import warnings
from types import SimpleNamespace

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from . import distributed
from .accounting import (
    DATA_BOUNDS,
    ZCDP_PAPER,
    PrivacyReport,
    charge,
    check_budget,
    check_privacy_params,
    epsilon_of_zcdp,
    largest_zcdp,
    zcdp_budget,
    zcdp_epsilon,
)
from .estimators import _DPLinearModel, note_classes_from_data, note_sklearn_context, warn_weak_guarantee
from .mechanisms import auto, constant, get, make_plan
from .mechanisms.base import ZCDP_SOURCE
from .noise import make_noise
from .private_bounds import PendingDesign

__all__ = ["DPSearchCV", "rule_grid", "search_epsilon", "search_event", "search_zcdp"]

SHAPE = 1.0  # geometric number of repetitions (Papernot & Steinke 2022, Theorem 2 with eta = 1)
SOURCE = ("Papernot & Steinke, 'Hyperparameter tuning with Renyi differential privacy', ICLR 2022, Theorem 2 "
          f"(random number of repetitions, geometric); zCDP: {ZCDP_PAPER}; accounting: dp-accounting's RDP "
          "accountant for RepeatAndSelectDpEvent")
SOURCE_EACH = (f"each setting and the constant predictor run once, their zCDP composed ({ZCDP_SOURCE}); accounting: "
               "dp-accounting's RDP accountant")
"""The source of the search's accounting with a random number of runs (``SOURCE``) or each setting once."""
_SEARCH_KEYS = {"epsilon", "delta", "budget", "random_state", "noise", "calibration", "bounds"}


# Regression's validation score caps each squared residual (labels in [-1, 1]) here: sensitivity
# SCORE_CAP / m, four times less noise than a cap at 1, for the same ranking of the models worth having
# (a residual beyond half the label half-range counts as that). Measured with the score's own noise
# redrawn over 10 splits: planted Lasso -0.081 -> -0.038 / -0.019 -> 0.009 / 0.110 -> 0.187 at epsilon
# 1 / 2 / 5, cadata 0.524 -> 0.509 / 0.542 -> 0.542 / 0.546 -> 0.545.
SCORE_CAP = 0.25


def rule_grid(estimator, n, p, epsilon, delta=None, validation_fraction=0.25):
    """The two settings ``dpsparse fit --tune`` searches, around the public rule's choice.

    The rule of ``mechanism="auto"`` (``mechanisms.auto.choose``) read where each candidate trains: on the training
    part (``n`` less the validation part) at the epsilon of its share of the zCDP budget (a third: the search
    with ``repetitions="each"`` runs the two settings and the constant predictor); and the rule's choice at the whole
    ``n`` and ``epsilon`` (what the single fit runs where the rule reads no fill of the records' box: the search buys
    none, so below ``auto.FILL_BAND`` its least-squares candidates take the counts without it), or, where the two agree,
    the same mechanism with half its steps (``n_iter``) or half its selected features (``sparsity``). Where the rule,
    read at a candidate's share, releases the constant predictor there is nothing to search: read at the whole ``n`` and
    ``epsilon`` only, the search's candidates fell below the floor the single fit clears (n = 1000, p = 1000, epsilon 1:
    a model below the constant predictor); read at the share only, they selected 5 features of a planted 10 at epsilon 5
    (held-out R^2 0.42, 0.52 with the whole budget's 10 among the candidates; ``benchmarks/utility.py``, 10 splits).

    Parameters
    ----------
    estimator : a dpsparse estimator
    n, p : int
        Records and features of the data the search fits (the intercept excluded).
    epsilon : float
    delta : float or None
        None: ``1 / n**2``, as ``DPSearchCV``.
    validation_fraction : float in (0, 1)
        As ``DPSearchCV``'s.

    Returns
    -------
    list of dict or None
        The grid (one dict a setting); None when the rule releases the constant predictor at the candidates'
        share, or chooses a mechanism without zCDP calibration (nothing to search).
    """
    delta = 1.0 / n**2 if delta is None else delta
    n_train = n - int(math.ceil(validation_fraction * n))
    epsilon_each = zcdp_epsilon(search_zcdp(epsilon, delta, 2, each=True), delta)
    loss, penalty = estimator._loss(), estimator._penalty(p, auto.ALPHA)  # the rule reads its kind, not its strength
    name, options, _ = auto.choose(loss, penalty, n_train, p, epsilon_each, estimator.fit_intercept)
    if name == "constant" or not get(name).zcdp_calibration:
        return None
    whole = auto.choose(loss, penalty, n, p, epsilon, estimator.fit_intercept)[:2]
    key = "sparsity" if "sparsity" in options else "n_iter" if "n_iter" in options else None
    settings = [(name, options)]
    if whole != (name, options) and get(whole[0]).zcdp_calibration:
        settings.append(whole)
    elif key:
        settings.append((name, {**options, key: max(1, options[key] // 2)}))
    auto_alpha = estimator.get_params()["alpha"] == "auto"  # the rule's strength, which a named mechanism lacks
    strength = {"alpha": [auto.penalty_strength(loss, penalty)]} if auto_alpha else {}
    return [{"mechanism": [m], "mechanism_options": [o], **strength} for m, o in settings]


def search_event(rho, repetitions, bounds_rho=0.0, each=False):
    """The dp-accounting event of a search: ``RepeatAndSelect(ZCDp(rho), repetitions, 1)`` (or, with ``each``,
    ``repetitions`` runs of ``ZCDp(rho)`` composed), the constant model, and the private bounds
    (``bounds_rho``-zCDP) when they were bought."""
    from dp_accounting import dp_event

    base = dp_event.ZCDpEvent(float(rho))
    runs = [base] * int(repetitions) if each else [dp_event.RepeatAndSelectDpEvent(base, float(repetitions), SHAPE)]
    events = runs + [base]
    if bounds_rho > 0:
        events.append(dp_event.ZCDpEvent(float(bounds_rho)))
    return dp_event.ComposedDpEvent(events)


@functools.lru_cache(maxsize=1024)
def search_epsilon(rho, repetitions, delta, bounds_rho=0.0, each=False):
    """Epsilon at ``delta`` of a search whose base runs are ``rho``-zCDP (dp-accounting, RDP; public numbers
    only, cached)."""
    from dp_accounting.rdp import rdp_privacy_accountant

    acc = rdp_privacy_accountant.RdpAccountant()
    acc.compose(search_event(rho, repetitions, bounds_rho, each))
    return float(acc.get_epsilon(delta))


@functools.lru_cache(maxsize=256)
def search_zcdp(epsilon, delta, repetitions, rtol=1e-4, bounds_rho=0.0, each=False):
    """Largest ``rho`` (to ``rtol``) whose search meets (epsilon, delta): public inputs only (cached)."""
    return largest_zcdp(lambda rho: search_epsilon(rho, repetitions, delta, bounds_rho, each), epsilon, rtol)


class _Candidate:
    """One point of the grid: an unfitted estimator, its mechanism, loss, penalty and options (public)."""

    def __init__(self, estimator, params, n, p, epsilon):
        self.params = params
        self.estimator = clone(estimator).set_params(**params)
        rule, by_rule = {}, self.estimator.mechanism == "auto"
        if by_rule:  # the public rule's mechanism and options at this shape
            name, rule, _ = auto.choose(self.estimator._loss(), self.estimator._penalty(p, auto.ALPHA), n, p, epsilon,
                                        self.estimator.fit_intercept)
            self.estimator.set_params(mechanism=name)
        self.mechanism = get(self.estimator.mechanism)
        self.options = self.estimator._mechanism_options(self.mechanism, rule)
        self.loss = self.estimator._loss()
        self.estimator.alpha_ = self.estimator._strength(by_rule, p)
        self.penalty = self.estimator._penalty(p)
        self.mechanism.check_compatible(self.loss, self.penalty, self.options)
        self.plan = None

    def make_plan(self, design, rho, delta):
        """The public plan at zCDP ``rho`` (ValueError for a mechanism without zCDP calibration)."""
        self.plan = make_plan(self.mechanism, design, self.loss, self.penalty, epsilon_of_zcdp(rho, delta), delta,
                              "tight", self.options, zcdp=rho)

    def fit(self, design, noise):
        return np.asarray(self.mechanism.run(design, self.plan, noise, None), dtype=float)


def _warn_ignored_privacy_params(base, epsilon):
    """A ``UserWarning`` naming the estimator's ``epsilon``, ``delta`` or ``budget`` set away from its default: the
    search spends its own and ignores them (a user who set ``epsilon=5`` there would otherwise not know)."""
    defaults = inspect.signature(type(base).__init__).parameters
    params = base.get_params(deep=False)
    ignored = [f"{k}={params[k]!r}" for k in ("epsilon", "delta", "budget") if params[k] != defaults[k].default]
    if ignored:
        warnings.warn(f"DPSearchCV ignores the estimator's {', '.join(ignored)}: the search spends its own "
                      f"(DPSearchCV(epsilon={epsilon!r}, delta=..., budget=...)) across all its candidates",
                      UserWarning, stacklevel=3)


class DPSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Private hyperparameter search over a grid, with the constant predictor as a candidate.

    Parameters
    ----------
    estimator : DPLogisticRegression, DPLinearSVC, DPLasso, DPElasticNet or DPLinearRegression
        Its ``bounds``, ``fit_intercept``, ``classes`` and other parameters are shared by
        every candidate; its ``epsilon``, ``delta`` and ``budget`` are ignored (the search
        has its own; a ``UserWarning`` names any set away from its default). A classifier has two
        declared classes (the search scores one label set; with more, fit a one-vs-rest model with
        fixed hyperparameters).
    param_grid : dict or list of dicts
        Values of the estimator's parameters (``mechanism``, ``max_iter``, ``alpha``,
        ``penalty``, ``mechanism_options`` with clipping norms or step sizes, ...), as in
        ``sklearn.model_selection.GridSearchCV``. Mechanisms: those whose accounting is a zCDP ledger (adassp,
        constant, dp-cd, dp-gcd, dp-gd, dp-iht, dual-fw, fw, output, two-stage).
    epsilon : float > 0
        Privacy budget of the whole search.
    delta : float in (0, 1) or None
        None: ``1 / n**2``.
    repetitions : {"geometric", "each"}
        ``"geometric"``: a random number of base runs, each on a random grid point
        (Papernot & Steinke 2022; suits a large grid). ``"each"``: every grid point once,
        composed in zCDP (suits a few candidates: no repetition overhead).
    mean_repetitions : float >= 1 or None
        Mean of the geometric number of base runs. None: twice the number of candidates.
        Only with ``repetitions="geometric"``.
    validation_fraction : float in (0, 1)
        Share of the records that score the candidates (they are not used for training).
    random_state : int or None
        Seeds the split, the candidate draws and the noise (experiments only).
    noise : {"auto", "fast", "secure"}
        ``"auto"``: OpenDP's exact samplers (``"secure"``, Mironov 2012) unless ``random_state``
        fixes a seed (then numpy's, for experiments); docs/noise.md.
    budget : PrivacyBudget or None
        Charged (epsilon, delta) once every check on the inputs has passed.

    Attributes
    ----------
    best_estimator_ : estimator
        The selected model, fitted on the training part, with ``privacy_report_`` of the
        whole search.
    best_params_ : dict or None
        The selected grid point; None when the constant predictor won.
    best_score_ : float
        Its noisy validation score (accuracy, or minus the mean squared error in the
        bounded label units, each squared residual capped at ``SCORE_CAP`` = 0.25). A
        release with Gaussian noise, so it can fall outside the score's range (an
        accuracy above 1, a score above 0); it ranks the candidates, and is no estimate
        of the selected model's score (the maximum of noisy scores is biased upwards).
    privacy_report_ : PrivacyReport
    classes_ : ndarray (classifiers)

    Raises
    ------
    ValueError
        An empty grid, a grid that sets a search parameter (epsilon, delta, budget,
        random_state, noise, calibration, bounds), a mechanism without zCDP calibration, an
        invalid epsilon, delta, mean_repetitions or validation_fraction (all before the
        data is read or the budget charged).

    Warns
    -----
    WeakGuaranteeWarning
        An epsilon above 10 or a delta above ``1 / n``, as the estimators do.
    """

    def __init__(self, estimator, param_grid, *, epsilon=1.0, delta=None, repetitions="geometric",
                 mean_repetitions=None, validation_fraction=0.25, random_state=None, noise="auto", budget=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.repetitions = repetitions
        self.mean_repetitions = mean_repetitions
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.noise = noise
        self.budget = budget

    def _grid(self):
        grid = list(ParameterGrid(self.param_grid)) if self.param_grid else []
        if not grid:
            raise ValueError("param_grid is empty: give the values of at least one parameter")
        if self.estimator.get_params().get("budget") is not None:
            raise ValueError("the estimator has a budget, which a search would not charge: give it to the search "
                             "(DPSearchCV(..., budget=...)), which charges it once for every candidate")
        fixed = sorted(_SEARCH_KEYS & {k for g in grid for k in g})
        if fixed:
            raise ValueError(f"param_grid may not set {fixed}: they are parameters of the search")
        return grid

    def _check_params(self, n_candidates):
        check_budget(self.budget)
        frac = self.validation_fraction
        if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac < 1:
            raise ValueError(f"validation_fraction must be in (0, 1), got {frac!r}")
        if self.repetitions not in ("geometric", "each"):
            raise ValueError(f"repetitions must be 'geometric' or 'each', got {self.repetitions!r}")
        if self.repetitions == "each":
            if self.mean_repetitions is not None:
                raise ValueError("mean_repetitions applies to repetitions='geometric' only")
            return float(n_candidates)
        mean = 2.0 * n_candidates if self.mean_repetitions is None else self.mean_repetitions
        if isinstance(mean, bool) or not isinstance(mean, (int, float)) or not (math.isfinite(mean) and mean >= 1):
            raise ValueError(f"mean_repetitions must be a finite number >= 1, got {mean!r}")
        return float(mean)

    def fit(self, X, y):
        """Search privately and keep the best candidate.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        grid = self._grid()
        mean = self._check_params(len(grid))
        base = clone(self.estimator)
        if not isinstance(base, _DPLinearModel):
            raise ValueError(f"DPSearchCV searches a dpsparse estimator (DPLogisticRegression, DPLinearSVC, DPLasso, "
                             f"DPElasticNet, DPLinearRegression), got {type(base).__name__}: a private transformer "
                             "(DPStandardScaler, DPMinMaxScaler) goes before the search, in a Pipeline whose last "
                             "step is the DPSearchCV")
        _warn_ignored_privacy_params(base, self.epsilon)
        if base._private_classes():
            raise ValueError("DPSearchCV needs the classes declared (classes=[...], the bounds' classes, "
                             "--classes): its candidates share one label set")
        if distributed.is_dask(X):
            raise ValueError("DPSearchCV needs the data in memory; on a dask array fit an estimator with "
                             "mechanism='dp-gd' and fixed hyperparameters (docs/scale.md)")
        X, y = base._validate_xy(X, y)
        n, p = X.shape
        m = int(math.ceil(self.validation_fraction * n))
        if m < 1 or n - m < 2:
            raise ValueError(f"n_samples = {n} is too small for validation_fraction = {self.validation_fraction}")
        delta = 1.0 / n**2 if self.delta is None else self.delta
        check_privacy_params(self.epsilon, delta)
        weak = warn_weak_guarantee(self.epsilon, delta, n)
        candidates = [_Candidate(base, params, n - m, p, self.epsilon) for params in grid]
        design = base._design(X, y, (self.epsilon, delta, True, None))
        if base._multiclass:
            raise ValueError(f"DPSearchCV: {base._fit_classes.size} classes; the search supports two (fit a "
                             "one-vs-rest model with fixed hyperparameters)")
        pending = design if isinstance(design, PendingDesign) else None
        bounds_rho = 0.0
        if pending is not None:
            bounds_rho = pending.plan_zcdp(pending.share * zcdp_budget(self.epsilon, delta)).ledger.zcdp()
        each = self.repetitions == "each"
        rho = search_zcdp(self.epsilon, delta, mean, bounds_rho=bounds_rho, each=each)
        noise = make_noise(self.random_state, self.noise, parameter="noise")
        # the training part's public shape: what the candidates' plans read
        shape = SimpleNamespace(n=n - m, p=design.p, feature_bounds=design.feature_bounds, row_norm=design.row_norm)
        for c in candidates:
            c.make_plan(shape, rho, delta)
        charge(self.budget, self.epsilon, delta, f"DPSearchCV ({len(grid)} candidates)")
        if pending is not None:
            design = pending.release(noise)
        order = noise.rng.permutation(n)  # the split: independent of the data
        train = dataclasses.replace(design, X=design.X[order[m:]], y=design.y[order[m:]])
        valid = dataclasses.replace(design, X=design.X[order[:m]], y=design.y[order[:m]])
        score = _Score(valid, base._classification, rho, noise)
        w = _constant_model(train, base._classification, rho, noise)
        best = (score(w), None, w)
        # K is drawn independently of the data and kept secret: Papernot & Steinke's Theorem 2 covers the
        # selected output with K hidden, not best-of-K for a released K
        runs = range(len(candidates)) if each else (
            int(noise.rng.integers(len(candidates))) for _ in range(int(noise.rng.geometric(1.0 / mean))))
        for i in runs:
            w = candidates[i].fit(train, noise)
            s = score(w)
            if s > best[0]:
                best = (s, i, w)
        self.best_score_, index, w = best
        self.best_params_ = None if index is None else grid[index]
        est = base if index is None else candidates[index].estimator
        if index is None:  # the constant predictor: no penalty was used; the strength a named mechanism would take
            est.alpha_ = est._strength(False, base.n_features_in_)
        if base._classification:
            est._fit_classes = self.classes_ = base._fit_classes
        est._set_fitted(design, w)
        est.n_features_in_ = base.n_features_in_
        if hasattr(base, "feature_names_in_"):  # a DataFrame's columns: predict checks them as a plain fit's does
            est.feature_names_in_ = self.feature_names_in_ = base.feature_names_in_
        self.privacy_report_ = est.privacy_report_ = self._report(design, rho, delta, mean, score, candidates, index,
                                                                  noise, pending)
        self.privacy_report_.support_size = int(est.support_.size)
        self.privacy_report_.warnings += weak
        if base._classes_from_data():
            note_classes_from_data(self.privacy_report_)
        note_sklearn_context(self.privacy_report_, self.budget)
        est.n_iter_ = None
        self.best_estimator_ = est
        return self

    def _report(self, design, rho, delta, mean, score, candidates, index, noise, pending):
        each = self.repetitions == "each"
        chosen = "the constant predictor (intercept only)" if index is None else (
            f"{candidates[index].mechanism.title}; " + ", ".join(
                f"{k}={v}" for k, v in candidates[index].params.items() if k != "mechanism"))
        details = {
            "what was searched": f"{len(candidates)} settings (of {', '.join(_searched(candidates))}) and the "
                                 "constant predictor",
            "zCDP budget of each candidate fit (rho)": rho,
            "base runs": f"each of the {len(candidates)} settings once (composed in zCDP)" if each else (
                f"a geometric number with mean {mean:g}, drawn independently of the data and not released (the "
                "guarantee holds with it hidden)"),
            "validation score": score.describe(),
            "validation records": score.m,
            "selected": chosen,
        }
        if index is not None:
            details.update({f"selected model, {k}": v for k, v in candidates[index].plan.details.items()})
        if index is not None and each:  # one run a setting: its released values (one run of many would tell how many)
            details.update({f"selected model, {k}": v for k, v in candidates[index].plan.released_details().items()})
        bounds_rho = 0.0
        if pending is not None:
            bounds_rho = pending.ledger.zcdp()
            details.update({**pending.details(), "bounds: budget": f"zCDP rho={bounds_rho:.4g}, composed with the "
                            "search (dp-accounting, RDP)"})
        report = PrivacyReport(
            mechanism="dp-search", method="private hyperparameter search (Papernot & Steinke 2022)",
            calibration="tight", epsilon=float(self.epsilon), delta=float(delta),
            accountant_epsilon=search_epsilon(rho, mean, delta, bounds_rho, each), accountant="rdp",
            iterations=None,
            noise={**details, "source": SOURCE_EACH if each else SOURCE}, bounds_source=design.bounds_source,
            bounds_public=design.bounds_public,
            clipped={"feature values": design.clipped_values, "labels": design.clipped_labels,
                     "row norms": design.clipped_rows},
            noise_source=noise.describe(), noise_seeded=noise.seeded,
        )
        if not design.bounds_public:
            report.warnings.append(DATA_BOUNDS)
        return report

    def predict(self, X):
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def decision_function(self, X):
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    @available_if(lambda self: hasattr(self.estimator, "predict_proba"))
    def predict_proba(self, X):
        """The selected model's ``predict_proba`` (classifiers with probabilities: DPLogisticRegression)."""
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    def score(self, X, y):
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)


class _Score:
    """Noisy validation score plus Gaussian noise of zCDP ``rho`` (``sigma = sensitivity /
    sqrt(2 rho)``, Bun & Steinke 2016, Prop. 1.6): accuracy (each term in [0, 1], replace-one
    sensitivity ``1/m``), or minus the mean of ``min((y - clip(z))^2, SCORE_CAP)`` on labels in
    [-1, 1], predictions clipped to the label range as ``predict`` does (each term in
    ``[0, SCORE_CAP]``, sensitivity ``SCORE_CAP / m``)."""

    def __init__(self, valid, classification, rho, noise):
        self.valid, self.classification, self.noise = valid, classification, noise
        self.m = valid.n
        self.cap = 1.0 if classification else SCORE_CAP
        self.sensitivity = self.cap / self.m
        self.sigma = self.sensitivity / math.sqrt(2.0 * rho)

    def __call__(self, w):
        z = np.asarray(self.valid.X @ w).ravel()
        if self.classification:
            value = float(np.mean(np.where(z >= 0, 1.0, -1.0) == self.valid.y))
        else:
            value = -float(np.mean(np.minimum((np.clip(z, -1.0, 1.0) - self.valid.y) ** 2, self.cap)))
        return float(self.noise.release(np.array([value]), "gaussian", self.sigma, sensitivity=self.sensitivity,
                                        name="validation score")[0])

    def describe(self):
        what = "accuracy" if self.classification else \
            f"minus the mean squared error (labels in [-1, 1], each term capped at {self.cap:g})"
        return f"{what} + N(0, {self.sigma:.3g}^2), sensitivity {self.sensitivity:.3g}"


def _searched(candidates):
    """The parameters the grid sets, by the estimators' names (what the report says was searched)."""
    return sorted({k for c in candidates for k in c.params}) or ["no parameter"]


def _constant_model(train, classification, rho, noise):
    """Intercept-only model from a noisy label mean (labels in [-1, 1], sensitivity ``2/n``, zCDP ``rho``).

    Classification: the intercept is the log-odds of the noisy share of positive labels.
    """
    w = np.zeros(train.p)
    if not train.fit_intercept:
        return w
    sens = 2.0 / train.n
    w[-1] = constant.intercept(constant.label_mean(train.y, sens / math.sqrt(2.0 * rho), sens, noise), classification)
    return w
