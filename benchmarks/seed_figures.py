"""The source papers' experiments under their own protocols, beside the library's private defaults.

Part 1 reruns the experiments of Mangold, Bellet, Salmon & Tommasi, "High-Dimensional Private
Empirical Risk Minimization by Greedy Coordinate Descent", AISTATS 2023 (the text at hand is its
poster: the sizes, regularization and grids below are ours where it says nothing): relative error
``(F(w) - F*) / (F(0) - F*)`` against passes over the data at epsilon = 1, delta = 1/n^2, for
DP-GCD, DP-CD and DP-SGD, under the paper's protocol, NOT a private one:

- features standardized (mean 0, variance 1, from the data), an unpenalized intercept column;
  regression labels standardized too, classification labels in {-1, +1};
- the bounds the mechanisms are calibrated for are read off the standardized data (``max |z_ij|``)
  and the coordinate-wise steps are ``1 / M_j`` with the average loss's coordinate smoothness
  ``M_j = sup f'' (1/n) sum_i z_ij^2`` (``with_smoothness``): the data's, as in the paper;
- clipping threshold, step and number of passes chosen on a grid by the median final relative
  error of ``TUNE_RUNS`` tuning runs (seeds 1000, 1001, ...), i.e. tuned non-privately, as in the
  paper; then ``--runs`` runs (seeds 0..runs-1) of the chosen setting give the median and quartiles
  of the relative error after each pass (DP-GCD: one iteration, a full gradient; DP-CD: one epoch
  of p coordinate updates; DP-SGD: sqrt(n) steps with Poisson batches of expected size sqrt(n)).
  Every mechanism uses the library's default (tight) noise calibration.

Problems (``make_problems``): ``log1`` (planted 10-sparse logistic, 1000 x 100, L2),
``log2`` (planted 10-sparse logistic, 1000 x 1000, L1), ``madelon-l2`` and ``madelon-l1``
(UCI Madelon, 2000 x 500), ``lasso-sparse`` (planted 10-sparse Lasso, 1000 x 1000) and
``california`` (cadata, 20640 x 8, Lasso); L2 strength 1/n, L1 strength ``L1_RATIO * alpha_max``.

Beside each curve, the library default: ``DPLogisticRegression(epsilon=1, bounds=B)`` or
``DPLasso(epsilon=1, bounds=B)`` (a seed for the runs aside, nothing else set: ``mechanism="auto"``)
fitted on the raw data with its a-priori public bounds ``B``, its released model measured on the
same standardized objective; drawn at the passes it made (DP-GCD's iterations, 0 for the constant
predictor), or at the right edge where that count is unknown.

Part 2 checks the bounds of Kumar & Deisenroth, "Differentially Private Empirical Risk
Minimization with Sparsity-Inducing Norms", arXiv 2019, for output, objective and gradient
perturbation against epsilon, with ``benchmarks/kumar.py`` (``kumar.run_theorems``).

Usage::

    python benchmarks/seed_figures.py [--runs 10] [--quick] [--data-dir DIR] [--out-dir DIR]

Writes ``seed_figures.json``, ``seed_figures.png`` (every problem), ``seed_figures_<problem>.png``
(one per problem) and ``seed_figures_kumar.png`` in ``--out-dir`` (default ``benchmarks/results``).
``--quick``: 2 runs, 1 tuning run, short grids, epsilon in {0.5, 5} for part 2.
"""
from __future__ import annotations

import copy
import math
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import bench
import kumar
import sparse_models
from dpsparse import DPLasso, DPLogisticRegression, data, losses, norms
from dpsparse.exceptions import ClassesFromDataWarning, FixedSeedWarning
from dpsparse.noise import make_noise

