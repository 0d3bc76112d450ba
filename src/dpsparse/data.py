"""Data: loaders, public bounds, and the bounded design that mechanisms train on.

Privacy rests on bounds declared before seeing the data: the sensitivities of Kumar & Deisenroth's differentially
private ERM with sparsity-inducing norms, and of every other mechanism here, hold for bounded features and labels,
so the bounds must not be read off the records. ``Bounds`` holds per-feature ranges, a label range and an
optional row-norm bound; ``prepare`` maps each feature affinely from its public range onto [-1, 1] (sparse input:
the same map, kept implicit as a sparse matrix plus a rank-one shift, ``affine.ShiftedSparse``, never densified),
clips what falls outside and counts it
(the rows themselves are never reported), maps labels onto [-1, 1] (regression) or
{-1, +1} (binary classification) and appends the intercept column of ones. Without an
intercept the features and labels are only scaled into [-1, 1] (by the largest magnitude of
their range), never shifted, so that the model passes through the origin of the original
units, as ``fit_intercept=False`` does in scikit-learn.

Bounds computed from the private data (``bounds_from_data``) raise a
``PrivacyLeakWarning``; a fit that uses them carries no privacy guarantee.
"""
from __future__ import annotations

import csv
import dataclasses
import difflib
import gzip
import json
import math
import re
import warnings
import zlib
from dataclasses import dataclass, field
from importlib import resources
from itertools import repeat
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import affine, distributed
from ._arrays import uniform_view
from .exceptions import ClippingWarning, PrivacyLeakWarning

__all__ = [
    "BUNDLED",
    "MISSING_REMEDY",
    "BoundedDesign",
    "Bounds",
    "bounds_from_data",
    "check_data",
    "check_feature_names",
    "clipping_warnings",
    "dense_if_dense",
    "design_row_norm",
    "linear_decision",
    "data_format",
    "load",
    "load_bundled",
    "load_csv",
    "load_svmlight",
    "prepare",
    "validated",
]

BUNDLED = {"breast_cancer": "classification", "diabetes": "regression"}


CLIPPED_WARNING_SHARE = 0.05
"""A larger share of clipped feature values, or of clipped labels, gets a ``ClippingWarning``."""


def check_feature_names(declared, names):
    """ValueError when the bounds' ``feature_names`` and the data's column names (either may be None: nothing to
    compare) differ: the ranges are matched to the columns by position, so a column in another place would be
    clipped to another feature's range. Reads names only, no value."""
    if declared is None or names is None:
        return
    theirs, ours = [str(v) for v in declared], [str(v) for v in names]
    if theirs == ours:
        return
    k = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))
    fix = ("reorder the data's columns as the bounds name them (X[bounds.feature_names])"
           if sorted(theirs) == sorted(ours) else "declare bounds for the data's columns")
    raise ValueError(f"bounds: the ranges are for the features {theirs[:3]}... in that order, but the data's columns "
                     f"are {ours[:3]}...: column {k} is {ours[k] if k < len(ours) else 'missing'!r} in the data and "
                     f"{theirs[k] if k < len(theirs) else 'missing'!r} in the bounds; {fix}")


_USER = 4  # the stack level of the user's ``fit`` seen from ``clipping_warnings`` (its caller's ``_design``)


def _warn_multi_hot(X, groups):
    """Warn (``ClippingWarning``) when more than ``CLIPPED_WARNING_SHARE`` of the records hold more than one
    nonzero value in a declared one-hot group: columns that are not one-hot (several answers at once), whose records a
    mechanism keeping the groups scales down to their norm bound. Counted on the private data, for the data holder."""
    broken = np.zeros(X.shape[0], dtype=bool)
    for group in groups:
        block = X[:, group]
        broken |= np.asarray((block != 0).sum(axis=1)).ravel() > 1
    count = int(broken.sum())
    if count > CLIPPED_WARNING_SHARE * X.shape[0]:
        warnings.warn(f"{count} records ({count / X.shape[0]:.0%}) hold more than one nonzero value in a declared "
                      "one-hot group (bounds' one_hot): DP-GD and DP-SGD scale them down to the groups' norm bound; "
                      f"check that each group's columns encode one answer ({HOLDER_ONLY})", ClippingWarning,
                      stacklevel=_USER)


def _worst_columns(by_column, many, declared, n):
    """The (up to) three columns of ``many`` with the most values outside their bounds, named (``declared`` feature
    names, else ``column j``) with their share of the ``n`` rows."""
    named = declared is not None and len(declared) == by_column.size
    names = [str(v) for v in declared] if named else [f"column {j}" for j in range(by_column.size)]
    worst = many[np.argsort(-by_column[many], kind="stable")][:3]
    said = ", ".join(f"{names[j]} ({by_column[j] / n:.0%} of its rows)" for j in worst)
    return said if named or not said else said + " (counted from 0, as X[:, j]: a LIBSVM file's feature j + 1)"


def clipping_warnings(X, y, bounds):
    """Warn (``ClippingWarning``) when more than ``CLIPPED_WARNING_SHARE`` of the stored feature values, of one
    feature's rows (the warning names up to three such features), or of the labels lie outside the declared
    ``bounds`` (whatever narrower range a fit then buys inside them): a feature in other units than its bounds.
    Said at the line of the user's ``fit`` (``_USER``).

    Counted on the private data: for the data holder, never released. A dask array is not counted (a pass
    over the data for a warning). Nothing as large as ``X`` is allocated (``_count_outside``)."""
    if distributed.is_dask(X):
        return
    full = bounds.for_features(X.shape[1])
    low, high = np.asarray(full.feature_low, dtype=float), np.asarray(full.feature_high, dtype=float)
    if sp.issparse(X):
        X = sp.csr_matrix(X)  # the estimators' format: no copy
        by_column, stored = _count_outside(X.data, X.indices, low, high, columns=X.shape[1]), X.nnz
    else:
        X = np.asarray(X)
        by_column, stored = _count_outside(X, None, low, high, columns=X.shape[1]), X.size
    outside = int(by_column.sum())
    many = np.flatnonzero(by_column > CLIPPED_WARNING_SHARE * X.shape[0])
    said = _worst_columns(by_column, many, full.feature_names, X.shape[0])
    if outside > CLIPPED_WARNING_SHARE * max(stored, 1):
        most = f"; most in {said}" if many.size else ""
        warnings.warn(f"{outside} feature values ({outside / stored:.0%}) lie outside the declared bounds and are "
                      f"clipped{most}: check that the bounds match the data's units ({HOLDER_ONLY})", ClippingWarning,
                      stacklevel=_USER)
    elif many.size:
        warnings.warn(f"{many.size} feature(s) have more than {CLIPPED_WARNING_SHARE:.0%} of their values outside "
                      f"the declared bounds, clipped: {said}; check that their bounds match their units "
                      f"({HOLDER_ONLY})", ClippingWarning, stacklevel=_USER)
    if full.one_hot is not None:
        _warn_multi_hot(X, full.one_hot)
    if bounds.label_low is not None:
        labels = np.asarray(y, dtype=float)
        outside = int(np.sum((labels < bounds.label_low) | (labels > bounds.label_high)))
        if outside > CLIPPED_WARNING_SHARE * labels.size:
            warnings.warn(f"{outside} labels ({outside / labels.size:.0%}) lie outside the declared label range "
                          f"and are clipped: check that it matches the labels' units ({HOLDER_ONLY})", ClippingWarning,
                          stacklevel=_USER)


