"""scikit-learn estimators: ``DPLogisticRegression``, ``DPLinearSVC``, ``DPLasso``, ``DPElasticNet``,
``DPLinearRegression``.

``fit`` maps the data onto public bounds (``data.prepare``: features onto [-1, 1],
regression labels onto [-1, 1], intercept as an unpenalized feature of ones), runs a
private mechanism there and maps the coefficients back, so ``coef_`` and ``intercept_``
are in the units of the original features and labels. ``alpha`` is the penalty strength
in the bounded coordinates. ``privacy_report_`` says what the fit guarantees.
"""
from __future__ import annotations

import dataclasses
import math
import sys
import time
import warnings
import weakref
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted

from . import distributed, losses, norms, private_labels
from .accounting import charge, check_privacy_params, weak_guarantee, zcdp_budget, zcdp_epsilon
from .affine import is_shifted
from .data import (
    CLASSES_FROM_DATA,
    HOLDER_ONLY,
    Bounds,
    bounds_from_data,
    check_feature_names,
    clipping_warnings,
    dense_if_dense,
    design_row_norm,
    distinct_labels,
    linear_decision,
    prepare,
    validated,
)
from .exceptions import (
    AbsentClassWarning,
    ClassesFromDataWarning,
    ConstantPredictorWarning,
    InputError,
    PrivacyLeakWarning,
    UnselectedLabelWarning,
    WeakGuaranteeWarning,
)
from .mechanisms import REGISTRY, auto, fit_mechanism, fit_one_vs_rest, get
from .mechanisms._common import per_log_feature, private_unit_mean
from .noise import BACKENDS as NOISE_BACKENDS
from .noise import make_noise
from .private_bounds import (
    JointLabelDesign,
    JointTighteningDesign,
    LabelScaleDesign,
    PendingDesign,
    affordable,
    declared_widths,
    joint_affordable,
    selection_epsilon,
    selections,
    tail_share,
)

__all__ = ["DPElasticNet", "DPLasso", "DPLinearRegression", "DPLinearSVC", "DPLogisticRegression"]

AUTO_CLIP = 0.5
"""``clip="auto"``: the residual clip in units of the narrowed label range (about one label standard deviation;
measured on synthetic families, docs/defaults.md)."""

BOUNDS_SHARE, AUTO_BOUNDS_SHARES = 0.1, (0.1, 0.2)
"""``bounds_share="auto"``: ``BOUNDS_SHARE`` of the budget for the private preprocessing, or the smallest of
``AUTO_BOUNDS_SHARES`` with which narrowing declared bounds is affordable (public). Where 0.2 and not 0.1 makes it
affordable, 0.2 lifted regressions whose features fill 30 % of their declared range from R^2 0.39 to 0.66, the
logistic families by 0.011, and cost regressions filling their range 0.003; 0.3 there cost one of them 0.6 at the
edge of affordability (``--study bounds-share`` and docs/defaults.md)."""

JOINT_SHARE, JOINT_MAX_FEATURES = 0.05, 50
"""``bounds_share="auto"`` of the joint tightening (``_joint``; its two choices need less than the quantiles of each
feature), and the most features it is bought for: on the synthetic families of ``--study joint-tightening`` it
gained 0.016 and 0.011 on 10 and 30 features and nothing on 100 and 300, where the spread of the few features
that carry the label matters more than the many others' (docs/defaults.md)."""

JOINT_SLOPE_BAND = 200
"""A classifier's joint cuts take the tie-break toward the tightest cut (``private_bounds.JOINT_SLOPE``) from
``n epsilon = JOINT_SLOPE_BAND log p``; a regression's everywhere. From 200 it gained +0.008 and +0.015 accuracy (from
200 to 500) and +0.003 and +0.010 (500 to 1000) on two sets of seeds of the synthetic families (``--study
classifier-cut-slope``, ``classifier-cut-slope-confirm``); below, -0.003 and +0.008 (docs/defaults.md)."""

MAX_CLASSES = 50
"""A classifier without declared ``classes`` refuses labels with more distinct values than this (a continuous
target, most likely)."""

FROM_DATA = "from-data"
"""``bounds="from-data"``: read the bounds off the private data (no guarantee; experiments only)."""


SEARCH_NOT_PRIVATE = ("fitted inside a scikit-learn tool that chooses by held-out scores computed without noise on "
                      "the same records (GridSearchCV, a tuned threshold, their kind): the model it picks has NO "
                      "differential-privacy guarantee, whatever each fit spent; DPSearchCV chooses privately "
                      "(docs/sklearn.md)")
CROSS_VALIDATION_SPENDS = ("fitted inside scikit-learn's model selection without a budget: each fit spends its "
                           "epsilon on the same records, k fits k epsilon; a PrivacyBudget shared by the fits keeps "
                           "the total (n_jobs=1 or joblib's threading back-end; docs/sklearn.md)")
LEARNED_ON_PREDICTIONS = ("fitted inside a scikit-learn tool that learns without noise from this model's predictions "
                          "on the same records (CalibratedClassifierCV's calibrators, a stacking ensemble's final "
                          "estimator): what it releases has NO differential-privacy guarantee, whatever this fit spent "
                          "(docs/sklearn.md)")
SEVERAL_FITS_SPEND = ("fitted as one of several models on the same records (OneVsRestClassifier, OneVsOneClassifier, "
                      "VotingClassifier, their kind): each fit spends its epsilon, and the combined model the sum of "
                      "them (basic composition), not the epsilon each report states; a PrivacyBudget shared by the "
                      "fits keeps the total, or dpsparse's own multiclass fit splits one epsilon (docs/sklearn.md)")
_ON_PREDICTIONS = ("sklearn.calibration", "sklearn.ensemble._stacking")
"""scikit-learn modules whose tools learn without noise from a fitted model's predictions on the training records."""
_SEVERAL_FITS = ("sklearn.multiclass", "sklearn.multioutput", "sklearn.ensemble._voting", "sklearn.ensemble._bagging",
                 "sklearn.feature_selection._rfe")
"""scikit-learn modules whose tools fit several models on the same records and release them together (recursive
feature elimination refits on fewer features each time)."""
_CHOOSES_ELSEWHERE = ("sklearn.feature_selection._sequential",)
"""scikit-learn modules outside model selection whose tools choose by held-out scores computed without noise (a
sequential feature selector; ``RFECV`` too, found by its class)."""
SHAPE_ONLY = ("PolynomialFeatures",)
"""scikit-learn transformers whose ``fit`` reads the number of features only."""
_NOT_CHOOSING = ("sklearn.model_selection._validation", "sklearn.model_selection._split")
"""Modules of scikit-learn's model selection that fit and score without choosing anything from the scores."""


def _sklearn_context():
    """``(kinds, learned, spent, level, parallel)`` of a fit called by scikit-learn, from the call stack: ``kinds``
    holds ``"search"`` inside a model-selection tool that chooses from scores, ``"validation"`` inside a
    cross-validation only, ``"predictions"`` inside a tool that learns from this model's predictions
    (``_ON_PREDICTIONS``), ``"several"`` inside one that fits several models on the same records
    (``_SEVERAL_FITS``); ``spent`` the ``(name, privacy_report_)`` of dpsparse's own fitted steps before this fit in
    an enclosing ``Pipeline`` (a ``DPStandardScaler``); ``learned`` the names of the steps before this fit, in every
    ``Pipeline`` that encloses it, that learn from the data without noise (``_learns_without_noise``); ``level``
    the stack level, seen from the caller, of the code that called scikit-learn (the user's line; 2 when
    scikit-learn is not on the stack); ``parallel`` the joblib ``Parallel`` running this fit in this thread (one per
    call of a tool: its folds and candidates), or None."""
    from joblib import Parallel
    from sklearn.pipeline import Pipeline

    frame, level, kinds, learned, user, seen, pipelines = sys._getframe(1), 1, set(), [], None, False, set()
    spent, pending = [], set()
    parallel = None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if parallel is None and module.startswith("joblib") and isinstance(frame.f_locals.get("self"), Parallel):
            parallel = frame.f_locals["self"]
        if module.startswith("sklearn"):
            seen, user = True, None
            selection = module.startswith("sklearn.model_selection")
            if selection and (module not in _NOT_CHOOSING or _scores_a_candidate(frame)):
                kinds.add("search")
            elif selection:
                kinds.add("validation")
            if module.startswith(_ON_PREDICTIONS):
                kinds.add("predictions")
            if module.startswith(_SEVERAL_FITS):
                _several_fits(frame.f_locals.get("self"), module, kinds, pending)
            if module.startswith(_CHOOSES_ELSEWHERE) or type(frame.f_locals.get("self")).__name__ == "RFECV":
                kinds.add("search")
            tool = frame.f_locals.get("self")
            if module == "sklearn.pipeline" and isinstance(tool, Pipeline) and id(tool) not in pipelines:
                # the step being fitted: the loop's index in ``_fit`` (its innermost frame), else the final estimator
                pipelines.add(id(tool))
                upto = frame.f_locals.get("step_idx", len(tool.steps) - 1)
                learned += [name for name, step in tool.steps[:upto] if _learns_without_noise(step)]
                spent += [x for name, step in tool.steps[:upto] for x in _spent_by(name, step)]
            if module == "sklearn.compose._target" and id(tool) not in pipelines:
                pipelines.add(id(tool))
                learned += _label_transformer_learned(tool)
        elif seen and user is None:
            user = level
        frame, level = frame.f_back, level + 1
    if "search" in kinds:
        kinds.discard("validation")
    if pending:
        kinds.add("several")
    return kinds, list(dict.fromkeys(learned)), spent, user or 2, parallel


def _label_transformer_learned(tool):
    """The name, in a list, of a ``TransformedTargetRegressor``'s label transformer that learns from the labels
    without noise (``StandardScaler``'s exact mean and deviation, ``MinMaxScaler``'s extremes: the fitted model
    carries them, and every label the fit sees depends on the others); an empty list for none (``func`` and
    ``inverse_func`` alone) or one that learns nothing (``_learns_without_noise``)."""
    transformer = getattr(tool, "transformer", None)
    if type(tool).__name__ != "TransformedTargetRegressor" or not _learns_without_noise(transformer):
        return []
    return [f"{type(transformer).__name__.lower()} (TransformedTargetRegressor's transformer of the labels)"]