REPO_ROOT = Path(__file__).resolve().parents[1]
EPSILON = bench.EPSILON
MECHANISMS = ("dp-gcd", "dp-cd", "dp-sgd")
LABELS = {"dp-gcd": "DP-GCD", "dp-cd": "DP-CD", "dp-sgd": "DP-SGD"}
# Grids of the non-private tuning (full, quick). Passes over the data; clipping thresholds C of each
# per-sample coordinate gradient (DP-SGD: C sqrt(p) on the per-sample gradient's L2 norm, the norm of
# a gradient with every coordinate at C); steps as a factor of 1/M_j (DP-SGD: of 1/sup f'').
PASSES = ((2, 5, 10, 20, 50, 100), (2, 10))
CLIPS = ((1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0), (0.03, 0.3))
STEPS = {"dp-gcd": ((0.3, 1.0), (1.0,)), "dp-cd": ((0.3, 1.0), (1.0,)),
         "dp-sgd": ((0.01, 0.03, 0.1, 0.3, 1.0), (0.1, 1.0))}
TUNE_RUNS = (3, 1)
TUNE_SEED = 1000
L1_RATIO = 0.1
# Residual clip of the private squared loss on standardized labels (all within [-5, 5] here): it binds only
# far from the solution, so the coordinate-wise clipping thresholds are what bound the sensitivity.
RESIDUAL_CLIP = 10.0
# Problems whose data have a planted sparse truth (the "sparse problems" of the claims).
SPARSE = ("log1", "log2", "lasso-sparse")
# The pass at which "fastest in the first iterations" is read: the shortest run of the grids.
EARLY_PASS = 2
# "Lower" in the claims: by more than 1% (relative), so that ties (every mechanism still at w = 0) are not wins.
MARGIN = 0.01
# Part 2: Kumar & Deisenroth's bounds, on the problems of benchmarks/kumar.py with a separable penalty.
KUMAR_PROBLEMS = ("leukemia", "colon-cancer", "cadata")


@dataclass
class PaperProblem(bench.Problem):
    """A ``bench.Problem`` on standardized data, with what the library default is fitted on.

    Attributes
    ----------
    source : tuple
        ``(X, y, bounds, classification)``: the raw data and its a-priori public bounds.
    standardization : tuple
        ``(mean, scale, y_mean, y_scale)`` of the map from the raw data to the problem's.
    """

    source: tuple = ()
    standardization: tuple = ()


def _standardize(X, y, classification):
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    if classification:
        return (X - mean) / scale, np.where(y == y.max(), 1.0, -1.0), (mean, scale, 0.0, 1.0)
    y_mean, y_scale = float(y.mean()), float(y.std())
    return (X - mean) / scale, (y - y_mean) / y_scale, (mean, scale, y_mean, y_scale)


def paper_problem(name, description, X, y, bounds, classification, penalty_name):
    """The problem ``name`` under the paper's protocol (module docstring)."""
    Z, yz, standardization = _standardize(np.asarray(X, dtype=float), np.asarray(y, dtype=float), classification)
    n, p = Z.shape
    Zi = np.c_[Z, np.ones(n)]
    design = data.BoundedDesign.from_arrays(
        Zi, yz, np.r_[np.abs(Z).max(axis=0), 1.0],
        source="standardized; bounds read off the data (the paper's protocol, no privacy guarantee)")
    reference_loss = losses.Logistic() if classification else losses.Squared()
    loss = reference_loss if classification else losses.Squared(clip=RESIDUAL_CLIP)
    if penalty_name == "l2":
        alpha = 1.0 / n
    else:
        alpha = L1_RATIO * kumar.alpha_max(design, reference_loss, None, "l1")
    penalty = norms.build_penalty(penalty_name, alpha, p)
    return PaperProblem(name, f"{description}, {penalty_name.upper()} (alpha={alpha:.3g})", design, loss,
                        reference_loss, penalty, (), (X, y, bounds, classification), standardization)