def _count_outside(values, cols, low, high, blocks=32, columns=None):
    """How many entries of ``values`` lie outside their feature's ``[low, high]``; with ``columns`` (p), an int
    array (p,) of the counts by column.

    ``values`` is a dense (n, p) or (n,) array (``cols`` None) or the stored values of a CSR matrix with their
    column indices ``cols``. Counted over about ``blocks`` blocks of rows (or of stored values), so that the
    temporaries (comparisons, the gathered bounds) stay a small fraction of ``values``.
    """
    count = 0 if columns is None else np.zeros(columns, dtype=np.int64)
    indices = repeat(None) if cols is None else _row_blocks(cols, blocks)
    for part, index in zip(_row_blocks(values, blocks), indices):
        lo, hi = (low, high) if index is None else (low[index], high[index])
        if columns is None:
            count += int(np.count_nonzero(part < lo)) + int(np.count_nonzero(part > hi))
        elif index is None:
            count += np.count_nonzero((part < lo) | (part > hi), axis=0)
        else:
            count += np.bincount(index[(part < lo) | (part > hi)], minlength=columns)
    return count


def _row_blocks(values, blocks):
    """Views of about ``blocks`` consecutive blocks of rows of ``values`` (every row once)."""
    step = max(1, -(-values.shape[0] // blocks))
    return (values[start:start + step] for start in range(0, values.shape[0], step))


HOLDER_ONLY = "a count on the private data, for the data holder only: not private, not for publication"

CLASSES_FROM_DATA = ("the label set (classes_) was read from the private data: it sets the number of fits and the "
                     "model's shape, so there is no privacy guarantee; declare it (classes= or the bounds' classes in "
                     "Python, --classes or a schema in the CLI) or let it be selected privately "
                     "(classes='private', the default when neither classes nor bounds declare it)")


def distinct_labels(classes):
    """The sorted labels of a declared label set; None where it lists fewer than two, or one twice (a typo that
    would otherwise vanish without a word)."""
    labels = np.asarray(classes)
    unique = np.unique(labels)
    return unique if 2 <= unique.size == labels.size else None


@dataclass
class Bounds:
    """Public bounds on the records.

    Parameters
    ----------
    feature_low, feature_high : array-like of shape (p,), or numbers
        Public range of each feature, ``feature_low <= feature_high``; two numbers give one
        range for every feature (wide data), completed by ``exceptions``.
    label_low, label_high : float or None
        Public range of the label (regression only).
    row_norm : float or None
        Public bound on the L2 norm of a record after the features are mapped onto
        [-1, 1]; rows above it are scaled down to it.
    source : str
        Where the bounds come from, for the privacy report.
    public : bool
        False when the bounds were computed from the private data.
    exceptions : dict or None
        With one range for every feature: ``{column index: (low, high)}`` for the features
        whose range differs (0-based; JSON keys are strings).
    classes : list or None
        The public label set of a classification (2 or more distinct labels), declared with
        the ranges; a classifier without ``classes=`` takes it from here.
    one_hot : list of lists of int, or None
        Groups of features (0-based column indices, disjoint) that one-hot encode a categorical
        answer: each declared on [0, 1], with at most one 1 in a group in every record (what
        ``schema.Schema.bounds`` declares for its categorical columns). For DP-GD and DP-SGD, which
        add noise for a bound on the records' norms, their zeros are kept (mapped by scaling only,
        whatever ``fit_intercept``) and the bound counts each group once: at most
        ``sqrt(groups + other features)`` (``record_norm``) instead of ``sqrt(p)``; a record
        above it (one that breaks the declaration) is scaled down to it, like any row above a
        declared ``row_norm``. The other mechanisms map the indicators as any feature
        (docs/bounds.md, "One-hot groups").
    n_features : int or None
        The number of features, declared with one range for every feature (with per-feature
        ranges, their number). An svmlight file lists only the indices present in its records,
        so its width must be declared: read off the file, one record with a rare high index
        would widen the released model.
    """

    feature_low: np.ndarray
    feature_high: np.ndarray
    label_low: float | None = None
    label_high: float | None = None
    row_norm: float | None = None
    source: str = "declared by the user"
    public: bool = True
    feature_names: list | None = None
    exceptions: dict | None = None
    classes: list | None = None
    n_features: int | None = None
    one_hot: list | None = None
    uniform: bool = field(init=False, repr=False, default=False)

    def __repr__(self):
        """Short: the ranges summarized (an estimator's repr and its errors show it whole)."""
        lo, hi = np.atleast_1d(self.feature_low), np.atleast_1d(self.feature_high)
        same = lo.size == 1 or (np.all(lo == lo[0]) and np.all(hi == hi[0]))
        ranges = (f"features in [{lo[0]:g}, {hi[0]:g}]" if same else
                  f"{lo.size} feature ranges within [{lo.min():g}, {hi.max():g}]")
        if lo.size > 1 and same:
            ranges = f"{lo.size} {ranges}"
        extra = [f"{k}={getattr(self, k)!r}" for k in ("label_low", "label_high", "row_norm", "classes")
                 if getattr(self, k) is not None]
        if self.one_hot is not None:
            extra.append(f"{len(self.one_hot)} one-hot groups")
        return f"Bounds({', '.join([ranges, *extra, f'source={self.source!r}'])})"

    def __post_init__(self):
        for name in ("feature_low", "feature_high"):
            if isinstance(getattr(self, name), dict):
                raise ValueError(f"bounds: {name} must be a number or one value per feature in the columns' order, "
                                 "got a dict: give lists in the columns' order (feature_names=[...] may name them; "
                                 "docs/bounds.md)")
            if np.ndim(getattr(self, name)) > 1:
                raise ValueError(f"bounds: {name} must be a number or a 1-d array of one value per feature, got an "
                                 f"array of shape {np.shape(getattr(self, name))}")
        self.uniform = np.ndim(self.feature_low) == 0 and np.ndim(self.feature_high) == 0
        self.feature_low = np.asarray(self.feature_low, dtype=float).reshape(-1)  # a view of a uniform_view
        self.feature_high = np.asarray(self.feature_high, dtype=float).reshape(-1)
        self._check_exceptions()
        lo, hi = self.feature_low, self.feature_high
        if lo.shape != hi.shape:
            raise ValueError(f"bounds: feature_low has {lo.size} entries, feature_high {hi.size}")
        self._check_n_features()
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise ValueError("bounds: feature ranges must be finite numbers")
        if np.any(lo > hi):
            j = int(np.argmax(lo > hi))
            raise ValueError(f"bounds: feature {j} has feature_low {lo[j]} > feature_high {hi[j]}")
        if (self.label_low is None) != (self.label_high is None):
            raise ValueError("bounds: give both label_low and label_high, or neither")
        if self.label_low is not None:
            self.label_low, self.label_high = float(self.label_low), float(self.label_high)
            if not (np.isfinite(self.label_low) and np.isfinite(self.label_high)) or self.label_low >= self.label_high:
                raise ValueError(
                    f"bounds: the label range must be finite with label_low < label_high, "
                    f"got [{self.label_low}, {self.label_high}]"
                )
        if self.row_norm is not None and not (np.isfinite(self.row_norm) and self.row_norm > 0):
            raise ValueError(f"bounds: row_norm must be a finite number > 0, got {self.row_norm!r}")
        if self.classes is not None:
            classes = distinct_labels(self.classes)
            if classes is None:
                raise ValueError(f"bounds: classes must list at least 2 distinct labels, got {self.classes!r}")
            self.classes = classes.tolist()
        self._check_one_hot()
        if self.one_hot is not None and not self.uniform:
            self._check_one_hot_columns(self.feature_low.size)

    def _check_one_hot(self):
        """``one_hot``: disjoint non-empty groups of column indices >= 0, as lists of ints."""
        if self.one_hot is None:
            return
        groups, seen = [], set()
        for group in self.one_hot if isinstance(self.one_hot, (list, tuple, np.ndarray)) else [None]:
            columns = list(group) if isinstance(group, (list, tuple, np.ndarray)) else None
            if not columns or any(isinstance(j, bool) or not isinstance(j, (int, np.integer)) or j < 0
                                  for j in columns):
                raise ValueError(f"bounds: one_hot must be a list of groups, each a non-empty list of integer column "
                                 f"indices >= 0 (0-based), got {self.one_hot!r}")
            repeated = [j for j in columns if columns.count(j) > 1]
            if repeated:
                raise ValueError(f"bounds: one_hot group {columns} names column {repeated[0]} twice")
            shared = sorted(seen.intersection(columns))
            if shared:
                raise ValueError(f"bounds: one_hot groups must be disjoint, column {shared[0]} is in two groups")
            seen.update(int(j) for j in columns)
            groups.append([int(j) for j in columns])
        self.one_hot = groups or None

    def _check_one_hot_columns(self, p):
        """The one-hot columns exist among ``p`` features and are declared on [0, 1]."""
        columns = np.array([j for group in self.one_hot for j in group])
        if columns.max() >= p:
            raise ValueError(f"bounds: one_hot names column {columns.max()}, but there are {p} features")
        lo, hi = np.broadcast_to(self.feature_low, (p,)), np.broadcast_to(self.feature_high, (p,))
        off = columns[(lo[columns] != 0.0) | (hi[columns] != 1.0)]
        if off.size:
            j = int(off[0])
            raise ValueError(f"bounds: one_hot column {j} must be declared on [0, 1], got [{lo[j]:g}, {hi[j]:g}]")

    def record_norm(self, p):
        """Public bound on the L2 norm of a record of ``p`` features once mapped (``prepare``): the declared
        ``row_norm``, lowered with one-hot groups to ``sqrt(groups + other features)`` (each group's indicators are
        0 or 1, at most one of them 1); None when neither bounds it (then ``sqrt(p)`` does)."""
        if self.one_hot is None:
            return self.row_norm
        bound = math.sqrt(len(self.one_hot) + p - sum(len(group) for group in self.one_hot))
        return bound if self.row_norm is None else min(float(self.row_norm), bound)

    def _check_exceptions(self):
        if not self.exceptions:
            self.exceptions = None
            return
        if not self.uniform:
            raise ValueError("bounds: exceptions need one range for every feature (feature_low and feature_high "
                             "as two numbers)")
        checked = {}
        for key, rng in self.exceptions.items():
            try:
                j, (lo, hi) = int(key), rng
                lo, hi = float(lo), float(hi)
            except (TypeError, ValueError):
                raise ValueError(f"bounds: exception {key!r}: {rng!r} must map a column index to [low, high]") from None
            if j < 0 or not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
                raise ValueError(f"bounds: exception {key!r}: column index >= 0 and finite low <= high, got "
                                 f"[{lo}, {hi}]")
            checked[j] = (lo, hi)
        self.exceptions = checked

    def _check_n_features(self):
        """``n_features``: a whole number >= 1, the number of per-feature ranges where they are given, else of the
        feature names (which it defaults to), above every exception's column."""
        declared = self.n_features
        if declared is not None and (isinstance(declared, bool) or not isinstance(declared, (int, float, np.number))
                                     or not float(declared).is_integer() or declared < 1):
            raise ValueError(f"bounds: n_features must be a whole number >= 1, got {declared!r}")
        if self.uniform and self.feature_names is not None:
            if declared is not None and int(declared) != len(self.feature_names):
                raise ValueError(f"bounds: n_features is {declared}, but feature_names names "
                                 f"{len(self.feature_names)} features")
            declared = len(self.feature_names)
        if not self.uniform:
            if declared is not None and int(declared) != self.feature_low.size:
                raise ValueError(f"bounds: n_features is {declared}, but {self.feature_low.size} feature ranges are "
                                 f"given")
            self.n_features = self.feature_low.size
            return
        self.n_features = None if declared is None else int(declared)
        beyond = [j for j in (self.exceptions or {}) if declared is not None and j >= declared]
        if beyond:
            raise ValueError(f"bounds: exception for column {beyond[0]}, beyond n_features = {declared}")

    def for_features(self, p):
        """The bounds of ``p`` features: one range for every feature expanded (with its exceptions).

        Raises
        ------
        ValueError
            A number of ranges (or a declared ``n_features``) other than ``p``, or an exception beyond the last
            column.
        """
        if self.n_features is not None and self.n_features != p:
            what = "feature ranges given" if not self.uniform else "features declared (n_features)"
            raise ValueError(f"bounds ({self.source}): {self.n_features} {what} for {p} features")
        if not self.uniform:
            return self
        lo, hi = np.full(p, self.feature_low[0]), np.full(p, self.feature_high[0])
        for j, (a, b) in (self.exceptions or {}).items():
            if j >= p:
                raise ValueError(f"bounds ({self.source}): exception for column {j}, but the data has {p} features")
            lo[j], hi[j] = a, b
        return dataclasses.replace(self, feature_low=uniform_view(lo), feature_high=uniform_view(hi), exceptions=None)

    @classmethod
    def from_dict(cls, d):
        """Bounds from a mapping with the keys of the JSON format (see ``docs/bounds.md``)."""
        known = {"feature_low", "feature_high", "label_low", "label_high", "row_norm", "source", "feature_names",
                 "exceptions", "classes", "n_features", "one_hot"}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"bounds: unknown keys {sorted(unknown)}; allowed: {sorted(known)}")
        if "feature_low" not in d or "feature_high" not in d:
            raise ValueError("bounds: feature_low and feature_high are required")
        return cls(**d)

    @classmethod
    def from_json(cls, path):
        """Read bounds from a JSON file (format in ``docs/bounds.md``).

        Raises
        ------
        ValueError
            Unreadable file, invalid JSON or invalid bounds.
        """
        try:
            with open(path) as fh:
                d = json.load(fh)
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"bounds file {str(path)!r} cannot be read: {exc}") from None
        if not isinstance(d, dict):
            raise ValueError(f"bounds file {str(path)!r}: a JSON object with feature_low and feature_high "
                             f"(docs/bounds.md), got a {type(d).__name__}")
        d.setdefault("source", f"file {Path(path).name}")
        try:
            return cls.from_dict(d)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"bounds file {str(path)!r}: {exc} (docs/bounds.md)") from None

    def __eq__(self, other):
        """Equal ranges, label range, row norm, source, classes (arrays compared element by element)."""
        return isinstance(other, Bounds) and self.to_dict() == other.to_dict()

    __hash__ = None  # mutable arrays: not hashable, as a dataclass with eq

    def to_dict(self):
        d = {
            "feature_low": self.feature_low.tolist(),
            "feature_high": self.feature_high.tolist(),
            "label_low": self.label_low,
            "label_high": self.label_high,
            "row_norm": self.row_norm,
            "source": self.source,
        }
        if self.feature_names is not None:
            d["feature_names"] = list(self.feature_names)
        if self.classes is not None:
            d["classes"] = list(self.classes)
        if self.one_hot is not None:
            d["one_hot"] = [list(group) for group in self.one_hot]
        if self.uniform:
            d["feature_low"], d["feature_high"] = float(self.feature_low[0]), float(self.feature_high[0])
            d["exceptions"] = {str(j): list(r) for j, r in (self.exceptions or {}).items()}
            if self.n_features is not None:
                d["n_features"] = self.n_features
        return d


