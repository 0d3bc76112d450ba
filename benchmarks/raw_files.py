"""Every raw file of ../shared/data through ``dpsparse fit``, as README shows it.

For each file, the command of README's table (the file, and its schema or public bounds
from ``examples/``; none for cpusmall, bardet and riboflavin, whose features have no
a-priori range: their bounds are bought privately with 10% of the budget, or the fit is
refused when the records are too few for that) runs with the defaults (the public rule's
single fit within epsilon = 1, delta = 1/n^2) and ``--diagnostics``, and the table prints
the held-out metric of the private model (trained on 75 % of the records) beside the
constant predictor and the non-private optimum, measured without noise for the data
holder, whether the accounting holds (``accounted``: the guarantee of the same command with secret noise; the
benchmark fixes the noise's seed, which voids the guarantee of these particular fits), and the wall time.

    python benchmarks/raw_files.py [--data-dir DIR] [--out-dir DIR] [--seed S]

Writes ``raw_files.json`` and ``raw_files.png`` (private, constant and non-private per
file) in the output folder (default ``benchmarks/results``).
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
import time
from pathlib import Path

import bench
from dpsparse.cli import main

REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = REPO_ROOT / "examples"

BINARY = "--classes=-1,1"  # the public label set of the binary libsvm files (their descriptions say binary, +-1)

# name -> (file under the data folder, the options of README's command)
COMMANDS = {
    "adult": ("adult/adult.data.gz", ["--schema", str(EXAMPLES / "adult.schema.json")]),
    "birthwt": ("regression/birthwt.csv", ["--schema", str(EXAMPLES / "birthwt.schema.json")]),
    "cadata": ("libsvm/cadata.svm.gz", ["--bounds", str(EXAMPLES / "bounds" / "cadata.json")]),
    "madelon": ("libsvm/madelon.svm.gz", ["--bounds", str(EXAMPLES / "bounds" / "madelon.json"), BINARY]),
    "leukemia": ("libsvm/leu.svm.gz", ["--bounds", str(EXAMPLES / "bounds" / "leukemia.json"), BINARY]),
    "colon-cancer": ("libsvm/colon-cancer.svm.gz",
                     ["--bounds", str(EXAMPLES / "bounds" / "colon-cancer.json"), BINARY]),
    "gisette": ("libsvm/gisette_scale.t.svm.gz", ["--bounds", str(EXAMPLES / "bounds" / "gisette.json"), BINARY]),
    "dorothea": ("nips2003/dorothea_train.svm.gz", ["--bounds", str(EXAMPLES / "bounds" / "dorothea.json"), BINARY]),
    "news20": ("libsvm/news20.multiclass.svm.gz", ["--bounds", str(EXAMPLES / "bounds" / "news20.json"),
                                                   "--classes", ",".join(str(k) for k in range(1, 21))]),
    "mushrooms": ("libsvm/mushrooms.svm.gz", ["--bounds", str(EXAMPLES / "bounds" / "mushrooms.json"), BINARY]),
    "phishing": ("libsvm/phishing.svm.gz", ["--bounds", str(EXAMPLES / "bounds" / "phishing.json"), BINARY]),
    "cpusmall": ("libsvm/cpusmall.svm.gz", ["--n-features", "12", "--loss", "squared"]),
    "bardet": ("regression/bardet.svm.gz", ["--n-features", "100", "--loss", "squared"]),
    "riboflavin": ("regression/riboflavin.svm.gz", ["--n-features", "4088", "--loss", "squared"]),
}


def run_one(data_dir, name, out_dir, seed):
    """One README command, in process; its JSON result and wall time."""
    path, options = COMMANDS[name]
    argv = ["fit", "--data", str(Path(data_dir) / path), *options, "--json", "--diagnostics",
            "--out", str(Path(out_dir) / f"{name}.model.json")]
    if seed is not None:
        argv += ["--seed", str(seed)]
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    seconds = time.perf_counter() - start
    if rc != 0:
        lines = err.getvalue().strip().splitlines()  # the error's first line (the remedies follow on their own)
        return {"error": next((line for line in lines if line.startswith("dpsparse fit: error:")), lines[-1]),
                "seconds": seconds}
    res = json.loads(out.getvalue())
    diag, released = res["diagnostics"], res["released"]  # held-out figures: the data holder's diagnostics
    key = "accuracy" if "accuracy" in diag["private"] else "r2"
    non_private = diag["non_private"][key] if isinstance(diag["non_private"], dict) else None
    return {"metric": key, "private": diag["private"][key], "constant": diag["constant"][key],
            "non_private": non_private, "n": diag["n_train"] + diag["n_test"],
            "p": released["support"]["features"], "accounted": res["privacy_report"]["accounting_holds"],
            "support": released["support"]["size"], "seconds": seconds,
            "warnings": released["warnings"] + res["data_holder_warnings"]}


def table(results):
    lines = [f"{'data':<13}{'n':>7}{'p':>7}  {'metric':<9}{'private':>8}{'constant':>9}{'non-priv':>9}"
             f"  {'accounted':<10}{'time':>7}"]
    for name, r in results.items():
        if "error" in r:
            lines.append(f"{name:<13}  refused: {r['error'].removeprefix('dpsparse fit: error: ').split(';')[0]}")
            continue
        nonpriv = "n/a" if r["non_private"] is None else f"{r['non_private']:.3f}"
        lines.append(f"{name:<13}{r['n']:>7}{r['p']:>7}  {r['metric']:<9}{r['private']:>8.3f}{r['constant']:>9.3f}"
                     f"{nonpriv:>9}  {'yes' if r['accounted'] else 'NO':<10}{r['seconds']:>6.1f}s")
    return "\n".join(lines)


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = [k for k, r in results.items() if "error" not in r]
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(10, 4))
    for offset, key, colour in [(-0.27, "private", "tab:red"), (0.0, "constant", "gray"),
                                (0.27, "non_private", "tab:blue")]:
        values = [results[k][key] if results[k][key] is not None else np.nan for k in names]
        ax.bar(x + offset, np.maximum(values, -0.5), 0.27, color=colour, label=key.replace("_", "-"))
    ax.set_xticks(x, [f"{k}\n({results[k]['metric']})" + ("" if results[k]["accounted"] else "\nNO guarantee")
                      for k in names], fontsize=7)
    ax.set_ylim(-0.5, 1.0)
    ax.axhline(0, color="black", lw=0.5)
    ax.set_ylabel("held-out accuracy or R^2 (cut at -0.5)")
    ax.legend(fontsize=8)
    bench.save_figure(fig, path, "dpsparse fit on every raw file, epsilon = 1 (defaults; held-out diagnostics, "
                                 "not private)",
                      fontsize=10)


def main_cli(argv):
    parser = bench.benchmark_parser(__doc__.strip().splitlines()[0], REPO_ROOT, "raw_files.json and raw_files.png")
    parser.add_argument("--seed", type=int, default=0, help="noise seed of every fit (default 0)")
    args = parser.parse_args(argv)
    data_dir, out_dir, seed = args.data_dir, args.out_dir, args.seed
    out_dir.mkdir(parents=True, exist_ok=True)
    results = {}
    for name in COMMANDS:
        results[name] = run_one(data_dir, name, out_dir, seed)
        print(f"{name}: done in {results[name]['seconds']:.1f}s", file=sys.stderr, flush=True)
    print(table(results))
    bench.write_json(results, out_dir / "raw_files.json")
    plot(results, out_dir / "raw_files.png")


if __name__ == "__main__":
    main_cli(sys.argv[1:])