def make_problems(data_dir):
    """The six problems of part 1 (module docstring)."""
    out = []
    for name, task, p, seed, penalty in (("log1", "logistic", 100, 0, "l2"), ("log2", "logistic", 1000, 1, "l1")):
        X, y, _, bounds = sparse_models.planted(task, 1000, p, seed)
        out.append(paper_problem(name, f"planted 10-sparse logistic 1000x{p}", X, y, bounds, True, penalty))
    X, y = data.load_svmlight(Path(data_dir) / "libsvm" / "madelon.svm.gz", n_features=500)
    for penalty in ("l2", "l1"):
        out.append(paper_problem(f"madelon-{penalty}", "madelon 2000x500 logistic", X.toarray(), y,
                                 bench.a_priori_bounds("madelon"), True, penalty))
    X, y, _, bounds = sparse_models.planted("lasso", 1000, 1000, 0)
    out.append(paper_problem("lasso-sparse", "planted 10-sparse Lasso 1000x1000", X, y, bounds, False, "l1"))
    X, y = data.load_svmlight(Path(data_dir) / "libsvm" / "cadata.svm.gz", n_features=8)
    out.append(paper_problem("california", "cadata 20640x8 Lasso", X.toarray(), y, bench.a_priori_bounds("cadata"),
                             False, "l1"))
    return out


# --------------------------------------------------------------------------- private runs


def with_smoothness(loss, M):
    """``loss`` whose coordinate smoothness (the steps ``1/M_j`` of DP-GCD and DP-CD) is ``M``, whatever the bounds.

    The paper's ``M_j`` is read off the data: a benchmark of its protocol, not a private choice.
    """
    out = copy.copy(loss)
    out.coordinate_smoothness = lambda feature_bounds: M
    return out


def steps_per_pass(n):
    """DP-SGD steps per pass: Poisson batches of expected size sqrt(n) (the mechanism's default)."""
    return math.ceil(math.sqrt(n))


def fit(problem, mechanism, config, seed, callback=None):
    """One private fit at (EPSILON, 1/n^2) of ``config = (passes, clip, step)``; returns ``w``."""
    passes, clip, step = config
    d = problem.design
    n, p = d.X.shape
    loss = problem.loss
    if mechanism == "dp-sgd":
        options = {"n_iter": passes * steps_per_pass(n), "clipping_norm": clip * math.sqrt(p),
                   "learning_rate": step / loss.smoothness}
    else:
        options = {"n_iter": passes, "clipping_norm": clip}
        loss = with_smoothness(loss, loss.smoothness * np.mean(d.X**2, axis=0) / step)
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", FixedSeedWarning)
        w, _ = bench.MECHANISMS[mechanism](d.X, d.y, loss, problem.penalty, d.feature_bounds, epsilon=EPSILON,
                                           delta=problem.delta, noise=make_noise(seed), callback=callback, **options)
    return w


def relative_error(problem, w, ref):
    """``bench.relative_error``, infinite where a diverging run overflowed."""
    with np.errstate(over="ignore", invalid="ignore"):
        err = bench.relative_error(problem, w, ref)
    return float(err) if np.isfinite(err) else math.inf


def curve(problem, ref, mechanism, config, seed):
    """Relative error after each pass (pass 0: ``w = 0``) of one run."""
    every = steps_per_pass(problem.design.X.shape[0]) if mechanism == "dp-sgd" else 1
    iterates = []
    fit(problem, mechanism, config, seed, lambda t, w: iterates.append(w.copy()) if (t + 1) % every == 0 else None)
    return [1.0] + [relative_error(problem, w, ref) for w in iterates]


def grid(mechanism, quick):
    k = int(quick)
    return [(t, c, s) for t in PASSES[k] for c in CLIPS[k] for s in STEPS[mechanism][k]]


def tune(problem, ref, mechanism, quick):
    """The grid point with the least median final relative error over the tuning runs (non-private)."""
    scores = {}
    for config in grid(mechanism, quick):
        errors = [relative_error(problem, fit(problem, mechanism, config, TUNE_SEED + k), ref)
                  for k in range(TUNE_RUNS[int(quick)])]
        scores[config] = float(np.median(errors))
    return min(scores, key=scores.get), scores


def summary(curves):
    """Median and quartiles over the runs, pass by pass."""
    q1, med, q3 = np.percentile(np.array(curves), [25, 50, 75], axis=0)
    return {"passes": list(range(len(med))), "relative_error_median": med.tolist(),
            "relative_error_q1": q1.tolist(), "relative_error_q3": q3.tolist()}


