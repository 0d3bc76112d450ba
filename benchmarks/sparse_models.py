"""Sparse recovery benchmark: support F1 and held-out utility of the private sparse methods.

Planted problems with s = 10 nonzero coefficients of +-1 among p = 1000 features (n = 1000,
5000 and 20000; Gaussian features of standard deviation 0.5 clipped to the declared bounds
[-1, 1]):

- ``lasso``: ``y = X w* + 0.1 N(0, 1)``, declared label range [-5, 5] (a-priori, about 3
  standard deviations), residual clipping 0.25 in the bounded units;
- ``logistic``: ``P(y = 1) = sigmoid(4 <x, w*>)``.

Methods: ``default``, the estimator exactly as a user calls it (epsilon and the public bounds,
``mechanism="auto"``); then, hand-tuned (not private: the mechanism, and for the Lasso a
residual clip of 0.25, are set by hand), ``mechanism=`` of ``DPLasso`` /
``DPLogisticRegression``: ``dp-iht`` (noisy hard thresholding with peeling, sparsity 10), ``two-stage``
(private selection of 10 features by peeling, then DP-GD on them, its default second stage), ``dp-gcd``
(proximal greedy coordinate descent, L1), ``fw`` (private Frank-Wolfe on the L1 ball);
beside them the peer, IBM's diffprivlib (``benchmarks/peer.py``: objective-perturbed logistic
regression, the functional mechanism for least squares, given the same bounds and epsilon; a
dense model, so its support is every feature; the logistic problems and the real sets of at
most 5e7 values: its least squares, the functional mechanism, draws noise for each of the
p^2 coefficients of the objective one at a time, about 30 s a fit at p = 1000), the
non-private L1 fit (scikit-learn, ``LassoCV`` / L1 ``LogisticRegression``, C = 0.05) and the
constant predictor. Reported: support F1 against the planted support, held-out R^2
or accuracy, mean over ``--runs`` seeds (a fresh problem and split per seed); the JSON also
holds the support precision and recall.

    python benchmarks/sparse_models.py [--runs 10] [--quick] [--large] [--real NAMES] [--data-dir DIR] [--out-dir DIR]

Real sets (``--real``, default all; binary classification with a-priori bounds, see ``REAL``):
leukemia, colon-cancer, gisette (test split), dorothea, news20 (classes 1-10 against 11-20).
Riboflavin is not run: its features have no a-priori range to declare.

``--quick``: 2 runs, n = 5000 only, epsilon in {1, 5}. ``--large`` adds p = 10000 with
n = 20000. Writes ``sparse.json`` and ``sparse.png`` (F1 against epsilon).
"""
from __future__ import annotations

import dataclasses
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LassoCV, LogisticRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

import bench
from dpsparse import DPLasso, DPLogisticRegression, data
from peer import diffprivlib_peer

REPO_ROOT = Path(__file__).resolve().parents[1]
EPSILONS = (0.5, 1.0, 2.0, 5.0)
QUICK_EPSILONS = (1.0, 5.0)
SIZES = ((1000, 1000), (5000, 1000), (20000, 1000))
LARGE = ((20000, 10000),)
SPARSITY = 10
METHODS = ("default", "dp-iht", "two-stage", "dp-gcd", "fw")
HAND_TUNED = "hand-tuned (not private): "  # the label of the rows whose mechanism (and Lasso clip) is set by hand


def _label(name):
    """A row's label in the tables: every method but the default and the references is hand-tuned."""
    return HAND_TUNED + name if name in METHODS[1:] else name
PEER = "diffprivlib"  # the peer's row (benchmarks/peer.py): a dense model, its support every feature
PEER_MAX_VALUES = 5e7  # the peer reads dense arrays: a real set with more values (dorothea, news20) has no peer row


def planted(task, n, p, seed):
    """X, y, w*, bounds of a planted problem."""
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(0.0, 0.5, (n, p)), -1.0, 1.0)
    w = np.zeros(p)
    w[rng.choice(p, SPARSITY, replace=False)] = rng.choice([-1.0, 1.0], SPARSITY)
    z = X @ w
    if task == "logistic":
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-4.0 * z))).astype(int)
        return X, y, w, data.Bounds(-np.ones(p), np.ones(p), source="declared [-1, 1] (planted)")
    y = z + 0.1 * rng.standard_normal(n)
    return X, y, w, data.Bounds(-np.ones(p), np.ones(p), -5.0, 5.0, source="declared [-1, 1], labels [-5, 5]")


