"""Benchmark of DP-GCD on the setups of Mangold, Bellet, Salmon & Tommasi, "High-Dimensional
Private Empirical Risk Minimization by Greedy Coordinate Descent", AISTATS 2023.

Four problems at ``epsilon = 1``, ``delta = 1/n**2``, all with an unpenalized intercept
(``data.prepare`` appends the column of ones; the penalty weight of that column is 0):

- ``madelon``: UCI Madelon (2000 x 500), L2-regularized logistic regression, public
  bounds from the a-priori feature range of the UCI description;
- ``logistic-lognormal``: synthetic 1000 x 100 logistic regression whose true weights are
  lognormal with random signs, L2-regularized (heavy-tailed, i.e. quasi-sparse, weights
  without an L1 term: the setting of the quasi-sparse utility result of Mangold et al. 2023);
- ``lasso-sparse``: synthetic 1000 x 1000 Lasso with 10 nonzero true weights;
- ``cadata``: California housing (20640 x 8), Lasso, public bounds from a-priori ranges.

For each problem and each iteration budget ``T`` of a grid, DP-GCD runs ``runs`` times
(seeds ``0 .. runs-1``) with ``calibration="tight"`` and ``calibration="paper"``; each run
is calibrated for its own ``T``. The measure is the relative error
``(F(w) - F*) / (F(0) - F*)`` with ``F*`` from ``solvers.solve`` (certified by its duality
gap). One DP-GCD iteration computes one full gradient, so ``T`` iterations cost ``T``
passes over the data. The time of one iteration is set beside the time of one ``X^T v``
on the matrix that DP-GCD iterates on.

The second part (``run_mechanisms``, ``benchmarks/mechanisms.py``) compares DP-GCD,
DP-CD, DP-SGD and the one-pass SGD on the same problems over a grid of epsilon, each
with one fixed iteration count per problem (``MECHANISM_ITERS``) and every calibration
it has, and sets their noise scales side by side.
"""
from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from dpsparse import data, losses, norms, solvers
from dpsparse.exceptions import FixedSeedWarning, PrivacyCalibrationWarning
from dpsparse.mechanisms.dp_cd import dp_cd
from dpsparse.mechanisms.dp_gcd import dp_gcd, gcd
from dpsparse.mechanisms.dp_sgd import dp_sgd
from dpsparse.mechanisms.one_pass_sgd import one_pass_sgd
from dpsparse.noise import make_noise

__all__ = [
    "EPSILON", "CALIBRATIONS", "a_priori_bounds", "Problem", "make_problems",
    "lasso_alpha_max", "madelon", "cadata", "logistic_lognormal", "lasso_sparse", "reference",
    "relative_error", "private_run", "calibration_runs", "nonprivate_errors", "time_matvec", "run_problem", "run",
    "format_table", "write_json", "plot", "panel_figure", "save_figure", "epsilon_axis",
    "MECHANISMS", "MECHANISM_EPSILONS", "MECHANISM_QUICK_EPSILONS", "MECHANISM_ITERS", "MECHANISM_CALIBRATIONS",
    "NOISE_KEYS", "ONE_PASS_RADIUS", "mechanism_fit", "mechanism_runs", "run_mechanisms", "format_mechanisms_table",
    "noise_anomalies", "plot_mechanisms",
]

EPSILON = 1.0
CALIBRATIONS = ("tight", "paper")

# Public bounds of the real datasets: a-priori ranges with their provenance, in
# examples/bounds/ (shared with the tests and README's commands), NOT computed from the data;
# values outside them are clipped by ``data.prepare`` and counted.
BOUNDS_DIR = Path(__file__).resolve().parents[1] / "examples" / "bounds"


def a_priori_bounds(name):
    """``data.Bounds`` of a real benchmark dataset (``examples/bounds/NAME.json``)."""
    return data.Bounds.from_json(BOUNDS_DIR / f"{name}.json")


def symmetric_bounds(bounds):
    """``|x_j| <= max(|low_j|, |high_j|)``: the map onto [-1, 1] keeps the zeros of sparse data, so the
    mapped design is a plain sparse matrix (``ShiftedSparse.S``) that peers and timings read as such."""
    radius = np.maximum(np.abs(bounds.feature_low), np.abs(bounds.feature_high))
    return data.Bounds(-radius, radius, source=f"{bounds.source}, made symmetric")


# Synthetic problems: seed of the generator, spread of the Gaussian features before
# they are clipped to the declared bounds [-1, 1] (about 4.6% of the values are clipped),
# and the declared label range of the synthetic Lasso (a-priori, about 3.3 standard
# deviations of X w* + noise; |X w*| <= 10 always, but that bound is loose).
SYNTHETIC_SEED = 0
SYNTHETIC_FEATURE_STD = 0.5
LASSO_LABEL_RANGE = (-5.0, 5.0)

# Penalty strengths: L2 for the logistic problems; for the Lasso problems a fraction of
# alpha_max (the smallest alpha with a zero solution).
MADELON_ALPHA = 1e-3
LOGISTIC_ALPHA = 1e-3
LASSO_ALPHA_RATIO = 0.1
# Residual clipping threshold of the squared loss in the private runs.
SQUARED_CLIP = 1.0
# Target of the exact solver's optimality criterion for F*.
REFERENCE_TOL = 1e-5
# BLAS threads during the benchmark. On the 2-core machine this was measured on, a
# 2-thread gemv X^T v took either ~0.07 ms or ~8 ms from one call to the next (the
# worker threads are rescheduled at timer-tick granularity); one thread gives stable
# timings of ~0.1 ms.
BLAS_THREADS = 1