def mechanism_entry(problem, ref, mechanism, runs, quick):
    t0 = time.perf_counter()
    config, scores = tune(problem, ref, mechanism, quick)
    curves = [curve(problem, ref, mechanism, config, seed) for seed in range(runs)]
    return {**summary(curves), "tuned": dict(zip(("passes", "clip", "step"), config)),
            "tuning_scores": [[*c, s] for c, s in scores.items()], "seconds": time.perf_counter() - t0}


# --------------------------------------------------------------------------- the library default


def _standardized_coef(problem, model):
    """The default's released model as coefficients of the problem's standardized features (intercept last)."""
    mean, scale, y_mean, y_scale = problem.standardization
    coef, intercept = np.ravel(model.coef_), float(np.ravel(model.intercept_)[0])
    return np.r_[coef * scale, intercept + coef @ mean - y_mean] / y_scale


DEFAULT_PASSES_PER_ITERATION = {"dp-gcd": 1, "dp-gd": 1, "constant": 0}


def default_entry(problem, ref, runs):
    """The library default, as a user calls it, on the raw data and public bounds (seeds 0..runs-1)."""
    X, y, bounds, classification = problem.source
    errors, passes, mechanisms = [], [], set()
    for seed in range(runs):
        estimator = (DPLogisticRegression if classification else DPLasso)(epsilon=EPSILON, bounds=bounds,
                                                                          random_state=seed)
        with warnings.catch_warnings():  # the default reads the label set off the data, and says so
            warnings.simplefilter("ignore", FixedSeedWarning)
            warnings.simplefilter("ignore", ClassesFromDataWarning)
            model = estimator.fit(X, y)
        report = model.privacy_report_
        errors.append(relative_error(problem, _standardized_coef(problem, model), ref))
        per = DEFAULT_PASSES_PER_ITERATION.get(report.mechanism)
        passes.append(None if per is None else per * report.iterations)
        mechanisms.add(report.mechanism)
    q1, med, q3 = np.percentile(errors, [25, 50, 75])
    return {"call": f"{'DPLogisticRegression' if classification else 'DPLasso'}(epsilon={EPSILON:g}, bounds=B)",
            "mechanism": sorted(mechanisms), "passes": None if None in passes else float(np.median(passes)),
            "relative_error_median": float(med), "relative_error_q1": float(q1), "relative_error_q3": float(q3),
            "bounds_source": bounds.source}


# --------------------------------------------------------------------------- part 1


def run_problem(problem, runs, quick, log):
    t0 = time.perf_counter()
    ref = bench.reference(problem, tol=kumar.REFERENCE_TOL)
    n, p = problem.design.X.shape
    entry = {"description": problem.description, "n": n, "p": p - 1, "penalty": problem.penalty.name,
             "reference": ref, "mechanisms": {}}
    for mechanism in MECHANISMS:
        entry["mechanisms"][mechanism] = mechanism_entry(problem, ref, mechanism, runs, quick)
        log(f"  {problem.name} {mechanism}: {entry['mechanisms'][mechanism]['seconds']:.1f} s")
    entry["default"] = default_entry(problem, ref, runs)
    entry["seconds"] = time.perf_counter() - t0
    log(f"{problem.name}: {entry['seconds']:.1f} s")
    return entry


def run(problems, runs, quick, log=print):
    results = {"epsilon": EPSILON, "delta": "1/n^2", "runs": runs, "seeds": list(range(runs)),
               "tuning_runs": TUNE_RUNS[int(quick)], "tuning_seeds_from": TUNE_SEED,
               "grids": {m: {"passes": PASSES[int(quick)], "clip": CLIPS[int(quick)], "step": STEPS[m][int(quick)]}
                         for m in MECHANISMS},
               "blas_threads": bench.BLAS_THREADS, "problems": {}}
    with threadpool_limits(bench.BLAS_THREADS, user_api="blas"):
        for problem in problems:
            results["problems"][problem.name] = run_problem(problem, runs, quick, log)
    return results


