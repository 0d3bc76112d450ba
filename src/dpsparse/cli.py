"""Command line: ``dpsparse fit`` trains a private model, ``dpsparse predict`` applies it.

``dpsparse fit`` prints the privacy report, held-out metrics of the private model beside
the non-private optimum, the relative error ``(F(w) - F*) / (F(0) - F*)`` on the training
data and the support size, and writes the model as JSON. Errors go to stderr with exit
status 2, and nothing is written.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import re
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import __version__, card, data, norms, schema, scoring, solvers
from .accounting import (
    DATA_BOUNDS,
    WEAK_EPSILON,
    PrivacyReport,
    check_privacy_params,
    jsonable,
    weak_delta,
    weak_epsilon,
)
from .exceptions import (
    AbsentClassWarning,
    ClassesFromDataWarning,
    ClippingWarning,
    ConstantPredictorWarning,
    FixedSeedWarning,
    NoBetterThanConstantWarning,
    PrivacyLeakWarning,
    UnselectedLabelWarning,
    WeakGuaranteeWarning,
)
from .mechanisms import REGISTRY, auto
from .noise import FLOATING_POINT, make_noise

# scikit-learn, the estimators and the search are imported where a command needs them, not here: the parser (--help,
# a mistaken flag) then answers in a fraction of the time.

# Options the CLI sets through its own flags (--iterations is every mechanism's n_iter).
_OWN_FLAGS = {"n_iter"}

MODEL_FORMAT = "dpsparse-model/1"
TOP_FEATURES = 5  # the largest coefficients the summary names


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a flag's default unless it is None (then its help says what the default is)."""

    def _get_help_string(self, action):
        if action.default is None or action.default is argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """A mistyped option answered in one line (argparse prints the usage first: 40 lines for ``fit``)."""

    def error(self, message):
        extra = message.split(":", 1)[1].split() if message.startswith("unrecognized arguments") else []
        lists = ("; a list is one argument, its items joined by commas (--classes 0,1)"  # stray items, not options
                 if extra and not all(a.startswith("-") for a in extra) else "")
        self.exit(2, f"{self.prog}: error: {message}{lists}{self._near(extra)} ('{self.prog} --help' lists the "
                     "options)\n")

    def _near(self, extra):
        """``; did you mean --epsilon?`` for each unknown option close to one this command takes."""
        import difflib

        known = [o for action in self._actions for o in action.option_strings]
        hints = {a: close[0] for a in extra if a.startswith("--")
                 for close in [difflib.get_close_matches(a.split("=")[0], known, n=1, cutoff=0.75)] if close}
        if len(hints) == 1:
            return f"; did you mean {next(iter(hints.values()))}?"
        return "; did you mean " + ", ".join(f"{v} (for {k})" for k, v in hints.items()) + "?" if hints else ""

    def parse_args(self, args=None, namespace=None):
        """Options a command lacks are named by that command (``dpsparse fit: error``, ``dpsparse fit --help``)."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            self.commands[parsed.command].error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed


MAX_REPEATS = 100
DEFAULT_TEST_SIZE = 0.25  # the share held out for --private-score, --diagnostics and a sweep
COMPARE_LIMIT = 5e6  # stored values of X up to which the non-private comparison runs by default


def _parser():
    p = _Parser(prog="dpsparse", description="Differentially private sparse learning.")
    p.add_argument("--version", action="version", version=f"dpsparse {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    p.commands = sub.choices  # command name -> its parser
    f = sub.add_parser("fit", help="train a private model and report privacy and accuracy",
                       formatter_class=_HelpFormatter)
    f.add_argument("--epsilon", type=float, default=1.0, help=f"privacy budget epsilon > 0 (above {WEAK_EPSILON:g} "
                   "the guarantee is weak: a warning)")
    f.add_argument("--out", default="model.json", help="where to write the model JSON")
    f.add_argument("--json", action="store_true", help="print the results as JSON")
    f.add_argument("--verbose", action="store_true", help="also print the full privacy report (how the model was "
                   "trained: mechanism, noise scales, sources)")
    f.add_argument("--report", help="also write a model card: .html (figures inline) or .md (figures as PNG beside)")
    f.add_argument("--repeats", type=int, default=1, help=f"fit K times (1 to {MAX_REPEATS}) to show the spread of "
                   "the held-out metric (with --private-score or --diagnostics); each fit spends --epsilon, the "
                   "first is written")
    f.add_argument("--private-score", action="store_true",
                   help="hold out --test-size of the records and release the model's held-out accuracy or R^2 "
                        "with noise, beside the constant predictor's, inside the same epsilon (parallel "
                        "composition: the model is then trained on the rest)")
    f.add_argument("--sweep", help="a results file of 'dpsparse sweep --private-score' whose privacy-utility curve "
                                   "the model card shows (its epsilon adds to the model's when both are published)")
    f.add_argument("--diagnostics", action="store_true",
                   help="also compute on the private data, for the data holder only: held-out metrics of the "
                        "private, constant and non-private models, clipped counts, the relative error. NOT "
                        "differentially private: printed, never written into --out or --report")
    _add_fit_arguments(f)
    w = sub.add_parser("sweep", help="fit at several epsilons and plot the privacy-utility trade-off",
                       formatter_class=_HelpFormatter,
                       description="Each fit is charged its epsilon: the sweep spends the sum (basic composition), "
                                   "printed at the end. Use it on data whose budget may be spent on choosing one.")
    w.add_argument("--epsilons", type=_floats, default="0.1,0.5,1,2,5", help="comma-separated budgets, each > 0")
    w.add_argument("--repeats", type=int, default=3, help=f"fits per epsilon (1 to {MAX_REPEATS})")
    w.add_argument("--out", default="sweep.json", help="where to write the results JSON")
    w.add_argument("--plot", help="where to write the privacy-utility PNG (default: --out with .png: sweep.png)")
    w.add_argument("--report", help="also write a card: .html or .md")
    w.add_argument("--private-score", action="store_true",
                   help="measure each fit by its private score (noisy, on the held-out part, inside that fit's "
                        "epsilon) instead of without noise: a curve that can be published (dpsparse fit --sweep)")
    _add_fit_arguments(w)
    a = sub.add_parser("audit", help="audit a mechanism: sensitivity replay, black-box lower bound, mutation check",
                       formatter_class=_HelpFormatter,
                       description="Checks a mechanism's code, on small synthetic neighbouring datasets, against "
                                   "its own privacy claim (not a model file: a model's mechanism and options are in "
                                   "its report, 'dpsparse report'). Ends with PASS, or FAIL and exit status 1. "
                                   "docs/audit.md explains each check.")
    a.add_argument("--mechanism", choices=sorted(REGISTRY), help="the mechanism to audit (required unless "
                   "--pipeline)")
    a.add_argument("--loss", choices=["logistic", "hinge", "huber", "squared"],
                   help="huber or squared: regression with labels in [-1, 1]; logistic or hinge (DPLinearSVC's): "
                        "labels +-1 (default: squared for adassp, logistic with --one-run and for objective "
                        "perturbation, huber otherwise)")
    a.add_argument("--epsilon", type=float, default=1.0, help="claimed epsilon")
    a.add_argument("--delta", type=float, help="claimed delta (default: 1e-3; with --one-run 1/n^2 for its n "
                   "canaries, the project's default)")
    a.add_argument("--runs", type=int, default=20000, help="black-box runs per dataset (0: replay only)")
    a.add_argument("--mutation", type=float, default=0.25, help="noise factor of the mutant (1: no mutation check)")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--one-run", action="store_true",
                   help="one fit on --canaries records instead (Steinke, Nasr & Jagielski, NeurIPS 2023): an "
                        "epsilon lower bound at 95%% from the canaries' margins, and the mutant's with --mutation")
    a.add_argument("--canaries", type=int, default=1000, help="with --one-run: the number of canary records n "
                   "(random sign rows over twice as many features, or --features)")
    a.add_argument("--features", type=int, help="with --one-run: the canaries' number of features (default: twice "
                   "--canaries)")
    a.add_argument("--pipeline", action="store_true", help="audit the default fits instead of one mechanism: the "
                   "sensitivity replay of every release they make (bounds tightened or bought privately, the label "
                   "set's counts, the clipping threshold, the mechanism the rule chooses) as the estimators run "
                   "them; with --one-run, the one-run bound of the default fit of 'dpsparse fit' (logistic loss, the "
                   "label set selected privately; the bounds [-1, 1] declared, or bought with --private-bounds)")
    a.add_argument("--private-bounds", action="store_true", help="with --one-run --pipeline: the bounds bought "
                   "privately, as 'dpsparse fit' does without --bounds (needs many records per feature)")
    a.add_argument("--json", action="store_true", help="with --one-run: print claim_epsilon, lower_bound, "
                   "mutant_lower_bound as JSON")
    r = sub.add_parser("report", help="print the guarantee and the privacy report of a model file")
    r.add_argument("model", help="a model file written by 'dpsparse fit'")
    q = sub.add_parser("predict", help="apply a model written by 'dpsparse fit'")
    q.add_argument("--model", required=True, help="the model file (JSON) written by 'dpsparse fit --out'")
    _data_arguments(q, "the records to predict: a CSV file with the model's columns, an svmlight file, or the raw "
                       "file of the fit's --schema")
    q.add_argument("--format", choices=["svmlight", "csv"], help="the data's format (default: from its name)")
    q.add_argument("--target", help="label column of a CSV file (dropped before predicting)")
    q.add_argument("--schema", help="the schema the model was fitted with (a raw CSV file, docs/schema.md)")
    t = sub.add_parser("schema", help="write a schema template for a CSV file (docs/schema.md)",
                       formatter_class=_HelpFormatter,
                       description="Names the columns from the first line; reads no value (ranges and categories "
                                   "must be public: fill them in).")
    _data_arguments(t, "CSV file (optionally .gz)")
    t.add_argument("--header", action=argparse.BooleanOptionalAction, default=True,
                   help="the first line names the columns")
    t.add_argument("--delimiter", default=",", help="the one character between fields ('tab' for a tab)")
    t.add_argument("--comment", help="lines starting with this are skipped (e.g. '|' or '#')")
    t.add_argument("--target", help="the label column (default: the last one)")
    t.add_argument("--out", help="where to write the template (default: stdout)")
    q.add_argument("--out", help="file for the predictions (default: stdout)")
    return p


def _data_arguments(parser, help, default=None):
    """The data file, as ``--data FILE`` or as the one positional argument (``dpsparse fit d.csv``):
    ``_data_given`` merges the two after parsing."""
    parser.add_argument("data_file", nargs="?", metavar="DATA", help="the same as --data")
    parser.add_argument("--data", help=help + ("" if default is None else f" (default: {default})"))
    parser.set_defaults(data_default=default)


def _data_given(args):
    """``args.data`` from ``--data`` or the positional ``DATA`` (one of them; the default where it has one)."""
    if "data_file" not in args:
        return
    if args.data is not None and args.data_file is not None and (os.path.realpath(args.data) !=
                                                                 os.path.realpath(args.data_file)):
        raise ValueError(f"an extra argument {args.data_file!r}: the data file is already --data {args.data!r} (a list "
                         "is one argument, its items joined by commas: --classes 0,1)")
    args.data = next((d for d in (args.data, args.data_file, args.data_default) if d is not None), None)
    if args.data is None:
        raise ValueError(f"dpsparse {args.command} needs the data: a file name, or --data FILE")


def _add_fit_arguments(f):
    """The data, model and mechanism arguments of ``fit`` and ``sweep``."""
    _data_arguments(f, "data file (svmlight or CSV, optionally .gz), or a bundled dataset: breast_cancer, diabetes",
                    default="breast_cancer")
    f.add_argument("--format", choices=["svmlight", "csv"], help="file format (default: from the extension)")
    f.add_argument("--n-features", type=int, help="number of features of an svmlight file, >= 1 (default: the "
                   "bounds' n_features or number of ranges): the file lists only the indices its records hold, so "
                   "its width is declared, never read off the private data")
    f.add_argument("--zero-based", action="store_true", help="the svmlight file's indices start at 0 (scikit-learn's "
                   "dump_svmlight_file), not at 1 (LIBSVM)")
    f.add_argument("--target", help="label column of a CSV file")
    f.add_argument("--schema", help="schema JSON of a raw CSV file: columns, types, public ranges and categories, "
                   "target and classes (docs/schema.md; 'dpsparse schema' writes a template); replaces --target, "
                   "--bounds and --classes")
    f.add_argument("--loss", choices=["logistic", "hinge", "squared", "huber"],
                   help="logistic or hinge: a classifier (the classes from --classes, else selected privately); "
                        "squared or huber: a regression (default: what --classes, a schema or a label range says)")
    f.add_argument("--classes", type=_list, help="the public label set, comma-separated, e.g. 0,1 or =-1,1 "
                   "(default: selected privately inside the budget, Gaussian partition selection; read off the data "
                   "with --bounds-from-data)")
    f.add_argument("--penalty", choices=norms.PENALTY_NAMES, default="l1",
                   help="the sparsity-inducing or structured norm (docs/norms.md; the group norms need --groups)")
    f.add_argument("--groups", help="JSON file of the groups of group-l2 / group-linf (docs/norms.md)")
    f.add_argument("--l1-ratio", type=float, help="elastic-net mixing, in [0, 1] (with --penalty elasticnet; "
                   "default 0.5)")
    f.add_argument("--alpha", type=float, help="penalty strength (bounded coordinates) (default: 0.0001 under the "
                   "rule for the logistic, squared and Huber losses with a separable penalty, where more was measured "
                   "to bias the fit; 0.001 with a named mechanism, a structured norm or the hinge loss)")
    f.add_argument("--delta", type=float, help="privacy parameter delta, in (0, 1); above 1/n the guarantee is "
                   "weak (a warning) (default: 1/n^2, n the records of the data file, a held-out part included: every "
                   "record is protected)")
    f.add_argument("--mechanism", choices=sorted(REGISTRY),
                   help="default: chosen by a public rule from the loss, the penalty, n, p and epsilon (for least "
                        "squares with few records for many features, also the records' fill of their box, released "
                        "privately) (docs/defaults.md). "
                        + "; ".join(f"{m.name}: {m.summary}" for m in REGISTRY.values()))
    _add_mechanism_options(f)
    calibrations = sorted({c for m in REGISTRY.values() for c in m.calibrations})
    f.add_argument("--calibration", choices=calibrations, help="default: the mechanism's own (tight where it exists)")
    f.add_argument("--iterations", "--max-iter", type=int, dest="iterations",
                   help="iterations T of the mechanism (its n_iter, max_iter in Python; the budget is split over "
                        "them) (default: the public rule's without --mechanism, else the mechanism's own)")
    f.add_argument("--tune", action=argparse.BooleanOptionalAction,
                   help="search privately, within each fit's epsilon, between the public rule's choice where each "
                        "candidate trains (3/4 of the records, a third of the budget), its choice at the whole budget "
                        "(or half its steps or selected features) and the constant predictor (DPSearchCV, "
                        "docs/defaults.md); refused where the rule releases the constant at a candidate's share; "
                        "default: off, the rule's single fit, which beat the search in every measured case"),
    f.add_argument("--clip", type=_clip, default="auto",
                   help="residual clipping / Huber threshold (regression), in units of the label range; auto: the "
                        "label range narrowed to the labels' private spread")
    f.add_argument("--bounds", help="public bounds JSON (docs/bounds.md); without it (and without --schema) the "
                   "bounds are bought privately with --bounds-share of the budget (differentially private quantiles: "
                   "thousands of records at epsilon 1, more with more features; with fewer the fit is refused, saying "
                   "how many)")
    f.add_argument("--bounds-share", type=_clip, default="auto",
                   help="share of the budget spent on private bounds (without --bounds) or on narrowing the declared "
                        "ones, in [0, 1), or 'auto' (default: 0.1, or 0.2 where only that makes narrowing affordable; "
                        "0.05 for joint cuts where neither does and the records are enough, for a model with an "
                        "intercept on at most 50 features, a regression's label range 0.1 more; a number pays for "
                        "whichever is bought, a regression's cuts and label range splitting it 1 : 2; 0 keeps "
                        "declared bounds as they are; docs/bounds.md)")
    f.add_argument("--bounds-from-data", action="store_true",
                   help="read the bounds off the data instead: NO privacy guarantee (for experiments only)")
    f.add_argument("--test-size", type=float,
                   help="held-out fraction for --private-score, --diagnostics or a sweep, in (0, 1) (default 0.25); "
                        "without them every record trains the model")
    f.add_argument("--seed", type=int, help="seed of the split and the noise (experiments only)")
    f.add_argument("--noise", choices=["auto", "fast", "secure"], default="auto",
                   help="noise backend: OpenDP's floating-point-safe samplers (secure), numpy's (fast); auto: secure "
                        "unless --seed fixes the noise for an experiment (docs/noise.md)")
    f.add_argument("--compare", action=argparse.BooleanOptionalAction,
                   help="with --diagnostics (and in a sweep), compute the non-private optimum beside the private "
                        f"model (default: when the training data has at most {COMPARE_LIMIT:.0e} stored values)")


def _list(text):
    return [v.strip() for v in text.split(",") if v.strip()]




def _svmlight_width(args, declared):
    """The number of features of an svmlight file, from ``--n-features`` or the bounds (``declared``: a Bounds or
    None), before the file is read; a ValueError where neither gives it, or they disagree."""
    from_bounds = getattr(declared, "n_features", None)
    if None not in (args.n_features, from_bounds) and args.n_features != from_bounds:
        raise ValueError(f"--n-features {args.n_features} and --bounds {args.bounds!r} (its n_features or number of "
                         f"ranges: {from_bounds}) disagree")
    width = from_bounds if args.n_features is None else args.n_features
    if width is None and Path(args.data).is_file():  # (a missing file is named as such by the reader)
        raise ValueError("--n-features: an svmlight file lists only the feature indices its records hold, so the "
                         "number of features read off it would depend on the private data (one record with a rare "
                         "high index widens the model); declare it with --n-features N, or n_features (or one range "
                         "per feature) in the --bounds file")
    if width is not None and width < 1:
        raise ValueError(f"--n-features must be >= 1, got {width}")
    return width


def _bundled(args):
    """Whether ``args.data`` names a bundled dataset (and no file of that name)."""
    return args.data in data.BUNDLED and not os.path.exists(args.data)


def _svmlight(args):
    """Whether ``args.data`` is read as an svmlight file (not a schema's CSV, not a bundled dataset)."""
    return not args.schema and not _bundled(args) and data.data_format(args.data, args.format) == "svmlight"


def _load(args):
    if args.schema:
        X, y, names = args.schema.read(args.data)
        return X, y, args.schema.bounds(), names
    if (args.n_features is not None or args.zero_based) and not _svmlight(args):
        raise ValueError("--n-features and --zero-based describe an svmlight file; " + (
            f"the bundled dataset {args.data!r} has its own columns" if _bundled(args) else
            "a CSV file's header (or the schema) gives its columns"))
    declared = data.Bounds.from_json(args.bounds) if args.bounds else None  # before any data is read
    if _bundled(args):
        X, y, bounds, names = data.load_bundled(args.data)
    else:
        width = _svmlight_width(args, declared) if _svmlight(args) else None
        X, y, names = data.load(args.data, args.format, args.target, width, args.zero_based)
        bounds = "from-data" if args.bounds_from_data else "private"
    if declared is not None:
        bounds = declared
        data.check_feature_names(bounds.feature_names, names)
        if names is None and bounds.feature_names is not None:  # a file without a header: the bounds name them
            if len(bounds.feature_names) != X.shape[1]:
                raise ValueError(f"--bounds {args.bounds!r}: its feature_names name {len(bounds.feature_names)} "
                                 f"features, the data has {X.shape[1]}")
            names = list(bounds.feature_names)
    declared = getattr(bounds, "classes", None)
    if declared is not None and args.loss in ("squared", "huber"):
        raise ValueError(f"--loss {args.loss} is a regression, but the bounds declare a classifier's label set "
                         f"(classes {', '.join(map(str, declared))}): drop --loss (or give logistic or hinge) for a "
                         "classifier, or declare a label range (label_low, label_high) instead of classes")
    if args.classes is None and declared is not None:
        args.classes = [str(c) for c in declared]  # the bounds' public label set
    return data.dense_if_dense(X), y, bounds, names


def _read_schema(args):
    """``--schema`` parsed and checked (before any data is read); it declares target, bounds and classes."""
    if args.schema is None:
        return
    given = [flag for flag in ("target", "bounds", "classes", "format") if getattr(args, flag, None) is not None]
    if given:
        raise ValueError(f"--schema declares the target, the bounds, the classes and the format; drop "
                         f"{', '.join('--' + g for g in given)}")
    svmlight = [flag for flag, given in (("--n-features", getattr(args, "n_features", None) is not None),
                                         ("--zero-based", getattr(args, "zero_based", False))) if given]
    if svmlight:
        raise ValueError(f"{' and '.join(svmlight)} {'describe' if len(svmlight) > 1 else 'describes'} an svmlight "
                         "file; a schema's CSV file has its columns in the schema: drop "
                         f"{'them' if len(svmlight) > 1 else 'it'}")
    args.schema = schema.load_schema(args.schema)
    loss = getattr(args, "loss", None)
    regression = args.schema.classes is None
    if loss is not None and (loss in ("squared", "huber")) != regression:
        kind = ("a label range (regression)" if regression else
                f"classes {[str(c) for c in args.schema.classes]} (classification)")
        needs = "a classifier: logistic or hinge" if not regression else "a regression: squared or huber"
        raise ValueError(f"--loss {loss}: the schema's target {args.schema.target.name!r} declares {kind}, which "
                         f"needs {needs} (or declare the target's other kind in the schema)")
    if getattr(args, "classes", None) is None and args.schema.classes is not None:
        args.classes = list(args.schema.classes)


OUT_SUFFIXES = {"--out": ".json", "--plot": ".png", "--report": ".html"}
"""The suffix of the file name that an error suggests for each output flag."""


def _check_out(path, flag="--out"):
    """The folder of the file that ``flag`` names exists and is writable (before any data is read)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        stem = Path(os.path.basename(path.rstrip(os.sep))).stem or "out"
        raise ValueError(f"{flag} {path!r} is a directory; give a file name, e.g. "
                         f"{os.path.join(path, stem)}{OUT_SUFFIXES.get(flag, '.json')}")
    if not os.path.isdir(folder):
        raise ValueError(f"{flag} {path!r}: the folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"{flag} {path!r}: the folder {folder!r} is not writable")


def _integer_labels(declared, y):
    """Labels read as floats (a CSV's, svmlight's): with integer ``--classes`` (``0,1``) and integral labels,
    integers, so that the model's classes and predictions read as declared (``1``, not ``1.0``); anything else
    unchanged (a label outside the classes is refused at the fit)."""
    if not all(re.fullmatch(r"[+-]?\d+", str(c).strip()) for c in declared):
        return np.asarray(y)
    return _integral(y)


def _private(classes):
    return isinstance(classes, str) and classes == PRIVATE_CLASSES


def _released_labels(classes):
    """The classes as the model file lists them: an integral float as an integer (``1``, not ``1.0``), label by
    label, so that a selected label set reads the same whatever values the other labels hold."""
    return [int(c) if isinstance(c, float) and c.is_integer() and abs(c) <= 2.0**53 else c for c in classes.tolist()]


def _integral(y):
    """Labels read as floats, as integers where every one is integral and exact in a float (``2``, not ``2.0``);
    else unchanged."""
    y = np.asarray(y)
    if y.dtype.kind == "f" and np.all(np.abs(y) <= 2.0**53) and np.all(y == np.round(y)):
        return y.astype(np.int64)
    return y


def _declared_classes(declared, y):
    """``--classes`` in the type of the labels."""
    try:
        return np.asarray(declared).astype(np.asarray(y).dtype)
    except ValueError:
        raise ValueError(f"--classes {','.join(declared)}: not labels of this data ({np.asarray(y).dtype})") from None


def _same_classes(declared, bounds):
    """ValueError when ``--classes`` names another label set than the bounds declare (both public): a label the data
    never holds would get a model of its own, and a share of the budget."""
    fixed = getattr(bounds, "classes", None)
    if fixed is None or len(set(_label_set(declared))) < 2 or _label_set(declared) == _label_set(fixed):
        return  # fewer than two: the fit's own message says what a label set needs
    raise ValueError(f"--classes {','.join(map(str, declared))} differs from the classes the bounds declare "
                     f"({', '.join(map(str, fixed))}): drop --classes, or declare the same set")


def _label_set(labels):
    """Sorted labels, as numbers where they all are one (``1`` and ``1.0`` the same label)."""
    try:
        return sorted(float(v) for v in labels)
    except (TypeError, ValueError):
        return sorted(map(str, labels))


PRIVATE_CLASSES = "private"
"""``_classes``' answer for a classifier whose label set the fit selects privately (``classes="private"``)."""


def _classes(args, y, bounds):
    """The label set of a classifier, else None (a regression), from what the user declared: ``--classes`` (or a
    schema's), ``--loss``, a label range; with ``--bounds-from-data`` (an experiment) integer labels with up to
    ``MAX_CLASSES`` values are read as classes."""
    from .estimators import MAX_CLASSES

    if args.loss in ("squared", "huber"):
        return None
    if args.classes is not None:  # declared (a label outside them is refused at the fit, no label named)
        return np.unique(args.classes)
    regression_declared = isinstance(bounds, data.Bounds) and bounds.label_low is not None
    if args.loss is None and regression_declared:  # a declared label range: a regression
        return None
    if args.loss is None and not args.bounds_from_data:  # the task is the user's to say, not the labels'
        raise ValueError("say what the labels are: --classes LABELS for a classifier (--classes=-1,1 for +-1 "
                         "labels), --loss squared (or a label range in --bounds) for a regression, or a schema")
    if not args.bounds_from_data:  # a classifier whose label set the fit selects privately: nothing read here
        return PRIVATE_CLASSES
    values = np.unique(y)  # an experiment without guarantee: the task read off the labels
    if values.size == 1:
        raise ValueError("the labels have a single value: there is nothing to learn")
    # integer labels with few distinct values read as classes; many (counts, prices) as a regression target
    categorical = (values.size <= MAX_CLASSES and np.issubdtype(values.dtype, np.number)
                   and bool(np.all(np.mod(values, 1) == 0)))
    if args.loss is not None or values.size == 2 or (categorical and not regression_declared):
        return values
    return None


def _mechanism(args, loss):
    """``--mechanism``; else "auto" (the public rule, ``mechanisms.auto``), or, when a mechanism option is given
    without it, the mechanism that option was always meant for (dp-gcd, dp-sgd for a structured norm, dp-gd for
    the hinge loss, the rule's learner there)."""
    if args.mechanism:
        return args.mechanism
    own = {o.name for m in REGISTRY.values() for o in m.options} - _OWN_FLAGS
    if not any(getattr(args, name, None) is not None for name in own):
        return "auto"
    if loss == "hinge":
        return "dp-gd"
    return "dp-sgd" if args.penalty in norms.STRUCTURED else "dp-gcd"


def _clip(text):
    """``--clip`` (and an option that takes "auto", ``--bounds-share``): "auto" or a number (its range is checked
    with the other parameters)."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'auto' or a number, got {text!r}") from None


def _flag(name):
    return "--" + name.replace("_", "-")


def _add_mechanism_options(parser):
    """One flag per declared option name (shared by the mechanisms that declare it), from the registry."""
    owners = {}
    for m in REGISTRY.values():
        for o in m.options:
            if o.name not in _OWN_FLAGS:
                owners.setdefault(o.name, []).append((m.name, o))
    group = parser.add_argument_group("mechanism options (docs/privacy.md derives each default)")
    for name, decl in owners.items():
        o = decl[0][1]
        helps = "; ".join(f"{m}: {d.help} (default: {d.default_help or d.default})" for m, d in decl)
        kw = {"default": None, "help": helps.replace("%", "%%")}
        if o.kind == "choice":
            kw["choices"] = sorted({c for _, d in decl for c in d.choices})
        elif o.kind == "bool":
            kw.update(action="store_const", const=True)
        else:
            kw["type"] = int if o.kind == "int" else _clip if any(d.auto for _, d in decl) else float
            if name != name.lower():  # a name with capitals keeps them: --Delta (a ridge) is not --delta's DELTA
                kw["metavar"] = name
        group.add_argument(_flag(name), **kw)


def _check_option_values(args):
    """Every mechanism option given (and --iterations) within its declared range, before any data is read."""
    for m in REGISTRY.values():
        for o in m.options:
            value = args.iterations if o.name in _OWN_FLAGS else getattr(args, o.name, None)
            o.check(value, "--iterations (--max-iter)" if o.name in _OWN_FLAGS else _flag(o.name))


def _mechanism_options(args, mechanism):
    """The flags given on the command line, as ``mechanism_options``; an error for a foreign flag."""
    options = {}
    declared = set(REGISTRY[mechanism].option_names)
    for m in REGISTRY.values():
        for o in m.options:
            value = getattr(args, o.name, None) if o.name not in _OWN_FLAGS else None
            if value is None or o.name in options:
                continue
            if o.name not in declared:
                owners = [k for k, d in REGISTRY.items() if o.name in d.option_names]
                names = ", ".join(owners[:-1]) + " and " + owners[-1] if len(owners) > 1 else owners[0]
                if args.mechanism is None:  # implied by the option (``_mechanism``): say so, and how to name one
                    raise ValueError(f"{_flag(o.name)} is an option of {names}: name one (--mechanism {owners[0]}); "
                                     f"without --mechanism a mechanism option sets aside the automatic choice and "
                                     f"goes to {mechanism}, which has no {_flag(o.name)}")
                raise ValueError(f"{_flag(o.name)} is an option of {names}, not of {mechanism}")
            options[o.name] = value
    return options


def _estimator(args, classes):
    from .estimators import MAX_CLASSES, DPLinearRegression, DPLinearSVC, DPLogisticRegression

    loss = args.loss or ("logistic" if classes is not None else "squared")
    mechanism = _mechanism(args, loss)
    common = dict(epsilon=getattr(args, "epsilon", 1.0), delta=args.delta,
                  alpha="auto" if args.alpha is None else args.alpha,
                  penalty=args.penalty, l1_ratio=0.5 if args.l1_ratio is None else args.l1_ratio,
                  groups=args.groups, mechanism=mechanism,
                  mechanism_options=None if mechanism == "auto" else _mechanism_options(args, mechanism),
                  max_iter=args.iterations,
                  calibration=args.calibration, random_state=args.seed, verbose=1, noise=args.noise)
    if loss in ("logistic", "hinge"):
        if not _private(classes) and classes.size > MAX_CLASSES:
            raise ValueError(f"--loss {loss}: the labels have more distinct values than the {MAX_CLASSES} classes a "
                             "one-vs-rest fit takes (their count is not shown: it is read off the private labels)")
        # undeclared classes are selected privately (an experiment on bounds read off the data reads them too)
        declared = args.classes if args.classes is not None else (None if args.bounds_from_data else "private")
        return (DPLogisticRegression if loss == "logistic" else DPLinearSVC)(classes=declared, **common)
    return DPLinearRegression(loss=loss, clip=args.clip, **common)


def _search(args, est, shape, classes, epsilon, seed):
    """A ``DPSearchCV`` over ``tuning.rule_grid`` with ``--tune``, else None."""
    if not args.tune:
        return None
    from . import tuning

    names = ["mechanism", "iterations", "alpha", "calibration"] + sorted(
        {o.name for m in REGISTRY.values() for o in m.options} - _OWN_FLAGS)
    fixed = [_flag(name) for name in names if getattr(args, name, None) is not None]
    if classes is not None and args.classes is None and not args.bounds_from_data:  # to be selected privately
        raise ValueError("--tune needs the label set declared (--classes, a schema or the bounds' classes): the "
                         "search's candidates share one label set")
    if classes is not None and classes.size > 2:  # declared, or read off the data with --bounds-from-data
        which = f"{classes.size} are declared" if args.classes is not None else "the labels hold more"
        raise ValueError(f"--tune: the search supports two classes, {which}; drop --tune (a one-vs-rest fit with the "
                         "default or given hyperparameters)")
    if fixed:
        raise ValueError(f"--tune searches around the public rule's choice; drop {', '.join(fixed)} or --tune")
    grid = tuning.rule_grid(est, *shape, epsilon, args.delta)
    if grid is None:
        raise ValueError(f"--tune: at n = {shape[0]}, p = {shape[1]} and epsilon = {epsilon:g} the public rule, "
                         "read where each candidate trains (three quarters of the records, a third of the budget), "
                         "releases the constant predictor or a mechanism without zCDP calibration: nothing to "
                         "search; drop --tune (the single fit of the rule's choice)")
    from sklearn.base import clone

    base = clone(est).set_params(epsilon=type(est)().epsilon, delta=None)  # the search spends epsilon and delta
    return tuning.DPSearchCV(base, grid, epsilon=epsilon, delta=args.delta, repetitions="each", random_state=seed,
                             noise=args.noise)


def _metrics(est, X, y):
    from sklearn.metrics import accuracy_score, mean_squared_error, r2_score

    pred = est.predict(X)
    if _is_classifier(est):
        return {"accuracy": float(accuracy_score(y, pred))}
    return {"r2": float(r2_score(y, pred)), "mse": float(mean_squared_error(y, pred))}


def _is_classifier(est):
    from sklearn.base import is_classifier

    return is_classifier(est)


def _main_metric(est):
    """The metric the report compares and plots: accuracy, or R^2."""
    return "accuracy" if _is_classifier(est) else "r2"


def _stored_values(X):
    return X.nnz if hasattr(X, "nnz") else X.size


REFERENCE_ITERATIONS = 2000  # the comparison stops there (its gap is printed) rather than keep the user waiting


def _reference(est, Xtr, ytr):
    """Non-private optimum on the same bounded training data (accelerated proximal gradient to a certified
    gap of 1e-8 or ``REFERENCE_ITERATIONS``: no compilation; 4-7 s on adult's 24,420 training records, 2 cores),
    and the relative error."""
    from sklearn.base import clone

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)  # the fit said it; bought bounds clip their tails
        fixed = {"bounds": est.bounds_, **({"classes": est.classes_} if hasattr(est, "classes_") else {})}
        # the bounds (and classes) of the private model, its one-hot groups kept where its fit kept them
        design = clone(est).set_params(**fixed)._design(Xtr, ytr, one_hot=est.bounds_.one_hot is not None)
    penalty = est._penalty(Xtr.shape[1])
    loss = est.reference_loss()
    ref = solvers.solve_prox(design.X, design.y, loss, penalty, max_iter=REFERENCE_ITERATIONS, check_every=20)
    def F(w):
        return solvers.objective(design.X, design.y, w, loss, penalty)

    gain = F(np.zeros_like(ref.coef)) - ref.objective
    rel = (F(est.coef_bounded_) - ref.objective) / gain if gain > 1e-12 else None  # None: 0 is optimal
    return ref, design, rel


def _write_atomic(path, text):
    """Write ``text`` to ``path`` whole or not at all (a temporary file beside it, then renamed), with the
    permissions of any new file under the process's umask (``mkstemp`` would make it readable by its owner only)."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".dpsparse-")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _floats(text):
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None
    if not values:
        raise argparse.ArgumentTypeError("give at least one value")
    return values


@dataclasses.dataclass
class _Job:
    """The data of one ``fit`` or ``sweep``, loaded and split once, and the unfitted estimator."""

    args: argparse.Namespace
    estimator: object
    classes: object
    names: object
    X_train: object
    X_test: object
    y_train: object
    y_test: object
    warnings: list
    holder_notes: list = dataclasses.field(default_factory=list)


def _check_flag_pairs(args):
    """Refuse a flag that the rest of the command would ignore (before any data is read)."""
    group = bool(args.penalty and args.penalty.startswith("group-"))
    if args.groups is not None and not group:
        raise ValueError(f"--groups goes with --penalty group-l2 or group-linf (not {args.penalty})")
    if args.l1_ratio is not None and args.penalty != "elasticnet":
        raise ValueError(f"--l1-ratio goes with --penalty elasticnet (not {args.penalty})")
    if args.classes is not None and args.loss in ("squared", "huber"):
        raise ValueError(f"--classes is for a classifier (--loss logistic or hinge), not --loss {args.loss}")
    if args.classes is not None and data.distinct_labels(args.classes) is None:
        raise ValueError(f"--classes must list at least 2 distinct labels, comma-separated, got "
                         f"{','.join(args.classes)!r}")
    bundled = _bundled(args)
    if args.target is not None and bundled:
        raise ValueError(f"--target names a column of a CSV file; {args.data!r} is a bundled dataset, read as it is: "
                         "drop --target")
    if args.target is not None and data.data_format(args.data, args.format) == "svmlight":
        how = ("--format svmlight" if args.format else "its name, which does not end in .csv or .csv.gz")
        raise ValueError(f"--target names a column of a CSV file; {args.data!r} is read as svmlight (by {how}), "
                         "whose label is each record's first field: drop --target, or pass --format csv for a CSV "
                         "file")
    if args.format is not None and bundled:
        raise ValueError(f"--format is for a data file; {args.data!r} is a bundled dataset, read as it is: drop "
                         "--format")
    mechanism = getattr(args, "mechanism", None)
    if args.iterations is not None and mechanism not in (None, "auto") and (
            "n_iter" not in REGISTRY[mechanism].option_names):
        raise ValueError(f"--iterations (--max-iter): mechanism {mechanism} takes no number of iterations (its steps "
                         "are set by its own analysis); drop it")


def _check_run_args(args, epsilons):
    """Checks on the arguments before any data is read; returns the warnings on a weak guarantee."""
    if args.test_size is None:
        args.test_size = DEFAULT_TEST_SIZE
    elif not 0 < args.test_size < 1:
        raise ValueError(f"--test-size must be in (0, 1), got {args.test_size}")
    if args.penalty and args.penalty.startswith("group-") and args.groups is None:
        raise ValueError(f"--penalty {args.penalty} needs --groups FILE, a JSON list of column-index lists "
                         "(docs/norms.md)")
    _check_flag_pairs(args)
    if not 1 <= args.repeats <= MAX_REPEATS:
        raise ValueError(f"--repeats must be an integer in [1, {MAX_REPEATS}], got {args.repeats}")
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be an integer >= 0, got {args.seed}")
    for eps in epsilons:  # delta=None means 1/n^2, checked once n is known; 0.5 only stands in for it here
        check_privacy_params(eps, 0.5 if args.delta is None else args.delta)
    _check_option_values(args)
    if args.bounds_share != "auto" and not 0 <= args.bounds_share < 1:
        raise ValueError(f"--bounds-share must be in [0, 1) or 'auto', got {args.bounds_share}")
    if args.seed is not None and args.noise == "secure":
        raise ValueError("--seed with --noise secure: OpenDP's samplers draw from OS entropy and take no seed; drop "
                         "--seed, or use --noise fast for a reproducible experiment (no guarantee)")
    if args.bounds_from_data and (args.bounds or args.schema):
        raise ValueError("--bounds-from-data replaces declared bounds: drop it, or drop --bounds / --schema")
    if args.bounds_from_data and _bundled(args):
        raise ValueError(f"--bounds-from-data is for a data file: the bundled {args.data!r} ships its published "
                         "bounds; drop the flag (or give --data a file)")
    if args.bounds_share == 0 and not (args.bounds or args.schema or args.bounds_from_data or _bundled(args)):
        raise ValueError("--bounds-share 0 buys nothing, but without --bounds or --schema every range is bought "
                         "privately: give a share in (0, 1) or 'auto', or declare the bounds")
    for flag, path in (("--out", args.out), ("--plot", getattr(args, "plot", None)), ("--report", args.report)):
        if path:
            _check_out(path, flag)
    if args.report and not args.report.lower().endswith((".html", ".htm", ".md")):
        raise ValueError(f"--report {args.report!r}: give a .html or .md file name")
    if args.report or getattr(args, "plot", None):
        card.check_matplotlib()
    notes = []
    if args.bounds_from_data:
        notes.append("--bounds-from-data: the bounds are read off the private data, so the model has NO privacy "
                     "guarantee; drop it to buy the bounds privately, or give --bounds")
    if args.seed is not None:
        notes.append("--seed fixes the privacy noise, so the fit has NO privacy guarantee: for experiments only, "
                     "never for a model you release")
    elif args.noise == "fast":
        notes.append(FLOATING_POINT.format(fast="--noise fast", auto="--noise auto"))
    weak = weak_epsilon(max(epsilons))
    if weak:
        notes.append(weak)
    return notes


def _job(args, epsilons, holdout=True):
    """Load, check and (with ``holdout``) split the data, the split drawn independently of it."""
    from sklearn.model_selection import train_test_split

    notes = _check_run_args(args, epsilons)
    _read_schema(args)
    X, y, bounds, names = _load(args)
    if args.delta is None:  # one delta for every record of the file, whichever part (training, held out) holds it
        args.delta = 1.0 / X.shape[0] ** 2
    if args.classes is not None:
        y = _integer_labels(args.classes, y)
        args.classes = _declared_classes(args.classes, y)
        _same_classes(args.classes, bounds)
    classes = _classes(args, y, bounds)
    if classes is not None and args.classes is None and not _private(classes):  # read off the labels (integral
        y = _integral(y)                                                          # ones as integers, as declared)
        classes = np.unique(y)
    est = _estimator(args, classes)
    est.set_params(bounds=bounds, bounds_share=args.bounds_share)
    held = int(np.ceil(args.test_size * X.shape[0]))  # scikit-learn's count of the held-out part
    if holdout and (held < 1 or X.shape[0] - held < 2):  # public: the file's number of records and the share
        raise ValueError(f"--test-size {args.test_size:g} holds out {held} of the {X.shape[0]} records and leaves "
                         f"{X.shape[0] - held} to train on: give a share that holds out at least 1 and leaves 2")
    if holdout:  # not stratified: the split must not depend on the labels (parallel composition)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=args.test_size, random_state=args.seed)
    else:
        Xtr, Xte, ytr, yte = X, None, y, None
    if args.delta is not None and weak_delta(args.delta, Xtr.shape[0]):
        notes.append(weak_delta(args.delta, Xtr.shape[0]))
    return _Job(args, est, classes, names, Xtr, Xte, ytr, yte, notes)


HOLDER_ONLY_WARNINGS = (ClippingWarning, AbsentClassWarning, UnselectedLabelWarning)
"""The fit's warnings counted on the private data (values clipped, a declared class without a record, labels outside
a label set selected privately): the summary lists them under the data holder's label, once each."""


def _fit_private(job, epsilon, seed):
    """One private fit (a private search with ``--tune``) at ``epsilon``; ``seed`` fixes its noise."""
    from sklearn.base import clone

    args = job.args
    est = clone(job.estimator).set_params(epsilon=epsilon, random_state=seed)
    search = _search(args, est, job.X_train.shape, job.classes, epsilon, seed)
    with warnings.catch_warnings(record=True) as caught:
        for holder_only in HOLDER_ONLY_WARNINGS:  # the CLI's own notes, whatever the Python warning filters
            warnings.simplefilter("always", holder_only)
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the report says it
        warnings.simplefilter("ignore", ClassesFromDataWarning)  # the report says it
        warnings.simplefilter("ignore", FixedSeedWarning)  # said once, among the job's warnings
        warnings.simplefilter("ignore", WeakGuaranteeWarning)  # among the job's warnings
        warnings.simplefilter("ignore", ConstantPredictorWarning)  # the summary's "features used" line says it
        fitted = est.fit(job.X_train, job.y_train) if search is None else \
            search.fit(job.X_train, job.y_train).best_estimator_
    for w in caught:  # counts on the private data are said once among the job's warnings, the rest as Python says
        if issubclass(w.category, HOLDER_ONLY_WARNINGS):  # counted on the private data: for the data holder
            job.holder_notes.extend([] if str(w.message) in job.holder_notes else [str(w.message)])
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return fitted


def _seeds(args):
    """The noise seed of each repeat: ``--seed + k``, or None (OS entropy)."""
    return [None if args.seed is None else args.seed + k for k in range(args.repeats)]


def _constant_metrics(job, est):
    """Held-out metrics of the constant predictor fitted without privacy (majority class, or mean label)."""
    if _is_classifier(est):
        values, counts = np.unique(job.y_train, return_counts=True)
        return {"accuracy": float(np.mean(job.y_test == values[np.argmax(counts)]))}
    from sklearn.metrics import mean_squared_error, r2_score

    pred = np.full(len(job.y_test), float(np.mean(job.y_train)))
    return {"r2": float(r2_score(job.y_test, pred)), "mse": float(mean_squared_error(job.y_test, pred))}


def _non_private(job, est):
    """The non-private optimum as a fitted estimator, and the reference solve; None when not computed."""
    smooth = np.isfinite(est.reference_loss().smoothness)
    compare = job.args.compare if job.args.compare is not None else _stored_values(job.X_train) <= COMPARE_LIMIT
    multiclass = len(getattr(est, "classes_", ())) > 2  # the fitted one's (a label set may be selected privately)
    if not (smooth and compare and not multiclass):
        why = ("no exact solver for a non-smooth loss" if not smooth else
               "no non-private comparison for more than two classes" if multiclass else
               "non-private comparison skipped (--compare computes it; by default it runs up to "
               f"{COMPARE_LIMIT:.0e} stored values)")
        return None, why
    print(f"solving the non-private reference on {job.X_train.shape[0]} records for the diagnostics (up to "
          f"{REFERENCE_ITERATIONS} iterations; --no-compare skips it)...", file=sys.stderr, flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        ref, design, rel = _reference(est, job.X_train, job.y_train)
    nonprivate = est.__class__(**est.get_params())
    nonprivate._fit_classes = getattr(est, "classes_", None)
    nonprivate._set_fitted(design, ref.coef)
    nonprivate.n_features_in_ = est.n_features_in_
    return (nonprivate, ref, rel), ""


def _spread(values):
    v = np.asarray(values, dtype=float)
    return {"values": v.tolist(), "mean": float(v.mean()), "std": float(v.std()), "min": float(v.min()),
            "max": float(v.max())}


def _beats_constant(metric, model, constant, how):
    """A warning when the model does not beat the constant predictor, else None."""
    if model > constant:
        return None
    return (f"the private model does not beat the constant predictor ({how} {metric} {model:.4f} against "
            f"{constant:.4f}): at this epsilon and number of records, predicting "
            f"{'the majority class' if metric == 'accuracy' else 'the mean'} is as good; a larger epsilon, more "
            "records or fewer features would help")


def _score(job, est, seed):
    """The private score of one fit on the held-out part (``scoring.private_score``), its own noise stream."""
    rng = None if seed is None else np.random.default_rng([seed, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FixedSeedWarning)  # said once, among the job's warnings
        noise = make_noise(rng, job.args.noise)
    report = est.privacy_report_
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NoBetterThanConstantWarning)
        score = scoring.private_score(est, job.X_test, job.y_test, report.epsilon, report.delta, noise)
    return score, [str(w.message) for w in caught if issubclass(w.category, NoBetterThanConstantWarning)]


def _top_features(est, names, k=TOP_FEATURES):
    """The released model's largest effects: the change of its decision function, in its own units (the label's
    for a regression), when a feature moves across half its public range, as the card's "effect over half the
    range" (signed; None with a score a class), comparable across features."""
    coef = card.half_range_effects(est.coef_, est.bounds_.feature_low, est.bounds_.feature_high)
    weight = np.abs(coef).max(axis=0)
    order = [j for j in np.argsort(-weight, kind="stable") if weight[j] > 0][:k]
    label = (lambda j: names[j]) if names is not None else (lambda j: f"x{j}")
    return [{"feature": label(j), "effect over half the range": float(coef[0, j]) if coef.shape[0] == 1 else None}
            for j in order]


def _release(job, est, scores, notes):
    """What ``dpsparse fit`` releases (model.json, the card, the terminal's first part): public inputs and noisy
    releases only."""
    report = est.privacy_report_
    validation = int(report.noise.get("validation records", 0)) if report.mechanism == "dp-search" else 0
    release = {
        "format": MODEL_FORMAT,
        "task": "classification" if _is_classifier(est) else "regression",
        "coef": est.coef_.tolist(), "intercept": np.asarray(est.intercept_).tolist(),
        "classes": _released_labels(est.classes_) if hasattr(est, "classes_") else None,
        "label_range": list(est.label_range_) if hasattr(est, "label_range_") else None,
        "bounds": est.bounds_.to_dict() if est.bounds_ is not None else None,
        "feature_names": list(job.names) if job.names is not None else None,
        "schema": job.args.schema is not None,
        "schema_note": job.args.schema.note if job.args.schema is not None else "",
        "params": {k: v for k, v in est.get_params().items() if k not in ("bounds", "budget", "verbose")},
        "penalty_strength": est.alpha_,
        "privacy_report": report.to_dict(),
        "data": {"source": Path(job.args.data).name, "training records": int(job.X_train.shape[0]) - validation,
                 "validation records": validation,
                 "held out": 0 if job.X_test is None else int(job.X_test.shape[0]),
                 "features": int(est.n_features_in_),
                 **({"svmlight indices from": 0 if job.args.zero_based else 1} if _svmlight(job.args) else {})},
        "software": __version__,
        "support": {"size": int(est.support_.size), "features": int(est.n_features_in_),
                    "top": _top_features(est, job.names)},
        "warnings": notes,
    }
    if scores is not None:
        release["private_score"] = scores[0]
    return release


def _diagnostics(job, fits):
    """Figures computed on the private data without noise, for the data holder only; and the notes they raise."""
    est = fits[0]
    per_fit = [_metrics(e, job.X_test, job.y_test) for e in fits]
    diag = {"NOT differentially private": "computed on the private data, for the data holder only; never written "
                                          "into the model or the card",
            "n_train": int(job.X_train.shape[0]), "n_test": int(job.X_test.shape[0]),
            "private": per_fit[0], "constant": _constant_metrics(job, est),
            "clipped": dict(est.privacy_report_.clipped)}
    if len(fits) > 1:
        diag["repeats"] = {k: _spread([m[k] for m in per_fit]) for k in per_fit[0]}
        diag["spent"] = dict(zip(("epsilon", "delta"), _spent(fits)))
    nonprivate, why = _non_private(job, est)
    if nonprivate is not None:
        model_np, ref, rel = nonprivate
        diag.update(non_private=_metrics(model_np, job.X_test, job.y_test), relative_error=rel,
                    reference_gap=ref.gap, non_private_support_size=int(model_np.support_.size))
    else:
        diag["non_private"] = why
    key = _main_metric(est)
    note = _beats_constant(key, diag["private"][key], diag["constant"][key], "held-out, not private:")
    return diag, [note] if note else []


def fit(args):
    holdout = args.private_score or args.diagnostics
    sweep_results = None if args.sweep is None else _read_sweep(args.sweep, args.data)
    if args.repeats > 1 and not holdout:
        raise ValueError("--repeats shows the spread of a held-out metric: add --private-score (noisy, inside the "
                         "budget) or --diagnostics (not private)")
    if args.test_size is not None and not holdout:
        raise ValueError("--test-size sets the share held out for --private-score or --diagnostics; without them "
                         "every record trains the model: add one of them, or drop --test-size")
    job = _job(args, [args.epsilon], holdout=holdout)
    shape = _data_shape(job)
    if sweep_results is not None and sweep_results.get("shape", shape) != shape:
        raise ValueError(f"--sweep {args.sweep!r} was measured on {sweep_results['shape'][0]} records of "
                         f"{sweep_results['shape'][1]} features, this fit's data has {shape[0]} of {shape[1]}: its "
                         "curve and the privacy it spent belong to other records")
    if sweep_results is not None and sweep_results["metric"] != _main_metric(job.estimator):
        raise ValueError(f"--sweep {args.sweep!r} measured {sweep_results['metric']}, a curve of another task than "
                         f"this fit's: run 'dpsparse sweep --private-score' with this fit's options")
    seeds = _seeds(args)
    fits = [_fit_private(job, args.epsilon, seed) for seed in seeds]
    est = fits[0]
    report = est.privacy_report_
    said = [DATA_BOUNDS] if args.bounds_from_data else []  # the flag's own note says it, with the remedy
    notes = list(dict.fromkeys([*job.warnings, *(w for w in report.warnings if w not in said)]))  # each once
    scores = None
    if args.private_score:
        scored = [_score(job, e, seed) for e, seed in zip(fits, seeds)]
        scores = [score for score, _ in scored]
        notes += scored[0][1]  # decided on the model written
    release = _release(job, est, scores, notes)
    if len(fits) > 1 and scores is not None:  # public: this run's options; the other fits' scores, the terminal's
        release["run"] = {"fits": len(fits), **dict(zip(("epsilon in all", "delta in all"), _spent(fits)))}
    diagnostics, holder = (None, list(job.holder_notes))
    if args.diagnostics:
        diagnostics, more = _diagnostics(job, fits)
        holder += more
    replaced = Path(args.out).exists()
    if args.report:
        _write_fit_card(args.report, job, est, release, args.out, sweep_results)
    _write_atomic(args.out, json.dumps(release, indent=1, default=jsonable))
    if replaced:
        print(f"dpsparse: note: {args.out} existed and was replaced by this model (--out names another file)",
              file=sys.stderr)
    for note in notes if args.json else ():  # the summary below lists them as its WARNING lines
        print(f"dpsparse: warning: {note}", file=sys.stderr)
    for note in holder:
        print(f"dpsparse: warning (data holder only, not private): {note}", file=sys.stderr)
    if args.json:
        print(json.dumps({"released": release, "privacy_report": release["privacy_report"],
                          "diagnostics": diagnostics, "data_holder_warnings": holder}, indent=1, default=jsonable))
        return
    print("\n".join(_summary(job, est, release)))
    if scores is not None and len(scores) > 1:
        print(f"spread              {len(scores)} fits, private scores " + ", ".join(
            "not measurable" if x.get("unreliable") else f"{x['model']:.3f}" for x in scores)
            + "; together they spend epsilon = {:g}, delta = {:.2g} (basic composition); the first is written".format(
                *_spent(fits)))
    print(f"model written to    {args.out}" + (f"; model card: {args.report}" if args.report else ""))
    if sweep_results is not None and args.report:
        print(_with_curve_line(args, sweep_results, report))
    if diagnostics is not None:
        print()
        print("\n".join(_diagnostic_lines(diagnostics, holder)))
    if args.verbose:
        print()
        print("How the model was trained")
        print(report)
    else:
        print(f"privacy report      dpsparse report {args.out} (or --verbose) prints how the model was trained")


def _with_curve_line(args, sweep_results, report):
    """The summary's line for a card that shows a sweep's curve: the model and the curve together (basic
    composition), and the warning a total above ``accounting.WEAK_EPSILON`` deserves."""
    total = sweep_results["epsilon_spent"] + report.epsilon
    weak = weak_epsilon(total)
    return (f"with the curve      the card shows --sweep's privacy-utility curve too: published together, the model "
            f"and the curve are {card.card_total(sweep_results, report.epsilon, report.delta)}-differentially private "
            "(basic composition)" + (f"\nWARNING             {weak}" if weak else ""))


def _spent(fits):
    """The epsilon and delta that ``fits`` of the same records spend together (basic composition, Dwork & Roth 2014,
    Theorem 3.16; public: each fit's target)."""
    return (sum(f.privacy_report_.epsilon for f in fits), sum(f.privacy_report_.delta for f in fits))


def _score_line(score):
    where = f"on {score['records']} held-out records, inside the same epsilon"
    if score["metric"] == "accuracy" and score.get("unreliable"):
        return (f"private score       held-out accuracy not measurable here (noise sd {score['noise_sd']:.2g} "
                f"{where}: too few held-out records for this epsilon)")
    if score["metric"] == "accuracy":
        return (f"private score       held-out accuracy {score['model']:.3f}, constant predictor (the held-out "
                f"part's majority class) {score['constant']:.3f} (noisy, sd {score['noise_sd']:.2g} each, {where})")
    if "model_mse" not in score:  # a model file written before the R^2's own spread was released
        return (f"private score       held-out R^2 {score['model']:.3f}, constant predictor 0 ({where})"
                + ("; the labels' noisy variance fell below its floor: disregard this R^2" if
                   score.get("variance_floored") else ""))
    model = scoring.noisy_square(score["model_mse"], score["mse_sd"])
    constant = scoring.noisy_square(score["constant_mse"], score["constant_mse_sd"])
    mse = (f"mean squared error {model} (sd {score['mse_sd']:.2g}) against the constant "
           f"predictor's {constant} (sd {score['constant_mse_sd']:.2g}), noisy, in "
           f"squared label units, {where}")
    if score["unreliable"]:
        return ("private score       held-out R^2 not measurable here (the labels' noisy variance is within "
                f"{scoring.RELIABLE:g} sd of its noise: too few held-out records for this epsilon); " + mse + (
                    "; the constant's is above the model's by more than twice the noise of their gap: they show "
                    "the model beating the constant predictor" if scoring.mse_gap_shown(score) else
                    "; the gap is within twice its noise: they do not show the model beating the constant "
                    "predictor either"))
    if score["model_mse"] == 0:  # 1 - 0 / variance: the cap, not a perfect model
        return (f"private score       held-out R^2 near 1, not exactly 1 (its noisy mean squared error fell below 0 "
                f"and was clipped, which reads as R^2 1.000; sd {score['model_sd']:.2g} from the noise), constant "
                f"predictor 0 by definition; {mse}")
    return (f"private score       held-out R^2 {score['model']:.3f} (sd {score['model_sd']:.2g} from the noise), "
            f"constant predictor 0 by definition; {mse}")


def _summary(job, est, release):
    """What a user reads first, all of it released: the guarantee, the data's size, the private score, the
    support, the warnings."""
    counts = release["data"]
    use = "the private score" if job.args.private_score else "the data holder's diagnostics"
    held = "" if job.X_test is None else f", {job.X_test.shape[0]} held out for {use}"
    validation = counts["validation records"]
    searched = f", {validation} validation records of the search" if validation else ""
    lines = [card.guarantee_sentence(est.privacy_report_), "",
             f"data                {job.args.data}: {counts['training records']} training records{searched}{held}, "
             f"{release['support']['features']} feature{'s' if release['support']['features'] != 1 else ''}"]
    if "private_score" in release:
        lines.append(_score_line(release["private_score"]))
    else:
        trained = ("the held-out records are for the diagnostics only" if job.X_test is not None else
                   "the validation records scored the search's candidates with noise, the others trained the model"
                   if validation else "every record trained the model")
        lines.append(f"private score       none: {trained} (--private-score holds some out and measures one with "
                     "noise, inside the same epsilon)")
    k = len(release["classes"] or [])
    if k and est._private_classes():  # released: the labels that passed, which may be fewer than the data hold
        lines.append(f"classes             {', '.join(map(str, release['classes']))}: selected privately inside the "
                     "budget (a label held by too few records does not pass; its records count as the first of two "
                     "classes, as none of three or more; --classes declares the label set)")
    if k > 2:
        lines.append(f"model               one-vs-rest: {k} linear models, one a class against the others, each "
                     f"with 1/{k} of the privacy budget")
    top = ", ".join(f"{t['feature']}" for t in release["support"]["top"])
    if top and release.get("feature_names") is None:
        top += f" ({card.unnamed(release)})"
    constant = "" if est.privacy_report_.mechanism != "constant" else (
        "; the constant predictor (a noisy label mean): the records spread over too little of their declared ranges "
        f"(their fill, released privately, is below {auto.FILL_FLOOR:g}) for this epsilon to learn from the "
        "features; narrower public ranges would let it learn (docs/defaults.md)"
        if "the rule's fill" in est.privacy_report_.noise else
        "; the constant predictor (a noisy label mean): too few records for this epsilon to learn from the "
        "features (docs/defaults.md)" + _held_out_floor(job, est, counts, use))
    support = release["support"]
    dense = (", every feature: the default penalty strength on few features (alpha = 1e-4, docs/defaults.md) keeps "
             "them all; --alpha, or --mechanism two-stage --sparsity K, for fewer" if support["size"] == support[
                 "features"] > 1 and est.alpha == "auto" and est.privacy_report_.mechanism == "dp-gd" else "")
    lines.append(f"features used       {support['size']} of {support['features']} (the support: nonzero "
                 f"coefficients{dense})" + (f"; largest over each feature's range: {top}" if top else "") + constant)
    lines.append(f"bounds              {release['privacy_report']['bounds_source']}")
    lines += [f"WARNING             {w}" for w in release["warnings"]]
    return lines


def _held_out_floor(job, est, counts, use):
    """Where the rule released the constant predictor only because records were held out: says so (public inputs:
    the records' counts, p and epsilon; the rule without its private fill)."""
    if job.X_test is None or est.mechanism != "auto":
        return ""
    total = counts["training records"] + counts["validation records"] + int(job.X_test.shape[0])
    if est._chosen_mechanism(total, job.X_train.shape[1])[0].name == "constant":
        return ""
    return (f"; with all {total} records it would learn from them: the {job.X_test.shape[0]} held out for {use} "
            "took the count below its floor (a smaller --test-size keeps more)")


def _diagnostic_lines(diag, holder):
    """The data holder's figures, under their label."""
    lines = ["Diagnostics: NOT differentially private (computed on the private data, for the data holder only; "
             "not in the model file or the card)"]
    for k, v in diag["private"].items():
        np_part = f"   non-private {diag['non_private'][k]:.4f}" if isinstance(diag["non_private"], dict) else ""
        lines.append(f"held-out {k:<10} private {v:.4f}   constant {diag['constant'][k]:.4f} (the training part's "
                     f"{'majority class' if k == 'accuracy' else 'mean'}){np_part}")
    if "repeats" in diag:
        for k, r in diag["repeats"].items():
            lines.append(f"spread              {len(r['values'])} fits: {k} {r['mean']:.4f} +- {r['std']:.4f} "
                         f"(from {r['min']:.4f} to {r['max']:.4f}); each fit charged, together epsilon = "
                         f"{diag['spent']['epsilon']:g}, delta = {diag['spent']['delta']:.2g} (basic composition); "
                         "the first is written")
    lines.append("clipped             " + ", ".join(f"{k} {v}" for k, v in diag["clipped"].items()))
    if not isinstance(diag["non_private"], dict):
        lines.append(f"relative error      n/a: {diag['non_private']}")
    elif diag.get("relative_error") is None:
        lines.append("relative error      n/a: the zero model is already optimal for this penalty strength")
    else:
        gap = diag["reference_gap"]
        certified = (f"F* certified to {gap:.1e}" if np.isfinite(gap) else
                     f"F* not certified: no finite duality gap after {REFERENCE_ITERATIONS} iterations")
        lines.append(f"relative error      (F(w) - F*) / (F(0) - F*) = {diag['relative_error']:.4f} on the "
                     f"training objective (0: the non-private optimum, 1: no better than the zero model; "
                     f"{certified})")
    lines += [f"WARNING             {w}" for w in holder]
    return lines


def _html(path):
    """Whether a card at ``path`` is HTML (its figures embedded) rather than Markdown (its figures beside it)."""
    return path.lower().endswith((".html", ".htm"))


def _card_figures(path, sweep, folder=None):
    """The figures a fit's card at ``path`` is written with, beside it (or in ``folder``): the coefficients', and
    the sweep's curve (None without ``sweep``)."""
    where = Path(path) if folder is None else Path(folder) / Path(path).name
    return where.with_suffix(".coefficients.png"), where.with_suffix(".sweep.png") if sweep else None


def _write_fit_card(path, job, est, release, model_path, sweep_results=None):
    """The model card (``card.model_card``), from the release (and a private sweep) only; written atomically. An
    HTML card's figures are drawn in a temporary folder (it embeds them: no file beside it is touched); a Markdown
    card's beside it, with a note for each file they replace."""
    with tempfile.TemporaryDirectory(prefix="dpsparse-card-") as folder:
        png, curve = _card_figures(path, sweep_results is not None, folder if _html(path) else None)
        drawn = release["support"]["size"] > 0  # a constant model has no effect to draw: no figure beside the card
        replaced = [f for f in (png if drawn else None, curve) if f is not None and f.exists()]
        if drawn:
            card.plot_coefficients(png, release)
        if curve is not None:
            card.plot_sweep(curve, sweep_results["rows"], sweep_results["metric"], sweep_results["constant"],
                            title="privacy-utility trade-off (private scores)", private=True)
        title, sections = card.model_card(release, str(est.privacy_report_), png, model_path, sweep_results, curve)
        _write_card(path, title, sections, ([png] if drawn else []) + ([curve] if curve else []))
    for f in replaced:
        print(f"dpsparse: note: {f} existed and was replaced by the card's figure (--report names another file)",
              file=sys.stderr)


def _write_card(path, title, sections, figures, keep_figures=False):
    """Write a card atomically; an HTML card embeds its figures, whose files go unless ``keep_figures``."""
    html_output = _html(path)
    _write_atomic(path, card.render_card(title, sections, html_output))
    if html_output and not keep_figures:
        for png in figures:
            png.unlink()


def _private_sweep(args, job):
    """Each fit scored privately on the held-out part (``scoring.private_score``): rows of noisy scores."""
    rows, notes = [], []
    for eps in sorted(args.epsilons):
        fits = [(_fit_private(job, eps, seed), seed) for seed in _seeds(args)]
        scored = [_score(job, e, seed) for e, seed in fits]
        notes += [w for _, ws in scored for w in ws][:1]
        rows.append({"epsilon": eps, "values": [sc["model"] for sc, _ in scored],
                     "constants": [sc["constant"] for sc, _ in scored],
                     "unreliable": sum(bool(sc.get("unreliable")) for sc, _ in scored),
                     "guarantee_holds": all(e.privacy_report_.guarantee_holds for e, _ in fits)})
    constant = float(np.mean([c for r in rows for c in r["constants"]]))
    return rows, constant, fits[0][0], notes


def _sweep_row(row):
    """One epsilon of the sweep's table: mean, std, min and max of its fits' scores; no summary where a private R^2
    is not measurable (``scoring.private_score``'s ``unreliable``: its draws are noise, their mean too)."""
    v = row["values"]
    if row.get("unreliable"):
        return (f"{row['epsilon']:>8g}  not measurable: {row['unreliable']} of {len(v)} private scores are noise "
                "here (WARNING below)")
    std = f"{np.std(v):>6.4f}" if len(v) > 1 else f"{'-':>6}"  # one fit has no spread to show
    return f"{row['epsilon']:>8g}  {np.mean(v):>7.4f}  {std}  {np.min(v):>7.4f}  {np.max(v):>7.4f}"


def sweep(args):
    """``dpsparse sweep``: fits at each epsilon, a table, JSON and a privacy-utility PNG."""
    job = _job(args, args.epsilons)
    key = _main_metric(job.estimator)
    if args.private_score:
        rows, constant, est, score_notes = _private_sweep(args, job)
        nonprivate_value, why = None, "not computed for a private sweep"
        heading = ("private scores: each fit's held-out metric with noise, inside its own epsilon (parallel "
                   "composition); the constant predictor's is the mean of its noisy scores")
    else:
        rows, score_notes = [], []
        for eps in sorted(args.epsilons):
            fits = [_fit_private(job, eps, seed) for seed in _seeds(args)]
            est = fits[0]
            rows.append({"epsilon": eps, "values": [_metrics(e, job.X_test, job.y_test)[key] for e in fits],
                         "guarantee_holds": all(e.privacy_report_.guarantee_holds for e in fits)})
        constant = _constant_metrics(job, est)[key]
        nonprivate, why = _non_private(job, est)
        nonprivate_value = None if nonprivate is None else _metrics(nonprivate[0], job.X_test, job.y_test)[key]
        heading = ("held-out metrics measured without noise on a split of the private data: NOT differentially "
                   "private, for the data holder only (--private-score measures private ones)")
    spent = args.repeats * sum(args.epsilons)
    delta_spent = args.repeats * len(args.epsilons) * est.privacy_report_.delta  # every fit at the same delta
    per_epsilon = f"{args.repeats} fit{'s' if args.repeats > 1 else ''}"
    table = [heading, f"{'epsilon':>8}  {'mean':>7}  {'std':>6}  {'min':>7}  {'max':>7}   held-out {key}, "
                      f"{per_epsilon} each"]
    table += [_sweep_row(r) for r in rows]
    table += [f"constant predictor {constant:.4f}" + (" (the mean of its noisy scores over every fit; a warning below "
                                                     "compares one fit with its own)" if args.private_score else ""),
              f"non-private        {nonprivate_value:.4f}" if nonprivate_value is not None else f"non-private: {why}",
              f"epsilon spent      {spent:g} and delta {delta_spent:.3g} in all ({per_epsilon} at each epsilon, "
              "each charged; basic composition)"]
    table += [f"WARNING            {w}" for w in job.warnings + score_notes]
    title = f"privacy-utility trade-off: {Path(args.data).name}, n = {job.X_train.shape[0]}"
    card.plot_sweep(args.plot, rows, key, constant, nonprivate_value, title=title, private=args.private_score)
    if args.report:
        private = "private scores" if args.private_score else "for the data holder: not differentially private"
        _write_card(args.report, f"dpsparse privacy-utility sweep ({private})",
                    [("Data", [("p", f"{Path(args.data).name}: {job.X_train.shape[0]} train / "
                                     f"{job.X_test.shape[0]} test rows, {job.X_train.shape[1]} features")]),
                     ("Results", [("pre", table), ("figure", f"held-out {key} against epsilon", Path(args.plot))]),
                     ("How each model was trained (the last fit)",
                      [("details", "The privacy report", str(est.privacy_report_))])],
                    [Path(args.plot)], keep_figures=True)
    out = {"data": _data_id(args.data), "shape": _data_shape(job), "metric": key, "private": bool(args.private_score),
           "rows": rows,
           "constant": constant, "non_private": nonprivate_value, "epsilon_spent": spent, "delta_spent": delta_spent,
           "repeats": args.repeats, "warnings": job.warnings + score_notes,
           "noise_seeded": args.seed is not None}
    if not args.private_score:
        out = {"NOT differentially private": "held-out metrics measured without noise on a split of the private "
               "data, for the data holder only: do not publish this file (its models are private, its figures are "
               "not; 'dpsparse sweep --private-score' measures private ones)", **out,
               "holder_warnings": job.holder_notes}
    _write_atomic(args.out, json.dumps(out, indent=1, default=jsonable))
    print("\n".join(table))
    print(f"results written to {args.out}, figure to {args.plot}" + (f", card to {args.report}" if args.report
                                                                     else ""))


def _read_json(path, what):
    """A JSON object from ``path``; a clear error naming ``what`` otherwise."""
    try:
        with open(path) as fh:
            obj = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{what} {path!r} cannot be read: {exc}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{what} {path!r} is not a JSON object")
    return obj


def _data_id(data):
    """What names the data of a ``--data`` argument: a file's name (not its folder, which may say whose records
    these are; as the model file does), or the bundled dataset's name."""
    return Path(data).name if data is not None and Path(data).is_file() else str(data)


def _data_shape(job):
    """``[records, features]`` of the data file (public: the model file releases its training size)."""
    n = job.X_train.shape[0] + (0 if job.X_test is None else job.X_test.shape[0])
    return [int(n), int(job.X_train.shape[1])]


def _read_sweep(path, data):
    """A private sweep's results for the card, read before any data; a clear error for anything else, and for a
    sweep of other data (its curve describes other records)."""
    sweep_results = _read_json(path, "--sweep")
    if "rows" not in sweep_results:
        raise ValueError(f"--sweep {path!r} is not a results file of 'dpsparse sweep'")
    stored = str(sweep_results.get("data"))  # older files hold the whole path: matched as such
    if stored != (str(Path(data).resolve()) if Path(stored).is_absolute() else _data_id(data)):
        raise ValueError(f"--sweep {path!r} was measured on {sweep_results.get('data')!r}, not on this fit's data "
                         f"{str(data)!r}: its curve and the privacy it spent belong to other records; run "
                         "'dpsparse sweep --private-score' on this data")
    if not sweep_results.get("private"):
        raise ValueError(f"--sweep {path!r}: its figures were measured without noise and cannot go into a card "
                         "meant to be published; run 'dpsparse sweep --private-score'")
    if "noise_seeded" not in sweep_results:
        raise ValueError(f"--sweep {path!r} was written by an older dpsparse, which did not record whether its noise "
                         "came from a fixed seed: run 'dpsparse sweep --private-score' again")
    if sweep_results["noise_seeded"] or not all(row.get("guarantee_holds", False) for row in sweep_results["rows"]):
        raise ValueError(f"--sweep {path!r}: its fits have no privacy guarantee (a fixed --seed, or bounds read off "
                         "the data), so its curve cannot go into a card meant to be published; run 'dpsparse sweep "
                         "--private-score' without them")
    return sweep_results


def _read_model(path):
    """A model file written by ``dpsparse fit``; a clear error otherwise."""
    model = _read_json(path, "model file")
    if model.get("format") != MODEL_FORMAT:
        raise ValueError(f"model file {path!r} is not a {MODEL_FORMAT} model")
    return model


def report(args):
    """``dpsparse report MODEL``: the guarantee and the full privacy report of a model file."""
    model = _read_model(args.model)
    d = model.get("privacy_report")
    required = [f.name for f in dataclasses.fields(PrivacyReport) if f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING]
    if not isinstance(d, dict) or any(k not in d for k in required):
        raise ValueError(f"model file {args.model!r} has no complete privacy report: write it with 'dpsparse fit'")
    rep = PrivacyReport.from_dict(d)
    print(card.guarantee_sentence(rep))
    print()
    print("In plain words")
    for line in card.plain_words({**model, "privacy_report": rep.to_dict()}):
        print(textwrap.fill(line, 100, initial_indent="  - ", subsequent_indent="    "))
    if "private_score" in model:
        print()
        print(_score_line(model["private_score"]))
    print()
    print(rep)


def predict(args):
    if args.out:
        _check_out(args.out)
    model = _read_model(args.model)
    missing = [k for k in ("task", "coef", "intercept", "classes") if k not in model]
    if missing:
        raise ValueError(f"model file {args.model!r} lacks {', '.join(missing)}: write it with 'dpsparse fit'")
    try:
        coef = np.asarray(model["coef"], dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"model file {args.model!r}: 'coef' is not an array of numbers") from None
    _read_schema(args)
    if model.get("schema") and not args.schema:
        raise ValueError(f"model file {args.model!r} was fitted on a raw file through a schema (its columns are the "
                         "schema's encoding): pass the same --schema with the file to predict")
    fmt = None if _bundled(args) else data.data_format(args.data, args.format)
    if fmt is None:  # a bundled dataset, as 'dpsparse fit --data' reads it
        X = data.load_bundled(args.data)[0]
    elif args.schema:
        _same_encoding(args.schema.feature_names, model.get("feature_names"), args.model)
        X, _, _ = args.schema.read(args.data, with_target=False)
    elif fmt == "csv":
        X, _, cols = data.load_csv(args.data, args.target)
        X = _columns(X, cols, model.get("feature_names"), args.data)
    else:
        X, labels = data.load_svmlight(args.data, zero_based=model.get("data", {}).get("svmlight indices from") == 0)
        _note_other_data(X.shape[1], coef.shape[-1], labels, model.get("classes"), args.data)
        if X.shape[1] < coef.shape[-1]:  # svmlight leaves out zeros: trailing features never nonzero in the file
            X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], coef.shape[-1]))
    if X.shape[1] != coef.shape[-1]:
        raise ValueError(f"the data has {X.shape[1]} features, the model {coef.shape[-1]}")
    X, _ = data.check_data(X)
    # as the estimator's predict: the features clipped to the model's bounds
    bounds = None if model.get("bounds") is None else data.Bounds.from_dict(model["bounds"])
    scores = data.linear_decision(X, coef, np.asarray(model["intercept"], dtype=float), bounds)
    if coef.ndim == 2:  # one-vs-rest: a row per class, the class of the largest margin
        _write_predictions(args.out, np.asarray(model["classes"])[np.argmax(scores, axis=1)])
        return
    if model["task"] == "classification":
        pred = np.asarray(model["classes"])[(scores > 0).astype(int)]
    elif model.get("label_range") is not None:
        pred = np.clip(scores, *model["label_range"])  # as the estimator's predict: the public label range
    else:
        pred = scores
    _write_predictions(args.out, pred)