# Iteration budgets T (= passes over the data) of each problem: full grid, quick grid.
# Small budgets are included because the privacy noise grows with T (see the results).
GRIDS = {
    "madelon": ((1, 2, 5, 10, 20, 50, 100, 200), (1, 10, 100)),
    "logistic-lognormal": ((1, 2, 5, 10, 20, 50, 100, 200), (1, 10, 100)),
    "lasso-sparse": ((1, 2, 5, 10, 20, 50, 100), (1, 10, 50)),
    "cadata": ((2, 5, 10, 20, 50, 100, 200, 500, 1000), (5, 50, 500)),
}


@dataclass
class Problem:
    """One benchmark problem on the bounded design.

    Attributes
    ----------
    name, description : str
    design : data.BoundedDesign
        Features in [-1, 1] with the intercept column last.
    loss : losses.Datafit
        Datafit of the private runs (clipped for the squared loss).
    reference_loss : losses.Datafit
        Datafit of the objective ``F`` and of ``F*``.
    penalty : norms.Penalty
        Intercept unpenalized (weight 0 on the last coordinate).
    n_iters : tuple of int
        Iteration budgets T.
    """

    name: str
    description: str
    design: data.BoundedDesign
    loss: losses.Datafit
    reference_loss: losses.Datafit
    penalty: norms.Penalty
    n_iters: tuple

    @property
    def delta(self):
        """``1 / n**2``."""
        return 1.0 / self.design.X.shape[0] ** 2

    def clipped(self):
        """Counts of clipped feature values, labels and row norms."""
        d = self.design
        return {"feature values": d.clipped_values, "labels": d.clipped_labels, "row norms": d.clipped_rows}


def _intercept_weights(p):
    """Penalty weights: 1 on the ``p - 1`` features, 0 on the intercept column (last)."""
    w = np.ones(p)
    w[-1] = 0.0
    return w


def lasso_alpha_max(design):
    """Smallest L1 strength whose Lasso solution (with intercept) has no nonzero feature.

    ``||X^T (y - mean(y))||_inf / n`` over the feature columns of the bounded design. It
    is computed on the private data: fine for a benchmark, where it only fixes the
    reference problem, not for a private fit.
    """
    X, y = design.X[:, :-1], design.y
    return float(np.max(np.abs(X.T @ (y - y.mean()))) / X.shape[0])


def _lasso(name, description, design, n_iters):
    alpha = LASSO_ALPHA_RATIO * lasso_alpha_max(design)
    penalty = norms.L1(alpha, _intercept_weights(design.X.shape[1]))
    return Problem(name, description, design, losses.Squared(clip=SQUARED_CLIP), losses.Squared(), penalty, n_iters)


def madelon(data_dir, n_iters):
    """Madelon train split, L2-regularized logistic regression.

    The svmlight file is dense in content (999,999 of its 10**6 values are nonzero), so
    it is converted to an array: ``data.prepare`` then maps each feature affinely from
    [0, 999] onto [-1, 1] (the sparse path would only divide by 999).

    Parameters
    ----------
    data_dir : path
        Folder holding ``libsvm/madelon.svm.gz``.
    n_iters : tuple of int

    Returns
    -------
    Problem
    """
    X, y = data.load_svmlight(Path(data_dir) / "libsvm" / "madelon.svm.gz", n_features=500)
    design = data.prepare(X.toarray(), y, a_priori_bounds("madelon"), classification=True)
    penalty = norms.L2(MADELON_ALPHA, _intercept_weights(design.X.shape[1]))
    desc = f"Madelon 2000x500, logistic + L2 (alpha={MADELON_ALPHA:g}), bounds [0, 999]"
    return Problem("madelon", desc, design, losses.Logistic(), losses.Logistic(), penalty, n_iters)


def cadata(data_dir, n_iters):
    """California housing, Lasso with ``alpha = LASSO_ALPHA_RATIO * alpha_max``.

    Parameters
    ----------
    data_dir : path
        Folder holding ``libsvm/cadata.svm.gz``.
    n_iters : tuple of int

    Returns
    -------
    Problem
    """
    X, y = data.load_svmlight(Path(data_dir) / "libsvm" / "cadata.svm.gz", n_features=8)
    design = data.prepare(X.toarray(), y, a_priori_bounds("cadata"), classification=False)
    desc = f"cadata 20640x8, Lasso (alpha={LASSO_ALPHA_RATIO:g} alpha_max), a-priori bounds"
    return _lasso("cadata", desc, design, n_iters)


def _gaussian_features(rng, n, p):
    return SYNTHETIC_FEATURE_STD * rng.standard_normal((n, p))


def logistic_lognormal(n_iters, n=1000, p=100, seed=SYNTHETIC_SEED):
    """Synthetic logistic regression with lognormal true weights, L2-regularized.

    ``w*_j = +-exp(N(0, 1))`` with random signs; ``X`` Gaussian, clipped to the declared
    bounds [-1, 1]; labels ``sign(X w* + N(0, 1))`` in {-1, +1} (computed on the clipped
    features).

    Parameters
    ----------
    n_iters : tuple of int
    n, p : int
    seed : int

    Returns
    -------
    Problem
    """
    rng = np.random.default_rng(seed)
    X = _gaussian_features(rng, n, p)
    w_true = rng.lognormal(0.0, 1.0, p) * rng.choice([-1.0, 1.0], p)
    bounds = data.Bounds(-np.ones(p), np.ones(p), source="declared [-1, 1] (synthetic)")
    Xc = np.clip(X, -1.0, 1.0)
    y = np.where(Xc @ w_true + rng.standard_normal(n) >= 0, 1.0, -1.0)
    design = data.prepare(X, y, bounds, classification=True)
    penalty = norms.L2(LOGISTIC_ALPHA, _intercept_weights(p + 1))
    desc = f"synthetic {n}x{p}, lognormal w*, logistic + L2 (alpha={LOGISTIC_ALPHA:g})"
    return Problem("logistic-lognormal", desc, design, losses.Logistic(), losses.Logistic(), penalty, n_iters)


