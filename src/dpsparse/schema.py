"""Schema files: raw tabular data (CSV, with or without a header) with public metadata.

A schema (JSON, format in docs/schema.md) declares the columns of a CSV file in order,
the target, and for each feature its type with public metadata: ``numeric`` with a range
(and an optional public transform, ``log1p``, applied after capping to the range),
``categorical`` with its list of categories (one-hot, values outside the list and missing
values go to an ``other`` column), or ``drop``. The target declares its classes (each
with the spellings that mean it) or, for a regression, its range. Every number that
shapes the model comes from the schema, never from the values: the bounds of the
encoded features follow from it (``Schema.bounds``), so a fit is private without a
separate bounds file.
"""
from __future__ import annotations

import csv
import difflib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .data import READ_ERRORS, Bounds, _check_file, _open, check_header, check_no_skipped_records, read_error

__all__ = ["FORMAT", "Schema", "load_schema", "template"]

FORMAT = "dpsparse-schema/1"
OTHER = "other"
TYPES = ("numeric", "categorical", "drop")
TRANSFORMS = {"log1p": np.log1p}


@dataclass(frozen=True)
class Column:
    """One column of the file: ``name``, ``type`` and its public metadata."""

    name: str
    type: str
    range: tuple | None = None
    transform: str | None = None
    categories: tuple = ()
    fill: float | None = None

    def encoded_names(self):
        if self.type == "numeric":  # a transformed column is named in the units of its values
            return [f"{self.transform}({self.name})" if self.transform else self.name]
        if self.type == "categorical":
            return [f"{self.name}={c}" for c in (*self.categories, OTHER)]
        return []

    def encoded_range(self):
        """(low, high) of each encoded column."""
        if self.type == "numeric":
            lo, hi = self.range
            f = TRANSFORMS.get(self.transform, lambda v: v)
            return [(float(f(lo)), float(f(hi)))]
        return [(0.0, 1.0)] * (len(self.categories) + 1)


@dataclass(frozen=True)
class Target:
    """The label column: ``classes`` (label -> spellings) or a regression ``range``."""

    name: str
    classes: dict | None = None
    range: tuple | None = None

    def encode(self, values, path):
        """Labels as the declared class names (classification) or floats (regression)."""
        values = np.char.strip(np.asarray(values, dtype=str))
        if self.classes is None:
            return _numbers(values, self.name, path, None)
        spelling = {s: label for label, spellings in self.classes.items() for s in spellings}
        unknown = sorted(set(np.unique(values)) - set(spelling))
        if unknown:
            raise ValueError(f"{path}: target column {self.name!r} has {len(unknown)} value(s) outside the "
                             f"schema's classes {list(self.classes)} (add them as spellings of a class)")
        return np.array([spelling[v] for v in values], dtype=object).astype(str)