def _same_encoding(names, fitted, model_path):
    """ValueError when a schema encodes other columns than the model's (``fitted``: its ``feature_names``): the
    categories in another order, another transform, another column. Read by position, the columns would be
    predicted with another column's coefficient, without a word."""
    if fitted is None or list(names) == list(fitted):
        return
    if len(names) != len(fitted):
        where = f"it encodes {len(names)} columns, the model has {len(fitted)}"
    else:
        k = next(k for k, (a, b) in enumerate(zip(names, fitted)) if a != b)
        where = f"its encoded column {k + 1} is {names[k]!r}, the model's is {fitted[k]!r}"
    raise ValueError(f"--schema is not the schema model file {model_path!r} was fitted with ({where}): pass that "
                     "schema (the same columns, categories in the same order, the same transforms)")


def _note_other_data(width, p, labels, classes, path):
    """Notes on stderr when an svmlight file of ``width`` features looks like another dataset than the model's (``p``
    features, ``classes``): fewer features (read as 0), or labels none of which is a class of the model."""
    if width < p:
        print(f"note: {str(path)!r} has fewer features than the model ({p}): the missing ones are read as 0 (svmlight "
              "leaves zeros out), right only for data coded as the model's", file=sys.stderr)
    try:
        classes = np.asarray(classes or [], dtype=float)
    except ValueError:  # named classes (a schema's): not svmlight's numbers
        return
    if classes.size and labels.size and not np.isin(labels, classes).any():
        print(f"note: none of the labels in {str(path)!r} is a class of the model ({', '.join(map(str, classes))}): "
              "is it the same kind of data?", file=sys.stderr)