def _at(res, k):
    """Median relative error after pass ``k`` (the last one if the run made fewer)."""
    med = res["relative_error_median"]
    return med[min(k, len(med) - 1)]


def _final(res):
    return res["relative_error_median"][-1]


def _verdict(ok):
    return "reproduced" if ok else "NOT reproduced"


def _below(a, b):
    """``a`` below ``b`` by more than ``MARGIN`` (relative): what "lower" means in the claims."""
    return a < (1.0 - MARGIN) * b


def claims(results):
    """The paper's qualitative claims, problem by problem: ``(claim, problem, measured, verdict)`` rows.

    - beats: on the problems with a planted sparse truth (``SPARSE``), DP-GCD's final median is below DP-CD's and
      DP-SGD's;
    - fastest first: after ``EARLY_PASS`` passes DP-GCD's median is below the other two's (every problem);
    - proximal variant: on the L1 problems, DP-GCD improves on ``w = 0`` in three runs out of four (upper quartile
      below 1) and its final median is not above DP-CD's, the proximal coordinate baseline.
    """
    rows = []
    probs = results["problems"]
    for name in SPARSE:
        ms = probs[name]["mechanisms"]
        gcd, cd, sgd = (_final(ms[m]) for m in MECHANISMS)
        rows.append(("DP-GCD beats DP-CD and DP-SGD on the sparse problems", name,
                     f"final: DP-GCD {gcd:.3g}, DP-CD {cd:.3g}, DP-SGD {sgd:.3g}", _verdict(_below(gcd, min(cd, sgd)))))
    for name, e in probs.items():
        gcd, cd, sgd = (_at(e["mechanisms"][m], EARLY_PASS) for m in MECHANISMS)
        rows.append((f"DP-GCD is fastest in its first iterations (after pass {EARLY_PASS})", name,
                     f"DP-GCD {gcd:.3g}, DP-CD {cd:.3g}, DP-SGD {sgd:.3g}", _verdict(_below(gcd, min(cd, sgd)))))
    for name, e in probs.items():
        if e["penalty"] == "l1":
            gcd, cd = e["mechanisms"]["dp-gcd"], e["mechanisms"]["dp-cd"]
            q3 = gcd["relative_error_q3"][-1]
            rows.append(("The proximal variant works on composite (L1) problems", name,
                         f"DP-GCD final {_final(gcd):.3g} (upper quartile {q3:.3g}), DP-CD {_final(cd):.3g}",
                         _verdict(q3 < 1.0 and not _below(_final(cd), _final(gcd)))))
    return rows


def format_table(results):
    lines = [f"Relative error (F(w)-F*)/(F(0)-F*) at epsilon={results['epsilon']:g}, delta=1/n^2: median [quartiles] "
             f"over {results['runs']} runs; the mechanisms tuned non-privately (as in the paper) on "
             f"{results['tuning_runs']} tuning run(s); the library default as a user calls it",
             f"{'problem':<14}{'row':<30}{'tuned (T, C, step)':<22}{f'after pass {EARLY_PASS}':>14}{'final':>26}"]
    for name, e in results["problems"].items():
        for m in MECHANISMS:
            r = e["mechanisms"][m]
            t = r["tuned"]
            lines.append(f"{name:<14}{LABELS[m] + ' (tuned non-privately)':<30}"
                         f"{t['passes']:>4} {t['clip']:<8g}{t['step']:<9g}{_at(r, EARLY_PASS):>14.3g}"
                         f"{_final(r):>10.3g} [{r['relative_error_q1'][-1]:.3g}, {r['relative_error_q3'][-1]:.3g}]")
        dft = e["default"]
        passes = "?" if dft["passes"] is None else f"{dft['passes']:g}"
        lines.append(f"{'':<14}{'library default':<30}{','.join(dft['mechanism']) + ', ' + passes + ' passes':<22}"
                     f"{'':>14}"
                     f"{dft['relative_error_median']:>10.3g} [{dft['relative_error_q1']:.3g}, "
                     f"{dft['relative_error_q3']:.3g}]")
    lines += ["", f"{'claim':<66}{'problem':<14}{'verdict':<16}measured"]
    lines += [f"{c:<66}{p:<14}{v:<16}{m}" for c, p, m, v in results["claims"]]
    return "\n".join(lines)