def lasso_sparse(n_iters, n=1000, p=1000, n_nonzero=10, seed=SYNTHETIC_SEED):
    """Synthetic sparse Lasso: ``y = X w* + 0.1 N(0, 1)`` with ``n_nonzero`` weights +-1.

    ``X`` Gaussian, clipped to the declared bounds [-1, 1]; labels bounded to the declared
    range ``LASSO_LABEL_RANGE``.

    Parameters
    ----------
    n_iters : tuple of int
    n, p, n_nonzero : int
    seed : int

    Returns
    -------
    Problem
    """
    rng = np.random.default_rng(seed)
    X = _gaussian_features(rng, n, p)
    w_true = np.zeros(p)
    support = rng.choice(p, n_nonzero, replace=False)
    w_true[support] = rng.choice([-1.0, 1.0], n_nonzero)
    y = np.clip(X, -1.0, 1.0) @ w_true + 0.1 * rng.standard_normal(n)
    lo, hi = LASSO_LABEL_RANGE
    source = f"declared [-1, 1], labels [{lo:g}, {hi:g}] (synthetic)"
    bounds = data.Bounds(-np.ones(p), np.ones(p), lo, hi, source=source)
    design = data.prepare(X, y, bounds, classification=False)
    desc = f"synthetic {n}x{p}, {n_nonzero} nonzeros, Lasso (alpha={LASSO_ALPHA_RATIO:g} alpha_max)"
    return _lasso("lasso-sparse", desc, design, n_iters)


def make_problems(data_dir, quick=False):
    """The four benchmark problems.

    Parameters
    ----------
    data_dir : path
        Folder with the real datasets (``libsvm/madelon.svm.gz``, ``libsvm/cadata.svm.gz``).
    quick : bool
        Use the short iteration grids.

    Returns
    -------
    list of Problem
    """
    grid = {name: grids[1 if quick else 0] for name, grids in GRIDS.items()}
    return [
        madelon(data_dir, grid["madelon"]),
        logistic_lognormal(grid["logistic-lognormal"]),
        lasso_sparse(grid["lasso-sparse"]),
        cadata(data_dir, grid["cadata"]),
    ]


def reference(problem, tol=REFERENCE_TOL):
    """``F*`` by the exact solver, ``F(0)`` and the certified gap.

    Parameters
    ----------
    problem : Problem
    tol : float
        Target of the solver's optimality criterion.

    Returns
    -------
    dict
        ``f_star``, ``f_zero``, ``gap`` (``F(coef) - F* <= gap``), ``support`` (nonzero
        features of the solution), ``solve_s``.
    """
    d = problem.design
    t0 = time.perf_counter()
    res = solvers.solve(d.X, d.y, problem.reference_loss, problem.penalty, tol=tol)
    solve_s = time.perf_counter() - t0
    f_zero = solvers.objective(d.X, d.y, np.zeros(d.X.shape[1]), problem.reference_loss, problem.penalty)
    return {"f_star": res.objective, "f_zero": f_zero, "gap": res.gap,
            "support": int(np.count_nonzero(res.coef[:-1])), "solve_s": solve_s}


def relative_error(problem, w, ref):
    """``(F(w) - F*) / (F(0) - F*)``: 0 at the optimum, 1 at the starting point ``w = 0``.

    Parameters
    ----------
    problem : Problem
    w : ndarray of shape (p,)
    ref : dict
        From ``reference``.

    Returns
    -------
    float
    """
    d = problem.design
    f = solvers.objective(d.X, d.y, w, problem.reference_loss, problem.penalty)
    return (f - ref["f_star"]) / (ref["f_zero"] - ref["f_star"])


def private_run(problem, n_iter, calibration, seed):
    """One DP-GCD fit at ``(EPSILON, 1/n**2)``, with its timing.

    The callback stamps the end of every iteration: the gaps between stamps are the
    iteration times, and what precedes the first stamp, less one iteration, is the
    calibration (and the conversion of the matrix).

    Parameters
    ----------
    problem : Problem
    n_iter : int
    calibration : {"tight", "paper"}
    seed : int
        Seed of ``noise.make_noise``.

    Returns
    -------
    w : ndarray
    report : PrivacyReport
    iteration_s : ndarray of shape (n_iter - 1,)
    calibration_s : float
    """
    d = problem.design
    stamps = []
    t0 = time.perf_counter()
    w, report = dp_gcd(
        d.X, d.y, problem.loss, problem.penalty, d.feature_bounds, epsilon=EPSILON, delta=problem.delta,
        n_iter=n_iter, calibration=calibration, noise=make_noise(seed),
        callback=lambda t, w: stamps.append(time.perf_counter()),
    )
    iteration_s = np.diff(stamps)
    one = float(np.median(iteration_s)) if iteration_s.size else 0.0
    return w, report, iteration_s, stamps[0] - t0 - one