# Real high-dimensional sets (binary classification) with a-priori bounds, NOT read from the data:
# name -> (files, n_features, low, high, where the range comes from, label map).
REAL = {  # files, number of features, relabelling; public bounds in examples/bounds/NAME.json
    "leukemia": (("libsvm/leu.svm.gz", "libsvm/leu.t.svm.gz"), 7129, None),
    "colon-cancer": (("libsvm/colon-cancer.svm.gz",), 2000, None),
    "gisette": (("libsvm/gisette_scale.t.svm.gz",), 5000, None),
    "dorothea": (("nips2003/dorothea_train.svm.gz",), None, None),
    "news20": (("libsvm/news20.multiclass.svm.gz",), None, lambda y: y > 10),
}


def load_real(data_dir, name):
    """X (CSR), y (0/1), bounds of a real set."""
    import scipy.sparse as sp

    files, p, relabel = REAL[name]
    parts = [data.load_svmlight(Path(data_dir) / f, n_features=p) for f in files]
    p = p or max(X.shape[1] for X, _ in parts)
    X = sp.vstack([sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], p)) for X, _ in parts]).tocsr()
    y = np.concatenate([y for _, y in parts])
    y = (relabel(y) if relabel is not None else y > 0).astype(int)
    # the bounds files declare libsvm's classes -1 and 1; relabelled 0 and 1 here, as the classes of the estimators
    bounds = dataclasses.replace(bench.a_priori_bounds(name).for_features(p), classes=[0, 1])
    return X, y, bounds


def real_run(X, y, bounds, epsilons, seed, peer=None):
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y)
    out = {}
    for mechanism in METHODS:
        for eps in epsilons:
            est = _estimator("logistic", mechanism, bounds, eps, seed).fit(Xtr, ytr)
            out[(mechanism, eps)] = (float(est.support_.size), float(est.score(Xte, yte)))
    if X.shape[0] * X.shape[1] <= PEER_MAX_VALUES:
        out.update(_peer_rows(peer, Xtr, ytr, Xte, yte, bounds, True, epsilons, seed, lambda u: (X.shape[1], u)))
    ref = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=0.05).fit(Xtr, ytr)
    out["non-private"] = (float(np.count_nonzero(ref.coef_)), float(ref.score(Xte, yte)))
    values, counts = np.unique(ytr, return_counts=True)
    out["constant"] = (0.0, float(np.mean(yte == values[np.argmax(counts)])))  # the majority class
    return out


def run_real(data_dir, names, epsilons, runs, log=print, peer=None):
    results = {}
    for name in names:
        t0 = time.perf_counter()
        X, y, bounds = load_real(data_dir, name)
        per = [real_run(X, y, bounds, epsilons, seed, peer) for seed in range(runs)]
        rows = {m: {k: [float(np.mean([r[(m, e)][i] for r in per])) for e in epsilons]
                    for i, k in enumerate(("support", "utility"))} for m in _methods(per, epsilons)}
        for m in ("non-private", "constant"):
            rows[m] = {k: [float(np.mean([r[m][i] for r in per]))] * len(epsilons)
                       for i, k in enumerate(("support", "utility"))}
        results[f"{name} n={X.shape[0]} p={X.shape[1]}"] = {"metric": "accuracy", "bounds": bounds.source,
                                                           "rows": rows}
        log(f"  {name}: {time.perf_counter() - t0:.1f} s")
    return results


def support_scores(support, truth):
    """Precision, recall and F1 of an estimated support against the planted one."""
    tp = len(set(support) & set(truth))
    precision = tp / len(support) if len(support) else 1.0
    recall = tp / len(truth) if len(truth) else 1.0
    f1 = 2.0 * tp / (len(support) + len(truth)) if len(support) + len(truth) else 1.0
    return precision, recall, f1


def f1(support, truth):
    return support_scores(support, truth)[2]