@dataclass(frozen=True)
class Schema:
    """A parsed schema file (``load_schema``)."""

    columns: tuple
    target: Target
    header: bool
    delimiter: str
    missing: tuple
    comment: str | None
    source: str
    note: str = ""
    """The schema file's ``note``: public words on how the coding was made (the model file and card carry it)."""

    @property
    def features(self):
        return [c for c in self.columns if c.type != "drop" and c.name != self.target.name]

    @property
    def feature_names(self):
        return [name for c in self.features for name in c.encoded_names()]

    @property
    def classes(self):
        return None if self.target.classes is None else np.array(list(self.target.classes), dtype=str)

    def bounds(self):
        """The public ``Bounds`` of the encoded features, with the label range of a regression or the classes of a
        classification; each categorical column's indicators (its categories and ``other``: exactly one is 1) form
        a one-hot group (``Bounds.one_hot``)."""
        ranges = [c.encoded_range() for c in self.features]
        lo, hi = map(list, zip(*(r for block in ranges for r in block)))
        starts = np.cumsum([0] + [len(block) for block in ranges])
        one_hot = [list(range(start, start + len(block))) for c, start, block in zip(self.features, starts, ranges)
                   if c.type == "categorical"]
        label = self.target.range or (None, None)
        classes = None if self.classes is None else self.classes.tolist()
        return Bounds(feature_low=lo, feature_high=hi, label_low=label[0], label_high=label[1], classes=classes,
                      feature_names=self.feature_names, one_hot=one_hot or None,
                      source=f"schema {self.source} (public metadata)")

    def read(self, path, with_target=True):
        """Read and encode a CSV file.

        Parameters
        ----------
        path : str or Path
        with_target : bool
            False for records to score: their file may hold every column of the schema, or every column but the
            target (told apart by the number of fields of its first line).

        Returns
        -------
        X : ndarray of shape (n, n_encoded_features)
        y : ndarray of shape (n,) (str for classes, float for a regression), or None
        feature_names : list of str

        Raises
        ------
        ValueError
            Missing file, a row with the wrong number of fields, a non-numeric or missing
            numeric value without ``fill``, a target value outside the classes (the column
            is named, never the value's row).
        """
        rows, columns = self._rows(path, with_target)
        cols = {c.name: np.array([r[i] for r in rows], dtype=object) for i, c in enumerate(columns)
                if c.type != "drop" or c.name == self.target.name}
        if with_target and self.target.name not in cols:
            raise ValueError(f"schema {self.source}: the target {self.target.name!r} is not a column")
        blocks = [self._encode(c, cols[c.name], path) for c in self.features]
        X = np.column_stack(blocks) if blocks else np.zeros((len(rows), 0))
        y = self.target.encode(cols[self.target.name], path) if with_target else None
        return X, y, self.feature_names

    def _rows(self, path, with_target=True):
        """The records' fields and the columns they hold: the schema's, or (``with_target`` False and a first line
        one field short) the schema's without the target."""
        _check_file(path)
        unlabelled = tuple(c for c in self.columns if c.name != self.target.name)
        try:
            with _open(path) as fh:
                lines = fh.readlines()
            self._check_comments(lines, path, len(self.columns) if with_target else len(unlabelled))
            rows = list(_reader(lines, self.delimiter, self.comment))
        except READ_ERRORS as exc:
            raise read_error(path, exc, "CSV") from None
        check_no_skipped_records((bool(r) for r in rows), path, self.header)
        rows = [r for r in rows if r]
        columns = unlabelled if not with_target and rows and len(rows[0]) == len(unlabelled) else self.columns
        if self.header:
            self._check_header(rows[0] if rows else [], path, columns)
            rows = rows[1:]
        if not rows:
            raise ValueError(f"data file {str(path)!r} has no data rows")
        bad = sum(len(r) != len(columns) for r in rows)
        if bad:
            without = "" if with_target else f" (or {len(unlabelled)}, without the target {self.target.name!r})"
            raise ValueError(f"data file {str(path)!r}: {bad} rows do not have the schema's {len(columns)} "
                             f"fields{without}")
        return rows, columns

    def _check_comments(self, lines, path, width):
        """Refuse a comment line that may be a record: any after the first line that is not one (the header or a
        record; a categorical value or a dropped column may start with the comment string, and the record would be
        dropped without a word, changing the public number of records), and one before it that has the schema's
        number of fields. A note such as adult.test's first line, ``|1x3 Cross validator``, passes."""
        if not self.comment:
            return
        started = False
        for line in lines:
            if not line.startswith(self.comment):
                started = started or bool(line.strip())
                continue
            if started or len(next(csv.reader([line], delimiter=self.delimiter))) >= width:
                where = "after the first line of the data" if started else "with the schema's number of fields"
                raise ValueError(f"data file {str(path)!r}: a comment line (starting with {self.comment!r}) {where} "
                                 "may be a record: dropped without a word, it would change the number of records, "
                                 "which the guarantee takes as public; remove it, or declare another comment string "
                                 "in the schema")

    def _check_header(self, fields, path, columns):
        """The header line names the schema's columns, in order (the columns are read by position); its fields are
        never printed (a file without a header has a record there).

        Raises
        ------
        ValueError
            A field other than the schema's name at that position (a record taken for a header among them).
        """
        fields = [f.strip().lstrip("\ufeff") for f in fields]  # a byte-order mark (Excel's "CSV UTF-8")
        while fields and not fields[-1]:  # a trailing delimiter
            fields.pop()
        names = [c.name for c in columns]
        wrong = [k for k, (c, f) in enumerate(zip(names, fields)) if c != f.strip()]
        if len(fields) != len(names) or wrong:
            where = (f"{len(fields)} fields for the schema's {len(names)} columns" if len(fields) != len(names) else
                     f"column {wrong[0] + 1} is {names[wrong[0]]!r} in the schema, another name in the header, not "
                     "shown")
            raise ValueError(f"data file {str(path)!r}: its header line does not name the columns of schema "
                             f"{self.source} in order ({where}); the columns are read by position, so a renamed or "
                             "moved column would be read as another: name them as the header does, in its order; if "
                             f"the file has no header line, set \"header\": false in the schema's \"csv\"")

    def _encode(self, column, values, path):
        values = np.char.strip(values.astype(str))
        missing = np.isin(values, self.missing)
        if column.type == "categorical":
            known = np.isin(values, column.categories) & ~missing
            values = np.where(known, values, OTHER).reshape(-1, 1)
            from sklearn.preprocessing import OneHotEncoder

            enc = OneHotEncoder(categories=[[*column.categories, OTHER]], sparse_output=False, dtype=float)
            return enc.fit_transform(values)
        x = _numbers(values, column.name, path, None if column.fill is None else missing)
        if column.fill is not None:
            x[missing] = column.fill
        if not column.transform:
            return x  # data.prepare clips to the range and counts
        lo, hi = column.range
        f = TRANSFORMS[column.transform]
        # the transform of the capped value; a value outside the range stays outside (by 1 after the
        # transform) so that data.prepare clips it to the transformed bound and counts it
        return f(np.clip(x, lo, hi)) + (x > hi) - (x < lo)