def calibration_runs(problem, ref, runs, calibration):
    """Private runs of one problem with one calibration: every ``T`` of its grid.

    Parameters
    ----------
    problem : Problem
    ref : dict
        From ``reference``.
    runs : int
        Seeds ``0 .. runs-1``.
    calibration : {"tight", "paper"}

    Returns
    -------
    dict
        Per T: relative errors (``errors``, one list per T; ``mean``, ``std``), the
        accountant's epsilon, the Laplace scale of the update and the calibration times
        of the runs. Summaries: ``iteration_s``, the median iteration time over all runs,
        and ``calibration_s``, the median over T of the calibration time of the first run
        of each T (later runs of the same T are faster where ``dp_gcd`` caches its
        calibration).
    """
    res = {"n_iter": list(problem.n_iters), "errors": [], "accountant_epsilon": [], "update_scale": [],
           "calibration_s_per_run": []}
    iteration_s = []
    for n_iter in problem.n_iters:
        errors, calib_s = [], []
        for seed in range(runs):
            w, report, it_s, c_s = private_run(problem, n_iter, calibration, seed)
            errors.append(relative_error(problem, w, ref))
            iteration_s.append(it_s)
            calib_s.append(c_s)
        res["errors"].append(errors)
        res["accountant_epsilon"].append(report.accountant_epsilon)
        res["update_scale"].append(report.noise["noise scale of each update"])
        res["calibration_s_per_run"].append(calib_s)
    res["mean"] = [float(np.mean(e)) for e in res["errors"]]
    res["std"] = [float(np.std(e)) for e in res["errors"]]
    res["iteration_s"] = float(np.median(np.concatenate(iteration_s)))
    res["calibration_s"] = float(np.median([c[0] for c in res["calibration_s_per_run"]]))
    return res


def nonprivate_errors(problem, ref):
    """Relative errors of greedy coordinate descent without noise, for every ``T``.

    The same iterations as DP-GCD (``mechanisms.dp_gcd.gcd``, GS-r rule, steps ``1/M_j``
    from the public bounds, the private runs' datafit) with zero noise scales: what the
    optimization alone achieves in ``T`` passes.

    Parameters
    ----------
    problem : Problem
    ref : dict
        From ``reference``.

    Returns
    -------
    list of float
    """
    d = problem.design
    M = problem.loss.coordinate_smoothness(d.feature_bounds)
    X = d.X.tocsc() if sp.issparse(d.X) else d.X
    zero = np.zeros_like(M)
    return [relative_error(problem, gcd(X, d.y, problem.loss, problem.penalty, M, n_iter, "gs-r", zero, zero,
                                        make_noise(0)), ref)
            for n_iter in problem.n_iters]


def time_matvec(X, repeats=200):
    """Median time of ``X.T @ v`` on the matrix DP-GCD iterates on (CSC when sparse).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    repeats : int

    Returns
    -------
    float
        Seconds.
    """
    Xc = X.tocsc() if sp.issparse(X) else X
    v = np.random.default_rng(0).standard_normal(Xc.shape[0])
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        Xc.T @ v
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def run_problem(problem, runs):
    """Reference, private runs (both calibrations), non-private curve and timings.

    Parameters
    ----------
    problem : Problem
    runs : int

    Returns
    -------
    dict
        JSON-ready entry of the problem.
    """
    n, p = problem.design.X.shape
    ref = reference(problem)
    return {
        "description": problem.description, "n": n, "p": p, "delta": problem.delta,
        "loss": problem.loss.get_params(), "penalty": problem.penalty.get_params(),
        "bounds_source": problem.design.bounds.source, "clipped": problem.clipped(),
        "reference": ref, "matvec_s": time_matvec(problem.design.X),
        "nonprivate": nonprivate_errors(problem, ref),
        "runs": {c: calibration_runs(problem, ref, runs, c) for c in CALIBRATIONS},
    }


def run(problems, runs, blas_threads=BLAS_THREADS, log=print):
    """Run the benchmark on every problem.

    Parameters
    ----------
    problems : list of Problem
    runs : int
    blas_threads : int or None
        Threads of the BLAS during the benchmark; None leaves the library default.
    log : callable str -> None
        Progress messages.

    Returns
    -------
    dict
        JSON-ready results: the settings and one entry per problem.
    """
    results = {"epsilon": EPSILON, "delta": "1/n^2", "runs": runs, "seeds": list(range(runs)),
               "calibrations": list(CALIBRATIONS), "blas_threads": blas_threads, "problems": {}}
    with threadpool_limits(blas_threads, user_api="blas"):
        for problem in problems:
            t0 = time.perf_counter()
            entry = run_problem(problem, runs)
            results["problems"][problem.name] = entry
            log(f"{problem.name}: {time.perf_counter() - t0:.1f} s (F* solve {entry['reference']['solve_s']:.1f} s)")
    return results


def _mean_std(res, k):
    return f"{res['mean'][k]:.3g} +- {res['std'][k]:.2g}"


def format_table(results):
    """Plain-text tables: relative errors per problem and T, the references, the timings.

    Parameters
    ----------
    results : dict
        From ``run``.

    Returns
    -------
    str
    """
    lines = [f"DP-GCD, epsilon={results['epsilon']:g}, delta=1/n^2: relative error (F(w)-F*)/(F(0)-F*), "
             f"mean +- std over {results['runs']} runs; non-private: the same GCD without noise",
             f"{'problem':<20}{'T=passes':>9}{'tight':>22}{'paper':>22}{'eps(paper)':>11}{'non-private':>12}"]
    for name, e in results["problems"].items():
        tight, paper = e["runs"]["tight"], e["runs"]["paper"]
        for k, n_iter in enumerate(tight["n_iter"]):
            lines.append(f"{name:<20}{n_iter:>9}{_mean_std(tight, k):>22}{_mean_std(paper, k):>22}"
                         f"{paper['accountant_epsilon'][k]:>11.3f}{e['nonprivate'][k]:>12.3g}")
    lines += ["", f"{'problem':<20}{'n x p':>12}{'F(0)':>10}{'F*':>10}{'gap':>10}{'support':>9}"
                  f"{'clipped values/labels':>23}"]
    for name, e in results["problems"].items():
        ref, c = e["reference"], e["clipped"]
        lines.append(f"{name:<20}{e['n']:>6}x{e['p']:<5}{ref['f_zero']:>10.4g}{ref['f_star']:>10.4g}"
                     f"{ref['gap']:>10.2g}{ref['support']:>9}{c['feature values']:>17}/{c['labels']}")
    lines += ["", f"{'problem':<20}{'iter (ms)':>10}{'X^T v (ms)':>11}{'ratio':>7}"
                  f"{'calib tight (s)':>16}{'calib paper (s)':>16}  (calibration: first run of each T, median over T)"]
    for name, e in results["problems"].items():
        tight, paper = e["runs"]["tight"], e["runs"]["paper"]
        it = tight["iteration_s"]
        lines.append(f"{name:<20}{1e3 * it:>10.3f}{1e3 * e['matvec_s']:>11.3f}{it / e['matvec_s']:>7.1f}"
                     f"{tight['calibration_s']:>16.3f}{paper['calibration_s']:>16.3f}")
    return "\n".join(lines)