def _write_predictions(out, pred):
    text = "\n".join(str(v) for v in pred.tolist()) + "\n"
    if out:
        _write_atomic(out, text)
    else:
        sys.stdout.write(text)


def _columns(X, cols, names, path):
    """The columns of a CSV file in the model's order."""
    if names is None:
        return X
    missing = [c for c in names if c not in cols]
    if missing:
        raise ValueError(f"{len(missing)} columns of the model are not in {str(path)!r}, e.g. {missing[:3]}")
    return X[:, [cols.index(c) for c in names]]


def audit(args):
    """Print the sensitivity replay on each neighbouring pair, then the black-box and mutation bounds."""
    from . import audit as _audit
    from . import losses as _losses

    if args.runs < 0 or args.runs > 10**6:
        raise ValueError(f"--runs must be an integer in [0, 1e6], got {args.runs}")
    if not 0 < args.mutation <= 1:
        raise ValueError(f"--mutation must be in (0, 1], got {args.mutation}")
    _check_audit_flags(args)
    if args.pipeline:
        return _one_run_audit(args, None, None, True) if args.one_run else _pipeline_replay(args)
    # the one-run audit guesses labels: classification canaries unless told (squared loss for adassp)
    needs = REGISTRY[args.mechanism].loss_needs if args.mechanism else ()
    args.loss = args.loss or ("squared" if "least-squares" in needs else
                              "logistic" if args.one_run or "twice differentiable" in needs else "huber")
    classification = args.loss in ("logistic", "hinge")
    loss = {"logistic": _losses.Logistic, "hinge": _losses.Hinge, "huber": lambda: _losses.Huber(1.0),
            "squared": lambda: _losses.Squared(1.0)}[args.loss]()
    mech = REGISTRY[args.mechanism]
    penalty = norms.build_penalty("l1", 1e-6, 2, True)
    mech.check_compatible(loss, penalty)  # refused before anything is printed
    if args.one_run:
        return _one_run_audit(args, mech, loss, classification)
    args.delta = 1e-3 if args.delta is None else args.delta
    options = _audit.audit_options(mech)
    bounds, pairs = _audit.neighbouring_pairs(n=10, p=2, classification=classification)
    kw = dict(epsilon=args.epsilon, delta=args.delta, options=options, classification=classification)
    print(f"audit of {mech.name} ({mech.title}), claimed epsilon={args.epsilon:g}, delta={args.delta:g}")
    penalty_text = ("no penalty (the mechanism's own sparsity replaces it)" if not mech.penalty_needs
                    else "the L1 ball (the penalty's strength is ignored)" if "ball" in mech.penalty_needs
                    else "L1 penalty of strength 1e-6")
    print(f"setting: {args.loss} loss, n=10, p=2, features in [-1, 1], {penalty_text}, options {options}")
    print("sensitivity replay (change / declared sensitivity, largest of 5 seeds; above 1 breaks the claim):")
    failed = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, pair in pairs.items():
            ratios = _audit.sensitivity_replay(mech, pair, bounds, loss, penalty, seed=args.seed, repeats=5, **kw)
            print(f"  {name:<25} " + ", ".join(f"{k} {v:.3f}" for k, v in ratios.items()))
            failed += [f"the sensitivity of {k} ({name})" for k, v in ratios.items() if v > 1.0 + 1e-9]
        design = data.prepare(*pairs["label flip"][0], bounds, classification, fit_intercept=True)
        check = _audit.ledger_replay(mech, design, loss, penalty, epsilon=args.epsilon, delta=args.delta,
                                     options=options, seed=args.seed)
        verdict = "within the claim" if check.holds else "ABOVE THE CLAIM: the ledger books less than is drawn"
        print(f"ledger replay (the noise drawn, {check.draws} releases and selections, composed by the accountant): "
              f"epsilon {check.composed:.6f} for a claimed {check.claimed:.6f}: {verdict}")
        if not check.holds:
            failed.append("the ledger replay")
        caught = None
        if args.runs:
            for factor in sorted({1.0, args.mutation}, reverse=True):
                what = "as declared" if factor == 1 else f"mutant, noise x{factor:g}"
                print(f"black-box runs ({what}): {2 * args.runs} fits of {mech.name}...", file=sys.stderr, flush=True)
                res = _audit.black_box_audit(mech, pairs["isolated label flip"], bounds, loss, penalty,
                                             runs=args.runs, seed=args.seed, noise_factor=factor, **kw)
                above = res.epsilon_lower_bound > args.epsilon
                print(f"black-box lower bound ({what}): epsilon >= {res.epsilon_lower_bound:.3f} (95%, "
                      f"{args.runs} runs per dataset, isolated label flip): "
                      f"{'above the claim' if above else 'within the claim'}")
                if factor == 1 and above:
                    failed.append("the black-box lower bound")
                elif factor != 1:
                    caught = above
    print(_audit_verdict(failed, caught, args.mutation))
    if failed:
        raise SystemExit(1)


