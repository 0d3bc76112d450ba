"""Speed: each hot loop as a ratio to one ``X^T v`` on the same matrix, and what a CLI run costs.

Measured side by side in one process, BLAS on one thread (``threadpoolctl``):

- DP-GCD: one iteration (``run`` of the mechanism, its plan excluded, divided by ``T``) on
  news20 (binary, 15,935 x 62,061 sparse) and dorothea (800 x 88,119 sparse), with the
  estimators' default ``clipping_norm="auto"`` (the clipped gradient, and the threshold's
  release once a run); target <= 1.5; beside it, without a target, the same iteration with
  thresholds that clip nothing (an oracle: the plain gradient ``X^T f'(z)``, what the
  per-coordinate clipping adds);
- DP-CD: one epoch (``p`` coordinate updates; every term is clipped whatever the threshold, so the
  estimators' ``clipping_norm="auto"`` adds only its release, one pass a fit, not timed here) on a
  dense 10,000 x 1,000 matrix and on news20; targets <= 3 and <= 10; beside it, without a target,
  the same epoch on the dense
  matrix for the clipped squared loss (an oracle: the loop with a derivative that needs no
  exponential and no division, what the logistic loss's exact derivative adds), and the
  logistic derivative alone on the ``n p`` margins of an epoch (another oracle: the
  exponentials and divisions of an epoch, nothing read from X);
- private Frank-Wolfe: one iteration on the dense matrix and news20; target <= 2;
- DP-SGD: the fixed cost before its first step (planning, i.e. calibration, on a fresh
  process's first call, the median of 5 processes, and on a repeated setting); target <= 0.5 s. The process has
  imported the estimators first, as a user's has before a fit (scikit-learn, which brings much of scipy); the
  first call then pays for dp-accounting's import and the PLD compositions of the calibration;
- ``dpsparse fit`` on the bundled data with ``--no-tune``, split into import, load,
  private fit and the non-private comparison (separate processes, wall time);
- peak memory of a whole fit (``DPLogisticRegression`` at its defaults, whose rule chooses
  DP-GD on the dense design and DP-GCD on the sparse one; 20 iterations) beyond the data
  itself, as a multiple of the size of X, for dense X (p = 100) and sparse X (p = 10,000,
  0.1% nonzero, symmetric bounds) at n = 10^4 .. ``--max-rows`` (default 10^6); targets
  <= 1.1 copies dense, <= 1.5 sparse, at every n. Each n in a fresh process after a warm-up
  fit on 2,000 of its rows (compiled code, imports, caches), traced by ``tracemalloc``
  (numpy's allocations);
- the exact solver's time to a certified gap of 1e-8 beside skglm and celer
  (``benchmarks/exact.py``; target <= 1.2 x the faster);
- with ``--dask-gb G`` (0 skips it; default 1.5 times this machine's memory): every
  mechanism that runs on dask, fitted on a dask array of G GB generated chunk by chunk from
  a seed (p = 100, 2-worker ``LocalCluster``, ``DASK_ITERATIONS`` steps where it takes
  steps): its time as a multiple of one pass that only generates and reads the chunks, and
  the client's peak memory above its level before the fit (psutil, sampled every 50 ms).

Each ratio is measured side by side: ``--repeats`` rounds (default 30), each timing one ``X^T v`` (the best of 3)
and then the loop, and the ratio of the two fastest times kept (on a shared machine a round is slowed by others'
work, which the fastest round sees least; medians of separate series moved by up to 1.5x between runs). Every
matrix is the bounded
design a mechanism sees (``data.prepare``: features on [-1, 1], the intercept column); news20 and
dorothea with their ranges made symmetric (``bench.symmetric_bounds``: divided, zeros kept), so that
the sparse timings measure sparse work (a range not symmetric around 0 centres the features and
makes the coordinate methods read its column over every row, docs/bounds.md).

    python benchmarks/speed.py [--data-dir DIR] [--out-dir DIR] [--repeats K] [--max-rows N] [--dask-gb G]

Writes ``speed.json`` and ``speed.png`` (each ratio beside its target).
"""
from __future__ import annotations

import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits

import bench
import exact
from dpsparse import data, losses, norms
from dpsparse._kernels import _derivative
from dpsparse.mechanisms import get, make_plan
from dpsparse.noise import make_noise

REPO_ROOT = Path(__file__).resolve().parents[1]

TARGETS = {  # (mechanism, matrix) -> target ratio to one X^T v
    ("dp-gcd", "news20"): 1.5, ("dp-gcd", "dorothea"): 1.5,
    ("dp-cd", "dense 10000x1000"): 3.0, ("dp-cd", "news20"): 10.0,
    ("fw", "dense 10000x1000"): 2.0, ("fw", "news20"): 2.0,
}
ITERATIONS = {"dp-gcd": 20, "dp-cd": 2, "fw": 20}  # iterations (epochs for DP-CD) timed per run
SGD_FIXED_TARGET = 0.5


def designs(data_dir):
    """The bounded designs: name -> (BoundedDesign, loss)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (10000, 1000))
    y = np.where(X[:, :10].sum(axis=1) + 0.5 * rng.standard_normal(10000) > 0, 1.0, -1.0)
    out = {"dense 10000x1000": data.prepare(X, y, data.Bounds(-1.0, 1.0).for_features(1000), True)}
    for name, path, relabel in [("news20", "libsvm/news20.multiclass.svm.gz", lambda t: t > 10),
                                ("dorothea", "nips2003/dorothea_train.svm.gz", lambda t: t > 0)]:
        Xs, t = data.load_svmlight(Path(data_dir) / path)
        bounds = bench.symmetric_bounds(bench.a_priori_bounds(name).for_features(Xs.shape[1]))
        out[name] = data.prepare(Xs, np.where(relabel(t), 1.0, -1.0), bounds, True)
    return out


def _best_time(fn, repeats):
    """The fastest of ``repeats`` wall times of ``fn()``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(min(times))


def matvec_time(design, repeats):
    v = np.random.default_rng(0).standard_normal(design.n)
    return _best_time(lambda: design.X.T @ v, max(repeats, 5))


def _side_by_side(design, fn, repeats, per_call=1):
    """The fastest time of ``fn()`` over ``per_call`` (an iteration's share) divided by the fastest ``X^T v`` on the
    same matrix, timed in alternation: ``repeats`` rounds of (the best of 3 ``X^T v``, then ``fn()``)."""
    v = np.random.default_rng(0).standard_normal(design.n)
    matvec, loop = [], []
    for _ in range(repeats):
        matvec.append(_best_time(lambda: design.X.T @ v, 3))
        loop.append(_best_time(fn, 1) / per_call)
    return min(loop) / min(matvec)


ORACLES = {"dp-cd on dense, squared loss": ("dp-cd", "dense 10000x1000", losses.Squared(clip=1.0), {}),
           "dp-gcd on news20, no clipping": ("dp-gcd", "news20", None, {"clipping_norm": None}),
           "dp-gcd on dorothea, no clipping": ("dp-gcd", "dorothea", None, {"clipping_norm": None})}
"""Loops timed without a target: name -> (mechanism, matrix, loss, options beyond ``LOOP_OPTIONS``)."""

LOOP_OPTIONS = {"dp-gcd": {"clipping_norm": "auto"}, "dp-cd": {}, "fw": {}}
"""The options of each timed loop: DP-GCD's clipping as the estimators' default for the logistic loss (its clipped
gradient is another loop than the plain one; DP-CD's epoch is the same loop either way)."""


@njit(fastmath={"reassoc", "contract"}, error_model="numpy")  # not cached: numba's cache of a function in this
def _derivative_sums(z, y, times):                              # file would not see a change to _kernels.py
    """``sum_i f'(z_i + t, y_i)`` of the logistic loss for ``t`` = 0 .. ``times - 1`` (times 1e-12): the derivative's
    arithmetic over ``times`` passes of the margins, as the kernel of the coordinate methods computes it."""
    s = 0.0
    for t in range(times):
        for i in range(z.shape[0]):
            s += _derivative(0, 0.0, z[i] + t * 1e-12, y[i])
    return s


