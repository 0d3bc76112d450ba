"""DP-GCD on the setups of Mangold et al. 2023: relative error against passes over the data, and timing.

Problems (epsilon=1, delta=1/n^2): madelon (L2-logistic, a-priori public bounds),
synthetic logistic 1000x100 with lognormal true weights (L2), synthetic sparse Lasso
1000x1000 with 10 nonzeros, cadata (Lasso, a-priori public bounds). For each iteration
budget T (one pass over the data per iteration) the mean and spread of the relative error
(F(w)-F*)/(F(0)-F*) over the runs, with the tight and the paper's noise calibration; the
time of one iteration beside that of one X^T v. The experiment code is in
``benchmarks/bench.py``.

Source: Mangold, Bellet, Salmon & Tommasi, "High-Dimensional Private Empirical Risk
Minimization by Greedy Coordinate Descent", AISTATS 2023.

Usage::

    python benchmarks/dp_gcd.py [--runs 10] [--quick] [--data-dir DIR] [--out-dir DIR]

Prints a table and writes ``dp_gcd.json`` and ``dp_gcd.png`` in ``--out-dir``
(default ``benchmarks/results``). Real data is read from ``--data-dir`` (default
``../shared/data`` relative to the repository root).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import bench

REPO_ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv=None):
    return bench.parse_benchmark_args(__doc__.split("\n\n")[0], REPO_ROOT, "dp_gcd.json and dp_gcd.png",
                                      "smoke test: 2 runs and short iteration grids", argv)


def main(argv=None):
    args = parse_args(argv)
    t0 = time.perf_counter()
    problems = bench.make_problems(args.data_dir, quick=args.quick)
    for problem in problems:
        clipped = ", ".join(f"{k}={v}" for k, v in problem.clipped().items())
        print(f"{problem.name}: {problem.description}; clipped {clipped}", file=sys.stderr)
    results = bench.run(problems, args.runs, log=lambda msg: print(msg, file=sys.stderr, flush=True))
    results["wall_s"] = time.perf_counter() - t0
    print(bench.format_table(results))
    bench.write_json(results, args.out_dir / "dp_gcd.json")
    bench.plot(results, args.out_dir / "dp_gcd.png")
    print(f"\nwall time {results['wall_s']:.0f} s; wrote dp_gcd.json and dp_gcd.png in {args.out_dir}")


if __name__ == "__main__":
    main()