def bounds_from_data(X, y=None, regression=False):
    """Bounds read off the private data: voids the privacy guarantee.

    Warns
    -----
    PrivacyLeakWarning
        Always.
    """
    warnings.warn(
        "no public bounds were given: feature and label ranges are computed from the private "
        "data, so the fit is NOT differentially private. Pass public bounds to get the guarantee.",
        PrivacyLeakWarning,
        stacklevel=3,
    )
    if sp.issparse(X):
        lo, hi = X.min(axis=0).toarray().ravel(), X.max(axis=0).toarray().ravel()
    else:
        lo, hi = X.min(axis=0), X.max(axis=0)
    lab = (float(np.min(y)), float(np.max(y))) if regression else (None, None)
    if lab[0] is not None and lab[0] == lab[1]:
        lab = (lab[0] - 1.0, lab[1] + 1.0)
    return Bounds(lo, hi, *lab, source="computed from the private data (PrivacyLeakWarning)", public=False)


def check_data(X, y=None):
    """Validate a design matrix (and labels): finite, 2-d, non-empty, matching lengths.

    Returns
    -------
    X : ndarray (float64) or CSR matrix
    y : ndarray of shape (n,) or None

    Raises
    ------
    ValueError
        Naming the problem.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=float)
        values = X.data
    else:
        X = np.asarray(X, dtype=float)
        values = X
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d of shape (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X is empty: shape {X.shape}; at least one sample and one feature are needed")
    if not np.all(np.isfinite(values)):
        raise ValueError("X contains NaN or infinity; every feature value must be finite")
    if y is None:
        return X, None
    y = np.asarray(y)
    if y.ndim != 1:
        y = y.ravel() if y.ndim == 2 and y.shape[1] == 1 else y
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {y.shape}")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X and y have different numbers of samples: {X.shape[0]} and {y.shape[0]}")
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity; every label must be finite")
    return X, y


@dataclass
class BoundedDesign:
    """Data mapped onto the public bounds, ready for a mechanism.

    Attributes
    ----------
    X : ndarray or CSR matrix of shape (n, p + fit_intercept)
        Features in [-1, 1] (affine map from the public ranges), intercept column last.
    y : ndarray of shape (n,)
        Labels in [-1, 1] (regression) or {-1, +1} (classification).
    feature_bounds : ndarray of shape (p + fit_intercept,)
        Public bounds ``b_j`` on ``|X[:, j]|`` (all ones).
    scale, shift : ndarray of shape (p,)
        The feature map ``x' = scale * x + shift``.
    label_scale, label_shift : float
        The label map ``y' = label_scale * y + label_shift`` (regression).
    clipped_values, clipped_labels, clipped_rows : int
        How many feature values, labels and row norms fell outside the bounds and were
        clipped (counts only).
    """

    X: object
    y: np.ndarray
    feature_bounds: np.ndarray
    scale: np.ndarray
    shift: np.ndarray
    label_scale: float = 1.0
    label_shift: float = 0.0
    fit_intercept: bool = True
    clipped_values: int = 0
    clipped_labels: int = 0
    clipped_rows: int = 0
    bounds: Bounds = field(default=None, repr=False)
    row_norm: float = None
    source: str = "declared by the user"
    public: bool = True

    def __post_init__(self):
        if self.row_norm is None:
            self.row_norm = float(np.linalg.norm(self.feature_bounds))

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def p(self):
        return self.X.shape[1]

    @property
    def bounds_source(self):
        """Where the bounds come from, for the privacy report."""
        return self.source

    @property
    def bounds_public(self):
        """False when the bounds were read from the private data."""
        return self.public

    @classmethod
    def from_arrays(cls, X, y, feature_bounds, row_norm=None, source="feature_bounds passed by the caller"):
        """A design from arrays and public bounds on them, enforced: each ``|x_ij|`` is clipped
        to ``feature_bounds[j]``, each row to L2 norm ``row_norm`` and each label to [-1, 1], the range every
        mechanism's sensitivity assumes (counted).

        This is how a mechanism called directly (``dpsparse.mechanisms.dp_gcd(X, ...)``)
        receives its data: the bounds it is calibrated for hold by construction.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n, p)
        y : ndarray of shape (n,)
            Labels, +-1 for a classification loss; clipped to [-1, 1].
        feature_bounds : array-like of shape (p,), finite, > 0
        row_norm : float > 0 or None
            Bound on ``||x_i||_2``; the design's bound is ``min(row_norm, ||feature_bounds||_2)``.
        source : str

        Raises
        ------
        ValueError
            Bounds of the wrong length, not finite or not > 0; a bad ``row_norm``.
        """
        n, p = X.shape
        b = np.asarray(feature_bounds, dtype=float)
        if b.shape != (p,) or not np.all(np.isfinite(b)) or np.any(b <= 0):
            raise ValueError(f"feature_bounds must be {p} finite numbers > 0")
        if row_norm is not None and not (np.isfinite(row_norm) and row_norm > 0):
            raise ValueError(f"row_norm must be a finite number > 0, got {row_norm!r}")
        if sp.issparse(X):
            Xb = sp.csr_matrix(X, dtype=float, copy=True)
            Xb.data /= b[Xb.indices]
            clipped = _clip(Xb.data)
            Xb.data *= b[Xb.indices]
        else:
            Xb = np.asarray(X, dtype=float) / b
            clipped = _clip(Xb)
            Xb *= b
        R = float(np.linalg.norm(b)) if row_norm is None else min(float(row_norm), float(np.linalg.norm(b)))
        clipped_rows = _clip_rows_in_place(Xb, R, p)
        yb = np.array(y, dtype=float)
        clipped_labels = _clip(yb)
        return cls(X=Xb, y=yb, feature_bounds=b, scale=np.ones(p), shift=np.zeros(p), fit_intercept=False,
                   clipped_values=clipped, clipped_labels=clipped_labels, clipped_rows=clipped_rows, row_norm=R,
                   source=source)

    def label_range(self):
        """The public label range in the original units: the declared one, else the preimage of [-1, 1] under the
        label map (which, without an intercept, only scales the declared range into [-1, 1])."""
        b = self.bounds
        if b is not None and b.label_low is not None:
            return b.label_low, b.label_high
        return (-1.0 - self.label_shift) / self.label_scale, (1.0 - self.label_shift) / self.label_scale

    def to_original(self, w):
        """Coefficients and intercept of ``w`` (fitted on this design) in the original units.

        Returns
        -------
        coef : ndarray of shape (p,)
        intercept : float
        """
        p = self.scale.size
        w0 = w[p] if self.fit_intercept else 0.0
        # y' = w . (scale x + shift) + w0 and y = (y' - label_shift) / label_scale
        coef = w[:p] * self.scale / self.label_scale
        intercept = (w[:p] @ self.shift + w0 - self.label_shift) / self.label_scale
        return coef, float(intercept)


DENSE_SHARE = 2 / 3
"""A sparse matrix with at least this share of nonzero cells is stored smaller dense (8 bytes a cell against
12 a stored value, its index included)."""


def dense_if_dense(X):
    """``X`` as a dense array when it is a sparse matrix that a dense array stores in less memory (at least
    ``DENSE_SHARE`` of its cells nonzero, e.g. a dense file in svmlight format), else ``X``.

    The model does not change (a sparse design is the same matrix, ``affine.ShiftedSparse``); dense columns
    are read faster. A sparse matrix is never densified.
    """
    if sp.issparse(X) and X.nnz >= DENSE_SHARE * X.shape[0] * X.shape[1]:
        return X.toarray()
    return X


def linear_decision(X, coef, intercept, bounds):
    """``X @ coef.T + intercept`` on ``X`` clipped to the bounds' feature ranges, as ``prepare`` clips
    the training data (the model is a function of the clipped features, so predictions clip too).

    A sparse ``X`` is not densified: its stored values are clipped, and every zero that lies outside
    its range contributes ``coef_j clip(0, low_j, high_j)`` through a constant offset.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    coef : ndarray of shape (p,) or (k, p)
    intercept : float or ndarray of shape (k,)
    bounds : Bounds or None
        None: ``X`` as given.

    Returns
    -------
    ndarray of shape (n,) or (n, k)
    """
    offset = 0.0
    if bounds is not None:
        bounds = bounds.for_features(X.shape[1])
        lo, hi = bounds.feature_low, bounds.feature_high
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=float, copy=True)
            zero = np.clip(0.0, lo, hi)
            X.data = np.clip(X.data, lo[X.indices], hi[X.indices]) - zero[X.indices]
            offset = coef @ zero
        else:
            X = np.clip(X, lo, hi)
    out = np.asarray(X @ np.transpose(coef)) + offset + intercept
    return out.ravel() if np.ndim(coef) == 1 else out


def _feature_map(bounds, fit_intercept=True):
    """``(scale, shift)`` of the map ``x' = scale x + shift`` of each feature into [-1, 1]: onto it (its range's
    centre to 0) with an intercept; without one by scaling only (``x / max(|low|, |high|)``), so that the model
    passes through the origin of the original units as well (``to_original`` gives the intercept 0). The columns of
    one-hot groups (``Bounds.one_hot``) are scaled only either way: their zeros stay zeros, which their row-norm
    bound counts on."""
    lo, hi = bounds.feature_low, bounds.feature_high
    scale, shift = _interval_map(lo, hi, fit_intercept)
    if fit_intercept and bounds.one_hot is not None:
        columns = [j for group in bounds.one_hot for j in group]
        scale[columns], shift[columns] = _interval_map(lo[columns], hi[columns], False)
    return scale, shift


def _interval_map(lo, hi, centred):
    """``(scale, shift)`` taking ``[lo, hi]`` onto [-1, 1] (``centred``), or into it by a scale only; a point
    interval to 0."""
    if centred:
        width = hi - lo
        scale = np.divide(2.0, width, out=np.zeros_like(width, dtype=float), where=width > 0)
        return scale, np.where(width > 0, -1.0 - scale * lo, 0.0)
    reach = np.maximum(np.abs(lo), np.abs(hi))
    return np.divide(1.0, reach, out=np.zeros_like(reach, dtype=float), where=reach > 0), np.zeros_like(reach, float)


def _mapped_dense(X, scale, shift, fit_intercept):
    """``X * scale + shift`` and the column of ones, in one new Fortran array (the one copy of ``X``): the
    coordinate methods read columns."""
    n, p = X.shape
    Xb = np.empty((n, p + fit_intercept), order="F")
    with np.errstate(over="ignore"):  # a value near the largest float maps to +-inf, clipped to +-1 after (_clip)
        np.multiply(X, scale, out=Xb[:, :p])
        np.add(Xb[:, :p], shift, out=Xb[:, :p])
    if fit_intercept:
        Xb[:, p] = 1.0
    return Xb


def _clip_rows_in_place(Xb, bound, p):
    """Scale the rows of a design we own whose first ``p`` columns (the features) have L2 norm above
    ``bound`` down to it, in place; return how many. Sparse: CSC, or CSR when ``p`` is every column."""
    if sp.issparse(Xb):
        if Xb.format == "csc":
            end = Xb.indptr[p]
            rows = Xb.indices[:end]
        else:  # CSR, every column
            end = Xb.indptr[-1]
            rows = np.repeat(np.arange(Xb.shape[0]), np.diff(Xb.indptr))
        sq = np.bincount(rows, weights=Xb.data[:end] ** 2, minlength=Xb.shape[0])
    else:
        sq = np.einsum("ij,ij->i", Xb[:, :p], Xb[:, :p])
    norms = np.sqrt(sq)
    over = norms > bound
    if not over.any():
        return 0
    factor = np.where(over, bound / np.where(over, norms, 1.0), 1.0)
    if sp.issparse(Xb):
        Xb.data[:end] *= factor[rows]
    else:
        Xb[:, :p] *= factor[:, None]
    return int(over.sum())


def _clip(values, blocks=32):
    """Clip to [-1, 1] in place; return the number of values clipped. Runs over about ``blocks`` blocks of rows,
    so that no temporary (the comparisons) is larger than a small fraction of ``values``."""
    count = _count_outside(values, None, -1.0, 1.0, blocks)
    if count:
        for part in _row_blocks(values, blocks):
            np.clip(part, -1.0, 1.0, out=part)
    return count


def design_row_norm(n_features, row_norm, fit_intercept):
    """Public bound on ``||x_i||_2`` over every column a mechanism sees, the intercept included: the features
    (each mapped onto [-1, 1], rows scaled to the declared ``row_norm`` when there is one), then the column of
    ones, ``sqrt(min(row_norm, sqrt(n_features))^2 + fit_intercept)``."""
    feature_norm = math.sqrt(n_features) if row_norm is None else min(float(row_norm), math.sqrt(n_features))
    return float(math.sqrt(feature_norm**2 + fit_intercept))


def prepare(X, y, bounds, classification, fit_intercept=True):
    """Map ``(X, y)`` onto the public bounds (module docstring); clip and count.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask array (chunked by rows) of shape (n, p)
    y : ndarray of shape (n,)
        Regression: real labels. Classification: labels already in {-1, +1}.
    bounds : Bounds
    classification : bool
    fit_intercept : bool

    Returns
    -------
    BoundedDesign

    Raises
    ------
    ValueError
        When the bounds do not match the data or a regression has no label range.
    """
    n, p = X.shape
    bounds = bounds.for_features(p)
    record_norm = bounds.record_norm(p)
    scale, shift = map(uniform_view, _feature_map(bounds, fit_intercept))
    if distributed.is_dask(X):  # mapped chunk by chunk, lazily
        Xb, clipped, clipped_rows = distributed.prepare(X, bounds, fit_intercept)
    elif sp.issparse(X):  # the same map, kept implicit: never densified
        Xb, clipped = affine.from_sparse(X, scale, shift, fit_intercept)
        clipped_rows = affine.clip_rows(Xb, record_norm, p) if record_norm is not None else 0
    else:
        Xb = _mapped_dense(X, scale, shift, fit_intercept)
        clipped = _clip(Xb[:, :p])  # the features, not the ones
        clipped_rows = _clip_rows_in_place(Xb, record_norm, p) if record_norm is not None else 0
    row_norm = design_row_norm(p, record_norm, fit_intercept)
    label_scale, label_shift, clipped_labels = 1.0, 0.0, 0
    yb = np.asarray(y)
    if not (classification and yb.dtype == np.int8):  # the estimators' labels in {-1, +1} stay one byte each
        yb = np.asarray(y, dtype=float)
    if not classification:
        if bounds.label_low is None:
            raise ValueError("bounds: a regression needs a public label range (label_low, label_high)")
        label_scale, label_shift = map(float, _interval_map(np.float64(bounds.label_low),
                                                            np.float64(bounds.label_high), fit_intercept))
        yb = yb * label_scale + label_shift
        clipped_labels = _clip(yb)
    return BoundedDesign(
        X=Xb, y=yb, feature_bounds=uniform_view(np.ones(p + fit_intercept)), scale=scale, shift=shift,
        label_scale=label_scale, label_shift=label_shift, fit_intercept=fit_intercept,
        clipped_values=clipped, clipped_labels=clipped_labels, clipped_rows=clipped_rows, bounds=bounds,
        row_norm=row_norm, source=bounds.source, public=bounds.public,
    )


def _check_file(path):
    if not Path(path).is_file():
        bare = Path(str(path)).suffix == "" and "/" not in str(path)  # perhaps meant as a bundled dataset's name
        hint = f" (the bundled datasets: {', '.join(sorted(BUNDLED))})" if bare else ""
        raise ValueError(f"data file {str(path)!r} does not exist or is not a file{hint}")


def _open(path):
    _check_file(path)
    return gzip.open(path, "rt") if Path(path).suffix == ".gz" else open(path, newline="")


def _open_bytes(path):
    """The file as bytes, decompressed as scikit-learn's svmlight reader does (by the suffix: .gz, .bz2)."""
    import bz2

    suffix = Path(path).suffix
    return gzip.open(path, "rb") if suffix == ".gz" else bz2.open(path, "rb") if suffix == ".bz2" else open(path, "rb")


READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error)
"""What reading a data file can raise short of a bug: a damaged file, not a mistake in the code."""


def check_no_skipped_records(is_record, path, header=False):
    """Refuse a line the reader skips (blank, or a comment) between two records; ``is_record``: one bool a line,
    the first non-skipped line the header where ``header``.

    A record whose line became one would be dropped without a word, and the number of records ``n`` (public under
    the guarantee, and in the released model) would tell the two files apart; every other malformed record is
    refused, so this one is too. Skipped lines before the first record (a comment, a header's) and after the last
    (a file ending in a blank line, as UCI's adult) are kept out of the records as before.

    Raises
    ------
    ValueError
        Naming how many records precede the skipped line (never a line's text).
    """
    records, gap = 0, False
    for record in is_record:
        if record and gap:
            raise ValueError(f"data file {str(path)!r}: a blank or comment line after record {records - header}, "
                             "between records: a record's line turned into one would be dropped without a word and "
                             "change the number of records, which the guarantee takes as public; remove the line, or "
                             "restore the record")
        records += bool(record)
        gap = gap or (records > 0 and not record)


def read_error(path, exc, as_what):
    """The ``ValueError`` for a data file that could not be read (``exc`` one of ``READ_ERRORS``): a ``.gz`` file cut
    short or not compressed is named as such; otherwise the reader's reason. Neither quotes the file's content."""
    if isinstance(exc, gzip.BadGzipFile):  # its words quote the file's first bytes: never shown
        return ValueError(f"data file {str(path)!r} ends in .gz but is not gzip-compressed; drop the .gz suffix if it "
                          "is plain text")
    if isinstance(exc, (EOFError, zlib.error)):
        return ValueError(f"data file {str(path)!r} is a damaged or incomplete gzip file; download or compress it "
                          "again")
    if isinstance(exc, UnicodeDecodeError):
        return ValueError(f"data file {str(path)!r} cannot be read as {as_what}: it is not UTF-8 text ({exc.reason} "
                          f"at byte {exc.start})")
    return ValueError(f"data file {str(path)!r} cannot be read as {as_what}: {exc}")