def _estimator(task, mechanism, bounds, epsilon, seed):
    if mechanism == "default":  # exactly as a user calls it: epsilon and the public bounds
        est = DPLogisticRegression if task == "logistic" else DPLasso
        return est(bounds=bounds, epsilon=epsilon, random_state=seed)
    options = {"sparsity": SPARSITY} if mechanism in ("dp-iht", "two-stage") else None
    if task == "logistic":
        return DPLogisticRegression(bounds=bounds, classes=[0, 1], epsilon=epsilon, mechanism=mechanism,
                                    mechanism_options=options, random_state=seed)
    return DPLasso(bounds=bounds, clip=0.25, epsilon=epsilon, mechanism=mechanism, mechanism_options=options,
                   random_state=seed)


def _metric(task, model, X, y):
    return float(model.score(X, y)) if task == "logistic" else float(r2_score(y, model.predict(X)))


def _peer_rows(peer, Xtr, ytr, Xte, yte, bounds, classification, epsilons, seed, row):
    """The peer's row on one split, ``(mechanism, epsilon) -> row(utility)``; none without a peer."""
    if peer is None:
        return {}
    utilities = peer(Xtr, ytr, Xte, yte, bounds, classification, epsilons, seed)
    return {(PEER, eps): row(u) for eps, u in zip(epsilons, utilities)}


def one_run(task, n, p, epsilons, seed, peer=None):
    X, y, w, bounds = planted(task, n, p, seed)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed)
    truth = np.flatnonzero(w)
    out = {}
    for mechanism in METHODS:
        for eps in epsilons:
            est = _estimator(task, mechanism, bounds, eps, seed).fit(Xtr, ytr)
            p_, r_, f_ = support_scores(est.support_, truth)
            out[(mechanism, eps)] = (f_, _metric(task, est, Xte, yte), p_, r_)
    peer = peer if task == "logistic" else None  # its least squares: p^2 noisy coefficients, about 30 s a fit here
    out.update(_peer_rows(peer, Xtr, ytr, Xte, yte, bounds, task == "logistic", epsilons, seed,
                          lambda u: (2.0 * SPARSITY / (p + SPARSITY), u, SPARSITY / p, 1.0)))
    ref = (LogisticRegression(l1_ratio=1.0, solver="liblinear", C=0.05) if task == "logistic"
           else LassoCV(cv=3)).fit(Xtr, ytr)
    p_, r_, f_ = support_scores(np.flatnonzero(np.ravel(ref.coef_)), truth)
    out["non-private"] = (f_, _metric(task, ref, Xte, yte), p_, r_)
    const = (np.mean(yte == np.round(np.mean(ytr))) if task == "logistic"
             else r2_score(yte, np.full_like(yte, np.mean(ytr))))
    out["constant"] = (0.0, float(const), 0.0, 0.0)
    return out


def _methods(per, epsilons):
    """The rows with a private fit in these runs: ours, and the peer's where it ran."""
    return (*METHODS, PEER) if (PEER, epsilons[0]) in per[0] else METHODS


def run(sizes, epsilons, runs, log=print, peer=None):
    results = {"epsilons": list(epsilons), "runs": runs, "sparsity": SPARSITY, "problems": {}}
    for task in ("lasso", "logistic"):
        for n, p in sizes:
            t0 = time.perf_counter()
            per = [one_run(task, n, p, epsilons, seed, peer) for seed in range(runs)]
            rows = {}
            keys = ("f1", "utility", "precision", "recall")
            for mechanism in _methods(per, epsilons):
                rows[mechanism] = {k: [float(np.mean([r[(mechanism, e)][i] for r in per])) for e in epsilons]
                                   for i, k in enumerate(keys)}
            for name in ("non-private", "constant"):
                rows[name] = {k: [float(np.mean([r[name][i] for r in per]))] * len(epsilons)
                              for i, k in enumerate(keys)}
            key = f"{task} n={n} p={p}"
            results["problems"][key] = {"metric": "accuracy" if task == "logistic" else "R^2", "rows": rows}
            log(f"  {key}: {time.perf_counter() - t0:.1f} s")
    return results