def _reader(fh, delimiter, comment):
    """CSV rows of an open file, a line starting with ``comment`` read as a blank line (an empty row), spaces after a
    delimiter ignored."""
    lines = ("\n" if comment and line.startswith(comment) else line for line in fh)
    return csv.reader(lines, delimiter=delimiter, skipinitialspace=True)


def _numbers(values, name, path, missing):
    ok = np.ones(values.shape, bool) if missing is None else ~missing
    try:
        out = np.zeros(values.shape)
        out[ok] = values[ok].astype(float)
    except ValueError:
        raise ValueError(f"{path}: column {name!r} has non-numeric or missing values (declare it categorical; or "
                         "give a public 'fill' value for missing ones and list the file's marker of a missing value, "
                         "such as \"NA\" or \"?\", in the schema's \"csv\": {\"missing\": [...]}; a header line read "
                         "as a record gives this too: \"header\": true)") from None
    return out


def _range(entry, what):
    r = entry.get("range")
    if (not isinstance(r, (list, tuple)) or len(r) != 2 or not all(isinstance(v, (int, float)) for v in r)
            or not all(math.isfinite(v) for v in r) or not r[0] < r[1]):
        raise ValueError(f"{what}: 'range' must be [low, high] with finite low < high, got {r!r} (fill in the "
                         "public range: docs/schema.md)")
    return float(r[0]), float(r[1])


COLUMN_KEYS, TARGET_KEYS = ("name", "type", "range", "categories", "transform", "fill"), ("name", "classes", "range")
CSV_KEYS, TOP_KEYS = ("header", "delimiter", "missing", "comment"), ("format", "note", "csv", "target", "columns")
"""The keys a schema reads at each level; any other is a comment for readers, unless it is a near miss of one."""