def _audit_verdict(failed, caught, mutation, power_flag="--runs"):
    """The audit's last line: PASS or FAIL in words, and whether the mutation check shows that it can see a leak
    (``power_flag``: what gives the black-box test more power, ``--runs``, or ``--canaries`` in one run)."""
    if failed:
        return ("FAIL: " + ", ".join(failed) + " exceeded the claim: the mechanism's code releases more than its "
                "privacy report says (docs/audit.md)")
    power = ""
    if caught:
        power = f"; the mutant with noise x{mutation:g} was caught, so a leak of that size would show"
    elif caught is not None:
        power = (f"; the mutant with noise x{mutation:g} was not caught: more {power_flag} give the test the power "
                 "to see a leak (a black-box bound sees only a leak of several times the claim)")
    return ("PASS: no check exceeded the claim (a check of the mechanism's code on synthetic data, not of a model "
            "file)" + power)


def _check_audit_flags(args):
    """Refuse flags that do not go together, before anything runs."""
    if args.mechanism is None and not args.pipeline:
        raise ValueError("--mechanism is required (or --pipeline for the default fits)")
    if args.pipeline and (args.mechanism is not None or args.loss is not None):
        raise ValueError("--pipeline audits the default fit (logistic loss, mechanism by the defaults rule): drop "
                         "--mechanism and --loss")
    check_privacy_params(args.epsilon, 0.5 if args.delta is None else args.delta)
    for flag, on in (("--canaries", args.canaries != 1000),
                     ("--features", args.features is not None), ("--json", args.json)):
        if on and not args.one_run:
            raise ValueError(f"{flag} goes with --one-run")
    if args.private_bounds and not (args.pipeline and args.one_run):
        raise ValueError("--private-bounds goes with --one-run --pipeline")
    if args.pipeline and not args.one_run:  # the replay of the default fits: delta 1/n^2, no black-box runs
        for flag, on in (("--delta", args.delta is not None), ("--runs", args.runs != 20000),
                         ("--mutation", args.mutation != 0.25)):
            if on:
                raise ValueError(f"{flag} is not used by --pipeline's replay of the default fits (their delta is "
                                 "1/n^2; the replay runs no black-box test): drop it, or add --one-run")
    if args.seed < 0:
        raise ValueError(f"--seed must be an integer >= 0, got {args.seed}")
    if not 10 <= args.canaries <= 10**6:
        raise ValueError(f"--canaries must be an integer in [10, 1e6], got {args.canaries}")
    if args.features is not None and not 1 <= args.features <= 10**6:
        raise ValueError(f"--features must be an integer in [1, 1e6], got {args.features}")