def format_real(results, epsilons, runs):
    head = "".join(f"{'eps=' + format(e, 'g'):>16}" for e in epsilons)
    lines = [f"real sets: support size / held-out accuracy, mean of {runs} splits", f"{'data':<30}{'method':<37}{head}"]
    for key, entry in results.items():
        for name, row in entry["rows"].items():
            cells = "".join(f"{f:>7.0f} / {u:>6.3f}" for f, u in zip(row["support"], row["utility"]))
            lines.append(f"{key:<30}{_label(name):<37}{cells}")
        const = entry["rows"]["constant"]["utility"][0]
        above = [f"{m} at eps={e:g}" for m in METHODS for e, u in zip(epsilons, entry["rows"][m]["utility"])
                 if u > const + 0.01]
        below = [f"{m} at eps={e:g}" for m in METHODS for e, u in zip(epsilons, entry["rows"][m]["utility"])
                 if u < const - 0.01]
        lines.append(f"{'':<30}above the constant: {', '.join(above) or 'none'}")
        lines.append(f"{'':<30}below the constant: {', '.join(below) or 'none'}  (bounds: {entry['bounds']})")
    return "\n".join(lines)


def format_table(results):
    eps = results["epsilons"]
    head = "".join(f"{'eps=' + format(e, 'g'):>16}" for e in eps)
    lines = [f"support F1 / held-out metric, mean of {results['runs']} runs, s = {results['sparsity']}, "
             f"delta = 1/n^2; peer: {results.get('diffprivlib', 'not run')}", f"{'problem':<26}{'method':<37}{head}"]
    for key, entry in results["problems"].items():
        for name, row in entry["rows"].items():
            cells = "".join(f"{f:>7.2f} / {u:>6.3f}" for f, u in zip(row["f1"], row["utility"]))
            lines.append(f"{key:<26}{_label(name):<37}{cells}")
        lines.append(f"{'':<26}(metric: {entry['metric']})")
    return "\n".join(lines)


def plot(results, path):
    probs = results["problems"]
    fig, axes = bench.panel_figure(len(probs), 4, 3.8, 3.2)
    for ax, (key, entry) in zip(axes, probs.items()):
        for name in (*METHODS, "non-private"):
            style = "--" if name == "non-private" else "-o"
            ax.plot(results["epsilons"], entry["rows"][name]["f1"], style, label=name)
        bench.epsilon_axis(ax, results["epsilons"], log_y=False)
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel("support F1")
        ax.set_title(key, fontsize=9)
        ax.legend(fontsize=7)
    bench.save_figure(fig, path, f"support recovery, s = {results['sparsity']}, mean of {results['runs']} runs")


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="2 runs, n = 5000 only, epsilon in {1, 5}")
    parser.add_argument("--large", action="store_true", help="add p = 10000, n = 20000")
    parser.add_argument("--out-dir", type=Path, default=REPO_ROOT / "benchmarks" / "results")
    parser.add_argument("--data-dir", type=Path, default=REPO_ROOT.parent / "shared" / "data")
    parser.add_argument("--real", default=",".join(REAL), help="real sets to run (comma-separated; '' for none)")
    args = parser.parse_args(argv)
    names = [n for n in args.real.split(",") if n]
    unknown = sorted(set(names) - set(REAL))
    if unknown:
        parser.error(f"--real: unknown set(s) {', '.join(unknown)}; choose among {', '.join(REAL)}")
    sizes = (SIZES[1:2] if args.quick else SIZES) + (LARGE if args.large else ())
    t0 = time.time()
    peer, version = diffprivlib_peer()
    print(f"peer: {version}", file=sys.stderr, flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FixedSeedWarning: seeds make the benchmark reproducible
        results = run(sizes, QUICK_EPSILONS if args.quick else EPSILONS, 2 if args.quick else args.runs,
                      log=lambda m: print(m, file=sys.stderr, flush=True), peer=peer)
    results["diffprivlib"] = version
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results["real"] = run_real(args.data_dir, names, results["epsilons"], results["runs"],
                                   log=lambda m: print(m, file=sys.stderr, flush=True), peer=peer)
    print(format_table(results))
    print()
    print(format_real(results["real"], results["epsilons"], results["runs"]))
    bench.write_json(results, args.out_dir / "sparse.json")
    plot(results, args.out_dir / "sparse.png")
    print(f"\nwall time {time.time() - t0:.0f} s; wrote sparse.json and sparse.png in {args.out_dir}")


if __name__ == "__main__":
    main()
