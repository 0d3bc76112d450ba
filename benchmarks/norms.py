"""Structured norms: time of value, prox and LMOs against p; group-Lasso solvers against skglm and celer.

Part 1 (norms). For p = 10^3 .. 10^6 and a Gaussian vector ``x ~ N(0, I_p)`` (seed 0),
the time of ``value(x)``, ``prox(x, t)``, ``lmo_dual_ball(x)``, ``lmo_ball(x)`` and
``dual_norm(x)`` (alpha = 1) for: the L1 norm as ``SubmodularNorm(Cardinality)`` and as
the separable ``L1``; L_inf (``SubmodularNorm(Nonempty)``); the group L1/L_inf norm
(``SubmodularNorm(GroupCount)``, disjoint groups of 10 consecutive coordinates); the
group Lasso (``GroupLasso``, groups of 10, weights sqrt(10)); a concave function of the
cardinality (``ConcaveCardinality(p, sqrt)``) and the range function (``Range(p)``,
offset p - 1). The prox step is ``t = 0.5 * Omega*(x)`` (half the smallest step whose
prox is 0; ``0.5 * max|x_j|`` for the separable L1). Each time is the median of
``repeats`` calls after one untimed warm-up call; a call whose warm-up takes more than
0.5 s is timed once more (its warm-up alone if it took more than 10 s: marked '*' in the
table). The concave and range norms have no closed-form prox: their prox is
the min-norm-point (Wolfe) projection, run in a forked child process killed after 10 s,
over p = 10^2, 10^2.5, ..., until a call takes longer (also at t = 0.1 Omega*(x)); a
first call slower than 0.5 s is reported alone; its certified accuracy is reported beside the
target ``prox_tol * max(1, ||x||)``.
``Range.dual_argmax`` enumerates all p(p+1)/2 intervals, so its dual norm, ``lmo_ball``
and prox are skipped above p = 10^4 (memory).

Part 2 (solvers). Group Lasso with the squared loss, ``(1/2n)||y - Xw||^2 + alpha
sum_g sqrt(|g|) ||w_g||_2``, at ``alpha = 0.1 alpha_max``, ``alpha_max = max_g
||X_g^T y||_2 / (n sqrt(|g|))`` (the smallest alpha with a zero solution), on: bardet
(120 x 100, 20 groups of 5 consecutive columns), birthwt (189 x 16, target ``bwt``, the 8
groups of ``birthwt.groups.csv``; the column ``low`` = 1{bwt < 2.5} is left out) and a
synthetic 1000 x 5000 problem (Gaussian X, 1000 groups of 5, 10 active groups with N(0, 1)
weights, noise 0.1). Each dataset is mapped onto [-1, 1] by ``data.prepare`` with bounds
from ``data.bounds_from_data`` (a non-private benchmark: the PrivacyLeakWarning is
silenced), without intercept column; then the columns of X and y are centred, and every
solver fits WITHOUT intercept (on centred data this is the group Lasso with an
unpenalized intercept). Solvers: ``solvers.solve_prox`` (FISTA, certified gap <= 1e-8);
``solvers.solve`` does not apply (it handles the elastic-net family only; its error is
recorded); skglm's ``GroupBCD`` (``QuadraticGroup``, ``WeightedGroupL2``) and celer's
``GroupLasso`` (if installed), each at the loosest tolerance of a decreasing grid whose
solution has OUR certified gap <= 1e-8. Reported: median time of ``repeats`` runs (after
a warm-up run, which includes numba compilation for skglm), ``F(theirs) - F(ours)`` with
our objective, and our certified duality gap at their solution.

BLAS is pinned to one thread (threadpoolctl) for stable timings.

Usage::

    python benchmarks/norms.py [--quick] [--data-dir DIR] [--out-dir DIR]

Prints the tables and writes ``norms.json`` in ``--out-dir`` (default
``benchmarks/results``). ``--quick``: p up to 10^4, 3 repeats, the general prox up to
p = 10^3 with a 2 s limit, no synthetic 1000 x 5000 solver problem (under a minute).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import bench
from dpsparse import data, losses, norms, solvers

REPO_ROOT = Path(__file__).resolve().parents[1]

BLAS_THREADS = 1
SEED = 0
P_GRID = (10**3, 10**4, 10**5, 10**6)
P_GRID_QUICK = (10**3, 10**4)
REPEATS, REPEATS_QUICK = 7, 3
SLOW_CALL_S = 0.5          # a call whose warm-up is slower than this is timed once, after the warm-up
SLOW_TIMED_ONCE_S = 10.0   # ... and one whose warm-up is slower than this is not called again
PROX_FRACTION = 0.5        # t = PROX_FRACTION * Omega*(x) in the main table
GENERAL_PROX_FRACTIONS = (0.1, 0.5)
GENERAL_PROX_P = tuple(int(round(10 ** (k / 2))) for k in range(4, 13))  # 100, 316, ..., 10^6
GENERAL_PROX_LIMIT_S, GENERAL_PROX_LIMIT_QUICK_S = 10.0, 2.0
RANGE_MAX_P = 10**4        # Range.dual_argmax: p(p+1)/2 intervals in memory
GROUP_SIZE = 10
GENERAL = ("concave sqrt(k)", "range")

GAP_TOL = 1e-8
ALPHA_RATIO = 0.1
SOLVER_REPEATS, SOLVER_REPEATS_QUICK = 5, 2
SKGLM_TOLS = (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12)
REL_DISAGREEMENT = 1e-6

OPS = ("value", "prox", "lmo_dual_ball", "lmo_ball", "dual_norm")


# ----------------------------------------------------------------------------- norms

def _blocks(p, size):
    return [np.arange(i, min(i + size, p)) for i in range(0, p, size)]


FAMILIES = {
    "L1 (Cardinality)": lambda p: norms.SubmodularNorm(norms.Cardinality(p), 1.0),
    "L1 (separable)": lambda p: norms.L1(1.0),
    "Linf (Nonempty)": lambda p: norms.SubmodularNorm(norms.Nonempty(p), 1.0),
    "group L1/Linf (10)": lambda p: norms.SubmodularNorm(norms.GroupCount(p, _blocks(p, GROUP_SIZE)), 1.0),
    "group Lasso (10)": lambda p: norms.GroupLasso(_blocks(p, GROUP_SIZE), p, 1.0),
    "concave sqrt(k)": lambda p: norms.SubmodularNorm(norms.ConcaveCardinality(p, np.sqrt), 1.0),
    "range": lambda p: norms.SubmodularNorm(norms.Range(p), 1.0),
}


def _vector(p):
    return np.random.default_rng(SEED).standard_normal(p)


def _dual(norm, x):
    """``Omega*(x)``; the separable L1 has no ``dual_norm``: ``max |x_j|``."""
    return norm.dual_norm(x) if hasattr(norm, "dual_norm") else float(np.max(np.abs(x)))


def _call(norm, op, x, t):
    if op == "prox":
        return lambda: norm.prox(x, t)
    method = getattr(norm, op)
    return lambda: method(x)


def _time(f, repeats):
    """Median of ``repeats`` timed calls after a warm-up; the warm-up alone if it was slow."""
    t0 = time.perf_counter()
    f()
    first = time.perf_counter() - t0
    if first > SLOW_TIMED_ONCE_S:
        return first, 1
    if first > SLOW_CALL_S:  # one timed call after the warm-up (the first call pays the page faults)
        t0 = time.perf_counter()
        f()
        return time.perf_counter() - t0, 1
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), repeats


def _range_skipped(family, op, p):
    return family == "range" and op in ("prox", "lmo_ball", "dual_norm") and p > RANGE_MAX_P


def _prox_child(conn, family, p, fraction, repeats):
    """Forked child: time the general prox, sending (seconds, accuracy) after every call."""
    with threadpool_limits(BLAS_THREADS, user_api="blas"):
        norm = FAMILIES[family](p)
        x = _vector(p)
        t = fraction * norm.dual_norm(x)
        conn.send(("ready", float(norm.prox_tol * max(1.0, np.linalg.norm(x)))))
        total = 0.0
        for _ in range(repeats + 1):  # the first call is the warm-up
            t0 = time.perf_counter()
            norm.prox(x, t)
            dt = time.perf_counter() - t0
            conn.send(("call", dt, float(norm.prox_accuracy)))
            total += dt
            if dt > SLOW_CALL_S or total > 5.0:
                break
    conn.send(("done",))


def time_general_prox(family, p, fraction, repeats, limit):
    """Time ``prox`` of a norm without closed form, in a child process killed after ``limit`` s.

    Returns
    -------
    dict
        ``seconds`` (median; None when the first call did not finish within ``limit``),
        ``repeats``, ``accuracy`` (certified ``||prox - exact||`` of the last call),
        ``target`` (``prox_tol * max(1, ||x||)``), ``converged``.
    """
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_prox_child, args=(child, family, p, fraction, repeats), daemon=True)
    proc.start()
    child.close()
    calls, target = [], None
    try:
        if parent.poll(120.0):
            msg = parent.recv()
            target = msg[1]
            while parent.poll(limit):
                msg = parent.recv()
                if msg[0] == "done":
                    break
                calls.append(msg[1:])
    except EOFError:
        pass
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        parent.close()
    out = {"p": p, "fraction": fraction, "limit_s": limit, "target": target}
    if not calls:
        return {**out, "seconds": None, "repeats": 0, "accuracy": None, "converged": None}
    timed = calls if len(calls) == 1 else calls[1:]
    acc = calls[-1][1]
    return {**out, "seconds": float(np.median([c[0] for c in timed])), "repeats": len(timed),
            "accuracy": acc, "converged": bool(acc <= target * (1 + 1e-9))}


def general_prox_series(family, fraction, repeats, limit, max_p, log):
    """``time_general_prox`` over ``GENERAL_PROX_P`` up to ``max_p``, until a call exceeds ``limit``."""
    rows = []
    for p in GENERAL_PROX_P:
        if p > max_p:
            break
        if family == "range" and p > RANGE_MAX_P:
            rows.append({"p": p, "fraction": fraction, "seconds": None, "skipped": "O(p^2) dual norm"})
            break
        row = time_general_prox(family, p, fraction, repeats, limit)
        rows.append(row)
        sec = f"> {limit:g} s" if row["seconds"] is None else f"{row['seconds']:.3g} s"
        log(f"  general prox {family} p={p} t={fraction:g} Omega*: {sec}")
        if row["seconds"] is None or row["seconds"] > limit:
            break
    return rows


def time_norms(p_grid, repeats, prox_limit, prox_max_p, log):
    """Part 1: one entry per family, per operation, per p."""
    out = {"families": {}, "general_prox": {}}
    for family, make in FAMILIES.items():
        entry = {op: {} for op in OPS}
        for p in p_grid:
            norm, x = make(p), _vector(p)
            for op in OPS:
                key = str(p)
                if not callable(getattr(norm, op, None)):
                    entry[op][key] = {"status": "n/a"}
                    continue
                if _range_skipped(family, op, p):
                    gb = p * (p + 1) / 2 * 8 * 5 / 2**30
                    entry[op][key] = {"status": "skipped", "why": f"O(p^2) intervals, ~{gb:.0f} GiB"}
                    continue
                if op == "prox" and family in GENERAL:
                    continue  # filled in from the general-prox series below
                t = PROX_FRACTION * _dual(norm, x) if op == "prox" else None
                sec, n = _time(_call(norm, op, x, t), repeats)
                entry[op][key] = {"status": "ok", "seconds": sec, "repeats": n}
            log(f"  {family} p={p} done")
        out["families"][family] = entry
    for family in GENERAL:
        series = {}
        for fraction in GENERAL_PROX_FRACTIONS:
            series[f"{fraction:g}"] = general_prox_series(family, fraction, repeats, prox_limit, prox_max_p, log)
        out["general_prox"][family] = series
        prox = out["families"][family]["prox"]
        rows = {r["p"]: r for r in series[f"{PROX_FRACTION:g}"]}
        for p in p_grid:
            key, r = str(p), rows.get(p)
            if key in prox:
                continue
            if r is not None and r.get("seconds") is not None:
                prox[key] = {"status": "ok", "seconds": r["seconds"], "repeats": r["repeats"],
                             "converged": r["converged"]}
            elif r is not None:
                prox[key] = {"status": "timeout", "why": f"> {prox_limit:g} s"}
            else:
                prox[key] = {"status": "not run", "why": "a smaller p took too long, or p above the series"}
    return out


# ----------------------------------------------------------------------------- solvers

def _prepare(X, y):
    """``data.prepare`` with bounds from the data (warning silenced), no intercept; centred."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bounds = data.bounds_from_data(X, y, regression=True)
        d = data.prepare(X, y, bounds, classification=False, fit_intercept=False)
    Xd = d.X.toarray() if hasattr(d.X, "toarray") else np.asarray(d.X)
    return np.asfortranarray(Xd - Xd.mean(axis=0)), d.y - d.y.mean()


