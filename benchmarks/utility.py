"""Privacy-utility benchmark: does a private fit beat the constant predictor, and by how much?

For each dataset and each total epsilon (delta = 1/n^2), on ``--runs`` random splits
(75% train, 25% held out), it measures the held-out accuracy (classification) or R^2
(regression) of:

- ``default``: the estimator as a user calls it, epsilon and public bounds only
  (``mechanism="auto"``: what ``dpsparse fit`` fits);
- ``search (--tune)``: ``DPSearchCV`` over ``tuning.rule_grid`` (the rule's choice, the
  same with half its steps or selected features, and the constant predictor, each run
  once with a third of the budget: what ``dpsparse fit --tune`` does), all inside the
  stated epsilon (public bounds); "-" where the rule has nothing to search (it releases
  the constant predictor);
- ``private bounds``: the default estimator on bounds bought privately
  (``bounds="private"``, what ``dpsparse fit`` does on a file without bounds), all inside
  the stated epsilon; "-" where n is too small for the budget (refused before the data is read);
- ``DPLinearSVC (default)`` (classification): the hinge loss's estimator as a user calls it, epsilon and
  public bounds only;
- ``hand-tuned (not private): dp-gd``: a mechanism chosen by hand, full-batch DP gradient descent with its
  defaults (200 steps, the rule's; its automatic clipping norm; public bounds);
- ``non-private``: scikit-learn's ``LogisticRegression`` / ``LassoCV`` on the same data, standardized
  (``StandardScaler``: on raw columns of very different units, cadata's, ``LassoCV``'s path fits poorly);
- ``constant``: the majority class, or the training mean;
- ``diffprivlib``: the peer, IBM's diffprivlib (``LogisticRegression``, objective perturbation;
  ``LinearRegression``, the functional mechanism) given the same public bounds and epsilon,
  in an interpreter of its own where it does not import beside this scikit-learn
  (``benchmarks/peer.py`` says how to make one); listed as unavailable, with the reason, otherwise;
- ``oracle`` (with ``--oracle``; NOT private, a diagnostic): every point of the search's grid
  fitted with the whole epsilon on the whole training split, the best chosen on the held-out
  part. What the grid could give if choosing were free: the search's headroom.

Datasets: breast_cancer (bundled published bounds), cadata (a-priori round ranges of the
California-housing columns), a planted 10-sparse Lasso (n = 1000, p = 200, features in
[-1, 1], labels in [-5, 5]); with ``--all`` also adult (raw file, its schema from
adult.names), mushrooms and madelon (examples/bounds), and the planted 10-sparse Lasso and
logistic problems at n = 1000 and 5000, p = 1000, and gisette (the 1,000-row split of the
libsvm copy; Yu et al., IJCAI 2020, report 0.673 at epsilon 0.1 on 6,000 training rows with
non-private tuning: a figure to read beside ours, not a target).

    python benchmarks/utility.py [--runs 10] [--quick] [--all] [--oracle] [--data-dir DIR] [--out-dir DIR]

Writes ``utility.json`` and ``utility.png`` (one panel per dataset; ``utility_all.*`` with
``--all``, ``*_oracle.*`` with ``--oracle``) in the output folder (default
``benchmarks/results``). ``--quick``: 2 runs, epsilon in {0.5, 2}.
"""
from __future__ import annotations

import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LassoCV, LogisticRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import ParameterGrid, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import bench
from dpsparse import DPLasso, DPLinearSVC, DPLogisticRegression, DPSearchCV, data, schema
from dpsparse.mechanisms import auto
from dpsparse.tuning import rule_grid
from peer import diffprivlib_peer

REPO_ROOT = Path(__file__).resolve().parents[1]
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
QUICK_EPSILONS = (0.5, 2.0)
HAND_SET = "hand-tuned (not private): dp-gd"
SVC = "DPLinearSVC (default)"
ROWS = ("default", "search (--tune)", "private bounds", SVC, HAND_SET, "diffprivlib", "non-private", "constant",
        "oracle")


def _planted(seed=0, n=1000, p=200, s=10, classification=False):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(0.0, 0.5, (n, p)), -1.0, 1.0)
    w = np.zeros(p)
    w[rng.choice(p, s, replace=False)] = rng.choice([-1.0, 1.0], s)
    if classification:  # P(y = 1) = sigmoid(4 <x, w*>)
        y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-4.0 * (X @ w))), 1, 0)
        return X, y, data.Bounds(-np.ones(p), np.ones(p), source="declared [-1, 1] (planted)")
    y = X @ w + 0.1 * rng.standard_normal(n)
    return X, y, data.Bounds(-np.ones(p), np.ones(p), -5.0, 5.0, source="declared [-1, 1], labels [-5, 5] (planted)")