def _several_fits(tool, module, kinds, pending):
    """One frame of a module that fits several models, seen from the inside out: a helper's (no tool object, such
    as one-vs-rest's ``_fit_binary``) leaves its module ``pending`` until a frame of the tool that called it says
    whether it fits one model (``_fits_one_model``); a tool fitting several adds ``"several"`` to ``kinds``. A
    module still pending at the outermost frame (a worker thread, whose stack holds the helper only) counts as
    several: each wrapper is judged by its own frame, so a binary one-vs-rest nested in another wrapper hides
    nothing."""
    from sklearn.base import BaseEstimator

    if not isinstance(tool, BaseEstimator):
        pending.add(module)
        return
    pending.discard(module)
    if not _fits_one_model(tool):
        kinds.add("several")


def _fits_one_model(tool):
    """Whether ``tool``, a multiclass wrapper fitting now, fits a single model: one-vs-rest on binary labels (its
    label binarizer gives one column) or one-vs-one on two classes (one pair), both set before any fit."""
    from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier

    if isinstance(tool, OneVsRestClassifier):
        return getattr(getattr(tool, "label_binarizer_", None), "y_type_", None) == "binary"
    return isinstance(tool, OneVsOneClassifier) and len(getattr(tool, "classes_", ())) == 2


_WARNED = weakref.WeakKeyDictionary()
"""joblib ``Parallel`` -> the messages already warned by fits it ran: one warning per call of a scikit-learn tool,
not one per fold (scikit-learn resets Python's once-per-line registry around each task)."""


def _warn_per_call(message, parallel, level):
    """``PrivacyLeakWarning(message)`` at ``level``, unless a fit of the same tool call (``parallel``) warned it."""
    if parallel is not None:
        seen = _WARNED.setdefault(parallel, set())
        if message in seen:
            return
        seen.add(message)
    warnings.warn(message, PrivacyLeakWarning, stacklevel=level + 1)


def _scores_a_candidate(frame):
    """Whether ``frame`` is scikit-learn's ``_fit_and_score`` given a candidate's ``parameters``: a search's fit (or
    ``validation_curve``'s, whose scores are compared as a search's are), also where the search itself is not on the
    stack (a joblib worker of ``n_jobs > 1``); ``cross_validate`` passes none."""
    return frame.f_code.co_name == "_fit_and_score" and frame.f_locals.get("parameters") is not None


def _learns_without_noise(step):
    """Whether a pipeline step learns from the data without noise: a step that needs a fit (scikit-learn's
    ``requires_fit`` tag), but not dpsparse's own, ``SHAPE_ONLY``, a frozen step (fitted beforehand) or a
    composite (``Pipeline``, ``ColumnTransformer``) whose parts do not."""
    from sklearn.utils import get_tags

    if step is None or isinstance(step, str):  # "passthrough", "drop"
        return False
    name = type(step).__name__
    if type(step).__module__.startswith("dpsparse") or name in SHAPE_ONLY or name == "FrozenEstimator":
        return False
    if _public_constants(step):
        return False
    parts = _parts(step, fitted=False)
    if parts is not None:
        return any(_learns_without_noise(part[1]) for part in parts)
    return bool(get_tags(step).requires_fit)


def _parts(step, fitted):
    """The ``(name, step, ...)`` parts of a ``Pipeline`` or ``ColumnTransformer`` (its ``remainder`` among them, or
    its fitted ``transformers_`` when ``fitted``); None for any other step."""
    kind = type(step).__name__
    if kind == "Pipeline":
        return getattr(step, "steps", None)
    if kind == "ColumnTransformer":
        return getattr(step, "transformers_", None) if fitted else [*step.transformers, ("remainder", step.remainder)]
    return None


def _spent_by(name, step):
    """``(name, privacy_report_)`` of dpsparse's own fitted steps in a fitted pipeline step, through nested
    ``Pipeline`` and ``ColumnTransformer`` (its fitted ``transformers_``)."""
    if type(step).__module__.startswith("dpsparse") and hasattr(step, "privacy_report_"):
        return [(name, step.privacy_report_)]
    return [x for part in _parts(step, fitted=True) or () for x in _spent_by(part[0], part[1])]


def _public_constants(step):
    """Whether a scikit-learn step's ``fit`` learns nothing but what its parameters declare: ``SimpleImputer`` with
    ``strategy="constant"`` and no missing indicator (which learns the columns that have missing values): every
    missing value becomes the declared ``fill_value``; ``OneHotEncoder`` and ``OrdinalEncoder`` given their
    ``categories`` and told what to do with another value (``handle_unknown``: otherwise one record's unknown
    category decides between a fit and a refusal), without ``min_frequency`` or ``max_categories`` and with no
    ``drop`` but ``"if_binary"`` (the others read the data)."""
    name = type(step).__name__
    if name == "SimpleImputer":
        return step.strategy == "constant" and not step.add_indicator
    if name in ("OneHotEncoder", "OrdinalEncoder"):
        drop = getattr(step, "drop", None)
        unseen = ("ignore", "infrequent_if_exist") if name == "OneHotEncoder" else ("use_encoded_value",)
        return (not isinstance(step.categories, str) and (drop is None or (isinstance(drop, str) and drop ==
                "if_binary")) and step.handle_unknown in unseen and getattr(step, "min_frequency", None) is None
                and getattr(step, "max_categories", None) is None)
    return False


def note_sklearn_context(report, budget):
    """The report and a ``PrivacyLeakWarning`` of a fit inside scikit-learn's tools: after pipeline steps that
    learned without noise (``inputs_private``) or in a tool that chooses by scores (``chosen_without_noise``) no
    guarantee holds; a cross-validation without a shared budget spends each fit's epsilon."""
    kinds, learned, spent, level, parallel = _sklearn_context()
    if spent:
        report.noise = {**report.noise, "pipeline total": _pipeline_total(spent, report)}
    if learned:
        note = (f"the step(s) {', '.join(learned)} before this fit learned from the same records without noise: the "
                "fitted pipeline or model carries those statistics and every record's features or label depend on "
                "the others, so NO differential-privacy guarantee holds; dpsparse.preprocessing has private scalers "
                "(docs/sklearn.md)")
        report.inputs_private = False
        report.warnings.append(note)
        _warn_per_call(note, parallel, level)
    for kind, note in (("search", SEARCH_NOT_PRIVATE), ("predictions", LEARNED_ON_PREDICTIONS)):
        if kind in kinds:
            report.chosen_without_noise = True
            report.warnings.append(note)
            _warn_per_call(note, parallel, level)
    if "several" in kinds and budget is None:
        report.warnings.append(SEVERAL_FITS_SPEND)
        _warn_per_call(SEVERAL_FITS_SPEND, parallel, level)
    if "validation" in kinds and budget is None:
        _warn_per_call(CROSS_VALIDATION_SPENDS, parallel, level)


def _pipeline_total(spent, report):
    """The report's line on what a pipeline spends in all: this fit's (epsilon, delta) and those of dpsparse's own
    steps before it on the same records (``spent``: name and report), added (basic composition)."""
    steps = ", ".join(f"{name} ({r.epsilon:g}, {r.delta:.3g})" for name, r in spent)
    epsilon = report.epsilon + sum(r.epsilon for _, r in spent)
    delta = report.delta + sum(r.delta for _, r in spent)
    return (f"in a pipeline after {steps} on the same records: the pipeline as a whole is ({epsilon:g}, "
            f"{delta:.3g})-differentially private (the sum: basic composition), this fit's share as stated")


def warn_weak_guarantee(epsilon, delta, n):
    """Warn (``WeakGuaranteeWarning``, at the line that called the caller's ``fit``) of an epsilon or a delta that
    protects little (``accounting.weak_guarantee``); return the warnings, for the report."""
    weak = weak_guarantee(epsilon, delta, n)
    for w in weak:
        warnings.warn(w, WeakGuaranteeWarning, stacklevel=3)
    return weak


def note_classes_from_data(report):
    """The report and the warning of a fit whose label set was read off the data: no guarantee (the label values are
    released with the model). Warns at the line that called the caller's ``fit``."""
    warnings.warn(CLASSES_FROM_DATA, ClassesFromDataWarning, stacklevel=3)
    report.warnings.append(CLASSES_FROM_DATA)
    report.classes_public = False


def _one_hot_words(groups, design, p, name):
    """The report's line on declared one-hot groups: kept by the fit's mechanism (their norm bound), or not."""
    bounds = getattr(design, "bounds", None)
    if bounds is not None and bounds.one_hot is not None:
        return (f"{len(groups)} declared and kept: their columns' zeros stay, and a record's norm is at most "
                f"{bounds.record_norm(p):.4g}, one per group and per other feature (docs/bounds.md)")
    return (f"{len(groups)} declared, not kept by {name}: their columns are mapped onto [-1, 1] as any feature "
            "(DP-GD and DP-SGD keep them; docs/bounds.md)")


def _spend(budget, share):
    """``share`` of a fit's ``budget`` ``(epsilon, delta, zcdp, rho)``: ``{"rho": ...}`` of its zCDP budget (what a
    private label set left, else the whole) for a mechanism composed in zCDP, else ``{"epsilon": ...}``."""
    epsilon, delta, zcdp, rho = budget
    if not zcdp:
        return {"epsilon": epsilon * share}
    return {"rho": (zcdp_budget(epsilon, delta) if rho is None else rho) * share}


def _buys_every_range(bounds):
    """Whether ``bounds`` asks for every range to be bought privately (``bounds="private"``)."""
    return isinstance(bounds, str) and bounds == "private"