def derivative_ratio(design, repeats):
    """Time of the logistic derivative on the margins of one DP-CD epoch (``n`` values, ``p`` times) over one
    ``X^T v``."""
    z = np.random.default_rng(0).standard_normal(design.n)
    y = np.asarray(design.y, dtype=float)
    _derivative_sums(z, y, 1)  # compiled
    return _side_by_side(design, lambda: _derivative_sums(z, y, design.p), repeats)


def loop_ratio(name, design, repeats, loss=None, options=None):
    """Time of one iteration (DP-CD: one epoch) of ``name``'s run for ``loss`` (default logistic) with
    ``LOOP_OPTIONS`` updated by ``options``, over one ``X^T v``."""
    mech = get(name)
    loss = losses.Logistic() if loss is None else loss
    weights = np.r_[np.ones(design.p - 1), 0.0]
    penalty = norms.L1(1e-3, weights=weights)
    T = ITERATIONS[name]
    opts = {"n_iter": T, **LOOP_OPTIONS[name], **(options or {})}
    plan = make_plan(mech, design, loss, penalty, 1.0, 1.0 / design.n**2, None,
                     {k: v for k, v in opts.items() if v is not None})
    mech.run(design, plan, make_noise(np.random.default_rng(0)), None)  # warm-up (compilation, caches)
    return _side_by_side(design, lambda: mech.run(design, plan, make_noise(np.random.default_rng(1)), None), repeats,
                         T)


SGD_PROCESSES = 5
"""Fresh processes timed for DP-SGD's first plan: one process's time moves by up to 1.8x on a busy host."""


def sgd_fixed_cost():
    """Seconds of DP-SGD's plan (its calibration) in a fresh process, then for the same setting again: the median
    over ``SGD_PROCESSES`` processes, and the range of the first."""
    runs = np.array([_sgd_fixed_cost_once() for _ in range(SGD_PROCESSES)])
    return float(np.median(runs[:, 0])), float(np.median(runs[:, 1])), (float(runs[:, 0].min()),
                                                                          float(runs[:, 0].max()))


def _sgd_fixed_cost_once():
    """Seconds of DP-SGD's plan in one fresh process, then for the same setting again."""
    code = ("import time, warnings, numpy as np; warnings.simplefilter('ignore'); import dpsparse.estimators;"
            "from dpsparse import data, losses, norms; from dpsparse.mechanisms import get, make_plan;"
            "rng = np.random.default_rng(0); X = rng.uniform(-1, 1, (20000, 50)); y = np.sign(X[:, 0]);"
            "d = data.prepare(X, y, data.Bounds(-1.0, 1.0).for_features(50), True);"
            "m = get('dp-sgd'); pen = norms.L1(1e-3, weights=np.r_[np.ones(50), 0.0]);"
            "t = time.perf_counter(); make_plan(m, d, losses.Logistic(), pen, 1.0, 1e-9, None, {});"
            "a = time.perf_counter() - t; t = time.perf_counter();"
            "make_plan(m, d, losses.Logistic(), pen, 1.0, 1e-9, None, {}); b = time.perf_counter() - t;"
            "print(a, b)")
    first, again = map(float, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                             check=True).stdout.split())
    return first, again


def cli_split(out_dir):
    """Wall seconds of ``dpsparse fit --no-tune`` on the bundled data: the CLI's import (what ``--help`` costs), the
    estimators' (scikit-learn, which the fit needs), load, private fit, reference."""
    code = ("import time; t0 = time.perf_counter(); import warnings; warnings.simplefilter('ignore');"
            "import dpsparse.cli as c; from dpsparse import data; t1 = time.perf_counter();"
            "from dpsparse import DPLogisticRegression; t2 = time.perf_counter();"
            "X, y, b, _ = data.load_bundled('breast_cancer'); t3 = time.perf_counter();"
            "e = DPLogisticRegression(bounds=b).fit(X, y);"
            "t4 = time.perf_counter(); c._reference(e, X, y); t5 = time.perf_counter();"
            "print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)")
    parts = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return dict(zip(["import of the CLI", "import of the estimators", "load", "private fit",
                     "non-private comparison"], map(float, parts)))


MEMORY_TARGETS = {"dense": 1.1, "sparse": 1.5}  # extra copies of X in a whole fit, at every n