# --------------------------------------------------------------------------- figures


def _panel(ax, name, entry):
    tops = [1.0]
    for k, m in enumerate(MECHANISMS):
        r = entry["mechanisms"][m]
        med = np.array(r["relative_error_median"])
        t = r["tuned"]
        ax.plot(r["passes"], med, "-", color=f"C{k}", lw=2, label=f"{LABELS[m]}, tuned non-privately (as in the "
                f"paper): T={t['passes']}, C={t['clip']:g}, step={t['step']:g}")
        ax.fill_between(r["passes"], r["relative_error_q1"], r["relative_error_q3"], color=f"C{k}", alpha=0.2)
        tops.append(float(np.max(med[np.isfinite(med)])))
    d = entry["default"]
    xmax = max(len(entry["mechanisms"][m]["passes"]) - 1 for m in MECHANISMS)
    x = xmax if d["passes"] is None else d["passes"]
    where = "passes unknown: drawn at the right edge" if d["passes"] is None else f"{d['passes']:g} passes"
    med = d["relative_error_median"]
    ax.errorbar([x], [med], yerr=[[med - d["relative_error_q1"]], [d["relative_error_q3"] - med]], fmt="*",
                color="black", ms=14, capsize=4, label=f"library default {d['call']}, no tuning: "
                f"{'/'.join(d['mechanism'])}, {where}")
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_yscale("log")
    ax.set_ylim(top=1.2 * max(*tops, med))
    ax.set_xlim(-0.1, 1.3 * max(xmax, x))
    ax.set_title(f"{name}: {entry['description']}", fontsize=9)
    ax.set_xlabel("passes over the data (linear to 1, then log)")
    ax.set_ylabel("(F(w) - F*) / (F(0) - F*)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16))


def plot(results, path, names=None):
    """Relative error against passes, median line and quartile band per mechanism, the default as a star."""
    names = list(results["problems"]) if names is None else names
    fig, axes = bench.panel_figure(len(names), 3, 6.0, 5.6)
    for ax, name in zip(axes, names):
        _panel(ax, name, results["problems"][name])
    sep = "\n" if len(names) == 1 else " "
    bench.save_figure(fig, path, f"Mangold et al. (2023)'s protocol, epsilon={results['epsilon']:g}, delta=1/n^2,{sep}"
                      f"median and quartiles of {results['runs']} runs", dpi=110, fontsize=11)


# --------------------------------------------------------------------------- main


def parse_args(argv=None):
    return bench.parse_benchmark_args(
        __doc__.split("\n\n")[0], REPO_ROOT, "seed_figures.json and the PNGs",
        "smoke test: 2 runs, 1 tuning run, short grids; epsilon in {0.5, 5} for Kumar & Deisenroth", argv)


def main(argv=None):
    args = parse_args(argv)
    t0 = time.perf_counter()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    results = run(make_problems(args.data_dir), args.runs, args.quick, log)
    results["claims"] = claims(results)
    epsilons = kumar.QUICK_EPSILONS if args.quick else kumar.EPSILONS
    results["kumar"] = kumar.run_theorems(args.data_dir, KUMAR_PROBLEMS, epsilons, args.runs, log)
    results["wall_s"] = time.perf_counter() - t0
    print(format_table(results))
    print()
    print(kumar.format_theorems(results["kumar"]))
    out = args.out_dir
    bench.write_json(results, out / "seed_figures.json")
    plot(results, out / "seed_figures.png")
    for name in results["problems"]:
        plot(results, out / f"seed_figures_{name}.png", [name])
    kumar.plot_theorems(results["kumar"], out / "seed_figures_kumar.png")
    print(f"\nwall time {results['wall_s']:.0f} s; wrote seed_figures.json and the PNGs in {out}")


if __name__ == "__main__":
    main()