def datasets(data_dir, everything=False):
    """name -> (X, y, bounds, classification)."""
    X, y, bounds, _ = data.load_bundled("breast_cancer")
    out = {"breast_cancer": (X, y, bounds, True)}
    cadata = Path(data_dir) / "libsvm" / "cadata.svm.gz"
    if cadata.exists():
        Xc, yc = data.load_svmlight(cadata, n_features=8)
        out["cadata"] = (Xc.toarray(), yc, bench.a_priori_bounds("cadata"), False)
    out["planted-lasso"] = (*_planted(), False)
    if not everything:
        return out
    adult = Path(data_dir) / "adult" / "adult.data.gz"
    if adult.exists():
        sch = schema.load_schema(REPO_ROOT / "examples" / "adult.schema.json")
        Xa, ya, _ = sch.read(adult)
        out["adult"] = (Xa, ya, sch.bounds(), True)
    for name in ("mushrooms", "madelon"):
        path = Path(data_dir) / "libsvm" / f"{name}.svm.gz"
        if path.exists():
            Xs, ys = data.load_svmlight(path)
            out[name] = (Xs.toarray(), ys, bench.a_priori_bounds(name), True)
    for n in (1000, 5000):
        out[f"lasso n={n} p=1000"] = (*_planted(n=n, p=1000), False)
        out[f"logistic n={n} p=1000"] = (*_planted(n=n, p=1000, classification=True), True)
    gisette = Path(data_dir) / "libsvm" / "gisette_scale.t.svm.gz"
    if gisette.exists():
        Xg, yg = data.load_svmlight(gisette, n_features=5000)
        out["gisette"] = (Xg.toarray(), yg, bench.a_priori_bounds("gisette"), True)
    return out


def _metric(classification, model, X, y):
    return float(model.score(X, y)) if classification else float(r2_score(y, model.predict(X)))


def _fits(X, y, bounds, classification, epsilon, seed, peer, oracle=False):
    """Held-out metric of every row on one split."""
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed,
                                          stratify=y if classification else None)
    est = (DPLogisticRegression(bounds=bounds, classes=np.unique(y)) if classification
           else DPLasso(bounds=bounds))
    out = {}
    est.set_params(epsilon=epsilon, random_state=seed)
    out["default"] = _metric(classification, clone(est).fit(Xtr, ytr), Xte, yte)
    grid = rule_grid(est, *Xtr.shape, epsilon)
    out["search (--tune)"] = float("nan") if grid is None else _metric(
        classification, DPSearchCV(est, grid, epsilon=epsilon, repetitions="each", random_state=seed).fit(Xtr, ytr),
        Xte, yte)
    try:
        out["private bounds"] = _metric(classification, clone(est).set_params(bounds="private").fit(Xtr, ytr), Xte,
                                        yte)
    except ValueError:  # too few records to buy the bounds at this epsilon: refused before the data is read
        out["private bounds"] = float("nan")
    out[HAND_SET] = _metric(classification, clone(est).set_params(mechanism="dp-gd").fit(Xtr, ytr), Xte, yte)
    if classification:  # the hinge loss's estimator as a user calls it
        svc = DPLinearSVC(bounds=bounds, classes=np.unique(y), epsilon=epsilon, random_state=seed)
        out[SVC] = _metric(True, svc.fit(Xtr, ytr), Xte, yte)
    if peer is not None:
        out["diffprivlib"] = peer(Xtr, ytr, Xte, yte, bounds, classification, [epsilon], seed)[0]
    ref = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000) if classification else LassoCV(cv=3))
    out["non-private"] = _metric(classification, ref.fit(Xtr, ytr), Xte, yte)
    if classification:
        majority = np.unique(ytr)[np.argmax(np.unique(ytr, return_counts=True)[1])]
        out["constant"] = float(np.mean(yte == majority))
    else:
        out["constant"] = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
    if oracle and grid is not None:  # not private: the choice reads the held-out labels
        out["oracle"] = max(_metric(classification, clone(est).set_params(**point).fit(Xtr, ytr), Xte, yte)
                            for point in ParameterGrid(grid))
    return out


def run(sets, epsilons, runs, log=print, checkpoint=None, oracle=False):
    peer, version = diffprivlib_peer()
    results = {"epsilons": list(epsilons), "runs": runs, "diffprivlib": version,
               "datasets": {}}
    for name, (X, y, bounds, classification) in sets.items():
        t0 = time.perf_counter()
        rows = {r: [] for r in ROWS}
        for eps in epsilons:
            per = [_fits(X, y, bounds, classification, eps, seed, peer, oracle) for seed in range(runs)]
            for r in ROWS:
                rows[r].append(float(np.mean([p[r] for p in per])) if r in per[0] else None)
        results["datasets"][name] = {"metric": "accuracy" if classification else "R^2", "n": int(X.shape[0]),
                                     "p": int(X.shape[1]), "rows": rows}
        log(f"  {name}: {time.perf_counter() - t0:.1f} s")
        if checkpoint is not None:  # what is done survives a stopped run
            checkpoint(results)
    return results