def _pipeline_replay(args):
    """``dpsparse audit --pipeline``: the sensitivity replay of every release of the default fits, fit by fit and pair
    by pair, the largest ratio and the release that reaches it."""
    from . import audit as _audit

    sizes = "; ".join(f"{n} and {p} for the {fit}" for fit, (n, p) in _audit.SIZES.items())
    print(f"audit of the default fits (epsilon={args.epsilon:g}, delta 1/n^2; 20000 records, 4 features; {sizes}): "
          "sensitivity replay of every release they make, change / declared sensitivity, largest of 2 seeds; above "
          "1 breaks the claim; inf: a noise scale, the releases made, or the model and report differ between the "
          "two datasets once every release is the same")
    failed = []
    for (fit, pair), ratios in _audit.default_fit_replay(args.epsilon, args.seed).items():
        name, top = max(ratios.items(), key=lambda kv: kv[1])
        print(f"  {fit:<42} {pair:<24} {len(ratios):>3} release{'s' if len(ratios) > 1 else ' '}, largest {top:.3f} "
              f"({name})")
        failed += [f"the sensitivity of {k} ({fit}, {pair})" for k, r in ratios.items() if r > 1.0 + 1e-9]
    print(_audit_verdict(failed, None, args.mutation))
    if failed:
        raise SystemExit(1)