def load_svmlight(path, n_features=None, zero_based=False):
    """Read a LIBSVM/svmlight file (optionally gzipped) through scikit-learn.

    Parameters
    ----------
    path : str or Path
    n_features : int or None
        The number of features, declared: the file lists only the indices present in its records, so its
        width read off the file would depend on them. None (for files that are not private): the highest
        index present.
    zero_based : bool
        Whether the file's indices start at 0 (scikit-learn's ``dump_svmlight_file``) rather than at 1 (the
        LIBSVM format). Declared, never guessed: scikit-learn's guess (``"auto"``: zero-based when some
        index is 0) would let one record with an index 0 move every feature by one column.

    Returns
    -------
    X : CSR matrix of shape (n, p)
    y : ndarray of shape (n,)

    Raises
    ------
    ValueError
        Missing or unreadable file, no record, an index beyond ``n_features``, or an index 0 in a one-based file
        (the offending line is never quoted).
    """
    from sklearn.datasets import load_svmlight_file

    _check_file(path)
    try:
        with _open_bytes(path) as fh:  # lines as scikit-learn's parser splits them: bytes, at b"\n" only
            check_no_skipped_records((bool(line.split(b"#", 1)[0].split()) for line in fh), path)
    except READ_ERRORS as exc:
        raise read_error(path, exc, "svmlight") from None
    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, zero_based=bool(zero_based))
    except READ_ERRORS as exc:
        raise read_error(path, exc, "svmlight") from None
    except Exception as exc:  # the parser's words quote the line it failed on: a record, never printed
        text = str(exc)
        why = (f"it has features beyond the {n_features} declared" + (
                   " (with --zero-based, the last feature of a file whose indices start at 1 is read as one more: "
                   "drop --zero-based if its indices start at 1)" if zero_based else "") if "n_features" in text else
               "it has a feature index 0, but LIBSVM's indices start at 1; a file written with indices from 0 "
               "(scikit-learn's dump_svmlight_file) is read with --zero-based" if "index 0" in text.lower() else
               "a line is not 'label index:value ...' (not shown here, in case it is a record); a CSV file is read "
               "with --format csv or a schema")
        raise ValueError(f"data file {str(path)!r} cannot be read as svmlight: {why}") from None
    if X.shape[0] == 0:
        raise ValueError(f"data file {str(path)!r} has no records")
    return sp.csr_matrix(X), y


