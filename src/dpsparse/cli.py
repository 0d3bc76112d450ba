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

from . import data, norms, solvers
from .estimators import DPLinearRegression, DPLinearSVC, DPLogisticRegression
from .exceptions import PrivacyLeakWarning
from .mechanisms import MECHANISMS
from .mechanisms.dp_gcd import CALIBRATIONS, RULES, SELECTIONS, UPDATES

# CLI flag -> {mechanism: keyword of mechanism_options}
_MECHANISM_FLAGS = {"selection": {"dp-gcd": "selection"}, "update_noise": {"dp-gcd": "update_noise"},
                    "batch_size": {"dp-sgd": "batch_size"}, "clipping_norm": {"dp-sgd": "clip", "dp-cd": "clip"},
                    "radius": {"one-pass-sgd": "radius", "objective": "radius", "fw": "radius"},
                    "geometry": {"one-pass-sgd": "geometry"}, "mu": {"output": "mu", "dual-fw": "mu"}}

MODEL_FORMAT = "dpsparse-model/1"


def _parser():
    p = argparse.ArgumentParser(prog="dpsparse", description="Differentially private sparse learning.")
    sub = p.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit", help="train a private model and report privacy and accuracy")
    f.add_argument("--data", default="breast_cancer",
                   help="data file (svmlight or CSV), or a bundled dataset: breast_cancer (default), diabetes")
    f.add_argument("--format", choices=["svmlight", "csv"], help="file format (default: from the extension)")
    f.add_argument("--target", help="label column of a CSV file")
    f.add_argument("--loss", choices=["logistic", "hinge", "squared", "huber"],
                   help="default: logistic for binary labels, squared otherwise")
    f.add_argument("--penalty", choices=norms.PENALTY_NAMES, default="l1")
    f.add_argument("--groups", help="JSON file of the groups of group-l2 / group-linf (docs/norms.md)")
    f.add_argument("--l1-ratio", type=float, default=0.5, help="elastic-net mixing, in [0, 1]")
    f.add_argument("--alpha", type=float, default=1e-3, help="penalty strength (bounded coordinates)")
    f.add_argument("--epsilon", type=float, default=1.0)
    f.add_argument("--delta", type=float, help="default: 1/n^2")
    f.add_argument("--mechanism", choices=sorted(MECHANISMS),
                   help="default: dp-gcd for separable penalties and smooth losses, else dp-sgd "
                        "(one-pass-sgd for the hinge loss)")
    f.add_argument("--rule", choices=RULES, default="gs-r", help="DP-GCD selection rule")
    f.add_argument("--selection", choices=SELECTIONS, help="DP-GCD report-noisy-max noise (tight calibration)")
    f.add_argument("--update-noise", choices=UPDATES, help="DP-GCD update noise (tight calibration)")
    f.add_argument("--batch-size", type=float, help="DP-SGD expected batch size (default sqrt(n))")
    f.add_argument("--clipping-norm", type=float,
                   help="DP-SGD per-sample clipping norm; DP-CD per-coordinate clipping threshold")
    f.add_argument("--radius", type=float, help="one-pass SGD, objective: radius of the ball of models")
    f.add_argument("--mu", type=float, help="output perturbation, dual-fw: strong-convexity (ridge) term mu > 0")
    f.add_argument("--geometry", choices=["euclidean", "l1"], help="one-pass SGD: projected SGD or L1 mirror descent")
    f.add_argument("--calibration", choices=CALIBRATIONS, help="default: the mechanism's own (tight where it exists)")
    f.add_argument("--iterations", type=int, default=50)
    f.add_argument("--clip", type=float, default=1.0, help="residual clipping / Huber threshold (regression)")
    f.add_argument("--bounds", help="public bounds JSON (docs/bounds.md); without it bounds leak from the data")
    f.add_argument("--test-size", type=float, default=0.25, help="held-out fraction, in (0, 1)")
    f.add_argument("--out", default="model.json", help="where to write the model JSON")
    f.add_argument("--seed", type=int, help="seed of the split and the noise (experiments only)")
    f.add_argument("--noise", choices=["fast", "secure"], default="fast",
                   help="noise backend: numpy, or OpenDP's floating-point-safe samplers (docs/noise.md)")
    f.add_argument("--json", action="store_true", help="print the results as JSON")
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