def _one_run_audit(args, mech, loss, classification):
    """``dpsparse audit --one-run``: the real fit's lower bound, and the mutant's (``mech`` None: the pipeline)."""
    from . import audit as _audit

    args.delta = 1.0 / args.canaries**2 if args.delta is None else args.delta
    kw = dict(epsilon=args.epsilon, delta=args.delta, canaries=args.canaries, features=args.features, seed=args.seed)
    if mech is None:
        run = functools.partial(_audit.one_run_audit_pipeline, private_bounds=args.private_bounds, **kw)
    else:
        run = functools.partial(_audit.one_run_audit, mech, loss, classification=classification, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = run()
        mutant = None if args.mutation == 1 else run(noise_factor=args.mutation)
    name = "pipeline" if mech is None else mech.name
    failed = ["the one-run lower bound"] if real.lower_bound > args.epsilon else []
    if args.json:
        print(json.dumps({"mechanism": name, "claim_epsilon": real.claim_epsilon, "lower_bound": real.lower_bound,
                          "guesses": real.guesses, "correct": real.correct, "canaries": real.canaries,
                          "mutant_lower_bound": None if mutant is None else mutant.lower_bound,
                          "passed": not failed}))
        if failed:
            raise SystemExit(1)
        return
    what = ("the default fit of 'dpsparse fit' (bounds " + ("bought privately" if args.private_bounds else
            "[-1, 1] declared") + ")" if mech is None else f"{name} ({args.loss} loss)")
    print(f"one-run audit of {what}, claimed epsilon={args.epsilon:g}, delta={args.delta:g}: {args.canaries} "
          f"canaries, random sign rows over {args.features or 2 * args.canaries} features")
    for res, what in ((real, "as declared"), (mutant, f"mutant, noise x{args.mutation:g}")):
        if res is not None:
            verdict = "above the claim" if res.lower_bound > args.epsilon else "within the claim"
            print(f"one-run lower bound ({what}): epsilon >= {res.lower_bound:.3f} (95%, {res.correct} of "
                  f"{res.guesses} guesses right on {res.canaries} canaries): {verdict}")
    print(_audit_verdict(failed, None if mutant is None else mutant.lower_bound > args.epsilon, args.mutation,
                         "--canaries"))
    if failed:
        raise SystemExit(1)


def write_schema(args):
    """``dpsparse schema``: a template from the file's first line (no value read)."""
    if args.out == "-":  # the usual name of standard output
        args.out = None
    if args.out:
        _check_out(args.out)
    written = schema.template(args.data, args.header, args.delimiter, args.comment, args.target)
    text = json.dumps(written, indent=1) + "\n"
    if args.out:
        _write_atomic(args.out, text)
        chosen = "" if args.target else " (the last column; --target names another)"
        print(f"schema template written to {args.out}: fill in each column's public type, range or categories; "
              f"the target is {written['target']['name']!r}{chosen}")
    else:
        sys.stdout.write(text)


def _joined_negative_values(argv):
    """``--classes -1,1`` as ``--classes=-1,1``, ``--delta -1e-5`` as ``--delta=-1e-5``: argparse reads a value
    that starts with '-' and is not a plain number (a list, scientific notation) as a flag, and then answers
    "expected one argument" instead of the option's own range."""
    out = []
    for arg in argv:
        listed = out and out[-1] == "--classes" and re.match(r"^-\d", arg)
        scientific = re.fullmatch(r"-(\d+\.?\d*|\.\d+)e[-+]?\d+", arg, re.IGNORECASE)
        if listed or (scientific and out and out[-1].startswith("--") and "=" not in out[-1]):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


_READS, _WRITES = ("data", "schema", "bounds", "model", "sweep", "groups"), ("out", "plot", "report")
"""The path arguments a command reads and those it writes."""


def _written(args):
    """``(flag, path as given, real path)`` of every file the command writes, a card's figures included."""
    out = []
    for name in _WRITES:
        path = getattr(args, name, None)
        if isinstance(path, str):
            out.append((f"--{name}", path, os.path.realpath(path)))
    report = getattr(args, "report", None)
    if args.command == "fit" and report and not _html(report) and not os.path.isdir(report):  # a Markdown card's
        # figures, beside it (a folder is left to --report's own check)
        out += [("--report's figure", str(f), os.path.realpath(f)) for f in _card_figures(report, args.sweep)
                if f is not None]
    return out


def _check_outputs_spare_inputs(args):
    """No file the command writes has an empty name or is one it reads (it would be replaced, the data or the
    schema lost), or another it writes, or a bundled dataset's name in this folder (``--data`` would then read it);
    a schema template never replaces an existing file (a schema filled in by hand)."""
    for name in _WRITES:
        if isinstance(getattr(args, name, None), str) and not getattr(args, name).strip():
            raise ValueError(f"--{name} is empty: give it a file name (ending in "
                             f"{OUT_SUFFIXES.get('--' + name, '.json')})")
    reads = {os.path.realpath(path): name for name in _READS
             if isinstance(path := getattr(args, name, None), str) and os.path.isfile(path)}
    bundled = {os.path.realpath(name): name for name in data.BUNDLED}
    seen = {}
    for flag, given, path in _written(args):
        if path in reads:
            raise ValueError(f"{flag} {given!r} is the file --{reads[path]} reads: writing it would replace it; give "
                             "another file name")
        if path in seen:
            raise ValueError(f"{flag} and {seen[path]} both name {given!r}: give each output its own file name")
        if path in bundled:
            raise ValueError(f"{flag} {given!r} is named as the bundled dataset: '--data {bundled[path]}' would then "
                             "read this file; give another file name")
        seen[path] = flag
    if args.command == "schema" and args.out and os.path.exists(args.out):
        raise ValueError(f"--out {args.out!r} exists (a schema filled in by hand, perhaps): the template does not "
                         "replace it; give another file name, or remove it first")


def main(argv=None):
    args = _parser().parse_args(_joined_negative_values(sys.argv[1:] if argv is None else list(argv)))
    if args.command == "sweep" and args.plot is None and args.out.strip():  # beside its results: another --out keeps
        # an earlier figure
        args.plot = str(Path(args.out).with_suffix(".png"))
    try:
        _data_given(args)
        _check_outputs_spare_inputs(args)
        {"fit": fit, "sweep": sweep, "predict": predict, "audit": audit, "schema": write_schema,
         "report": report}[args.command](args)
    except ValueError as exc:
        print(f"dpsparse {args.command}: error: {getattr(exc, 'cli', exc)}", file=sys.stderr)  # as argparse's
        return 2
    except BrokenPipeError:  # the reader stopped (``dpsparse report m.json | head``): no traceback
        _silence_stdout()
        return 1
    return 0


def _silence_stdout():
    """Point stdout at the null device, so that the interpreter's flush at exit does not raise again (the Python
    documentation's recipe for SIGPIPE)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor (stdout replaced in-process)
        pass


if __name__ == "__main__":
    sys.exit(main())