def _near_miss(name, header):
    """``"; did you mean 'x'?"`` for the one header name within a typo of ``name`` (``difflib``'s ratio >= 0.8, case
    ignored). Where the first line is a record (a file without a header line), that is one of its text fields, close
    to what the user typed; no other field is shown."""
    lower = {h.lower(): h for h in header}
    close = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.8)
    return f"; did you mean {lower[close[0]]!r}?" if close else ""


def load_csv(path, target=None):
    """Read a CSV file with a header; ``target`` names the label column.

    Returns
    -------
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,), or None when ``target`` is None
    feature_names : list of str

    Raises
    ------
    ValueError
        Missing file, missing target column, or a non-numeric value (the column is named).
    """
    try:
        with _open(path) as fh:
            rows = list(csv.reader(fh))
    except READ_ERRORS as exc:
        raise read_error(path, exc, "CSV") from None
    if len(rows) < 2:
        raise ValueError(f"data file {str(path)!r} has no data rows")
    header = [h.strip() for h in rows[0]]
    _check_commas(header, path)
    check_header(header, path, "give the file a header line of names, or read it through a schema (dpsparse schema "
                 "--help)")
    if target is not None and target not in header:
        raise ValueError(f"target column {target!r} is not among the {len(header)} names of the header line of "
                         f"{str(path)!r}{_near_miss(target, header)} (the line's other fields are not shown: it may "
                         "be a record, if the file has no header line); a file without a header line is read through "
                         "a schema (dpsparse schema --help)")
    check_no_skipped_records((bool(r) for r in rows), path, header=True)
    rows = [r for r in rows[1:] if r]
    if any(len(r) != len(header) for r in rows):
        raise ValueError(f"data file {str(path)!r}: every row must have {len(header)} fields")
    cols = list(zip(*rows))
    t = header.index(target) if target is not None else -1
    values = []
    for k, col in enumerate(cols):
        what = f"the target column {target!r}" if k == t else f"column {k + 1} (of {len(header)})"
        try:
            values.append(np.array(col, dtype=float))
        except ValueError:
            raise ValueError(f"data file {str(path)!r}: " + _not_numeric(what, k == t, col)) from None
        if not np.all(np.isfinite(values[-1])):
            raise ValueError(f"data file {str(path)!r}: {what} has missing or infinite values ('nan', 'inf'): "
                             f"{MISSING_REMEDY}")
    X = np.column_stack([v for k, v in enumerate(values) if k != t])
    return X, (values[t] if t >= 0 else None), [h for k, h in enumerate(header) if k != t]