def _mechanism(args, loss):
    if args.mechanism:
        return args.mechanism
    if loss == "hinge":
        return "one-pass-sgd"
    return "dp-sgd" if args.penalty in norms.STRUCTURED else "dp-gcd"


def _mechanism_options(args, mechanism):
    options = {}
    for flag, owners in _MECHANISM_FLAGS.items():
        value = getattr(args, flag)
        if value is None:
            continue
        if mechanism not in owners:
            raise ValueError(f"--{flag.replace('_', '-')} is an option of {' and '.join(owners)}, not of {mechanism}")
        options[owners[mechanism]] = value
    return options


def _estimator(args, binary):
    loss = args.loss or ("logistic" if binary else "squared")
    mechanism = _mechanism(args, loss)
    common = dict(epsilon=args.epsilon, delta=args.delta, alpha=args.alpha, penalty=args.penalty,
                  l1_ratio=args.l1_ratio, groups=args.groups, mechanism=mechanism,
                  mechanism_options=_mechanism_options(args, mechanism), max_iter=args.iterations, rule=args.rule,
                  calibration=args.calibration, random_state=args.seed, verbose=1, noise=args.noise)
    if loss in ("logistic", "hinge"):
        if not binary:
            raise ValueError(f"the {loss} loss needs binary labels (exactly 2 distinct values)")
        return (DPLogisticRegression if loss == "logistic" else DPLinearSVC)(**common)
    return DPLinearRegression(loss=loss, clip=args.clip, **common)


def _metrics(est, X, y):
    pred = est.predict(X)
    if isinstance(est, DPLogisticRegression):
        return {"accuracy": float(accuracy_score(y, pred))}
    return {"r2": float(r2_score(y, pred)), "mse": float(mean_squared_error(y, pred))}


def _reference(est, Xtr, ytr):
    """Non-private optimum on the same bounded training data, and the relative error."""
    design = est._design(Xtr, ytr)
    penalty = est._penalty(Xtr.shape[1])
    loss = est.reference_loss()
    solve = solvers.solve if isinstance(penalty, norms.ElasticNet) else solvers.solve_prox
    ref = solve(design.X, design.y, loss, penalty)
    F = lambda w: solvers.objective(design.X, design.y, w, loss, penalty)  # noqa: E731
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
    X, y, bounds, names = _load(args)
    binary = np.unique(y).size == 2
    est = _estimator(args, binary)
    est.set_params(bounds=bounds)
    strat = y if binary else None
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=args.test_size, random_state=args.seed, stratify=strat)
    if args.noise == "secure":
        est.set_params(random_state=None)  # the seed still fixes the split; OpenDP draws from OS entropy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the report below says it
        est.fit(Xtr, ytr)
        smooth = np.isfinite(est.reference_loss().smoothness)
        reference = _reference(est, Xtr, ytr) if smooth else None
    result = {
        "data": args.data, "n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0]),
        "n_features": int(X.shape[1]), "private": _metrics(est, Xte, yte),
        "support_size": int(np.count_nonzero(est.coef_)),
    }
    if reference is not None:
        ref, design, rel = reference
        nonprivate = est.__class__(**est.get_params())
        nonprivate.coef_, nonprivate.intercept_ = design.to_original(ref.coef)
        nonprivate.classes_ = getattr(est, "classes_", None)
        nonprivate.n_features_in_ = est.n_features_in_
        result.update(non_private=_metrics(nonprivate, Xte, yte), relative_error=rel, reference_gap=ref.gap,
                      non_private_support_size=int(np.count_nonzero(nonprivate.coef_)))
    model = {
        "format": MODEL_FORMAT,
        "task": "classification" if isinstance(est, DPLogisticRegression) else "regression",
        "coef": est.coef_.tolist(), "intercept": est.intercept_,
        "classes": est.classes_.tolist() if hasattr(est, "classes_") else None,
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
        print("relative error      n/a: no exact solver for a non-smooth loss")
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


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        (fit if args.command == "fit" else predict)(args)
    except ValueError as exc:
        print(f"dpsparse: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