def _check_keys(entry, known, what):
    """Refuse a key of ``entry`` that is not in ``known`` but spelled like one (``difflib``'s ratio at least 0.7:
    ``transfrom``, ``rnage``, ``hedaer``): read as a comment, a misspelt ``transform`` or ``fill`` would change the
    model without a word."""
    for key in entry:
        near = difflib.get_close_matches(str(key), known, n=1, cutoff=0.7) if key not in known else []
        if near:
            raise ValueError(f"{what}: key {key!r} is not one the schema reads: did you mean {near[0]!r}? (any other "
                             "key is a comment for readers: rename it if it is one)")


def _column(entry, k):
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ValueError(f"column {k}: each column is an object with a 'name' (docs/schema.md)")
    name, kind = entry["name"], entry.get("type")
    what = f"column {name!r}"
    _check_keys(entry, COLUMN_KEYS, what)
    if kind not in TYPES:
        raise ValueError(f"{what}: 'type' must be one of {list(TYPES)}, got {kind!r}")
    if kind == "drop":
        return Column(name, kind)
    if kind == "categorical":
        cats = entry.get("categories")
        if not isinstance(cats, list) or not cats or not all(isinstance(c, str) for c in cats):
            raise ValueError(f"{what}: 'categories' must be a non-empty list of strings")
        if OTHER in cats or len(set(cats)) != len(cats):
            raise ValueError(f"{what}: categories must be distinct and not {OTHER!r} (it is added)")
        return Column(name, kind, categories=tuple(cats))
    low, high = _range(entry, what)
    transform = entry.get("transform")
    if transform is not None and transform not in TRANSFORMS:
        raise ValueError(f"{what}: 'transform' must be one of {list(TRANSFORMS)} or absent, got {transform!r}")
    if transform == "log1p" and low <= -1:
        raise ValueError(f"{what}: log1p needs a range above -1, got {[low, high]}")
    fill = entry.get("fill")
    if fill is not None and not (isinstance(fill, (int, float)) and low <= fill <= high):
        raise ValueError(f"{what}: 'fill' must be a number in the range {[low, high]}, got {fill!r}")
    return Column(name, kind, range=(low, high), transform=transform, fill=fill)


def _target(d, names):
    t = d.get("target")
    if not isinstance(t, dict) or "name" not in t:
        raise ValueError(f"'target' must be an object whose 'name' is one of the columns {names}")
    _check_keys(t, TARGET_KEYS, f"target {t['name']!r}")
    if t["name"] not in names:
        raise ValueError(f"the target {t['name']!r} is not among the schema's {len(names)} 'columns' {names}: list "
                         "every field of the file in 'columns', the target's too, in the file's order")
    t = {k: v for k, v in t.items() if v is not None or k == "name"}  # a template's "classes": null, left unfilled
    if ("classes" in t) == ("range" in t):
        raise ValueError(f"target {t['name']!r} declares either 'classes' (classification: a list of its labels) or "
                         "'range' (regression: [low, high]), not both; fill in one of them")
    if "range" in t:
        return Target(t["name"], range=_range(t, f"target {t['name']!r}"))
    classes = t["classes"]
    if isinstance(classes, list):
        classes = {str(c): [str(c)] for c in classes}
    if (not isinstance(classes, dict) or len(classes) < 2
            or not all(isinstance(v, list) and all(isinstance(s, str) for s in v) for v in classes.values())):
        raise ValueError(f"target {t['name']!r}: 'classes' must be a list of at least 2 labels, or an object label "
                         "-> list of spellings")
    return Target(t["name"], classes={str(k): [str(s) for s in v] for k, v in classes.items()})