MISSING_REMEDY = ("drop those records, or replace a missing value by a public constant (one that does not depend on "
                  "the records: an imputer that learns a mean from the data is not private)")
"""What to do with a missing value, in every message that finds one."""


def validated(estimator, *args, **kwargs):
    """scikit-learn's ``validate_data`` (the estimators' and transformers' check of X and y), its ValueErrors told
    without the data's values: scikit-learn prints a 1-D array whole and a text value that is not a number, and
    either may be a record."""
    from sklearn.utils.validation import validate_data  # here: the CLI's parser does not need scikit-learn

    try:
        return validate_data(estimator, *args, **kwargs)
    except ValueError as exc:
        raise ValueError(without_values(str(exc))) from None


def without_values(message):
    """``message`` of a failed validation, with what to do, and no value of the data in it."""
    if "NaN" in message:
        return (f"{message.splitlines()[0].split('.')[0]}: {MISSING_REMEDY}; for a raw CSV, a schema declares each "
                "column's missing value (docs/schema.md)")
    if "infinity" in message:
        return (f"{message.splitlines()[0].rstrip('.')}: drop those records, or replace an infinite value by a "
                "public constant (the feature's declared bound, say)")
    if "could not convert" in message:
        return ("the data has non-numeric values (not shown here, in case they are records): a table with text or "
                "categories is read through a schema, which maps them to numbers (dpsparse.schema.load_schema, "
                "docs/schema.md)")
    if message.startswith("Expected 2D array"):
        got = message.split(" instead")[0][len("Expected 2D array, "):]
        return (f"X must be 2-D, of shape (n_samples, n_features); {got} instead (its values not shown here, in case "
                "they are records). Reshape your data: X.reshape(-1, 1) for one feature, X.reshape(1, -1) for one "
                "sample")
    return re.sub(r"array=.*?(?=\n[A-Z]|$)", "array=(not shown)", message, flags=re.DOTALL)


