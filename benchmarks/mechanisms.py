"""DP-GCD, DP-CD, DP-SGD and the one-pass SGD: relative error against epsilon.

Problems (delta=1/n^2, as in ``benchmarks/dp_gcd.py``): madelon (L2-logistic, a-priori
public bounds), synthetic logistic 1000x100 with lognormal true weights (L2), synthetic
sparse Lasso 1000x1000 with 10 nonzeros, cadata (Lasso, a-priori public bounds). For each
epsilon in {0.1, 0.5, 1, 2, 5}, every mechanism runs with one fixed iteration count per
problem (``bench.MECHANISM_ITERS``, printed in the table header) under
``calibration="tight"`` and, for DP-GCD and DP-CD, ``calibration="paper"`` (DP-SGD and
the one-pass SGD have none: "n/a"). All mechanisms fit the problem's private datafit
(the clipped squared loss for the Lasso problems) with its penalty; the one-pass SGD
projects on the L2 ball of public radius ``bench.ONE_PASS_RADIUS``; the relative error
(F(w)-F*)/(F(0)-F*) is measured on the same objective for all of them. The noise scales
of the two calibrations are set side by side. The experiment code is in
``benchmarks/bench.py``.

Usage::

    python benchmarks/mechanisms.py [--runs 10] [--quick] [--data-dir DIR] [--out-dir DIR]

Prints the tables and writes ``mechanisms.json`` and ``mechanisms.png`` in ``--out-dir``
(default ``benchmarks/results``). Real data is read from ``--data-dir`` (default
``../shared/data`` relative to the repository root). ``--quick``: 2 runs, epsilon in
{0.5, 5}.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import bench

REPO_ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv=None):
    return bench.parse_benchmark_args(__doc__.split("\n\n")[0], REPO_ROOT, "mechanisms.json and mechanisms.png",
                                      "smoke test: 2 runs, epsilon in {0.5, 5}", argv)


def main(argv=None):
    args = parse_args(argv)
    t0 = time.perf_counter()
    epsilons = bench.MECHANISM_QUICK_EPSILONS if args.quick else bench.MECHANISM_EPSILONS
    problems = bench.make_problems(args.data_dir, quick=True)  # the iteration grids are not used here
    for problem in problems:
        clipped = ", ".join(f"{k}={v}" for k, v in problem.clipped().items())
        print(f"{problem.name}: {problem.description}; clipped {clipped}", file=sys.stderr)
    results = bench.run_mechanisms(problems, epsilons, args.runs,
                                   log=lambda msg: print(msg, file=sys.stderr, flush=True))
    results["wall_s"] = time.perf_counter() - t0
    results["anomalies"] = bench.noise_anomalies(results)
    print(bench.format_mechanisms_table(results))
    if results["anomalies"]:
        print("\nTo check (tight noise above paper noise, or an error growing with epsilon):")
        for line in results["anomalies"]:
            print(f"  {line}")
    bench.write_json(results, args.out_dir / "mechanisms.json")
    bench.plot_mechanisms(results, args.out_dir / "mechanisms.png")
    print(f"\nwall time {results['wall_s']:.0f} s; wrote mechanisms.json and mechanisms.png in {args.out_dir}")


if __name__ == "__main__":
    main()