_MEMORY_CODE = """
import sys, tracemalloc, warnings
import numpy as np, scipy.sparse as sp
warnings.simplefilter("ignore")
from dpsparse import DPLogisticRegression, data
n, kind = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
if kind == "dense":
    X = rng.uniform(-1.0, 1.0, (n, 100))
    size = X.nbytes
else:
    cols = (rng.integers(0, 1000, (n, 10)) + 1000 * np.arange(10)).ravel()  # 10 distinct sorted columns a row
    X = sp.csr_matrix((rng.uniform(-1, 1, 10 * n), cols, np.arange(0, 10 * n + 1, 10)), shape=(n, 10000))
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
y = np.where(np.asarray(X[:, [0]].todense() if sp.issparse(X) else X[:, [0]]).ravel()
             + 0.1 * rng.standard_normal(n) > 0, 1, 0)
est = DPLogisticRegression(bounds=data.Bounds(-1.0, 1.0), classes=[0, 1], max_iter=20, random_state=0)
est.fit(X[:2000], y[:2000])  # compiled code, imports and caches out of the measure: the rule's choice as at n
import opendp.prelude  # what the private quantiles import on first use (not at n = 2000): modules, not data
tracemalloc.start()
est.fit(X, y)
print(tracemalloc.get_traced_memory()[1] / size)
"""


def memory_peaks(max_rows):
    """Peak traced memory of one fit, beyond X, as a multiple of X's size: kind -> [(n, copies)]."""
    out = {}
    for kind in ("dense", "sparse"):
        out[kind] = []
        n = 10**4
        while n <= max_rows:
            res = subprocess.run([sys.executable, "-c", _MEMORY_CODE, str(n), kind], capture_output=True, text=True,
                                 check=True)
            out[kind].append((n, float(res.stdout.split()[-1])))
            n *= 10
    return out


DASK_CHUNK_ROWS, DASK_P = 250_000, 100


def _chunk(block_info=None):
    """One chunk of the generated dataset: uniform on [-1, 1], seeded by its index."""
    i = block_info[None]["chunk-location"][0]
    return np.random.default_rng(1000 + i).uniform(-1.0, 1.0, (DASK_CHUNK_ROWS, DASK_P))


def machine_gb():
    import os

    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9


DASK_ITERATIONS = 2
"""Steps of each iterative mechanism in the dask fits (the passes of a fit grow with them; the ratio per step is
what scales)."""


class _PeakRSS:
    """The client process's peak resident memory above its level at entry, sampled every 50 ms (psutil)."""

    def __enter__(self):
        import threading

        import psutil

        self._process, self._stop = psutil.Process(), threading.Event()
        self.base = self.peak = self._process.memory_info().rss
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self._process.memory_info().rss)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.gb = (self.peak - self.base) / 1e9


def _dask_estimator(name, mechanism):
    """The estimator of one dask fit: logistic regression (AdaSSP: least squares), few steps, public bounds with
    the row-norm bound of the box, which keeps the declared ranges as they are (tightening them privately, the
    default where affordable, adds one pass that counts every feature's values on the grid: docs/scale.md)."""
    from dpsparse import DPLasso, DPLogisticRegression

    box = dict(feature_low=-1.0, feature_high=1.0, row_norm=float(np.sqrt(DASK_P)))
    kw = dict(mechanism=name, random_state=0)
    if "n_iter" in mechanism.option_names:
        kw["max_iter"] = DASK_ITERATIONS
    if name == "dp-cd":  # one pass a coordinate update: 10 updates an epoch, not p
        kw["mechanism_options"] = {"updates_per_epoch": 10}
    if name == "adassp":
        return DPLasso(bounds=data.Bounds(label_low=-1.0, label_high=1.0, **box), **kw), False
    return DPLogisticRegression(bounds=data.Bounds(**box), classes=[0, 1], **kw), True