def _fill_sum(X, y, bounds, fit_intercept, order, block=2**22):
    """``sum_{i < m} min(||x_a - x_b|| / (sqrt(2) R), 1)`` over the pairs ``(a, b) = (order[i], order[m + i])``,
    ``m = n // 2``, ``order`` a permutation of the records drawn independently of them (so the pairs do not follow the
    file's order, which may follow the records: a sorted file), the records mapped onto ``bounds`` as the fit maps
    them (``data.prepare``, a block of pairs at a time: no copy of the whole design; a dask array gathered by
    ``order`` and reduced once), ``R`` the design's row-norm bound. A pair's distance measures the records' spread,
    wherever they sit in the box (``sqrt(2) R`` times the root mean square of the features' standard deviations in
    the mapped design's units, for many features); a replaced record moves one term, each in [0, 1]."""
    m = X.shape[0] // 2
    first, second = np.asarray(order[:m]), np.asarray(order[m:2 * m])
    if distributed.is_dask(X):
        design = prepare(X, y, bounds, False, fit_intercept)
        d = (design.X[first] - design.X[second]) ** 2
        return float(np.minimum(np.sqrt(d.sum(axis=1)) / (math.sqrt(2.0) * design.row_norm), 1.0).sum().compute())
    rows = max(1, block // max(X.shape[1], 1))
    total = 0.0
    for i in range(0, m, rows):
        a, b = first[i:i + rows], second[i:i + rows]
        A = prepare(X[a], y[a], bounds, False, fit_intercept)
        B = prepare(X[b], y[b], bounds, False, fit_intercept)
        total += float(np.minimum(_row_distances(A.X, B.X) / (math.sqrt(2.0) * A.row_norm), 1.0).sum())
    return total


def _row_distances(A, B):
    """``||a_i - b_i||`` for the rows of two mapped designs of one shape (dense arrays, or ``ShiftedSparse`` with one
    column shift: ``S_a - S_b + (f_a - f_b) c``, never densified)."""
    if is_shifted(A):
        D = (A.S - B.S).tocsr()
        g = A.f - B.f
        squared = np.asarray(D.multiply(D).sum(axis=1)).ravel() + g**2 * float(A.c @ A.c) + 2.0 * g * (D @ A.c)
        return np.sqrt(np.maximum(squared, 0.0))
    D = np.asarray(A) - np.asarray(B)
    return np.sqrt(np.einsum("ij,ij->i", D, D))


def _is_auto(value):
    """Whether a parameter is the string ``"auto"`` (its rule's choice)."""
    return isinstance(value, str) and value == "auto"


def _resolve_bounds(bounds, X, y, regression):
    if isinstance(bounds, str) and bounds == "private":
        return bounds
    if isinstance(bounds, str) and bounds == FROM_DATA:
        return bounds_from_data(X, y, regression)
    if bounds is None:
        raise ValueError("bounds=None: declare public bounds (a Bounds, a dict or a JSON file), buy them privately "
                         "(bounds='private', the default), or read them off the data for an experiment without "
                         "guarantee (bounds='from-data')")
    declared = _declared_bounds(bounds)
    if declared is None:
        raise ValueError("bounds must be a Bounds, a dict, a JSON file path, a tuple (feature_low, feature_high) "
                         "or (feature_low, feature_high, label_low, label_high), 'private' or 'from-data', got "
                         + (f"a tuple of {len(bounds)}" if isinstance(bounds, tuple) else type(bounds).__name__))
    return declared


def _undeclared_classes(y):
    """The distinct labels of a classifier whose label set is read off the data (``classes="from-data"``, an
    experiment without guarantee); more than ``MAX_CLASSES`` are refused (a continuous target)."""
    classes = np.unique(y)
    if classes.size > MAX_CLASSES:
        raise ValueError(f"y has more than {MAX_CLASSES} distinct values (the count is not shown: it is read off the "
                         f"private labels), more than a classifier takes without a declared label set: for a "
                         "continuous target use DPLasso or "
                         "DPLinearRegression; for that many classes declare them (classes=)")
    return classes


def _binary_labels(y, positive):
    """Two-class labels as +1 (``positive``) and -1, one byte each: a vector of n floats fewer at the peak of a
    fit's memory (the losses and the compiled loops compute in floats)."""
    return np.where(y == positive, np.int8(1), np.int8(-1))


def _declared_bounds(bounds):
    """The public bounds declared by a Bounds, a dict, a JSON file path or a tuple of 2 or 4 (``Bounds``'s first
    arguments); None for anything else."""
    if isinstance(bounds, Bounds):
        return bounds
    if isinstance(bounds, tuple) and len(bounds) in (2, 4):
        return Bounds(*bounds)
    if isinstance(bounds, dict):
        return Bounds.from_dict(bounds)
    if isinstance(bounds, str) and bounds not in ("private", FROM_DATA):
        return Bounds.from_json(bounds)
    return None


def _check_chosen_calibration(mechanism, reason, calibration):
    """InputError where the rule (``reason`` not None) chose a mechanism without the ``calibration`` named: the
    message says the rule chose it, and which mechanisms have that calibration (before anything is charged)."""
    if reason is None or calibration is None or calibration in mechanism.calibrations:
        return
    having = sorted(name for name, m in REGISTRY.items() if calibration in m.calibrations)
    if not having:
        raise ValueError(f"unknown calibration {calibration!r}; allowed: "
                         f"{sorted({c for m in REGISTRY.values() for c in m.calibrations})} or None")
    chose = f"chose {mechanism.name} here, whose calibrations are {list(mechanism.calibrations)}"
    raise InputError(f"calibration={calibration!r}: mechanism='auto' {chose}; name a mechanism with {calibration!r} "
                     f"(mechanism=: {', '.join(having)}), or leave the calibration to the mechanism (None)",
                     cli=f"--calibration {calibration}: the default rule {chose}; name a mechanism with "
                         f"{calibration!r} (--mechanism: {', '.join(having)}), or drop --calibration")


def _warn_constant(mechanism, reason):
    """The ``ConstantPredictorWarning`` of a rule (``reason`` not None) that chose the constant predictor."""
    if reason is not None and mechanism.name == "constant":
        advice = "" if "would let it learn" in reason else (
            "; more records, a larger epsilon or fewer features would let it learn from the features")
        warnings.warn(f"mechanism='auto' releases the constant predictor: {reason}{advice}", ConstantPredictorWarning,
                      stacklevel=3)


class _Progress:
    """Prints the iteration count and the support (nonzero coefficients of the ``n_features`` features, the
    intercept excluded) to stderr at most once a second; with ``classes`` set (one-vs-rest), which class's fit
    (a fit starts again at its first iteration)."""

    def __init__(self, total, n_features):
        self.total, self.n_features, self.last, self.printed = total, n_features, time.monotonic(), False
        self.classes, self.fit = None, 0

    def __call__(self, t, w):
        now = time.monotonic()
        self.fit += t == 0
        if now - self.last >= 1.0 or (self.printed and t + 1 == self.total):
            self.last, self.printed = now, True
            of = "" if self.total is None else f"/{self.total}"
            which = "" if self.classes is None else f"class {self.fit}/{self.classes}, "
            support = int(np.count_nonzero(np.asarray(w)[..., :self.n_features]))
            print(f"  {which}iteration {t + 1}{of}, support {support}", file=sys.stderr, flush=True)


class _DPLinearModel(BaseEstimator):
    """Shared fit of the private linear models (parameters: see the subclasses)."""

    _classification = False
    _multiclass = False

    def _loss(self):
        raise NotImplementedError

    def _penalty(self, n_features, alpha=None):
        """The penalty on ``n_features`` features, the intercept (last) unpenalized, of strength ``alpha`` (None:
        the fit's ``alpha_``)."""
        return norms.build_penalty(self.penalty, self.alpha_ if alpha is None else alpha, n_features,
                                   self.fit_intercept, self.groups, self.l1_ratio)

    def _strength(self, by_rule, n_features):
        """``alpha``, or the strength of ``alpha="auto"``: the rule's (``auto.penalty_strength``) when the rule chose
        the mechanism (``by_rule``), else ``auto.ALPHA``."""
        if not _is_auto(self.alpha):
            return float(self.alpha)
        if not by_rule:
            return auto.ALPHA
        return auto.penalty_strength(self._loss(), self._penalty(n_features, auto.ALPHA))

    def _encode(self, y):
        try:
            return np.asarray(y, dtype=float)
        except ValueError:
            raise ValueError("y has non-numeric values (not shown here, in case they are records): a regressor "
                             "needs numeric labels") from None

    def fit(self, X, y):
        """Fit the model privately.

        Every check on the parameters and on the public bounds runs before the private
        data is used and before a ``budget`` is charged; a fit that raises charges nothing, except one that
        refuses the label set it selected privately (``classes`` not declared: too few labels passed the
        threshold), which has looked at the data and is charged in full.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self

        No ``sample_weight``: a record's weight would scale its influence beyond the sensitivity the noise is
        set for.

        Raises
        ------
        ValueError
            Invalid data (NaN/inf, shape mismatch, empty), budget (epsilon <= 0, delta
            outside (0, 1)), mechanism, option, bounds, or labels.
        BudgetExceededError
            The fit would overdraw ``budget``.

        Warns
        -----
        PrivacyLeakWarning
            When ``bounds="from-data"``: bounds come from the data and the fit is not private. Inside a
            scikit-learn search (``GridSearchCV`` and its kind): it chooses by scores without noise, so the model it
            picks has no guarantee (the report says so; ``DPSearchCV`` is private). Inside scikit-learn's
            cross-validation without a ``budget``: each fit spends its epsilon on the same records.
            ``ClassesFromDataWarning`` (one): ``classes="from-data"``.
        WeakGuaranteeWarning
            The guarantee holds but is weak: delta above ``1 / n``, or epsilon above 10.
        FixedSeedWarning
            ``random_state`` fixes the noise's seed (reproducible, for experiments only).
        ConstantPredictorWarning
            ``mechanism="auto"`` released the constant predictor: too few records for this epsilon.
        PrivacyCalibrationWarning
            ``calibration="paper"`` does not meet the target (epsilon, delta).
        ClippingWarning, AbsentClassWarning, UnselectedLabelWarning
            Counted on the private data, for the data holder only: many values outside the declared bounds; a
            declared class without a training record; training labels outside the label set selected privately.
        """
        self._check_numbers()
        if self.mechanism != "auto":  # a bad name, or a loss the mechanism cannot take: before the data is read
            get(self.mechanism).check_compatible(self._loss(), None, self.mechanism_options)
        columns = getattr(X, "columns", None)  # a DataFrame's, whatever their type (the fitted names need strings)
        X, y = self._validate_xy(X, y)
        self._check_declared_bounds(X.shape[1], columns)  # before the label set is bought or anything charged
        n = X.shape[0]
        delta = 1.0 / n**2 if self.delta is None else self.delta
        check_privacy_params(self.epsilon, delta)
        weak = warn_weak_guarantee(self.epsilon, delta, n)
        mechanism, options, reason = self._chosen_mechanism(n, X.shape[1])
        _check_chosen_calibration(mechanism, reason, self.calibration)
        self.alpha_ = self._strength(reason is not None, X.shape[1])
        _warn_constant(mechanism, reason)
        zcdp = mechanism.zcdp_calibration and mechanism.resolve_calibration(self.calibration) == "tight"
        penalty = self._penalty(X.shape[1])
        loss = self._loss()
        mechanism.check_compatible(loss, penalty, options)
        noise = make_noise(self.random_state, self.noise, parameter="noise")
        kw = dict(epsilon=self.epsilon, delta=delta, calibration=self.calibration, options=options, noise=noise,
                  callback=_Progress(options.get("n_iter"), X.shape[1]) if self.verbose else None, budget=self.budget,
                  label=f"{type(self).__name__} ({mechanism.name})")
        labels = (self._select_labels(y, X.shape[1], mechanism, zcdp, delta, noise, kw) if self._private_classes()
                  else None)
        fill = self._release_fill(X, y, delta, noise, kw) if self._reads_fill(reason, zcdp, n, X.shape[1]) else None
        if fill is not None:  # the rule's choice, from the released fill (post-processing)
            mechanism, kw["options"], reason = self._chosen_mechanism(n, X.shape[1], fill[0])
            mechanism.check_compatible(loss, penalty, kw["options"])
            _warn_constant(mechanism, reason)
        if reason is not None and _is_auto(self.alpha) and mechanism.name != "constant":
            reason += f"; penalty strength alpha = {self.alpha_:g} (alpha='auto')"
        # the constant predictor reads no feature: nothing to tighten
        design = self._design(X, y, None if mechanism.name == "constant" else (self.epsilon, kw["delta"], zcdp,
                                                                              kw.get("zcdp")), mechanism.one_hot)
        if self._multiclass:
            if kw["callback"] is not None:
                kw["callback"].classes = self._fit_classes.size
            w, report = fit_one_vs_rest(mechanism, design, design.y.astype(int), self._fit_classes.size, loss,
                                        penalty, **kw)
        else:
            w, report = fit_mechanism(mechanism, design, loss, penalty, **kw)
        design = getattr(design, "design", design)  # private bounds: the design mapped onto them
        if fill is not None:  # the whole: the fill and the fit, (epsilon, delta) by zCDP
            report.accountant_epsilon = zcdp_epsilon(fill[1], delta)
            report.accountant = "rdp (zCDP of the fill's release and the fit added, docs/privacy.md)"
            report.noise = {**report.noise, **fill[2]}
        if labels is not None:  # the whole: the selection and the fit, (epsilon, delta) by approximate zCDP
            report.delta, report.accountant_epsilon = delta, private_labels.whole_epsilon(labels[0], delta)
            report.accountant = ("rdp (zCDP of the label selection and the fit added; plus log(1 / (1 - delta/10)) "
                                 "for the selection's failure probability, docs/privacy.md)")
            report.noise = {**report.noise, **labels[1]}
        if self._classes_from_data():
            note_classes_from_data(report)
        if reason is not None:
            report.noise = {"mechanism chosen (mechanism='auto')": reason, **report.noise}
        declared = self.bounds.one_hot if isinstance(self.bounds, Bounds) else None
        if declared:
            report.noise["one-hot groups"] = _one_hot_words(declared, design, X.shape[1], mechanism.name)
        if self.delta is None:
            report.noise["delta"] = f"1/n^2 = {delta:.3g} for the n = {n} training records (delta=None, the default)"
        report.warnings += weak
        note_sklearn_context(report, self.budget)
        self._set_fitted(design, w)
        report.support_size = int(self.support_.size)
        self.privacy_report_ = report
        self.n_iter_ = report.iterations
        return self

    def _check_declared_bounds(self, n_features, columns=None):
        """ValueError for declared bounds of the wrong type or number of features, or whose feature names differ
        from X's column names (reads no value of the data: the ranges are matched to the columns by position)."""
        if not (isinstance(self.bounds, str) and self.bounds in ("private", FROM_DATA)):
            _resolve_bounds(self.bounds, None, None, not self._classification).for_features(n_features)
        declared = _declared_bounds(self.bounds)
        if declared is not None:
            check_feature_names(declared.feature_names, columns)
        if declared is not None and not self._classification and declared.label_low is None:
            raise ValueError("bounds: a regression needs a public label range beside the feature ranges: declare "
                             "label_low and label_high (the range the target can take, from its definition), or, "
                             "with thousands of records, leave the bounds out to buy every range privately")

    def _declared_classes(self):
        """``classes=``, else the bounds' ``classes``, else None; a string ("private", "from-data") as given."""
        classes = getattr(self, "classes", None)
        declared = _declared_bounds(self.bounds) if classes is None else None
        return declared.classes if declared is not None else classes

    def _private_classes(self):
        """The label set is selected privately: ``classes="private"``, or no label set declared (by ``classes=`` or
        the bounds), unless the bounds are read off the data too (an experiment without guarantee)."""
        if not self._classification:
            return False
        classes = self._declared_classes()
        if classes is None:
            return not (isinstance(self.bounds, str) and self.bounds == FROM_DATA)
        return isinstance(classes, str) and classes == "private"

    def _classes_from_data(self):
        declared = self._declared_classes()
        return self._classification and not self._private_classes() and (declared is None or isinstance(declared, str))

    def _select_labels(self, y, n_features, mechanism, zcdp, delta, noise, kw):
        """``classes="private"``: charge the whole budget, select the label set (``private_labels``) with a share
        of the zCDP budget (``plan_share``, public) and ``DELTA_SHARE`` of delta, and leave the fit the rest as a
        zCDP target (``kw`` updated). Returns the whole's zCDP budget and the selection's report lines."""
        if not zcdp:
            chosen = (f"mechanism='auto' chose {mechanism.name} for this loss and penalty, and it"
                      if self.mechanism == "auto" else f"mechanism {mechanism.name}")
            raise ValueError(f"classes='private' (the default when neither classes nor bounds are declared) "
                             f"composes the label selection with the fit in zCDP, which {chosen} does not calibrate "
                             "to; declare the classes (classes=[...], --classes in the CLI), or name a mechanism that "
                             "does (dp-gd takes every penalty)")
        if distributed.is_dask(y):
            raise ValueError("classes='private' needs the labels in memory; declare classes=[...]")
        rho, delta_labels = private_labels.budget(self.epsilon, delta)
        rho_labels = private_labels.plan_share(y.shape[0], rho, delta_labels) * rho
        if isinstance(self.bounds, str) and self.bounds == "private":  # their refusal before the selection reads y
            k = selections(n_features, True)
            tail_share(y.shape[0], selection_epsilon(k, rho=self._share() * (rho - rho_labels)), k)
        charge(self.budget, self.epsilon, delta, kw["label"])
        selected, details = private_labels.select_labels(y, rho_labels, delta_labels, noise)
        if selected.size < 2:  # refused on the noisy counts only: no check of the labels' values before them
            raise ValueError(f"classes='private': {selected.size} label(s) passed the threshold (a label needs "
                             f"about {private_labels.records_needed(rho_labels, delta_labels):.0f} records at this "
                             "epsilon); declare the classes (classes=[...], --classes in the CLI), or, for a "
                             "continuous target, use DPLasso or DPLinearRegression (--loss squared). The selection "
                             f"ran: the budget counts this fit's epsilon {self.epsilon:g} as spent")
        if selected.size > MAX_CLASSES:
            raise ValueError(f"classes='private': {selected.size} labels passed the threshold, more than the "
                             f"{MAX_CLASSES} classes a one-vs-rest fit takes; declare the classes (classes=[...], "
                             "--classes in the CLI)")
        self._selected_classes = selected
        kw.update(delta=delta - delta_labels, zcdp=rho - rho_labels, budget=None)
        return rho, details

    def _set_fitted(self, design, w):
        """``coef_``, ``intercept_`` (original units), ``coef_bounded_``, ``support_``, ``bounds_``, and
        ``classes_`` or ``label_range_``."""
        self.bounds_ = design.bounds
        if self._classification:
            self.classes_ = self._fit_classes
        else:
            self.label_range_ = design.label_range()
        if w.ndim == 2:  # one-vs-rest: a row per class
            self.coef_, intercepts = map(np.array, zip(*(design.to_original(row) for row in w)))
            self.intercept_ = intercepts.astype(float)
        else:
            self.coef_, self.intercept_ = design.to_original(w)
        self.coef_bounded_ = w
        self.support_ = np.flatnonzero(np.any(np.atleast_2d(self.coef_) != 0, axis=0))

    _NUMBERS = (("alpha", lambda v: 0 <= v < math.inf, "[0, inf) or 'auto'", True),
                ("l1_ratio", lambda v: 0 <= v <= 1, "[0, 1]", False),
                ("bounds_share", lambda v: 0 <= v < 1, "[0, 1) or 'auto'", True))
    """Numeric parameters checked before any data is read: (name, test, allowed range in words, takes "auto")."""

    def _check_numbers(self):
        """ValueError naming a parameter outside its range (or of another type), before the data is read."""
        for name, within, allowed, takes_auto in self._NUMBERS:
            value = getattr(self, name, 0.5)  # absent (DPLinearRegression has no l1_ratio): nothing to check
            if takes_auto and _is_auto(value):
                continue
            if isinstance(value, bool) or not isinstance(value, Real) or not within(value):
                raise ValueError(f"{name} must be a number in {allowed}, got {value!r}")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be True or False, got {self.fit_intercept!r}")
        if not _is_auto(self.bounds_share) and self.bounds_share == 0 and _buys_every_range(self.bounds):
            raise ValueError("bounds_share=0 buys nothing, but bounds='private' buys every range: give a share in "
                             "(0, 1) or 'auto', or declare the bounds")
        params = self.get_params(deep=False)  # DPElasticNet and DPLasso take no penalty parameter
        if params.get("penalty", "elasticnet") != "elasticnet" and params.get("l1_ratio", 0.5) != 0.5:
            warnings.warn(f"l1_ratio={self.l1_ratio!r} is used only with penalty='elasticnet'; "
                          f"penalty={self.penalty!r} ignores it", UserWarning, stacklevel=3)
        if self.noise not in NOISE_BACKENDS:
            raise ValueError(f"noise must be one of {', '.join(NOISE_BACKENDS)}, got {self.noise!r}")
        if self.mechanism_options is not None and not isinstance(self.mechanism_options, dict):
            raise ValueError(f"mechanism_options must be a dict of option names and values or None, got "
                             f"{type(self.mechanism_options).__name__}")
        if (self.mechanism_options or {}).get("warm_start") and not self.fit_intercept:
            raise ValueError("mechanism_options warm_start=True starts the intercept from a noisy label mean, a "
                             "release of its own: it needs fit_intercept=True (without an intercept it would spend "
                             "budget for nothing)")

    def _validate_xy(self, X, y):
        """``X`` (dense, or CSR when that is smaller: ``data.dense_if_dense``) and ``y`` as float arrays; sets
        ``n_features_in_``; ValueError below 2 samples."""
        if distributed.is_dask(X):  # never gathered: checked for finiteness by data.prepare, chunk by chunk
            X, _ = distributed.as_row_chunked(X, y)
            y = np.asarray(y) if self._classification else np.asarray(y, dtype=float)
            self.n_features_in_ = X.shape[1]
        else:
            X, y = validated(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=not self._classification)
        if X.shape[0] < 2:
            raise ValueError(f"a private fit needs at least 2 samples, got n_samples = {X.shape[0]}")
        return dense_if_dense(X), y

    def _reads_fill(self, reason, zcdp, n, p):
        """Whether the rule's choice waits for the records' fill of their box (``auto.reads_fill``): a regression
        whose mechanism the rule chose (``reason``) and composes in zCDP, on declared public bounds without a row-norm
        bound (the fill is read on their map, as measured), where the loss, penalty, n, p and epsilon let the fill
        move the choice. Public inputs only."""
        declared = _declared_bounds(self.bounds)
        return (reason is not None and zcdp and not self._classification and declared is not None and n >= 2
                and declared.public and declared.row_norm is None
                and auto.reads_fill(self._loss(), self._penalty(p, auto.ALPHA), n, p, self.epsilon))

    def _release_fill(self, X, y, delta, noise, kw):
        """Charge the whole budget, release the records' fill of their box with ``auto.FILL_SHARE`` of the zCDP
        budget, and leave the fit the rest as a zCDP target (``kw`` updated).

        The fill is the mean over ``n // 2`` pairs of records (a permutation from the noise generator, drawn
        independently of the records, pairs its first half with its second) of
        ``min(||x_i - x_j|| / (sqrt(2) R), 1)`` (``_fill_sum``), the records mapped onto the declared bounds as the
        rule's mechanism maps them (``data.prepare``, one-hot groups mapped as any feature) and ``R`` the design's
        row-norm bound: each term lies in [0, 1] and a replaced record is in one pair, so the sum has replace-one
        sensitivity 1; Gaussian noise of standard deviation ``1 / sqrt(2 rho_f)`` makes it ``rho_f``-zCDP (Bun &
        Steinke, TCC 2016, Prop. 1.6), composed with the fit's zCDP. The sum is taken before the charge (a dask
        array's NaN is refused there, with nothing charged) and released after it.

        Returns
        -------
        (fill, rho, lines) : (float, float, dict)
            The released fill, the whole's zCDP budget, the report's lines.
        """
        bounds = dataclasses.replace(_declared_bounds(self.bounds).for_features(X.shape[1]), one_hot=None)
        total = _fill_sum(X, y, bounds, self.fit_intercept, noise.rng.permutation(X.shape[0]))  # pairs: no data
        R = design_row_norm(X.shape[1], bounds.record_norm(X.shape[1]), self.fit_intercept)
        rho = zcdp_budget(self.epsilon, delta)
        rho_fill = auto.FILL_SHARE * rho
        charge(self.budget, self.epsilon, delta, kw["label"])
        sigma = 1.0 / math.sqrt(2.0 * rho_fill)
        fill = private_unit_mean(total, X.shape[0] // 2, sigma, noise, "the records' fill of their box")
        kw.update(zcdp=rho - rho_fill, budget=None)
        alone = zcdp_epsilon(rho - rho_fill, delta)  # the fit's epsilon without the fill, at the same delta
        return fill, rho, {
            "the rule's fill": (f"{fill:.3f}, on a scale from 0 (identical records) through about 0.58 (features "
                                "uniform over their declared ranges) to 1 (records at opposite corners): the mean "
                                "over random pairs of records of min(||x_i - x_j|| / (sqrt(2) R), 1) on the declared "
                                f"bounds, R = {R:.4g} the bound on the norm of a record of all {X.shape[1]} "
                                "features there; released"),
            "the rule's fill: noise": (f"gaussian, standard deviation {sigma:.4g} on the sum over "
                                       f"{X.shape[0] // 2} pairs ({sigma / (X.shape[0] // 2):.2g} on the fill; "
                                       f"sensitivity 1), zCDP {rho_fill:.4g} ({auto.FILL_SHARE:g} of the zCDP budget)"),
            "whole budget": (f"zCDP rho={rho:.4g}: the rule's fill {rho_fill:.4g}, the fit {rho - rho_fill:.4g} (its "
                             f"label range and mechanism's shares are of this); the fit alone would be epsilon "
                             f"{alone:.4g} at the same delta, so the fill costs {zcdp_epsilon(rho, delta) - alone:.2g} "
                             "of epsilon"),
        }

    def _chosen_mechanism(self, n, p, fill=None):
        """``(mechanism, options, reason)``: the named mechanism, or the public rule of ``mechanism="auto"``
        (``mechanisms.auto.choose``: from the loss, the penalty, n, p and epsilon only, and ``fill``, the records'
        fill of their box released privately, where the rule reads it; ``reason`` None when named)."""
        if self.mechanism != "auto":
            mechanism = get(self.mechanism)
            return mechanism, self._mechanism_options(mechanism), None
        if self.mechanism_options:
            raise ValueError("mechanism_options need a named mechanism: mechanism='auto' chooses its own options")
        grouped = isinstance(self.bounds, Bounds) and self.bounds.one_hot is not None
        name, options, reason = auto.choose(self._loss(), self._penalty(p, auto.ALPHA), n, p, self.epsilon,
                                            self.fit_intercept, zcdp=self._classification and self._private_classes(),
                                            one_hot=self.bounds.record_norm(p) ** 2 if grouped else None, fill=fill)
        mechanism = get(name)
        if self.max_iter is not None and "n_iter" in mechanism.option_names:
            reason += f"; max_iter={self.max_iter} given: {self.max_iter} steps instead"
        return mechanism, self._mechanism_options(mechanism, options), reason

    def _mechanism_options(self, mechanism, defaults=None):
        """``defaults``, ``mechanism_options``, and ``max_iter`` (as ``n_iter``, unless None) and ``rule`` where
        the mechanism has them."""
        options = dict(defaults or {})
        if self.max_iter is not None and (isinstance(self.max_iter, bool) or not isinstance(self.max_iter, Integral)
                                          or self.max_iter < 1):
            raise ValueError(f"max_iter must be None (the rule's choice) or an integer >= 1, got {self.max_iter!r}")
        given = dict(self.mechanism_options or {})
        if self.max_iter is not None and "n_iter" in given and given["n_iter"] != self.max_iter:
            raise ValueError(f"max_iter={self.max_iter!r} and mechanism_options n_iter={given['n_iter']!r} disagree: "
                             "give the number of iterations once")
        if "n_iter" in mechanism.option_names and self.max_iter is not None:
            options["n_iter"] = self.max_iter
        options.update(given)
        if ("clipping_norm" in mechanism.option_names and mechanism.option("clipping_norm").auto
                and "clipping_norm" not in options and mechanism.resolve_calibration(self.calibration) == "tight"
                and getattr(self._loss(), "name", "") == "logistic"):
            # the estimators' designs lie in [-1, 1]: the threshold set privately where it was measured to help
            # (docs/defaults.md; for least squares DP-GCD's threshold at the start biases the fit at large n)
            options["clipping_norm"] = "auto"
        if "rule" in mechanism.option_names:
            options.setdefault("rule", self.rule)
        else:  # DP-GCD's greedy rule, checked whichever mechanism runs
            get("dp-gcd").option("rule").check(self.rule, type(self).__name__)
        mechanism.resolve_options(options)
        return options

    def _design(self, X, y, budget=None, one_hot=False):
        """The training data mapped onto the bounds (``data.prepare``), or a ``PendingDesign`` whose bounds are
        bought privately (``bounds="private"``); sets ``classes_``.

        ``budget``: ``(epsilon, delta, zcdp, rho)`` of the fit (``zcdp``: whether its mechanism composes in zCDP;
        ``rho``: its zCDP budget when a private label set took a share first, else None).
        With it, declared bounds are tightened privately where that is affordable (``_tightened``).
        ``one_hot``: whether the mechanism keeps declared one-hot groups (``Mechanism.one_hot``); otherwise their
        indicators are mapped as any feature. Where no per-feature narrowing is affordable, declared ranges may
        be cut jointly (``_joint``; ``DPSearchCV`` buys them too, once for its candidates)."""
        yi = self._encode(y)
        bounds = _resolve_bounds(self.bounds, X, y, not self._classification)
        if isinstance(bounds, Bounds) and bounds.public:
            clipping_warnings(X, y, bounds)
        self.bounds_share_ = self._share()
        if isinstance(bounds, str):
            return PendingDesign(X, yi, self._classification, self.fit_intercept, self.bounds_share_)
        if bounds.one_hot is not None and not one_hot:
            bounds = dataclasses.replace(bounds, one_hot=None)
        if self.bounds_share_ == 0:  # bounds_share=0: the declared bounds as they are
            return prepare(X, yi, bounds, self._classification, self.fit_intercept)
        tightening = None
        if budget is not None and bounds.public:
            shares = AUTO_BOUNDS_SHARES if _is_auto(self.bounds_share) else (self.bounds_share,)
            tightening = next((s for s in shares if self._tightened(bounds, X, budget, s)), None)
        if tightening is not None:
            self.bounds_share_ = tightening
            return PendingDesign(X, yi, self._classification, self.fit_intercept, tightening,
                                 within=bounds.for_features(X.shape[1]))
        if budget is not None and bounds.public:
            labels = self._pending_labels(X, yi, bounds)
            pending = self._joint(X, yi, bounds, budget, labels) or labels
            if pending is not None:
                return pending
        self.bounds_share_ = 0.0  # the declared bounds as they are: nothing bought
        return prepare(X, yi, bounds, self._classification, self.fit_intercept)

    def _share(self):
        """``bounds_share`` as a number: ``BOUNDS_SHARE`` for "auto" where no tightening is bought (``_design``)."""
        return BOUNDS_SHARE if _is_auto(self.bounds_share) else float(self.bounds_share)

    def _pending_labels(self, X, yi, bounds):
        """A design whose label range is bought before the fit (the regressors' ``clip="auto"``), or None."""
        return None

    def _joint(self, X, yi, bounds, budget, labels=None):
        """Where no quantile of each feature is affordable: declared ranges cut jointly
        (``private_bounds.JointTighteningDesign``, ``JOINT_SHARE`` of the budget with ``bounds_share="auto"``), for a
        model with an intercept (a model through the origin keeps the origin inside its ranges) on at most
        ``JOINT_MAX_FEATURES`` features, without a row-norm bound or one-hot groups kept, with a range to cut (a
        finite width above 0), where the records are enough for the share (``private_bounds.joint_affordable``):
        public inputs only; else None. ``labels``: a regression's ``LabelScaleDesign``, which the cuts then
        precede in one design (``private_bounds.JointLabelDesign``, its share added). A classifier's cuts take the
        tie-break from ``n epsilon = JOINT_SLOPE_BAND log p`` only."""
        if (not self.fit_intercept or X.shape[1] > JOINT_MAX_FEATURES
                or bounds.row_norm is not None or bounds.one_hot is not None):
            return None
        bounds = bounds.for_features(X.shape[1])
        width = declared_widths(bounds)
        if not (np.all(np.isfinite(width)) and np.any(width > 0)):
            return None
        auto_share = _is_auto(self.bounds_share)
        share = JOINT_SHARE if auto_share else float(self.bounds_share)
        label_share = None if labels is None else labels.share
        if labels is not None and not auto_share:  # a declared share is the whole: split as "auto" splits it
            part = JOINT_SHARE / (JOINT_SHARE + BOUNDS_SHARE)
            share, label_share = part * share, (1.0 - part) * share
        if not joint_affordable(X.shape[0], **_spend(budget, share)):
            return None
        if labels is not None:
            self.bounds_share_ = share + label_share
            return JointLabelDesign(X, yi, bounds, self.fit_intercept, share, label_share)
        self.bounds_share_ = share
        classification = self._classification
        slope = None if not classification or per_log_feature(*X.shape, budget[0]) >= JOINT_SLOPE_BAND else 0.0
        return JointTighteningDesign(X, yi, bounds, classification, self.fit_intercept, share, slope)

    def _tightened(self, bounds, X, budget, share):
        """Whether declared ``bounds`` are tightened by private quantiles with ``share`` of the budget
        (``private_bounds.affordable``): no row-norm bound (nor one-hot groups kept by the mechanism: their bound
        counts on the declared [0, 1]), and enough records for that share to place every quantile within
        ``TIGHTEN_ERROR`` of the records. Public inputs only."""
        if bounds.row_norm is not None or bounds.one_hot is not None:
            return False
        return affordable(X.shape[0], X.shape[1], self._classification, **_spend(budget, share))

    def reference_loss(self):
        """The datafit of the objective ``F`` (no clipping), for excess-risk measures."""
        return self._loss()

    def _decision(self, X):
        check_is_fitted(self)
        if distributed.is_dask(X):  # chunk by chunk, lazily: a dask array of decisions
            X = X.rechunk({1: -1})
            out = (X.chunks[0],) if self.coef_.ndim == 1 else (X.chunks[0], (self.coef_.shape[0],))
            return X.map_blocks(self._decision, chunks=out, drop_axis=None if self.coef_.ndim == 2 else 1,
                                dtype=float)
        X = validated(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        # the features as the model was trained on them: clipped to the bounds
        return linear_decision(X, self.coef_, self.intercept_, getattr(self, "bounds_", None))


class DPLogisticRegression(ClassifierMixin, _DPLinearModel):
    """Differentially private L1 (or elastic-net, L2) logistic regression.

    More than two classes are fitted one-vs-rest, the budget split over the classes
    (``mechanisms.fit_one_vs_rest``).

    Minimizes ``(1/n) sum_i log(1 + exp(-y_i <w, x_i>)) + alpha * psi(w)`` with a private
    mechanism (``mechanism="auto"``: a public rule picks it, docs/defaults.md) on the data mapped onto public
    bounds.

    Parameters
    ----------
    epsilon : float > 0
        Privacy budget.
    delta : float in (0, 1) or None
        None: ``1 / n**2``.
    alpha : float >= 0 or "auto"
        Penalty strength (in the bounded coordinates). ``"auto"``: ``1e-4`` under ``mechanism="auto"`` for
        the logistic, squared and Huber losses with a separable penalty (a larger one was measured to bias the rule's
        learners, ``mechanisms.auto.penalty_strength``), ``1e-3`` otherwise (``auto.ALPHA``); the fit's is
        ``alpha_``.
    penalty : {"l1", "l2", "elasticnet", "linf", "group-l2", "group-linf"}
        Separable penalties suit every mechanism; the structured norms
        (``dpsparse.norms``, docs/norms.md) need a mechanism that uses the whole norm (its prox:
        dp-sgd, dp-gd, one-pass-sgd, output, objective, dual-fw; its ball: fw): DP-GCD and DP-CD
        refuse them.
    l1_ratio : float in [0, 1]
        Used when ``penalty="elasticnet"``; set to another value than its default with another penalty, it warns
        (UserWarning) that the penalty ignores it.
    groups : list of lists of column indices, dict, str (JSON file) or None
        Groups of the group penalties (format in docs/norms.md).
    mechanism : str
        A name of ``dpsparse.mechanisms.REGISTRY``: "dp-gcd" (Mangold et al. 2023) and
        "dp-cd" (Mangold et al. 2022) for separable penalties; "dp-sgd" (Abadi et al.
        2016); "one-pass-sgd" (Arora, Marinov & Ullah 2020; its number of steps is
        random); "output" (output perturbation, Chaudhuri et al. 2011) and "objective"
        (objective perturbation over a norm ball, Kifer, Smith & Thakurta 2012); "dual-fw"
        (private Frank-Wolfe on the dual, Kumar & Deisenroth 2019) and "fw" (private
        Frank-Wolfe on the primal, Talwar, Thakurta & Zhang 2015); "dp-iht" (noisy hard
        thresholding with peeling, Cai, Wang & Zhang 2021: exactly ``sparsity`` nonzero
        features) and "two-stage" (private selection of ``sparsity`` features, then a
        private fit on them). Every option has a public default (``dpsparse fit --help``
        lists them, docs/privacy.md derives them).
    max_iter : int >= 1 or None
        Iterations T of the mechanism (its option ``n_iter``, where it has one; the
        budget is split over them). None: the public rule's number under ``mechanism="auto"``,
        else the mechanism's own default (50 for DP-GCD and FW, 200 for DP-GD and two-stage's
        second stage (the rule's), 20 epochs for DP-CD, 200 steps for DP-SGD, 20 for dual FW, 20 for dp-iht,
        40 for its least squares from ``n epsilon = 800 log p``, ``dp_iht.STEPS``).
    rule : {"gs-r", "gs-s", "gs-q"}
        Greedy selection rule of DP-GCD.
    calibration : {"tight", "paper"} or None
        None: the mechanism's default ("tight" wherever it exists; objective perturbation
        has "paper" only; DP-SGD and the one-pass SGD "tight" only).
    bounds : Bounds, dict, tuple, str (JSON file), "private" or "from-data"
        Public bounds. A tuple ``(feature_low, feature_high)`` (a classifier's) or
        ``(feature_low, feature_high, label_low, label_high)`` is ``Bounds(*bounds)``: numbers
        (one range for every feature) or one entry per feature. "private" (the default) buys
        them with ``bounds_share`` of the budget (differentially private quantiles,
        ``dpsparse.private_bounds``; at most 1000
        features; refused, before the data is read, when the records are too few for the
        budget). "from-data" computes them from the data and voids the guarantee
        (``PrivacyLeakWarning``): experiments only.
    bounds_share : float in [0, 1) or "auto"
        Share of the budget spent on the private preprocessing: ``bounds="private"``, the
        private quantiles that narrow declared bounds, the labels' moments of ``clip="auto"``
        (of the zCDP budget rho for the mechanisms calibrated in zCDP, of epsilon otherwise).
        "auto" (the default): ``BOUNDS_SHARE`` (0.1), or the smallest of ``AUTO_BOUNDS_SHARES``
        (0.1, 0.2) with which narrowing declared bounds is affordable (a public test of n, p
        and the budget: ``private_bounds.affordable``; measured in docs/defaults.md); where
        it is not, a model with an intercept on at most ``JOINT_MAX_FEATURES`` = 50
        features, where the records are enough (``private_bounds.joint_affordable``), cuts its
        declared ranges jointly with ``JOINT_SHARE`` (0.05; ``private_bounds.JointTighteningDesign``;
        a regressor with ``clip="auto"`` then narrows its label range with ``BOUNDS_SHARE`` more,
        ``private_bounds.JointLabelDesign``); a number is spent on whichever of these is bought
        (a regressor's cuts and label range split it 1 : 2). 0 keeps declared bounds as they are
        (nothing bought; refused with ``bounds="private"``), as a ``row_norm`` in the bounds
        keeps the feature ranges. The share spent is ``bounds_share_`` (0 where nothing was
        bought).
    fit_intercept : bool
        Learn an unpenalized intercept (a bounded feature of ones). False: the model passes through the origin of
        the original units (``intercept_`` 0); the features are then scaled into [-1, 1], not centred.
    random_state : None, int, numpy Generator or RandomState
        None: OS entropy. A fixed seed is for experiments only.
    verbose : int
        > 0: print progress to stderr during long fits.
    mechanism_options : dict or None
        Options of the mechanism (its ``options``, e.g. ``selection``, ``update_noise``
        for DP-GCD; ``batch_size``, ``clipping_norm``, ``learning_rate`` for DP-SGD; ``radius`` for
        the one-pass SGD, FW and objective perturbation; ``mu`` for output perturbation).
        Unknown keys and values outside their range are errors. DP-GD and DP-SGD take
        ``clipping_norm="auto"`` unless given (``None``: no clipping); so do DP-GCD and DP-CD
        for the logistic loss in the tight calibration.
    budget : PrivacyBudget or None
        A budget shared by several fits: ``fit`` charges the accountant's epsilon (and
        delta) once every check has passed, before the mechanism runs, and refuses when the
        budget would be exceeded.
    noise : {"auto", "fast", "secure"}
        ``"auto"``: OpenDP's exact samplers (``"secure"``, Mironov 2012) unless ``random_state``
        fixes a seed (then numpy's, for experiments); docs/noise.md. ``"secure"`` refuses a
        fixed ``random_state``.
    classes : sequence of labels, "private", "from-data" or None
        The public label set (2 or more); fitted whatever values the data holds (labels
        outside it raise). "private" selects it inside the budget (``private_labels``:
        Gaussian partition selection with 5-20 % of the zCDP budget, the least with which a
        label of a quarter of the records passes, and a tenth of delta, ``private_labels.DELTA_SHARE``;
        refused before the data is read when none suffices, and after the charge when fewer than two labels pass;
        the other labels count as the first class of two, as none of three or more; tight zCDP mechanisms
        only).
        None (the default): the bounds' ``classes`` when they declare them, else "private";
        with ``bounds="from-data"`` (an experiment) the labels are read off the data.
        "from-data" reads them off the data with a ``ClassesFromDataWarning`` (a
        ``PrivacyLeakWarning``: the label set sets the number of fits, and the report says
        the fit has no guarantee). Labels read off the data with more than ``MAX_CLASSES`` (50)
        distinct values are refused (a continuous target: use a regressor). The private selection
        cannot count distinct values without spending budget: on a continuous target no label passes
        and the fit is refused after the charge (the budget keeps the whole epsilon, the conservative
        account, though only the selection's share was spent).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,), or (n_classes, n_features) for more than 2 classes
        In the units of ``X``, for features clipped to ``bounds_`` (``decision_function``). Two classes: one
        dimension, where scikit-learn's ``LogisticRegression`` gives shape (1, n_features).
    intercept_ : float, or ndarray of shape (n_classes,)
        Two classes: a float, where scikit-learn's gives shape (1,).
    classes_ : ndarray of shape (n_classes,)
        Two classes: the larger label is the positive class.
    coef_bounded_ : ndarray of shape (n_features + fit_intercept,) or (n_classes, ...)
        Coefficients in the bounded coordinates (intercept last).
    support_ : ndarray of int
        Indices of the nonzero coefficients (the intercept excluded).
    bounds_ : Bounds
        The bounds the model was fitted on (declared, bought privately, or read from the data).
    alpha_ : float
        The penalty strength of the fit (``alpha``, or the choice of ``alpha="auto"``).
    privacy_report_ : PrivacyReport
        What the fit spent and how: the guarantee, the mechanism, each release's noise and its source
        (``print`` it); whether the guarantee holds (``guarantee_holds``).
    n_iter_ : int or None
        The mechanism's planned iterations (None where their number is random, as the one-pass SGD's).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Where ``X`` was a DataFrame with string column names.
    """

    _classification = True

    def __init__(self, epsilon=1.0, delta=None, alpha="auto", penalty="l1", l1_ratio=0.5, groups=None,
                 mechanism="auto", max_iter=None, rule="gs-r", calibration=None, bounds="private", bounds_share="auto",
                 fit_intercept=True, random_state=None, verbose=0, mechanism_options=None, budget=None, noise="auto",
                 classes=None):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.groups = groups
        self.mechanism = mechanism
        self.max_iter = max_iter
        self.rule = rule
        self.calibration = calibration
        self.bounds = bounds
        self.bounds_share = bounds_share
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose
        self.mechanism_options = mechanism_options
        self.budget = budget
        self.noise = noise
        self.classes = classes

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.poor_score = True  # private noise on scikit-learn's tiny check datasets
        return tags

    def _loss(self):
        return losses.Logistic()

    def _encode(self, y):
        """Labels as +-1 (two classes, the larger positive) or, for more, the class index (one-vs-rest).

        A label set selected privately takes every value (the others count as none of three or more labels, as
        the first of two, with an ``UnselectedLabelWarning`` for the data holder): a refusal of the values, such as
        that of a continuous target below, would tell neighbouring datasets apart."""
        if self._private_classes():  # selected privately in fit
            classes = self._selected_classes
            self._fit_classes, self._multiclass = classes, classes.size > 2
            index = private_labels.class_index(np.asarray(y), classes)  # in memory: the selection refuses dask
            outside = int(np.count_nonzero(index < 0))
            if outside:
                warnings.warn(f"{outside} training label(s) lie outside the label set selected privately "
                              f"{classes.tolist()} (too rare to pass its threshold): they count as "
                              f"{'none of the classes' if self._multiclass else f'the class {classes.tolist()[0]!r}'}; "
                              f"declare classes= to fit every label ({HOLDER_ONLY})", UnselectedLabelWarning,
                              stacklevel=4)
            if self._multiclass:
                return index.astype(float)
            return np.where(index == 1, np.int8(1), np.int8(-1))
        if type_of_target(y) == "continuous":
            raise ValueError("y holds continuous values, not class labels: a classifier needs labels from a set of "
                             "classes (declared by classes= / --classes); for a continuous target use DPLasso or "
                             "DPLinearRegression (--loss squared)")
        check_classification_targets(y)
        declared = self._declared_classes()
        if declared is not None and not (isinstance(declared, str) and declared == FROM_DATA):
            classes = distinct_labels(declared)
            if classes is None:
                raise ValueError(f"classes must be a list of at least 2 distinct labels, 'private' or 'from-data', "
                                 f"got {np.asarray(declared).tolist()!r}")
            if not np.isin(y, classes).all():  # the message names no record's label: the data holder may relay it
                coded = ", ".join(map(str, classes.tolist()))
                private = ("labels outside the selected set then count as the first class of two, as none of three "
                           "or more")
                raise InputError(
                    f"y has labels outside classes={classes.tolist()}: declare every label of the task in classes=, "
                    f"in the labels' own coding (0 and 1, or -1 and 1); or select the label set privately, "
                    f"classes='private' ({private})",
                    cli=f"the labels hold values outside the declared label set {coded} (--classes, the bounds or "
                        "the schema): declare every label of the task, in the labels' own coding (--classes 0,1 or "
                        f"--classes=-1,1); or declare no label set and give --loss to select it privately ({private})")
            absent = classes[~np.isin(classes, y)]
            if absent.size:  # a warning, not a refusal: a rare class may be absent from a split of the records
                warnings.warn(f"the declared class(es) {absent.tolist()} hold no training record: the model cannot "
                              f"learn them; check the labels' coding against classes={classes.tolist()} "
                              f"({HOLDER_ONLY})", AbsentClassWarning, stacklevel=4)
        else:
            classes = _undeclared_classes(y)
        if classes.size < 2:
            raise ValueError(f"classification needs at least 2 classes, got {classes.size}: {classes.tolist()}")
        self._fit_classes = classes  # becomes classes_ once the fit succeeds
        self._multiclass = classes.size > 2
        if self._multiclass:
            return np.searchsorted(classes, y).astype(float)
        return _binary_labels(y, classes[1])

    def decision_function(self, X):
        """Margins ``clip(X) @ coef_.T + intercept_``, ``clip`` each feature clipped to its fitted range
        (``bounds_``: the declared one, or as narrowed privately), as the model was fitted.

        Parameters
        ----------
        X : array-like, sparse matrix or dask array of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, (n_samples, n_classes) for more (one column per class against
        the rest); a dask array for a dask array

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            ``X`` has another number of features (or other column names) than the fit's, or NaN.
        """
        return self._decision(X)

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes), columns in the order of ``classes_``: the logistic
        function of ``decision_function`` (features clipped to ``bounds_``).

        More than two classes: each one-vs-rest probability, normalized over the classes
        (as scikit-learn's one-vs-rest logistic regression). Parameters and errors as ``decision_function``.
        """
        scores = expit(self._decision(X))  # on a dask array: lazily, chunk by chunk
        if scores.ndim == 2:
            return scores / scores.sum(axis=1, keepdims=True)
        if distributed.is_dask(scores):
            import dask.array as da

            return da.stack([1.0 - scores, scores], axis=1)
        return np.column_stack([1.0 - scores, scores])

    def predict(self, X):
        """Predicted labels, shape (n_samples,): the class of the largest margin of ``decision_function``
        (features clipped to ``bounds_``; on a dask array, a dask array). Parameters and errors as
        ``decision_function``."""
        scores = self._decision(X)
        index = np.argmax(scores, axis=1) if scores.ndim == 2 else (scores > 0).astype(int)
        if distributed.is_dask(index):
            return index.map_blocks(lambda i: self.classes_[i], dtype=self.classes_.dtype)
        return self.classes_[index]


class DPLinearSVC(DPLogisticRegression):
    """Differentially private linear SVM: the hinge loss ``max(0, 1 - y <w, x>)``.

    The hinge loss is not smooth: the default ``mechanism="auto"`` runs DP-GD on its subgradients (200 steps, its
    clipping norm set privately; ``mechanisms.auto.choose``, measured in docs/defaults.md); DP-SGD, the one-pass
    noisy SGD (Arora, Marinov & Ullah 2020) and two-stage (a private selection, then DP-GD on the selected
    features: ``mechanism="two-stage"``, which on gisette, 5000 features, beat the default by 0.1 at epsilon 1,
    docs/defaults.md, "The hinge loss on many features") work too, DP-GCD refuses. Parameters and attributes as in
    ``DPLogisticRegression`` (``max_iter`` is unused by the one-pass mechanism, whose number of steps is random),
    without ``predict_proba``.
    """

    def __init__(self, epsilon=1.0, delta=None, alpha="auto", penalty="l1", l1_ratio=0.5, groups=None,
                 mechanism="auto", max_iter=None, rule="gs-r", calibration=None, bounds="private",
                 bounds_share="auto", fit_intercept=True, random_state=None, verbose=0, mechanism_options=None,
                 budget=None, noise="auto", classes=None):
        super().__init__(epsilon=epsilon, delta=delta, alpha=alpha, penalty=penalty, l1_ratio=l1_ratio, groups=groups,
                         mechanism=mechanism, max_iter=max_iter, rule=rule, calibration=calibration,
                         bounds=bounds, bounds_share=bounds_share, fit_intercept=fit_intercept,
                         random_state=random_state,
                         verbose=verbose, mechanism_options=mechanism_options, budget=budget, noise=noise,
                         classes=classes)

    def _loss(self):
        return losses.Hinge()

    @property
    def predict_proba(self):
        raise AttributeError("DPLinearSVC has no predict_proba: the hinge loss gives no probabilities")


class DPElasticNet(RegressorMixin, _DPLinearModel):
    """Differentially private elastic net: least squares with clipped per-sample gradients.

    Minimizes ``(1/2n) ||y - X w||^2 + alpha (l1_ratio ||w||_1 + (1 - l1_ratio) ||w||^2 / 2)``
    on the data mapped onto public bounds (labels onto [-1, 1]); the private mechanism
    clips each per-sample residual to ``[-clip, clip]`` so that coordinate Lipschitz
    constants exist (``losses.Squared``).

    Parameters
    ----------
    epsilon, delta, alpha, mechanism, max_iter, rule, calibration, bounds, bounds_share,
    fit_intercept, random_state, verbose, mechanism_options, budget, noise
        As in ``DPLogisticRegression``; ``bounds`` must include the label range
        (``bounds="private"`` buys it too).
    l1_ratio : float in [0, 1]
    loss : {"squared", "huber"}
        ``huber``: the Huber loss with threshold ``clip`` instead of the squared loss.
    clip : float > 0 or "auto"
        Per-sample residual clipping threshold (Huber threshold), in units of the label
        mapped onto [-1, 1]. ``"auto"`` (the default): half the label range (``AUTO_CLIP``), itself narrowed to
        the labels' private mean and spread (``bounds_share`` of the budget, two thirds of a declared one where the
        feature ranges are cut jointly first; docs/privacy.md).

    Notes
    -----
    The sparsity of the default fit follows the rule of ``mechanism="auto"`` (docs/defaults.md). On more than 30
    features it selects a few features privately (3 to 10, more where ``n epsilon / log p`` is larger) and fits
    them: ``support_`` holds at most that many. On at most 30 features it runs DP-GD on every feature with
    ``alpha`` 1e-4, which was measured to predict better there than any selection: ``support_`` is then usually
    every feature. For a model on ``k`` features, give ``mechanism="two-stage"`` with
    ``mechanism_options={"sparsity": k}`` (or ``"dp-iht"``, exactly ``k`` nonzero coefficients).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    coef_bounded_ : ndarray of shape (n_features + fit_intercept,)
        Coefficients in the bounded coordinates (intercept last).
    support_ : ndarray of int
        Indices of the nonzero coefficients (the intercept excluded).
    label_range_ : tuple of float
        The label range the model was fitted on: the declared one, or as narrowed privately (public either way:
        declared, or a noisy release); ``predict`` clips to it.
    alpha_ : float
        The penalty strength of the fit (``alpha``, or the choice of ``alpha="auto"``).
    privacy_report_ : PrivacyReport
    n_iter_ : int
    """

    def __init__(self, epsilon=1.0, delta=None, alpha="auto", l1_ratio=0.5, loss="squared", clip="auto",
                 mechanism="auto", max_iter=None, rule="gs-r", calibration=None, bounds="private", bounds_share="auto",
                 fit_intercept=True, random_state=None, verbose=0, mechanism_options=None, budget=None, noise="auto"):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.loss = loss
        self.clip = clip
        self.mechanism = mechanism
        self.max_iter = max_iter
        self.rule = rule
        self.calibration = calibration
        self.bounds = bounds
        self.bounds_share = bounds_share
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose
        self.mechanism_options = mechanism_options
        self.budget = budget
        self.noise = noise

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.regressor_tags.poor_score = True  # private noise on scikit-learn's tiny check datasets
        return tags

    def _clip(self):
        """The residual clipping threshold in the bounded label units: ``clip``, or ``AUTO_CLIP`` for ``"auto"``
        (the label range itself then narrowed to the labels' private spread, ``_design``)."""
        if _is_auto(self.clip):
            return AUTO_CLIP
        if isinstance(self.clip, bool) or not isinstance(self.clip, Real) or not 0 < self.clip < math.inf:
            raise ValueError(f"clip must be 'auto' or a finite number > 0, got {self.clip!r}")
        return float(self.clip)

    def _check_numbers(self):
        super()._check_numbers()
        self._clip()  # the residual clip, checked with the rest before the data is read

    def _loss(self):
        if self.loss == "squared":
            return losses.Squared(clip=self._clip())
        if self.loss == "huber":
            return losses.Huber(tau=self._clip())
        raise ValueError(f"unknown loss {self.loss!r}; allowed: ['huber', 'squared']")

    def _pending_labels(self, X, yi, bounds):
        """With ``clip="auto"`` and a declared label range, the label range narrowed to the labels' private mean
        and spread (``private_bounds.LabelScaleDesign``, ``bounds_share`` of the budget); tightened bounds buy the
        label's range with the features' instead."""
        if not _is_auto(self.clip) or bounds.label_low is None:
            return None
        return LabelScaleDesign(X, yi, bounds.for_features(X.shape[1]), self.fit_intercept, self.bounds_share_)

    def reference_loss(self):
        """The datafit of the objective ``F`` (squared loss without clipping, or Huber)."""
        return losses.Squared() if self.loss == "squared" else self._loss()

    penalty = "elasticnet"
    groups = None

    def predict(self, X):
        """Predictions ``clip(X) @ coef_ + intercept_``, each feature clipped to its fitted range (``bounds_``: the
        declared one, or as narrowed privately) as the model was fitted, then clipped to ``label_range_``.

        The label range is the declared one or its private narrowing: a prediction outside it is further from every
        label the model was fitted on than the nearest end of the range.

        Parameters
        ----------
        X : array-like, sparse matrix or dask array of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            A dask array for a dask array.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Called before ``fit``.
        ValueError
            ``X`` with NaN, or with another number of features (or other column names) than the fit's.
        """
        return np.clip(self._decision(X), *self.label_range_)


class DPLasso(DPElasticNet):
    """Differentially private Lasso: ``DPElasticNet`` with ``l1_ratio=1``.

    Parameters
    ----------
    epsilon, delta, alpha, loss, clip, mechanism, max_iter, rule, calibration, bounds, bounds_share,
    fit_intercept, random_state, verbose, mechanism_options, budget, noise
        As in ``DPElasticNet`` (its Notes say which features the default keeps).
    """

    def __init__(self, epsilon=1.0, delta=None, alpha="auto", loss="squared", clip="auto", mechanism="auto",
                 max_iter=None, rule="gs-r", calibration=None, bounds="private", bounds_share="auto",
                 fit_intercept=True, random_state=None, verbose=0, mechanism_options=None, budget=None, noise="auto"):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.loss = loss
        self.clip = clip
        self.mechanism = mechanism
        self.max_iter = max_iter
        self.rule = rule
        self.calibration = calibration
        self.bounds = bounds
        self.bounds_share = bounds_share
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose
        self.mechanism_options = mechanism_options
        self.budget = budget
        self.noise = noise

    penalty = "l1"
    l1_ratio = 1.0


class DPLinearRegression(DPElasticNet):
    """Differentially private linear regression with any penalty of ``dpsparse.norms``.

    As ``DPElasticNet`` with ``penalty`` and ``groups`` as in ``DPLogisticRegression``
    (e.g. ``penalty="group-l2"`` with ``mechanism="dp-sgd"`` for a private group Lasso).
    """

    def __init__(self, epsilon=1.0, delta=None, alpha="auto", penalty="l1", l1_ratio=0.5, groups=None,
                 loss="squared", clip="auto", mechanism="auto", max_iter=None, rule="gs-r", calibration=None,
                 bounds="private", bounds_share="auto", fit_intercept=True, random_state=None, verbose=0,
                 mechanism_options=None, budget=None, noise="auto"):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.groups = groups
        self.loss = loss
        self.clip = clip
        self.mechanism = mechanism
        self.max_iter = max_iter
        self.rule = rule
        self.calibration = calibration
        self.bounds = bounds
        self.bounds_share = bounds_share
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose
        self.mechanism_options = mechanism_options
        self.budget = budget
        self.noise = noise
