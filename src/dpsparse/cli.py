"""Command line: ``dpsparse fit`` trains a private model, ``dpsparse predict`` applies it.

``dpsparse fit`` prints the privacy report, held-out metrics of the private model beside
the non-private optimum, the relative error ``(F(w) - F*) / (F(0) - F*)`` on the training
data and the support size, and writes the model as JSON. Errors go to stderr with exit
status 2, and nothing is written.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings

import numpy as np
from sklearn.metrics import accuracy_score, mean_squared_error, r2_score
from sklearn.model_selection import train_test_split

from . import data, norms, solvers, tuning
from .estimators import DPLinearRegression, DPLinearSVC, DPLogisticRegression
from .exceptions import PrivacyLeakWarning
from .mechanisms import REGISTRY

# Options the CLI sets through its own flags (--iterations is every mechanism's n_iter).
_OWN_FLAGS = {"n_iter"}

MODEL_FORMAT = "dpsparse-model/1"


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a flag's default unless it is None (then its help says what the default is)."""

    def _get_help_string(self, action):
        if action.default is None or action.default is argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


COMPARE_LIMIT = 5e6  # stored values of X up to which the non-private comparison runs by default


def _parser():
    p = argparse.ArgumentParser(prog="dpsparse", description="Differentially private sparse learning.")
    sub = p.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit", help="train a private model and report privacy and accuracy",
                       formatter_class=_HelpFormatter)
    f.add_argument("--data", default="breast_cancer",
                   help="data file (svmlight or CSV), or a bundled dataset: breast_cancer (default), diabetes")
    f.add_argument("--format", choices=["svmlight", "csv"], help="file format (default: from the extension)")
    f.add_argument("--target", help="label column of a CSV file")
    f.add_argument("--loss", choices=["logistic", "hinge", "squared", "huber"],
                   help="default: logistic for binary labels, squared otherwise")
    f.add_argument("--penalty", choices=norms.PENALTY_NAMES, default="l1")
    f.add_argument("--groups", help="JSON file of the groups of group-l2 / group-linf (docs/norms.md)")
    f.add_argument("--l1-ratio", type=float, default=0.5, help="elastic-net mixing, in [0, 1]")
    f.add_argument("--alpha", type=float, help="penalty strength (bounded coordinates) (default: 0.001, or searched)")
    f.add_argument("--epsilon", type=float, default=1.0, help="privacy budget epsilon > 0")
    f.add_argument("--delta", type=float, help="default: 1/n^2")
    f.add_argument("--mechanism", choices=sorted(REGISTRY),
                   help="default: dp-gcd for separable penalties and smooth losses, else dp-sgd "
                        "(one-pass-sgd for the hinge loss). "
                        + "; ".join(f"{m.name}: {m.summary}" for m in REGISTRY.values()))
    _add_mechanism_options(f)
    calibrations = sorted({c for m in REGISTRY.values() for c in m.calibrations})
    f.add_argument("--calibration", choices=calibrations, help="default: the mechanism's own (tight where it exists)")
    f.add_argument("--iterations", type=int,
                   help="iterations T of the mechanism (its n_iter; the budget is split over them) "
                        "(default: the mechanism's own, or searched)")
    f.add_argument("--tune", action=argparse.BooleanOptionalAction,
                   help="search mechanism, iterations and alpha privately within --epsilon (DPSearchCV, "
                        "docs/privacy.md); default: on unless --mechanism, --iterations, --alpha, --calibration or a "
                        "mechanism option is given")
    f.add_argument("--clip", type=float, default=1.0, help="residual clipping / Huber threshold (regression)")
    f.add_argument("--bounds", help="public bounds JSON (docs/bounds.md); without it bounds leak from the data")
    f.add_argument("--test-size", type=float, default=0.25, help="held-out fraction, in (0, 1)")
    f.add_argument("--out", default="model.json", help="where to write the model JSON")
    f.add_argument("--seed", type=int, help="seed of the split and the noise (experiments only)")
    f.add_argument("--noise", choices=["fast", "secure"], default="fast",
                   help="noise backend: numpy, or OpenDP's floating-point-safe samplers (docs/noise.md)")
    f.add_argument("--json", action="store_true", help="print the results as JSON")
    f.add_argument("--compare", action=argparse.BooleanOptionalAction,
                   help="compute the non-private optimum beside the private model (default: when the training "
                        f"data has at most {COMPARE_LIMIT:.0e} stored values)")
    a = sub.add_parser("audit", help="audit a mechanism: sensitivity replay, black-box lower bound, mutation check",
                       formatter_class=_HelpFormatter, description="docs/audit.md explains each check.")
    a.add_argument("--mechanism", choices=sorted(REGISTRY), required=True)
    a.add_argument("--loss", choices=["logistic", "huber"], default="huber",
                   help="huber: regression with labels in [-1, 1]; logistic: labels +-1")
    a.add_argument("--epsilon", type=float, default=1.0, help="claimed epsilon")
    a.add_argument("--delta", type=float, default=1e-3, help="claimed delta")
    a.add_argument("--runs", type=int, default=20000, help="black-box runs per dataset (0: replay only)")
    a.add_argument("--mutation", type=float, default=0.25, help="noise factor of the mutant (1: no mutation check)")
    a.add_argument("--seed", type=int, default=0)
    q = sub.add_parser("predict", help="apply a model written by 'dpsparse fit'")
    q.add_argument("--model", required=True)
    q.add_argument("--data", required=True)
    q.add_argument("--format", choices=["svmlight", "csv"])
    q.add_argument("--target", help="label column of a CSV file (dropped before predicting)")
    q.add_argument("--out", help="file for the predictions (default: stdout)")
    return p