def dask_fits(gb):
    """Every mechanism that runs on dask (``Mechanism.runs_on_dask`` at its defaults) fitted on a ``gb`` GB dask
    array generated chunk by chunk (2-worker ``LocalCluster``): its time as a multiple of one pass that only
    generates and reads the chunks, and the client's peak memory above its level before the fit."""
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    from dpsparse.mechanisms import REGISTRY

    k = int(np.ceil(gb * 1e9 / (DASK_CHUNK_ROWS * DASK_P * 8)))
    X = da.map_blocks(_chunk, dtype=float, chunks=((DASK_CHUNK_ROWS,) * k, (DASK_P,)))
    rng = np.random.default_rng(0)  # labels: the client holds them
    labels = {True: rng.integers(0, 2, k * DASK_CHUNK_ROWS), False: rng.uniform(-1.0, 1.0, k * DASK_CHUNK_ROWS)}
    out = {"gb": k * DASK_CHUNK_ROWS * DASK_P * 8 / 1e9, "machine_gb": machine_gb(), "rows": k * DASK_CHUNK_ROWS,
           "chunks": k, "steps": DASK_ITERATIONS, "fits": {}}
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster):
        t0 = time.perf_counter()
        float(X.sum().compute())
        out["read_pass_s"] = time.perf_counter() - t0
        for name, mechanism in REGISTRY.items():
            if not mechanism.runs_on_dask(mechanism.resolve_options({})):
                out["fits"][name] = None
                continue
            est, classification = _dask_estimator(name, mechanism)
            with _PeakRSS() as rss, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                est.fit(X, labels[classification])
                seconds = time.perf_counter() - t0
            out["fits"][name] = {"s": seconds, "read_passes": seconds / out["read_pass_s"], "client_peak_gb": rss.gb}
            print(f"  dask {name}: {seconds:.0f} s", flush=True)
    return out