def _cell(value):
    """A metric in the table's column: '-' where not run, '< -999' where an R^2 is off the scale."""
    if not np.isfinite(value):
        return f"{'-':>10}"
    return f"{'< -999':>10}" if value < -999 else f"{value:>10.3f}"


def _rule_releases_constant(entry, epsilon):
    """Whether the public rule (``mechanism="auto"``) releases the constant predictor on this dataset's training
    split (a quarter held out) at ``epsilon``: then the default is the constant predictor, with a noisy label mean
    (or majority) where the ``constant`` row has the exact one."""
    n, p = entry["n"] - math.ceil(0.25 * entry["n"]), entry["p"]
    est = DPLogisticRegression() if entry["metric"] == "accuracy" else DPLasso()
    return auto.choose(est._loss(), est._penalty(p, auto.ALPHA), n, p, epsilon, True)[0] == "constant"


def format_table(results):
    eps = results["epsilons"]
    width = max(15, 2 + max(len(name) for name in results["datasets"]))
    lines = [f"held-out metric, mean of {results['runs']} splits; epsilon is the total (search included), "
             f"delta = 1/n^2; diffprivlib: {results['diffprivlib']}",
             f"{'dataset':<{width}}{'row':<33}" + "".join(f"{'eps=' + format(e, 'g'):>10}" for e in eps)]
    for name, entry in results["datasets"].items():
        for r in ROWS:
            vals = entry["rows"].get(r)
            if vals is None or vals[0] is None:
                continue
            lines.append(f"{name:<{width}}{r:<33}" + "".join(_cell(v) for v in vals))
        below = [e for e, s, c in zip(eps, entry["rows"]["default"], entry["rows"]["constant"]) if s < c]
        itself = [f"{e:g}" for e in below if _rule_releases_constant(entry, e)]
        learned = [f"{e:g}" for e in below if not _rule_releases_constant(entry, e)]
        lines.append(f"{'':<{width}}default below the constant predictor at epsilon: {', '.join(learned) or 'none'}"
                     + (f"; at {', '.join(itself)} the default is the constant predictor, its label mean noisy"
                        if itself else ""))
    return "\n".join(lines)


def plot(results, path):
    sets = results["datasets"]
    fig, axes = bench.panel_figure(len(sets), 3, 4.5, 3.6)
    for ax, (name, entry) in zip(axes, sets.items()):
        for r in ROWS:
            vals = entry["rows"][r]
            if vals[0] is not None:
                style = "--" if r in ("non-private", "constant", "oracle") else "-o"
                ax.plot(results["epsilons"], vals, style, label=r, color=f"C{ROWS.index(r)}")  # one colour a row
        bench.epsilon_axis(ax, results["epsilons"], log_y=False, label="epsilon (total)")
        shown = [v for r in ROWS if entry["rows"][r][0] is not None for v in entry["rows"][r] if np.isfinite(v)]
        low, high = max(min(shown), -1.0), max(shown)  # an R^2 far below the constant's 0 is off the panel
        ax.set_ylim(low - 0.05 * (high - low), high + 0.05 * (high - low))
        ax.set_ylabel(f"held-out {entry['metric']}")
        ax.set_title(f"{name} (n={entry['n']}, p={entry['p']})", fontsize=9)
    bench.save_figure(fig, path, f"privacy-utility, mean of {results['runs']} splits", legend=True)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    everything = "--all" in argv  # the full list of datasets (long: see README)
    oracle = "--oracle" in argv  # the non-private diagnostic row (long: 54 fits per split and epsilon)
    stem = ("utility_all" if everything else "utility") + ("_oracle" if oracle else "")
    args = bench.parse_benchmark_args(__doc__.splitlines()[0], REPO_ROOT, f"{stem}.json and {stem}.png",
                                      "2 runs, epsilon in {0.5, 2}",
                                      [a for a in argv if a not in ("--all", "--oracle")])
    runs = 2 if args.quick else args.runs
    epsilons = QUICK_EPSILONS if args.quick else EPSILONS
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FixedSeedWarning: seeds make the benchmark reproducible
        results = run(datasets(args.data_dir, everything), epsilons, runs,
                      log=lambda m: print(m, file=sys.stderr, flush=True),
                      checkpoint=lambda r: bench.write_json(r, args.out_dir / f"{stem}.json"), oracle=oracle)
    print(format_table(results))
    bench.write_json(results, args.out_dir / f"{stem}.json")
    plot(results, args.out_dir / f"{stem}.png")
    print(f"\nwall time {time.time() - t0:.0f} s; wrote {stem}.json and {stem}.png in {args.out_dir}")


if __name__ == "__main__":
    main()