def bardet(data_dir):
    X, y = data.load_svmlight(Path(data_dir) / "regression" / "bardet.svm.gz", n_features=100)
    X, y = _prepare(X.toarray(), y)
    return "bardet", X, y, [list(range(5 * g, 5 * g + 5)) for g in range(20)]


def birthwt(data_dir):
    import pandas as pd

    df = pd.read_csv(Path(data_dir) / "regression" / "birthwt.csv")
    spec = pd.read_csv(Path(data_dir) / "regression" / "birthwt.groups.csv")
    cols = spec["column"].tolist()
    X, y = _prepare(df[cols].to_numpy(dtype=float), df["bwt"].to_numpy(dtype=float))
    groups = [[cols.index(c) for c in spec.loc[spec["group"] == g, "column"]] for g in spec["group"].unique()]
    return "birthwt", X, y, groups


def synthetic(n=1000, p=5000, size=5, n_active=10, noise=0.1, seed=SEED):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    w = np.zeros(p)
    for g in rng.choice(p // size, n_active, replace=False):
        w[size * g: size * g + size] = rng.standard_normal(size)
    y = X @ w + noise * rng.standard_normal(n)
    X, y = _prepare(X, y)
    return "synthetic", X, y, [list(range(size * g, size * g + size)) for g in range(p // size)]


def alpha_max(X, y, penalty):
    """``max_g ||X_g^T y||_2 / (n d_g)``: the smallest alpha whose group Lasso solution is 0."""
    c = X.T @ y / X.shape[0]
    return float(max(np.linalg.norm(c[g]) / d for g, d in zip(penalty.groups, penalty.weights)))


def _skglm(X, y, groups, weights, alpha, tol):
    from skglm.datafits import QuadraticGroup
    from skglm.penalties import WeightedGroupL2
    from skglm.solvers import GroupBCD
    from skglm.utils.data import grp_converter

    idx, ptr = grp_converter([list(g) for g in groups], X.shape[1])
    solver = GroupBCD(tol=tol, max_iter=1000, max_epochs=10_000, fit_intercept=False)
    return solver.solve(X, y, QuadraticGroup(ptr, idx), WeightedGroupL2(alpha, weights, ptr, idx))[0]


def _celer(X, y, groups, weights, alpha, tol):
    from celer import GroupLasso

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at tight tolerances
        est = GroupLasso(groups=[list(g) for g in groups], alpha=alpha, weights=weights, tol=tol,
                         fit_intercept=False, max_iter=1000, max_epochs=100_000).fit(X, y)
    return est.coef_.copy()


def _timed(f, repeats):
    f()  # warm-up (numba compilation)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        w = f()
        times.append(time.perf_counter() - t0)
    return w, float(np.median(times))


def _external(name, fit, tols, X, y, penalty, ours, repeats):
    """Loosest tolerance of ``tols`` whose solution has our certified gap <= GAP_TOL; timed there."""
    loss = losses.Squared()
    w, tol, reached = None, None, False
    for tol in tols:
        w = fit(tol)
        if solvers.duality_gap(X, y, w, loss, penalty) <= GAP_TOL:
            reached = True
            break
    w, sec = _timed(lambda: fit(tol), repeats)
    obj = solvers.objective(X, y, w, loss, penalty)
    return {"solver": name, "tol": tol, "reached": reached, "seconds": sec, "repeats": repeats, "objective": obj,
            "objective_diff": obj - ours.objective, "relative_diff": (obj - ours.objective) / abs(ours.objective),
            "our_gap": solvers.duality_gap(X, y, w, loss, penalty),
            "coef_diff_inf": float(np.max(np.abs(w - ours.coef))),
            "active_groups": int(sum(np.any(w[g] != 0) for g in penalty.groups))}


def run_solver_problem(name, X, y, groups, repeats, log):
    """Part 2 on one problem: ours, solve (n/a), skglm, celer."""
    n, p = X.shape
    loss = losses.Squared()
    penalty = norms.GroupLasso(groups, p, 1.0)
    amax = alpha_max(X, y, penalty)
    penalty.alpha = ALPHA_RATIO * amax
    entry = {"n": n, "p": p, "n_groups": len(groups), "alpha_max": amax, "alpha": penalty.alpha,
             "solvers": []}
    ours, sec = _timed(lambda: solvers.solve_prox(X, y, loss, penalty, tol=GAP_TOL), repeats)
    entry["solvers"].append({"solver": "dpsparse solve_prox", "tol": GAP_TOL, "seconds": sec, "repeats": repeats,
                             "objective": ours.objective, "objective_diff": 0.0, "relative_diff": 0.0,
                             "our_gap": ours.gap, "coef_diff_inf": 0.0,
                             "active_groups": int(sum(np.any(ours.coef[g] != 0) for g in penalty.groups))})
    log(f"  {name}: solve_prox {sec:.3g} s, gap {ours.gap:.2e}")
    try:
        solvers.solve(X, y, loss, penalty)
        entry["solve"] = "ran"
    except ValueError as exc:
        entry["solve"] = f"n/a: {exc}"
    weights = penalty.weights
    entry["solvers"].append(_external("skglm GroupBCD", lambda tol: _skglm(X, y, groups, weights, penalty.alpha, tol),
                                      SKGLM_TOLS, X, y, penalty, ours, repeats))
    log(f"  {name}: skglm {entry['solvers'][-1]['seconds']:.3g} s")
    try:
        import celer  # noqa: F401
    except ImportError:
        entry["celer"] = "not installed"
    else:
        scale = float(y @ y) / n  # celer stops at gap <= tol * ||y||^2 / n
        tols = tuple(GAP_TOL * 10.0 ** -k / scale for k in range(7))
        entry["solvers"].append(_external("celer GroupLasso", lambda tol: _celer(X, y, groups, weights,
                                                                                 penalty.alpha, tol),
                                          tols, X, y, penalty, ours, repeats))
        log(f"  {name}: celer {entry['solvers'][-1]['seconds']:.3g} s")
    return entry


def time_solvers(data_dir, quick, repeats, log):
    """Part 2 on every problem; a real dataset that cannot be read is reported as missing."""
    out = {}
    for name, load in (("bardet", bardet), ("birthwt", birthwt)):
        try:
            problem = load(data_dir)
        except (OSError, ValueError) as exc:
            log(f"  {name}: skipped, data missing ({exc})")
            out[name] = {"missing": str(exc)}
            continue
        out[name] = run_solver_problem(*problem, repeats, log)
    if not quick:
        problem = synthetic()
        out[problem[0]] = run_solver_problem(*problem, repeats, log)
    return out


# ----------------------------------------------------------------------------- output

def _cell(c):
    if c is None:
        return "-"
    if c["status"] == "ok":
        s = c["seconds"]
        txt = f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"
        if c["repeats"] == 1:
            txt += "*"
        if c.get("converged") is False:
            txt += "!"
        return txt
    if c["status"] == "timeout":
        return c["why"]
    return {"n/a": "n/a", "skipped": "skip (p^2)", "not run": "(> limit)"}[c["status"]]


def format_tables(results):
    p_grid = results["p_grid"]
    lines = [f"Norm operations on x ~ N(0, I_p), alpha = 1, prox step t = {PROX_FRACTION:g} Omega*(x); "
             f"median of {results['repeats']} calls after a warm-up ('*': one call, the warm-up took "
             f"> {SLOW_CALL_S:g} s; '!': prox not converged to its target accuracy; '(> limit)': not run, a "
             f"smaller p exceeded the limit); BLAS 1 thread",
             ""]
    head = f"{'family':<20}{'operation':<15}" + "".join(f"{'p=' + format(p, '.0e'):>14}" for p in p_grid)
    lines += [head, "-" * len(head)]
    for family, entry in results["norms"]["families"].items():
        for op in OPS:
            lines.append(f"{family:<20}{op:<15}" + "".join(f"{_cell(entry[op].get(str(p))):>14}" for p in p_grid))
    lines += ["", f"General prox (min-norm point), forked child killed after {results['prox_limit_s']:g} s: "
                  "time, certified accuracy / target (prox_tol * max(1, ||x||))"]
    for family, series in results["norms"]["general_prox"].items():
        for fraction, rows in series.items():
            cells = []
            for r in rows:
                if r.get("skipped"):
                    cells.append(f"p={r['p']}: skipped ({r['skipped']})")
                elif r["seconds"] is None:
                    cells.append(f"p={r['p']}: > {r['limit_s']:g} s")
                else:
                    cells.append(f"p={r['p']}: {r['seconds']:.3g} s, acc {r['accuracy']:.1e}/{r['target']:.0e}"
                                 + ("" if r["converged"] else " NOT CONVERGED"))
            lines.append(f"  {family}, t = {fraction} Omega*(x): " + "; ".join(cells))
    lines += ["", f"Group Lasso, squared loss, alpha = {ALPHA_RATIO:g} alpha_max (alpha_max = max_g ||X_g^T y||_2 / "
                  "(n sqrt(|g|))), centred data, no intercept; external solvers at the loosest tolerance whose "
                  f"solution has our certified gap <= {GAP_TOL:g}; median of {results['solver_repeats']} runs after "
                  "a warm-up", ""]
    head = (f"{'problem':<34}{'solver':<20}{'tol':>9}{'time (s)':>11}{'F - F_ours':>13}{'relative':>11}"
            f"{'our gap':>11}{'|w-w_ours|inf':>15}{'groups':>8}")
    lines += [head, "-" * len(head)]
    for name, e in results["solvers"].items():
        if "missing" in e:
            lines.append(f"{name:<34}skipped: {e['missing']}")
            continue
        label = f"{name} ({e['n']}x{e['p']}, {e['n_groups']} gr.)"
        for s in e["solvers"]:
            mark = "" if s.get("reached", True) else "  gap 1e-8 NOT reached at any tol"
            lines.append(f"{label:<34}{s['solver']:<20}{s['tol']:>9.0e}{s['seconds']:>11.4f}"
                         f"{s['objective_diff']:>13.2e}{s['relative_diff']:>11.1e}{s['our_gap']:>11.1e}"
                         f"{s['coef_diff_inf']:>15.1e}{s['active_groups']:>8d}{mark}")
            label = ""
        lines.append(f"{'':<34}alpha_max = {e['alpha_max']:.4g}, alpha = {e['alpha']:.4g}; solvers.solve: "
                     f"{e['solve'][:60]}" + (f"; celer: {e['celer']}" if "celer" in e else ""))
    return "\n".join(lines)


def _versions():
    out = {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count()}
    for mod in ("skglm", "celer"):
        try:
            out[mod] = __import__(mod).__version__
        except (ImportError, AttributeError):
            out[mod] = None
    return out


def parse_args(argv=None):
    return bench.parse_benchmark_args(
        __doc__.split("\n\n")[0], REPO_ROOT, "norms.json",
        "p up to 10^4, 3 repeats, general prox up to p = 10^3, no synthetic solver problem", argv, runs=False)


def main(argv=None):
    args = parse_args(argv)
    t0 = time.perf_counter()
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    repeats = REPEATS_QUICK if args.quick else REPEATS
    limit = GENERAL_PROX_LIMIT_QUICK_S if args.quick else GENERAL_PROX_LIMIT_S
    p_grid = P_GRID_QUICK if args.quick else P_GRID
    results = {"quick": args.quick, "p_grid": list(p_grid), "repeats": repeats, "prox_fraction": PROX_FRACTION,
               "prox_limit_s": limit, "blas_threads": BLAS_THREADS, "gap_tol": GAP_TOL, "alpha_ratio": ALPHA_RATIO,
               "solver_repeats": SOLVER_REPEATS_QUICK if args.quick else SOLVER_REPEATS, "versions": _versions()}
    with threadpool_limits(BLAS_THREADS, user_api="blas"):
        log("norms:")
        results["norms"] = time_norms(p_grid, repeats, limit, 10**3 if args.quick else max(p_grid), log)
        log("solvers:")
        results["solvers"] = time_solvers(args.data_dir, args.quick, results["solver_repeats"], log)
    results["wall_s"] = time.perf_counter() - t0
    print(format_tables(results))
    bench.write_json(results, args.out_dir / "norms.json")
    print(f"\nwall time {results['wall_s']:.0f} s; wrote norms.json in {args.out_dir}")


if __name__ == "__main__":
    main()