def load_schema(path):
    """Parse and check a schema file (docs/schema.md) before any data is read.

    Raises
    ------
    ValueError
        Unreadable JSON, a wrong ``format``, or a column or target entry that is
        incomplete (each message names the column and the allowed values).
    """
    try:
        with open(path) as fh:
            d = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"schema file {str(path)!r} cannot be read: {exc}") from None
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise ValueError(f"schema file {str(path)!r}: an object with \"format\": \"{FORMAT}\" (docs/schema.md)")
    _check_keys(d, TOP_KEYS, f"schema file {str(path)!r}")
    raw = d.get("columns")
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"schema file {str(path)!r}: 'columns' must be a non-empty list")
    names = [e.get("name") if isinstance(e, dict) else None for e in raw]
    if len(set(names)) != len(names):
        raise ValueError(f"schema file {str(path)!r}: column names must be distinct")
    target = _target(d, names)
    columns = tuple(Column(e["name"], "drop") if e.get("name") == target.name else _column(e, k)
                    for k, e in enumerate(raw))
    csv_opts = d.get("csv", {})
    if not isinstance(csv_opts, dict):
        raise ValueError(f"schema file {str(path)!r}: 'csv' must be an object with keys among {list(CSV_KEYS)}")
    _check_keys(csv_opts, CSV_KEYS, f"schema file {str(path)!r}: csv")
    return Schema(columns=columns, target=target, header=bool(csv_opts.get("header", True)),
                  delimiter=delimiter_of(csv_opts.get("delimiter", ","), f"schema file {str(path)!r}: csv delimiter"),
                  missing=tuple(csv_opts.get("missing", [])),
                  comment=csv_opts.get("comment"), source=Path(path).name, note=str(d.get("note", "")))


TAB_NAMES = ("tab", "\\t")
"""How a tab delimiter may be written on a command line or in a schema, besides the character itself."""


def delimiter_of(text, what="delimiter"):
    """The one-character CSV delimiter ``text`` names (``tab`` or a backslash-t for a tab).

    Raises
    ------
    ValueError
        Not one character, nor a name of the tab.
    """
    if text in TAB_NAMES:
        return "\t"
    if not isinstance(text, str) or len(text) != 1:
        raise ValueError(f"{what} must be one character (or 'tab'), got {text!r}")
    return text


def template(path, header=True, delimiter=",", comment=None, target=None):
    """A schema template for a CSV file, from its first line only.

    The column names come from the header (or are ``column_1`` ... without one; lines
    starting with ``comment`` are skipped); every
    column is left ``numeric`` with an unset range. No value is read to guess a range or
    a category: that would leak the data. The user fills in the public metadata.
    The target is the column named ``target``, or the last one (the note says so).

    Raises
    ------
    ValueError
        An empty file, a bad header, or ``target`` not among the columns.

    Returns
    -------
    dict
        The template (``json.dump`` it).
    """
    delimiter = delimiter_of(delimiter)
    _check_file(path)
    try:
        with _open(path) as fh:
            first = next((r for r in _reader(fh, delimiter, comment) if r), None)
    except READ_ERRORS as exc:
        raise read_error(path, exc, "CSV") from None
    if not first:
        raise ValueError(f"data file {str(path)!r} is empty")
    if header:
        check_header([h.strip() for h in first], path, "without a header line, write the template with --no-header "
                     "(header=False): the columns are then named column_1, column_2, ...")
    names = [h.strip() for h in first] if header else [f"column_{k + 1}" for k in range(len(first))]
    if target is not None and target not in names:
        raise ValueError(f"--target {target!r} is not a column of {Path(path).name}: its columns are {names}")
    chosen = "" if target is not None else (f" The target is the last column, {names[-1]!r}: name another in "
                                            "'target' (or write the template with --target) if it is not.")
    return {
        "format": FORMAT,
        "note": (f"Template for {Path(path).name}, written from its first line only: no value of the data was read "
                 "to guess a range or a category (that would leak it). For each column, set 'type' to numeric "
                 "(with the public 'range' [low, high], optionally 'transform': 'log1p'), categorical (with its "
                 f"public 'categories') or drop; set the target's 'classes' or 'range'.{chosen} See docs/schema.md."),
        "csv": {"header": header, "delimiter": delimiter, "missing": [], "comment": comment},
        "target": {"name": names[-1] if target is None else target, "classes": None},
        "columns": [{"name": n, "type": "numeric", "range": None} for n in names],
    }