def run(data_dir, repeats, max_rows=10**6, dask_gb=None):
    out = {"ratios": {}, "matvec_s": {}}
    with threadpool_limits(1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = designs(data_dir)
        for (mech, matrix) in TARGETS:
            design = ds[matrix]
            out["matvec_s"].setdefault(matrix, matvec_time(design, repeats))
            out["ratios"][f"{mech} on {matrix}"] = {"ratio": loop_ratio(mech, design, repeats),
                                                    "target": TARGETS[(mech, matrix)]}
        for name, (mech, matrix, loss, options) in ORACLES.items():
            out["ratios"][name] = {"ratio": loop_ratio(mech, ds[matrix], repeats, loss, options), "target": None}
        out["ratios"]["logistic derivative, one epoch"] = {
            "ratio": derivative_ratio(ds["dense 10000x1000"], repeats), "target": None}
    first, again, spread = sgd_fixed_cost()
    out["dp-sgd fixed cost"] = {"first_s": first, "first_range_s": spread, "repeated_s": again,
                                "target_s": SGD_FIXED_TARGET}
    out["cli"] = cli_split(None)
    out["memory"] = {"target_copies": MEMORY_TARGETS, **memory_peaks(max_rows)}
    out["exact"] = exact.run(data_dir, log=lambda m: None)
    gb = 1.5 * machine_gb() if dask_gb is None else dask_gb
    if gb > 0:
        out["dask"] = dask_fits(gb)
    return out


def table(res):
    lines = [f"{'loop':<32}{'ratio to X^T v':>15}{'target':>8}  met"]
    for k, r in res["ratios"].items():
        if r["target"] is None:
            lines.append(f"{k:<32}{r['ratio']:>15.2f}{'-':>8}  (oracle, no target)")
            continue
        lines.append(f"{k:<32}{r['ratio']:>15.2f}{r['target']:>8.1f}  {'yes' if r['ratio'] <= r['target'] else 'NO'}")
    s = res["dp-sgd fixed cost"]
    lines.append(f"{'dp-sgd fixed cost (s), 1st':<32}{s['first_s']:>15.2f}{s['target_s']:>8.1f}  "
                 f"{'yes' if s['first_s'] <= s['target_s'] else 'NO'}   (median of {SGD_PROCESSES} fresh processes, "
                 f"{s['first_range_s'][0]:.2f}-{s['first_range_s'][1]:.2f})")
    lines.append(f"{'dp-sgd fixed cost (s), again':<32}{s['repeated_s']:>15.3f}{s['target_s']:>8.1f}  "
                 f"{'yes' if s['repeated_s'] <= s['target_s'] else 'NO'}")
    lines.append("dpsparse fit --no-tune (bundled data), seconds: "
                 + ", ".join(f"{k} {v:.2f}" for k, v in res["cli"].items()))
    lines.extend(memory_lines(res["memory"]))
    if "dask" in res:
        lines.append(dask_table(res["dask"]))
    lines.append(exact.table(res["exact"]))
    lines.append("one X^T v (ms): " + ", ".join(f"{k} {1e3 * v:.2f}" for k, v in res["matvec_s"].items()))
    return "\n".join(lines)


def memory_lines(mem):
    """One line per kind of X and n: the peak extra memory of a fit (copies of X) beside its target."""
    lines = []
    for kind in ("dense", "sparse"):
        target = mem["target_copies"][kind]
        for n, copies in mem[kind]:
            lines.append(f"{f'memory, {kind}, n = {n:.0e}':<32}{copies:>15.2f}{target:>8.1f}  "
                         f"{'yes' if copies <= target else 'NO'}   (peak extra copies of X)")
    return lines


def dask_table(d):
    """The dask fits: seconds, read-only passes and the client's peak memory of each mechanism."""
    lines = [f"dask on {d['gb']:.1f} GB ({d['rows']:.2e} rows x {DASK_P}, {d['chunks']} chunks; machine "
             f"{d['machine_gb']:.1f} GB), {d['steps']} steps where a mechanism takes steps; one read-only pass "
             f"{d['read_pass_s']:.1f} s",
             f"{'mechanism':<16}{'fit s':>9}{'read passes':>13}{'client peak GB':>16}"]
    for name, f in d["fits"].items():
        lines.append(f"{name:<16}" + ("   needs the data in memory" if f is None else
                                      f"{f['s']:>9.1f}{f['read_passes']:>13.1f}{f['client_peak_gb']:>16.2f}"))
    return "\n".join(lines)


def plot(res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(res["ratios"])
    ratios = [res["ratios"][k]["ratio"] for k in names]
    targets = [res["ratios"][k]["target"] for k in names]
    fig, ax = plt.subplots(figsize=(8, 4))
    x = np.arange(len(names))
    colors = ["tab:grey" if t is None else "tab:green" if r <= t else "tab:red" for r, t in zip(ratios, targets)]
    ax.bar(x, ratios, 0.6, color=colors, label="measured (grey: an oracle, no target)")
    aimed = [i for i, t in enumerate(targets) if t is not None]
    ax.scatter(x[aimed], [targets[i] for i in aimed], marker="_", s=600, color="black", label="target", zorder=3)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")  # one X^T v: a loop can cost less (it reads X once or less)
    for xi, r, t in zip(x, ratios, targets):  # above the bar, and above its target's mark where that is close
        ax.annotate(f"{r:.2f}", (xi, r if t is None or not r < t < 1.25 * r else t), xytext=(0, 3),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylim(bottom=min(0.5, 0.8 * min(ratios)))
    ax.set_xticks(x, names, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("time / one X^T v")
    ax.legend(fontsize=8)
    bench.save_figure(fig, path, "hot loops against one X^T v (green: target met)", fontsize=10)


def main(argv):
    parser = bench.benchmark_parser(__doc__.strip().splitlines()[0], REPO_ROOT, "speed.json and speed.png")
    parser.add_argument("--repeats", type=int, default=30,
                        help="rounds of side-by-side timings per loop, the fastest kept (default 30)")
    parser.add_argument("--max-rows", type=float, default=1e6, help="largest n of the memory curve (default 1e6)")
    parser.add_argument("--dask-gb", type=float, default=None,
                        help="size of the dask fit in GB (default: 1.5 x the machine's memory; 0 skips it)")
    args = parser.parse_args(argv)
    data_dir, out_dir, gb = args.data_dir, args.out_dir, args.dask_gb
    res = run(data_dir, args.repeats, int(args.max_rows), gb)
    print(table(res))
    bench.write_json(res, out_dir / "speed.json")
    plot(res, out_dir / "speed.png")


if __name__ == "__main__":
    main(sys.argv[1:])