def _load(args):
    if args.data in data.BUNDLED and not os.path.exists(args.data):
        X, y, bounds, names = data.load_bundled(args.data)
    else:
        X, y, names = data.load(args.data, args.format, args.target)
        bounds = None
    if args.bounds:
        bounds = data.Bounds.from_json(args.bounds)
    return X, y, bounds, names


def _check_out(path):
    """The model file's folder exists and is writable (before any data is read)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"--out {path!r} is a directory; give a file name, e.g. {os.path.join(path, 'model.json')}")
    if not os.path.isdir(folder):
        raise ValueError(f"--out {path!r}: the folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"--out {path!r}: the folder {folder!r} is not writable")


def _check_labels(args, y, bounds):
    """Whether the labels are binary; a clear error for the label sets that have no model here."""
    k = np.unique(y).size
    if k == 1:
        raise ValueError("the labels have a single value: there is nothing to learn")
    regression_declared = bounds is not None and bounds.label_low is not None
    categorical = np.issubdtype(np.asarray(y).dtype, np.number) and np.all(np.mod(y, 1) == 0)
    if k > 2 and (args.loss in ("logistic", "hinge") or (args.loss is None and categorical
                                                           and not regression_declared)):
        raise ValueError(f"the labels have {k} distinct values: classification supports 2 classes (map the labels "
                         "to two, e.g. one class against the rest); for a regression, declare label_low and "
                         "label_high in the bounds file (docs/bounds.md) and pass --loss squared or huber")
    return k == 2


def _mechanism(args, loss):
    if args.mechanism:
        return args.mechanism
    if loss == "hinge":
        return "one-pass-sgd"
    return "dp-sgd" if args.penalty in norms.STRUCTURED else "dp-gcd"


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
            kw["type"] = int if o.kind == "int" else float
        group.add_argument(_flag(name), **kw)


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
                raise ValueError(f"{_flag(o.name)} is an option of {' and '.join(owners)}, not of {mechanism}")
            options[o.name] = value
    return options


def _estimator(args, binary):
    loss = args.loss or ("logistic" if binary else "squared")
    mechanism = _mechanism(args, loss)
    common = dict(epsilon=args.epsilon, delta=args.delta, alpha=1e-3 if args.alpha is None else args.alpha,
                  penalty=args.penalty, l1_ratio=args.l1_ratio, groups=args.groups, mechanism=mechanism,
                  mechanism_options=_mechanism_options(args, mechanism),
                  max_iter=args.iterations,
                  calibration=args.calibration, random_state=args.seed, verbose=1, noise=args.noise)
    if loss in ("logistic", "hinge"):
        if not binary:
            raise ValueError(f"the {loss} loss needs binary labels (exactly 2 distinct values)")
        return (DPLogisticRegression if loss == "logistic" else DPLinearSVC)(**common)
    return DPLinearRegression(loss=loss, clip=args.clip, **common)


def _search(args, est, n_features):
    """A ``DPSearchCV`` over ``tuning.default_grid`` when tuning is on, else None."""
    names = ["mechanism", "iterations", "alpha", "calibration"] + sorted(
        {o.name for m in REGISTRY.values() for o in m.options} - _OWN_FLAGS)
    fixed = [_flag(name) for name in names if getattr(args, name, None) is not None]
    if args.tune is False or (args.tune is None and fixed):
        return None
    if args.tune and fixed:
        raise ValueError(f"--tune searches mechanism, iterations and alpha with default options; drop "
                         f"{', '.join(fixed)} or --tune")
    grid = tuning.default_grid(est, n_features)
    if grid is None:
        if args.tune:
            raise ValueError(f"--tune: no searchable mechanism ({', '.join(tuning.DEFAULT_MECHANISMS)}) accepts "
                             f"this loss and penalty; pass --no-tune")
        return None
    seed = None if args.noise == "secure" else args.seed  # OpenDP draws from OS entropy
    return tuning.DPSearchCV(est, grid, epsilon=args.epsilon, delta=args.delta, random_state=seed, noise=args.noise)


def _metrics(est, X, y):
    pred = est.predict(X)
    if isinstance(est, DPLogisticRegression):
        return {"accuracy": float(accuracy_score(y, pred))}
    return {"r2": float(r2_score(y, pred)), "mse": float(mean_squared_error(y, pred))}


def _stored_values(X):
    return X.nnz if hasattr(X, "nnz") else X.size


def _reference(est, Xtr, ytr):
    """Non-private optimum on the same bounded training data (accelerated proximal gradient to a certified
    gap of 1e-8: no compilation, under a second at the default sizes), and the relative error."""
    design = est._design(Xtr, ytr)
    penalty = est._penalty(Xtr.shape[1])
    loss = est.reference_loss()
    ref = solvers.solve_prox(design.X, design.y, loss, penalty)
    def F(w):
        return solvers.objective(design.X, design.y, w, loss, penalty)

    rel = (F(est.coef_bounded_) - ref.objective) / (F(np.zeros_like(ref.coef)) - ref.objective)
    return ref, design, float(rel)


def _write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".dpsparse-")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def fit(args):
    if not 0 < args.test_size < 1:
        raise ValueError(f"--test-size must be in (0, 1), got {args.test_size}")
    if args.penalty and args.penalty.startswith("group-") and args.groups is None:
        raise ValueError(f"--penalty {args.penalty} needs --groups FILE, a JSON list of column-index lists "
                         "(docs/norms.md)")
    _check_out(args.out)
    X, y, bounds, names = _load(args)
    binary = _check_labels(args, y, bounds)
    est = _estimator(args, binary)
    est.set_params(bounds=bounds)
    strat = y if binary else None
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=args.test_size, random_state=args.seed, stratify=strat)
    if args.noise == "secure":
        est.set_params(random_state=None)  # the seed still fixes the split; OpenDP draws from OS entropy
    search = _search(args, est, X.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the report below says it
        if search is None:
            est.fit(Xtr, ytr)
        else:
            est = search.fit(Xtr, ytr).best_estimator_
        smooth = np.isfinite(est.reference_loss().smoothness)
        compare = args.compare if args.compare is not None else _stored_values(Xtr) <= COMPARE_LIMIT
        reference = _reference(est, Xtr, ytr) if smooth and compare else None
    result = {
        "data": args.data, "n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0]),
        "n_features": int(X.shape[1]), "private": _metrics(est, Xte, yte),
        "support_size": int(np.count_nonzero(est.coef_)),
    }
    if reference is not None:
        ref, design, rel = reference
        nonprivate = est.__class__(**est.get_params())
        nonprivate._fit_classes = getattr(est, "classes_", None)
        nonprivate._set_fitted(design, ref.coef)
        nonprivate.n_features_in_ = est.n_features_in_
        result.update(non_private=_metrics(nonprivate, Xte, yte), relative_error=rel, reference_gap=ref.gap,
                      non_private_support_size=int(np.count_nonzero(nonprivate.coef_)))
    model = {
        "format": MODEL_FORMAT,
        "task": "classification" if isinstance(est, DPLogisticRegression) else "regression",
        "coef": est.coef_.tolist(), "intercept": est.intercept_,
        "classes": est.classes_.tolist() if hasattr(est, "classes_") else None,
        "label_range": list(est.label_range_) if hasattr(est, "label_range_") else None,
        "feature_names": list(names) if names is not None else None,
        "params": {k: v for k, v in est.get_params().items() if k != "bounds"},
        "privacy_report": est.privacy_report_.to_dict(),
        "metrics": result,
    }
    _write_atomic(args.out, json.dumps(model, indent=1, default=float))
    if args.json:
        print(json.dumps({"privacy_report": est.privacy_report_.to_dict(), **result}, indent=1, default=float))
        return
    print(est.privacy_report_)
    print()
    print(f"data                {args.data}: {result['n_train']} train / {result['n_test']} test rows, "
          f"{result['n_features']} features")
    if reference is None:
        for k, v in result["private"].items():
            print(f"held-out {k:<10} private {v:.4f}")
        why = ("no exact solver for a non-smooth loss" if not smooth else
               "non-private comparison skipped (--compare computes it; by default it runs up to "
               f"{COMPARE_LIMIT:.0e} stored values)")
        print(f"relative error      n/a: {why}")
        print(f"support size        private {result['support_size']} of {result['n_features']}")
    else:
        for k, v in result["private"].items():
            print(f"held-out {k:<10} private {v:.4f}   non-private {result['non_private'][k]:.4f}")
        print(f"relative error      (F(w) - F*) / (F(0) - F*) = {result['relative_error']:.4f}  "
              f"(F* certified to gap {result['reference_gap']:.1e})")
        print(f"support size        private {result['support_size']}   non-private "
              f"{result['non_private_support_size']}   of {result['n_features']}")
    print(f"model written to    {args.out}")


def predict(args):
    try:
        with open(args.model) as fh:
            model = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"model file {args.model!r} cannot be read: {exc}") from None
    if model.get("format") != MODEL_FORMAT:
        raise ValueError(f"model file {args.model!r} is not a {MODEL_FORMAT} model")
    coef = np.asarray(model["coef"], dtype=float)
    fmt = data.data_format(args.data, args.format)
    if fmt == "csv":
        X, _, cols = data.load_csv(args.data, args.target)
        X = _columns(X, cols, model.get("feature_names"), args.data)
    else:
        X, _ = data.load_svmlight(args.data, n_features=coef.size)
    if X.shape[1] != coef.size:
        raise ValueError(f"the data has {X.shape[1]} features, the model {coef.size}")
    X, _ = data.check_data(X)
    scores = np.asarray(X @ coef).ravel() + model["intercept"]
    if model["task"] == "classification":
        pred = np.asarray(model["classes"])[(scores > 0).astype(int)]
    elif model.get("label_range") is not None:
        pred = np.clip(scores, *model["label_range"])  # as the estimator's predict: the public label range
    else:
        pred = scores
    text = "\n".join(str(v) for v in pred.tolist()) + "\n"
    if args.out:
        _write_atomic(args.out, text)
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
    classification = args.loss == "logistic"
    loss = _losses.Logistic() if classification else _losses.Huber(1.0)
    mech = REGISTRY[args.mechanism]
    options = _audit.audit_options(mech)
    penalty = norms.build_penalty("l1", 1e-6, 2, True)
    bounds, pairs = _audit.neighbouring_pairs(n=10, p=2, classification=classification)
    kw = dict(epsilon=args.epsilon, delta=args.delta, options=options, classification=classification)
    print(f"audit of {mech.name} ({mech.title}), claimed epsilon={args.epsilon:g}, delta={args.delta:g}")
    print(f"setting: {args.loss} loss, n=10, p=2, features in [-1, 1], L1 strength 1e-6, options {options}")
    print("sensitivity replay (change / declared sensitivity, largest of 5 seeds; above 1 breaks the claim):")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, pair in pairs.items():
            ratios = _audit.sensitivity_replay(mech, pair, bounds, loss, penalty, seed=args.seed, repeats=5, **kw)
            print(f"  {name:<25} " + ", ".join(f"{k} {v:.3f}" for k, v in ratios.items()))
        if args.runs:
            for factor in sorted({1.0, args.mutation}, reverse=True):
                res = _audit.black_box_audit(mech, pairs["isolated label flip"], bounds, loss, penalty,
                                             runs=args.runs, seed=args.seed, noise_factor=factor, **kw)
                what = "as declared" if factor == 1 else f"mutant, noise x{factor:g}"
                verdict = "above the claim" if res.epsilon_lower_bound > args.epsilon else "within the claim"
                print(f"black-box lower bound ({what}): epsilon >= {res.epsilon_lower_bound:.3f} (95%, "
                      f"{args.runs} runs per dataset, isolated label flip): {verdict}")


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        {"fit": fit, "predict": predict, "audit": audit}[args.command](args)
    except ValueError as exc:
        print(f"dpsparse: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