def _not_numeric(what, is_target, column):
    """Why a column of a plain CSV file could not be read as numbers, and what to do. Neither a value nor the header's
    name is shown (a header line of text may be a record)."""
    if any(not v.strip() for v in column):
        return f"{what} has missing values (empty fields): {MISSING_REMEDY}"
    if is_target:
        return (f"{what} has text labels: a file with text labels or categories is read through a schema, which "
                "maps them to the declared classes (dpsparse schema --help)")
    return (f"{what} has non-numeric values: a raw file with categories is read through a schema (dpsparse schema "
            "--help)")


OTHER_DELIMITERS = {";": "';'", "\t": "tab", "|": "'|'"}


def _check_commas(header, path):
    """Refuse a file whose first line has no comma but another delimiter (a spreadsheet's ';' export, a TSV file):
    read as commas, it would be one column. The line is not shown."""
    found = [name for d, name in OTHER_DELIMITERS.items() if len(header) == 1 and d in header[0]]
    if found:
        raise ValueError(f"data file {str(path)!r}: its first line has no comma but a {found[0]} delimiter; a plain "
                         "CSV file is read with commas, so convert it, or read it through a schema with its delimiter "
                         f"(dpsparse schema --data {str(path)!r} --delimiter {found[0]}, then fit --schema)")


def check_header(fields, path, remedy):
    """Refuse a first line that holds a number (or svmlight's ``index:value``): it may be a record, not column
    names, and the names go into the model file. The fields are never printed (``remedy``: what to do instead).

    Raises
    ------
    ValueError
    """
    if any(_is_number(h) or ":" in h for h in fields):
        raise ValueError(f"data file {str(path)!r}: its first line holds a number, so it may be a record rather than "
                         f"column names (they would become the features' names in the model file; the line is not "
                         f"shown here); {remedy}")


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def data_format(path, format=None):
    """``format`` if given (``svmlight`` or ``csv``), else from the file extension."""
    if format is None:
        return "csv" if str(path).lower().removesuffix(".gz").endswith(".csv") else "svmlight"
    if format not in ("svmlight", "csv"):
        raise ValueError(f"unknown data format {format!r}; allowed: 'svmlight', 'csv'")
    return format


def load(path, format=None, target=None, n_features=None, zero_based=False):
    """Load a labelled data file: svmlight (``n_features`` and ``zero_based`` as ``load_svmlight``), or CSV with
    the label column ``target``.

    Returns
    -------
    X, y, feature_names (None for svmlight)
    """
    if data_format(path, format) == "svmlight":
        return (*load_svmlight(path, n_features, zero_based), None)
    _check_file(path)
    if not target:
        raise ValueError("a CSV file needs the name of its label column (--target)")
    return load_csv(path, target)


def load_bundled(name):
    """A bundled dataset with its public bounds.

    ``breast_cancer`` (binary, 569 x 30; bounds: the published Min/Max of its description)
    and ``diabetes`` (regression, 442 x 10, unscaled; bounds: a-priori clinical ranges).

    Returns
    -------
    X, y, bounds, feature_names
    """
    from sklearn import datasets

    if name not in BUNDLED:
        raise ValueError(f"unknown bundled dataset {name!r}; allowed: {sorted(BUNDLED)}")
    if name == "breast_cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True)
    else:
        X, y = datasets.load_diabetes(return_X_y=True, scaled=False)
    d = json.loads(resources.files("dpsparse.datasets").joinpath(f"{name}_bounds.json").read_text())
    bounds = Bounds.from_dict(d)
    return X, y, bounds, bounds.feature_names