def write_json(results, path):
    """Write ``results`` to ``path`` as JSON (folders created).

    Parameters
    ----------
    results : dict
        From ``run``.
    path : path
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1))


def plot(results, path):
    """Relative error against passes, mean +- std bands, one panel per problem (PNG).

    Log-log axes; a band whose lower edge is below zero runs to the bottom of its panel.

    Parameters
    ----------
    results : dict
        From ``run``.
    path : path
    """
    names = list(results["problems"])
    fig, axes = panel_figure(len(names), 2, 5.5, 4.0)
    for ax, name in zip(axes, names):
        _panel(ax, name, results["problems"][name], results["runs"])
    save_figure(fig, path, f"DP-GCD, epsilon={results['epsilon']:g}, delta=1/n^2")


def _panel(ax, name, entry, runs):
    x = np.array(entry["runs"]["tight"]["n_iter"])
    nonprivate = np.array(entry["nonprivate"])
    lows = [nonprivate[nonprivate > 0].min(initial=1.0)]
    for calibration, color in zip(CALIBRATIONS, ("C0", "C1")):
        res = entry["runs"][calibration]
        mean, std = np.array(res["mean"]), np.array(res["std"])
        ax.plot(x, mean, "o-", color=color, label=f"DP-GCD {calibration} (mean +- std, {runs} runs)")
        ax.fill_between(x, mean - std, mean + std, color=color, alpha=0.25)
        lows.append(mean[mean > 0].min(initial=1.0))
    ax.plot(x, nonprivate, "--", color="gray", label="GCD without noise")
    ax.axhline(1.0, color="black", lw=0.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.3 * min(lows))
    ax.set_title(f"{name} ({entry['n']}x{entry['p']})")
    ax.set_xlabel("passes over the data (= iterations T)")
    ax.set_ylabel("(F(w) - F*) / (F(0) - F*)")
    ax.legend(fontsize=8)


# ---------------------------------------------------------------------------------------
# Comparison of the mechanisms (benchmarks/mechanisms.py)
# ---------------------------------------------------------------------------------------
#
# DP-GCD, DP-CD, DP-SGD and the one-pass SGD on the four problems above, over a grid of
# epsilon, delta = 1/n^2, each mechanism with one fixed iteration count per problem
# (MECHANISM_ITERS) and every calibration it has (MECHANISM_CALIBRATIONS). All four are
# fitted with the problem's private datafit (``Problem.loss``, the clipped squared loss
# for the Lasso problems) and its penalty, and measured by ``relative_error`` on the same
# objective as DP-GCD (``Problem.reference_loss`` + penalty, ``F*`` from the exact solver).

MECHANISMS = {"dp-gcd": dp_gcd, "dp-cd": dp_cd, "dp-sgd": dp_sgd, "one-pass-sgd": one_pass_sgd}
MECHANISM_EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
MECHANISM_QUICK_EPSILONS = (0.5, 5.0)
# Public radius of the one-pass SGD's L2 ball (its iterates and the default step size).
ONE_PASS_RADIUS = 10.0

# One fixed iteration count T per (mechanism, problem), chosen once (not per epsilon):
# - dp-gcd: iterations (one full gradient each); the best-T region of benchmarks/dp_gcd.py
#   at epsilon = 1 is T = 1-5 on the n ~ 1000-2000 problems, 100-200 on cadata;
# - dp-cd: epochs of p coordinate updates (updates_per_epoch = p), the best of
#   {1, 3, 5, 10, 30} (cadata {5, 20, 50, 100, 300}) over 2 seeds at epsilon 1 and 5: its
#   noise grows with the number of updates, T p, so one epoch on the wide problems;
# - dp-sgd: steps with Poisson batches of expected size sqrt(n), the best of
#   {100, 300, 1000} over 2 seeds at epsilon 1 and 5;
# - one-pass-sgd: no choice, the run stops after ceil(n/2) distinct records (about
#   n ln 2 steps).
# Choosing T on the private data, as here, is a benchmark convenience, not a private
# procedure.
MECHANISM_ITERS = {
    "dp-gcd": {"madelon": 5, "logistic-lognormal": 5, "lasso-sparse": 5, "cadata": 100},
    "dp-cd": {"madelon": 1, "logistic-lognormal": 3, "lasso-sparse": 1, "cadata": 50},
    "dp-sgd": {"madelon": 300, "logistic-lognormal": 300, "lasso-sparse": 100, "cadata": 1000},
    "one-pass-sgd": {"madelon": None, "logistic-lognormal": None, "lasso-sparse": None, "cadata": None},
}
MECHANISM_UNITS = {"dp-gcd": "iterations", "dp-cd": "epochs of p updates", "dp-sgd": "steps, batch sqrt(n)",
                   "one-pass-sgd": "stops at n/2 distinct records"}
# Calibrations of each mechanism: DP-SGD and the one-pass SGD have no closed form in
# their sources ("n/a" for paper in the tables).
MECHANISM_CALIBRATIONS = {"dp-gcd": ("tight", "paper"), "dp-cd": ("tight", "paper"), "dp-sgd": ("tight",),
                          "one-pass-sgd": ("tight",)}
# The report.noise entry set side by side, per mechanism. DP-GCD's "noise scale of each update" is a
# Gaussian standard deviation under "tight" (default update noise) and a Laplace scale
# (standard deviation sqrt(2) times larger) under "paper".
NOISE_KEYS = {"dp-gcd": "noise scale of each update", "dp-cd": "noise std", "dp-sgd": "noise multiplier",
              "one-pass-sgd": "gaussian std"}


def mechanism_fit(problem, mechanism, calibration, epsilon, seed, n_iter):
    """One private fit of ``mechanism`` on ``problem`` at ``(epsilon, 1/n**2)``.

    Parameters
    ----------
    problem : Problem
    mechanism : {"dp-gcd", "dp-cd", "dp-sgd", "one-pass-sgd"}
    calibration : {"tight", "paper"}
    epsilon : float
    seed : int
        Seed of ``noise.make_noise``.
    n_iter : int or None
        None for the one-pass SGD.

    Returns
    -------
    w : ndarray
    report : PrivacyReport
    seconds : float
        Wall time of the call (calibration included).
    """
    d = problem.design
    options = {"radius": ONE_PASS_RADIUS} if mechanism == "one-pass-sgd" else {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # A paper calibration that misses its target is recorded from report.warnings;
        # the fixed seeds are the point of the benchmark (FixedSeedWarning).
        warnings.simplefilter("ignore", PrivacyCalibrationWarning)
        warnings.simplefilter("ignore", FixedSeedWarning)
        w, report = MECHANISMS[mechanism](
            d.X, d.y, problem.loss, problem.penalty, d.feature_bounds, epsilon=epsilon, delta=problem.delta,
            n_iter=n_iter, calibration=calibration, noise=make_noise(seed), **options)
    return w, report, time.perf_counter() - t0


def _numeric(noise):
    return {k: float(v) for k, v in noise.items() if isinstance(v, (int, float, np.integer, np.floating))}


def mechanism_runs(problem, ref, mechanism, calibration, epsilons, runs):
    """Runs of one mechanism with one calibration on one problem, for every epsilon.

    Parameters
    ----------
    problem : Problem
    ref : dict
        From ``reference``.
    mechanism : str
        Key of ``MECHANISMS``.
    calibration : {"tight", "paper"}
    epsilons : sequence of float
    runs : int
        Seeds ``0 .. runs-1``.

    Returns
    -------
    dict
        Per epsilon (lists in the order of ``epsilon``): relative errors (``errors``,
        ``mean``, ``std``), the noise entry ``NOISE_KEYS[mechanism]`` (``noise``) and all
        numeric noise entries of the first run (``noise_all``), the accountant's epsilon,
        the warnings of the report, the iterations (mean over the runs: random for the
        one-pass SGD) and the wall times of the runs (``seconds``; the first run of an
        epsilon includes the calibration, cached for the next ones).
    """
    n_iter = MECHANISM_ITERS[mechanism][problem.name]
    res = {"n_iter": n_iter, "epsilon": [float(e) for e in epsilons], "errors": [], "mean": [], "std": [],
           "noise": [], "noise_all": [], "accountant_epsilon": [], "warnings": [], "iterations": [],
           "seconds": []}
    for epsilon in epsilons:
        errors, seconds, iterations = [], [], []
        for seed in range(runs):
            w, report, sec = mechanism_fit(problem, mechanism, calibration, float(epsilon), seed, n_iter)
            errors.append(float(relative_error(problem, w, ref)))
            seconds.append(sec)
            iterations.append(report.iterations)
            if seed == 0:
                first = report
        res["errors"].append(errors)
        res["mean"].append(float(np.mean(errors)))
        res["std"].append(float(np.std(errors)))
        res["noise"].append(float(first.noise[NOISE_KEYS[mechanism]]))
        res["noise_all"].append(_numeric(first.noise))
        res["accountant_epsilon"].append(float(first.accountant_epsilon))
        res["warnings"].append(list(first.warnings))
        res["iterations"].append(float(np.mean(iterations)))
        res["seconds"].append(seconds)
    return res


def run_mechanisms(problems, epsilons=MECHANISM_EPSILONS, runs=10, blas_threads=BLAS_THREADS, log=print):
    """Every mechanism and calibration on every problem and epsilon (BLAS threads pinned).

    Parameters
    ----------
    problems : list of Problem
    epsilons : sequence of float
    runs : int
    blas_threads : int or None
    log : callable str -> None

    Returns
    -------
    dict
        JSON-ready results: the settings and, per problem, its reference and
        ``mechanisms[mechanism][calibration]`` from ``mechanism_runs``.
    """
    results = {"epsilons": [float(e) for e in epsilons], "delta": "1/n^2", "runs": runs, "seeds": list(range(runs)),
               "blas_threads": blas_threads, "one_pass_radius": ONE_PASS_RADIUS,
               "n_iter": {m: dict(v) for m, v in MECHANISM_ITERS.items()}, "n_iter_units": dict(MECHANISM_UNITS),
               "calibrations": {m: list(c) for m, c in MECHANISM_CALIBRATIONS.items()},
               "noise_keys": dict(NOISE_KEYS), "problems": {}}
    with threadpool_limits(blas_threads, user_api="blas"):
        for problem in problems:
            n, p = problem.design.X.shape
            t0 = time.perf_counter()
            ref = reference(problem)
            entry = {"description": problem.description, "n": n, "p": p, "delta": problem.delta,
                     "loss": problem.loss.get_params(), "reference_loss": problem.reference_loss.get_params(),
                     "penalty": problem.penalty.get_params(), "clipped": problem.clipped(), "reference": ref,
                     "mechanisms": {}, "seconds": {}}
            for mechanism, calibrations in MECHANISM_CALIBRATIONS.items():
                t1 = time.perf_counter()
                entry["mechanisms"][mechanism] = {
                    c: mechanism_runs(problem, ref, mechanism, c, epsilons, runs) for c in calibrations}
                entry["seconds"][mechanism] = time.perf_counter() - t1
                log(f"  {problem.name} {mechanism}: {entry['seconds'][mechanism]:.1f} s")
            results["problems"][problem.name] = entry
            log(f"{problem.name}: {time.perf_counter() - t0:.1f} s (F* solve {ref['solve_s']:.1f} s)")
    return results


def _iters_label(results, mechanism, name):
    n_iter = results["n_iter"][mechanism][name]
    return "~n ln2" if n_iter is None else str(n_iter)


def format_mechanisms_table(results):
    """Plain-text tables: relative error per problem, mechanism, calibration and epsilon;
    the noise scales (tight / paper); the accountant's epsilon of the paper calibrations.

    Parameters
    ----------
    results : dict
        From ``run_mechanisms``.

    Returns
    -------
    str
    """
    eps = results["epsilons"]
    names = list(results["problems"])
    iters = [f"  {m:<13}" + ", ".join(f"{k} {_iters_label(results, m, k)}" for k in names)
             + f"  ({results['n_iter_units'][m]})" for m in MECHANISM_CALIBRATIONS]
    head = f"{'problem':<19}{'mechanism':<13}{'calib':<6}" + "".join(f"{'eps=' + format(e, 'g'):>20}" for e in eps)
    runs = results["runs"]
    lines = [f"Relative error (F(w)-F*)/(F(0)-F*), mean +- std over {runs} runs (seeds 0..{runs - 1}), delta=1/n^2;"
             f" every mechanism on the problem's private datafit, error on the same objective",
             f"Fixed T per (mechanism, problem); one-pass SGD on the L2 ball of radius {results['one_pass_radius']:g}:",
             *iters, head]
    for name, e in results["problems"].items():
        for mechanism, by_cal in e["mechanisms"].items():
            for calibration in CALIBRATIONS:
                res = by_cal.get(calibration)
                cells = (["n/a"] * len(eps) if res is None else
                         [f"{m:.3g} +- {s:.2g}" for m, s in zip(res["mean"], res["std"])])
                lines.append(f"{name:<19}{mechanism:<13}{calibration:<6}" + "".join(f" {c:>19}" for c in cells))
        lines.append("")
    lines += ["Noise scales, tight / paper (report.noise: " +
              ", ".join(f"{m} {k!r}" for m, k in results["noise_keys"].items()) +
              "; DP-GCD tight is a Gaussian std, paper a Laplace scale)",
              f"{'problem':<19}{'mechanism':<13}" + "".join(f"{'eps=' + format(x, 'g'):>21}" for x in eps)]
    for name, e in results["problems"].items():
        for mechanism, by_cal in e["mechanisms"].items():
            tight = by_cal["tight"]["noise"]
            paper = by_cal["paper"]["noise"] if "paper" in by_cal else [None] * len(eps)
            cells = [f"{t:.3g} / {'n/a' if p is None else format(p, '.3g')}" for t, p in zip(tight, paper)]
            lines.append(f"{name:<19}{mechanism:<13}" + "".join(f"{c:>21}" for c in cells))
    lines += ["", "Accountant's epsilon of the paper calibrations (target in the header; > target: the paper's "
              "noise is short of its claim)",
              f"{'problem':<19}{'mechanism':<13}" + "".join(f"{'eps=' + format(x, 'g'):>11}" for x in eps)]
    for name, e in results["problems"].items():
        for mechanism, by_cal in e["mechanisms"].items():
            if "paper" in by_cal:
                lines.append(f"{name:<19}{mechanism:<13}" +
                             "".join(f"{a:>11.3f}" for a in by_cal["paper"]["accountant_epsilon"]))
    lines += ["", f"{'problem':<19}{'n x p':>12}{'F(0)':>10}{'F*':>10}{'gap':>10}"
                  + "".join(f"{m + ' (s)':>17}" for m in MECHANISM_CALIBRATIONS)]
    for name, e in results["problems"].items():
        ref = e["reference"]
        lines.append(f"{name:<19}{e['n']:>6}x{e['p']:<5}{ref['f_zero']:>10.4g}{ref['f_star']:>10.4g}{ref['gap']:>10.2g}"
                     + "".join(f"{e['seconds'][m]:>17.1f}" for m in MECHANISM_CALIBRATIONS))
    return "\n".join(lines)


def noise_anomalies(results, rtol=1e-9):
    """Where the tight noise exceeds the paper's, and where an error grows with epsilon.

    Parameters
    ----------
    results : dict
        From ``run_mechanisms``.
    rtol : float

    Returns
    -------
    list of str
        Empty when none.
    """
    out = []
    eps = results["epsilons"]
    for name, e in results["problems"].items():
        for mechanism, by_cal in e["mechanisms"].items():
            if "paper" in by_cal:
                for x, t, p in zip(eps, by_cal["tight"]["noise"], by_cal["paper"]["noise"]):
                    if t > p * (1 + rtol):
                        out.append(f"{name} {mechanism} eps={x:g}: tight {NOISE_KEYS[mechanism]} {t:.4g} "
                                   f"> paper {p:.4g}")
            for calibration, res in by_cal.items():
                mean = res["mean"]
                for k in range(1, len(mean)):
                    # Growth beyond the spread of the runs (standard error of the two means).
                    se = math.hypot(res["std"][k], res["std"][k - 1]) / math.sqrt(max(results["runs"], 1))
                    if mean[k] > mean[k - 1] + 2 * se:
                        out.append(f"{name} {mechanism} {calibration}: error grows from eps={eps[k - 1]:g} "
                                   f"({mean[k - 1]:.3g}) to eps={eps[k]:g} ({mean[k]:.3g})")
    return out


def plot_mechanisms(results, path):
    """Relative error against epsilon, one panel per problem, one line per mechanism and
    calibration (solid: tight, dashed: paper) with mean +- std bands; log-log (PNG).

    Parameters
    ----------
    results : dict
        From ``run_mechanisms``.
    path : path
    """
    names = list(results["problems"])
    fig, axes = panel_figure(len(names), 2, 6.0, 4.5)
    x = np.array(results["epsilons"])
    colors = {m: f"C{k}" for k, m in enumerate(MECHANISM_CALIBRATIONS)}
    for ax, name in zip(axes, names):
        entry = results["problems"][name]
        lows = []
        for mechanism, by_cal in entry["mechanisms"].items():
            for calibration, res in by_cal.items():
                mean, std = np.array(res["mean"]), np.array(res["std"])
                label = f"{mechanism} {calibration} (T={_iters_label(results, mechanism, name)})"
                ax.plot(x, mean, "o-" if calibration == "tight" else "s--", color=colors[mechanism], label=label)
                ax.fill_between(x, mean - std, mean + std, color=colors[mechanism], alpha=0.15)
                lows.append(mean[mean > 0].min(initial=1.0))
        ax.axhline(1.0, color="black", lw=0.5)
        epsilon_axis(ax, x)
        ax.set_ylim(bottom=0.3 * min(lows, default=1.0))
        ax.set_title(f"{name} ({entry['n']}x{entry['p']})")
        ax.set_ylabel("(F(w) - F*) / (F(0) - F*)")
        ax.legend(fontsize=7)
    save_figure(fig, path, f"Private mechanisms, mean +- std over {results['runs']} runs")


def panel_figure(n_panels, cols, width, height):
    """A figure (Agg backend) with one axis per panel, ``cols`` panels wide, unused axes hidden.

    Returns
    -------
    fig : matplotlib Figure
    axes : list of ``n_panels`` Axes
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(cols, n_panels)
    rows = math.ceil(n_panels / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.ravel()[n_panels:]:
        ax.set_visible(False)
    return fig, list(axes.ravel()[:n_panels])


def save_figure(fig, path, title, dpi=120, legend=False, **title_kw):
    """Title, tight layout, write ``path`` (its folder created) and close the figure. ``legend``: one legend for every
    panel's lines, below the panels (where each panel's own would cover its data)."""
    import matplotlib.pyplot as plt

    fig.suptitle(title, **title_kw)
    if legend:
        lines = {}
        for ax in fig.axes:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                lines.setdefault(label, handle)
        fig.legend(list(lines.values()), list(lines), loc="lower center", ncol=min(len(lines), 4), fontsize=8)
        rows = 1 + (len(lines) - 1) // 4  # of the legend, about 0.22 inch each, under the panels
        fig.tight_layout(rect=(0, (0.15 + 0.22 * rows) / fig.get_figheight(), 1, 1))
    else:
        fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def epsilon_axis(ax, epsilons, log_y=True, label="epsilon (delta = 1/n^2)"):
    """Log x axis (and log y unless ``log_y`` is False) with one tick per epsilon of the grid."""
    from matplotlib.ticker import NullLocator

    ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(label)


def benchmark_parser(description, repo_root, outputs):
    """An ``argparse`` parser with ``--data-dir`` (default: ``shared/data`` beside the repository) and
    ``--out-dir`` (default: ``benchmarks/results``), for the script's own arguments to be added."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data-dir", type=Path, default=Path(repo_root).parent / "shared" / "data",
                        help="folder of the real datasets (default: ../shared/data beside the repository)")
    parser.add_argument("--out-dir", type=Path, default=Path(repo_root) / "benchmarks" / "results",
                        help=f"where {outputs} are written")
    return parser


def parse_benchmark_args(description, repo_root, outputs, quick_help, argv=None, runs=True):
    """Command line shared by the scripts of ``benchmarks/``.

    ``--runs`` (default 10; 2 with ``--quick``), ``--quick``, ``--data-dir`` (default: the
    ``shared/data`` folder beside the repository) and ``--out-dir`` (default:
    ``benchmarks/results``).

    Parameters
    ----------
    description : str
    repo_root : Path
        Root of the source checkout.
    outputs : str
        The files the script writes, for the help of ``--out-dir``.
    quick_help : str
        What ``--quick`` does.
    argv : list of str or None
    runs : bool
        Whether the script takes ``--runs``.
    """
    parser = benchmark_parser(description, repo_root, outputs)
    if runs:
        parser.add_argument("--runs", type=int, default=10,
                            help="private runs per setting, seeds 0..runs-1 (default 10)")
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args(argv)
    if runs:
        if args.runs < 1:
            parser.error("--runs must be >= 1")
        if args.quick:
            args.runs = 2
    return args
