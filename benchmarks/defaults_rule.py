"""The public rule behind ``mechanism="auto"``, measured on synthetic families only.

The defaults of the estimators (``dpsparse.mechanisms.auto``) must come from public
quantities (n, p, epsilon, the loss), and the real datasets of the other benchmarks must
stay an honest test of them. So the knobs of the rule are chosen here, on synthetic
problems that vary what a user's data vary: the number of records, the number of features,
how many of them matter, how strong the signal is, and how much of the declared range the
features fill (published ranges are often much wider than the data).

Two studies (``--study``):

- ``logistic``: DP-GCD's iteration count T and per-coordinate clipping threshold, on
  logistic problems; the table gives, for each (n epsilon, p), the held-out accuracy of
  every grid point, averaged over the families and seeds, and the best point.
- ``least-squares``: the two-stage rule (selection share, the selection's label clip, the
  second mechanism) on planted sparse regressions.
- ``start``: with automatic clipping, DP-GCD's steps and its warm start (the constant
  predictor's intercept first), on balanced and imbalanced classes; ``start-wide`` the
  steps at p = 1000.
- ``floor``: where DP-GCD and DP-GD stop beating the constant predictor, as a function of
  ``n epsilon / log p`` (n from 50 to 400, p from 30 to 3000, epsilon 0.1 and 1; a sparse
  family with imbalanced classes and a dense one).
- ``floor-regression``: the same for least squares (the rule's learner against the
  constant predictor's noisy mean, planted 5-sparse regressions, n 300-3000).
- ``steps``: DP-GCD's steps with automatic clipping against ``n epsilon / log p`` (epsilon
  0.1-1, n 2000-20000, p 100 and 1000).
- ``logistic-mechanism``: DP-GCD against DP-GD with its automatic clipping norm (50, 100, 200 steps) for the
  logistic loss, by the number of features and ``n epsilon / log p``; ``floor`` compares both to the constant.
- ``start-imbalanced``: the warm start again, at epsilon 0.1-1 on imbalanced classes and more features.
- ``steps-wide`` and ``steps-band``: DP-GCD's steps on more than ``auto.FEW`` features by ``n epsilon / log p``
  (``auto.GCD_BAND``); ``gcd-few-steps``: fewer (10, 20) below it, with a planted balanced family.
- ``floor-planted``: the default beside the constant on 100 draws of the utility benchmark's planted logistic
  problem (n = p = 1000) near the logistic floor.
- ``large``: the rule's steps against half and twice as many at n = 10^5 and 10^6 (the logistic and
  least-squares rules).
- ``bounds-share``: the budget's share of the private preprocessing (``bounds_share``).
- ``slots``: the private bounds' selections over the grid points alone or with each standing for the open interval
  next to it, on features and labels near and far from zero beside their spread.
- ``hinge``: the mechanism for the hinge loss (the one-pass SGD, DP-GD, DP-SGD), as ``logistic-mechanism``.
- ``fw-radius``: the radius of private Frank-Wolfe's ball when ``fw`` is named with nothing else set, for the
  logistic, hinge and squared losses (``fw.default_radius``).
- ``iht-step``: dp-iht's step and iterations when it is named with nothing else set (``dp_iht.STEPS``).
- ``alpha`` and ``alpha-regression``: the penalty strength under the logistic and least-squares rules
  (``auto.penalty_strength``), by the number of features and ``n epsilon / log p``.
- ``few-features``: the mechanism for least squares on at most ``auto.SPARSITY`` features
  (no selection), the features filling 30 % or all of their declared range (the column
  ``n=... p=...`` gives the fill there).

Every fit runs with ``epsilon`` and the public bounds only, the knob under study set; the
constant predictor and the non-private model are printed beside. Results:
``benchmarks/results/defaults_rule_<study>.json`` and a table on stdout.

    python benchmarks/defaults_rule.py --study logistic          # about 10 minutes on 2 cores
    python benchmarks/defaults_rule.py --study least-squares --quick
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import r2_score

from dpsparse import DPLasso, DPLinearSVC, DPLogisticRegression, losses, norms
from dpsparse.data import Bounds
from dpsparse.estimators import _fill_sum
from dpsparse.mechanisms import auto

RESULTS = Path(__file__).parent / "results"


def logistic_family(n, p, k, fill, seed, n_test=2000, offset=0.0, factor=False):
    """Features in [-1, 1]: correlated Gaussians squeezed into ``fill`` of the range around a random centre (a
    published range wider than the data); ``k`` true weights (k = p: dense, decaying), labels from the logistic
    model with a margin of standard deviation 4 (a Bayes accuracy near 0.85). ``factor``: every feature is a noisy
    copy of one latent factor (loading 0.8, random sign) and the label follows the factor (measurements of one
    object, as in breast cancer's cell nuclei or gisette's pixels), ``k`` unused."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n + n_test, p))
    if factor:
        f = rng.standard_normal(n + n_test)
        Z = 0.8 * f[:, None] * rng.choice([-1.0, 1.0], p) + 0.6 * Z
        X = np.clip(rng.uniform(-1 + fill, 1 - fill, p) + fill * Z / 3.0, -1.0, 1.0)
        margin = 4.0 * f + offset
        y = np.where(rng.random(n + n_test) < 1.0 / (1.0 + np.exp(-margin)), 1, 0)
        return X[:n], y[:n], X[n:], y[n:]
    Z = 0.7 * Z + 0.3 * Z[:, rng.integers(p, size=p)]  # some correlation between features
    centre = rng.uniform(-1 + fill, 1 - fill, p)
    X = np.clip(centre + fill * Z / 3.0, -1.0, 1.0)
    w = np.zeros(p)
    idx = rng.choice(p, k, replace=False)
    w[idx] = rng.choice([-1.0, 1.0], k) / np.sqrt(np.arange(1, k + 1))
    margin = (X - centre) @ w
    margin = margin * 4.0 / max(margin.std(), 1e-12) + offset
    y = np.where(rng.random(n + n_test) < 1.0 / (1.0 + np.exp(-margin)), 1, 0)
    return X[:n], y[:n], X[n:], y[n:]


def categorical_family(n, p, seed, n_test=2000, levels=6):
    """Survey-like records (adult's kind): ``p / levels`` categorical answers of ``levels`` values each, one-hot at
    the ends of [-1, 1], every level with an effect of its own (heavy-tailed: a few strong, many weak), classes
    about 75 / 25, a margin of standard deviation 4."""
    rng = np.random.default_rng(seed)
    answers = rng.integers(levels, size=(n + n_test, p // levels))
    X = -np.ones((n + n_test, p))
    X[np.arange(n + n_test)[:, None], levels * np.arange(p // levels) + answers] = 1.0
    w = rng.standard_normal(p) * rng.exponential(1.0, p)
    margin = X @ w
    margin = 4.0 * (margin - margin.mean()) / max(margin.std(), 1e-12) - 1.8
    y = np.where(rng.random(n + n_test) < 1.0 / (1.0 + np.exp(-margin)), 1, 0)
    return X[:n], y[:n], X[n:], y[n:]


def regression_family(n, p, k, snr, seed, n_test=2000, fill=1.0, labels_inside=False):
    """Planted k-sparse regression, features uniform in ``fill`` of [-1, 1] around a random centre with some
    correlation, declared label range ten label standard deviations wide, centred on 0 (where the features sit off
    centre, at ``fill`` 0.3, up to 69 % of a draw's labels lie outside it, clipped: the studies that used it carry
    that), or, with ``labels_inside``, reaching five label standard deviations beyond the labels' mean."""
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, (n + n_test, p))
    centre = rng.uniform(-1 + fill, 1 - fill, p)
    X = np.clip(centre + fill * (0.8 * Z + 0.2 * Z[:, rng.integers(p, size=p)]), -1, 1)
    w = np.zeros(p)
    idx = rng.choice(p, k, replace=False)
    w[idx] = rng.choice([-1.0, 1.0], k) * rng.uniform(0.5, 1.5, k)
    signal = X @ w
    y = signal + signal.std() / np.sqrt(snr) * rng.standard_normal(n + n_test)
    half = 5.0 * y.std() + (abs(y.mean()) if labels_inside else 0.0)
    return X[:n], y[:n], X[n:], y[n:], set(idx.tolist()), half


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


def study_logistic(quick):
    sizes = [(400, 30), (2000, 30), (2000, 300), (10000, 300)] if not quick else [(400, 30), (2000, 300)]
    grid_T = [50, 100, 200, 400]
    grid_clip = [0.1, 0.2, 0.3, 0.5, 1.0]
    families = [(5, 0.3), ("dense", 0.3), (5, 1.0)]
    seeds = range(2 if quick else 3)
    rows = []
    for n, p in sizes:
        bounds = Bounds(-np.ones(p), np.ones(p))
        for (k, fill), seed in itertools.product(families, seeds):
            kk = p if k == "dense" else k
            Xtr, ytr, Xte, yte = logistic_family(n, p, kk, fill, 1000 * seed + n + p)
            base = {"n": n, "p": p, "k": str(k), "fill": fill, "seed": seed,
                    "constant": float(max(np.mean(yte), 1 - np.mean(yte))),
                    "non-private": float(LogisticRegression(max_iter=500).fit(Xtr, ytr).score(Xte, yte))}
            for T, clip in itertools.product(grid_T, grid_clip):
                est = DPLogisticRegression(epsilon=1.0, bounds=bounds, classes=[0, 1], random_state=seed,
                                           mechanism="dp-gcd", max_iter=T, mechanism_options={"clipping_norm": clip})
                accuracy = float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))
                rows.append({**base, "T": T, "clip": clip, "accuracy": accuracy})
            print(f"n={n} p={p} k={k} fill={fill} seed={seed} done", flush=True)
    return rows


LEARNER = {"max_iter": 100, "mechanism_options": {"clipping_norm": "auto"}}
"""DP-GCD as the rule sets it (the ``logistic`` study's choice), for the ``floor`` study."""

LEARNER_GD = {"mechanism": "dp-gd", "max_iter": 200}
"""DP-GD with its automatic clipping norm and 200 steps (the ``logistic-mechanism`` study's choice)."""


def study_start(quick, wide=False):
    """DP-GCD with automatic clipping: its steps, and whether to start from the constant predictor's intercept, on
    balanced and imbalanced (about 70 / 30) classes. ``wide``: p = 1000 (n = 5000), the features filling 30 % or
    all of their range, without the warm start."""
    sizes = [(400, 30), (2000, 30), (2000, 300), (10000, 300)] if not quick else [(400, 30), (2000, 300)]
    variants = [(0.3, 0.0), (0.3, 3.0)]  # (fill, offset)
    warms = (False, True)
    if wide:
        sizes, variants, warms = [(5000, 1000)], [(0.3, 0.0), (1.0, 0.0)], (False,)
    rows = []
    for (n, p), (fill, offset), seed in itertools.product(sizes, variants, range(2 if quick else 3)):
        bounds = Bounds(-np.ones(p), np.ones(p))
        Xtr, ytr, Xte, yte = logistic_family(n, p, 5, fill, 1000 * seed + n + p, offset=offset)
        base = {"n": n, "p": p, "offset": offset, "fill": fill, "seed": seed}
        for T, warm in itertools.product((50, 100, 200), warms):
            est = DPLogisticRegression(epsilon=1.0, bounds=bounds, classes=[0, 1], random_state=seed,
                                       mechanism="dp-gcd", max_iter=T,
                                       mechanism_options={"clipping_norm": "auto", "warm_start": warm})
            accuracy = float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))
            rows.append({**base, "T": T, "warm_start": warm, "accuracy": accuracy})
        print(f"n={n} p={p} offset={offset} seed={seed} done", flush=True)
    return rows


def study_steps(quick):
    """DP-GCD's steps (automatic clipping) against ``n epsilon / log p``, beyond the ``start`` study's epsilon 1:
    epsilon 0.1-1, n 2000-20000, p 100 and 1000, a sparse family squeezed into 30 % of its range and the
    latent-factor family."""
    settings = [(2000, 100, 0.3), (20000, 100, 0.1), (5000, 1000, 0.3), (5000, 1000, 1.0), (20000, 100, 1.0),
                (20000, 1000, 1.0)]
    if quick:
        settings = settings[:2]
    rows = []
    for (n, p, eps), factor, seed in itertools.product(settings, (False, True), range(2)):
        bounds = Bounds(-np.ones(p), np.ones(p))
        Xtr, ytr, Xte, yte = logistic_family(n, p, 5, 0.3, 1000 * seed + n + p, factor=factor)
        base = {"n": n, "p": p, "epsilon": eps, "n eps / log p": round(n * eps / np.log(p)), "factor": factor,
                "seed": seed, "constant": float(max(np.mean(yte), 1 - np.mean(yte)))}
        for T in (25, 50, 100, 200):
            est = DPLogisticRegression(epsilon=eps, bounds=bounds, classes=[0, 1], random_state=seed,
                                       mechanism="dp-gcd", max_iter=T, mechanism_options={"clipping_norm": "auto"})
            rows.append({**base, "T": T, "accuracy": float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))})
        print(f"n={n} p={p} epsilon={eps} factor={factor} seed={seed} done", flush=True)
    return rows


def steps_table(rows):
    """Mean accuracy of each T per ``n epsilon / log p`` (families and seeds averaged)."""
    by = {}
    for r in rows:
        by.setdefault((r["n eps / log p"], r["n"], r["p"], r["epsilon"]), {}).setdefault(r["T"], []).append(
            r["accuracy"])
    return [{"n eps / log p": k[0], "n": k[1], "p": k[2], "epsilon": k[3],
             **{f"T={T}": float(np.mean(v)) for T, v in sorted(ts.items())}} for k, ts in sorted(by.items())]


def study_floor(quick):
    """Where the records are too few to learn a feature: DP-GCD beside the constant predictor, by n epsilon / log p,
    on a sparse family with imbalanced classes and a dense one."""
    rows = []
    sizes = itertools.product((50, 100, 200, 400), (30, 300, 3000), (0.1, 1.0), range(2 if quick else 3),
                              ("sparse", "dense", "factor"))
    for n, p, eps, seed, family in sizes:
        # sparse: 5 informative features, about 75 % positive; dense: every feature informative, about 60 %;
        # factor: every feature a noisy copy of the factor the label follows, about 60 %
        k, offset = (5, 3.0) if family == "sparse" else (p, 1.0)
        Xtr, ytr, Xte, yte = logistic_family(n, p, k, 1.0, 100 * seed + n + p, offset=offset,
                                             factor=family == "factor")
        bounds = Bounds(-np.ones(p), np.ones(p))
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": family,
                "n eps / log p": round(n * eps / np.log(p), 1)}
        for name, options in (("dp-gcd", {"mechanism": "dp-gcd", **LEARNER}), ("dp-gd", LEARNER_GD),
                              ("constant", {"mechanism": "constant"})):
            est = DPLogisticRegression(epsilon=eps, bounds=bounds, classes=[0, 1], random_state=seed, **options)
            accuracy = float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))
            rows.append({**base, "mechanism": name, "accuracy": accuracy})
    return rows


FLOOR_BANDS = (10, 15, 20, 30, 40, 50, 70, 100, 200, 400)
"""Values of ``n epsilon / log p`` of the ``floor-gcd`` study (n set from them)."""


def _floor_problems(bands, seeds, salt):
    """The floor studies' problems: for each ``n epsilon / log p`` in ``bands``, p = 300, 1000, 3000, epsilon 0.3 and
    1, each seed and family (``"sparse"``: 5 informative features, classes about 75 / 25; ``"dense"``; ``"factor"``;
    ``"categorical"``), n set from the band: ``(band, p, eps, seed, family, n, (Xtr, ytr, Xte, yte))``."""
    for band, p, eps, seed, family in itertools.product(bands, (300, 1000, 3000), (0.3, 1.0), seeds,
                                                        ("sparse", "dense", "factor", "categorical")):
        n = int(round(band * np.log(p) / eps))
        data_seed = salt * seed + n + p
        if family == "categorical":
            yield band, p, eps, seed, family, n, categorical_family(n, p, data_seed)
            continue
        k, offset = (5, 3.0) if family == "sparse" else (p, 1.0)
        yield band, p, eps, seed, family, n, logistic_family(n, p, k, 1.0, data_seed, offset=offset,
                                                             factor=family == "factor")


def study_floor_gcd(quick):
    """The logistic floor on more than ``auto.FEW`` features again, with DP-GCD as the rule now runs it below
    ``GCD_BAND`` (``GCD_FEW_STEPS`` steps, automatic clipping; the ``floor`` study ran 100): DP-GCD beside the
    constant predictor at ``n epsilon / log p`` in ``FLOOR_BANDS``, p = 300, 1000, 3000, epsilon 0.3 and 1, the
    ``floor`` study's three families (5 informative features with classes about 75 / 25, every feature informative
    about 60 / 40, the latent factor) and the categorical one (about 75 / 25)."""
    rows = []
    for band, p, eps, seed, family, n, (Xtr, ytr, Xte, yte) in _floor_problems(FLOOR_BANDS, range(2 if quick else 4),
                                                                               31):
        bounds = Bounds(-np.ones(p), np.ones(p))
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": family, "n eps / log p": band}
        for name, options in (("dp-gcd", {"mechanism": "dp-gcd", "max_iter": auto.GCD_FEW_STEPS,
                                          "mechanism_options": {"clipping_norm": "auto"}}),
                              ("dp-gcd warm", {"mechanism": "dp-gcd", "max_iter": auto.GCD_FEW_STEPS,
                                               "mechanism_options": {"clipping_norm": "auto", "warm_start": True}}),
                              ("constant", {"mechanism": "constant"})):
            est = DPLogisticRegression(epsilon=eps, bounds=bounds, classes=[0, 1], random_state=seed, **options)
            rows.append({**base, "mechanism": name, "accuracy": float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))})
    return rows


WIDE_FLOOR_RATIOS = (15, 20, 30, 40, 50, 70)
"""The values of ``n epsilon / log p`` of ``--study floor-wide-gd`` (n set from them)."""


def study_floor_wide_gd(quick):
    """Below the logistic floor on more than ``auto.FEW`` features (``n epsilon < FLOOR log p``, where the rule
    releases the constant predictor because DP-GCD did not beat it): DP-GD on every feature (automatic clipping
    norm, 20, 50 or 200 steps) beside the constant predictor and the rule's DP-GCD (50 steps, started from the
    constant's intercept), at ``n epsilon / log p`` in ``WIDE_FLOOR_RATIOS``, p = 300, 1000, 3000, epsilon 0.3 and
    1, the ``floor-gcd`` study's four families; the gain over the constant predictor by family and value."""
    rows = []
    for band, p, eps, seed, family, n, (Xtr, ytr, Xte, yte) in _floor_problems(WIDE_FLOOR_RATIOS,
                                                                               range(1 if quick else 2), 37):
        bounds = Bounds(-np.ones(p), np.ones(p))
        constant = float(max(np.mean(yte), 1 - np.mean(yte)))
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": family, "n eps / log p": band}
        settings = [("constant", {"mechanism": "constant"}),
                    ("dp-gcd warm", {"mechanism": "dp-gcd", "max_iter": auto.GCD_FEW_STEPS,
                                     "mechanism_options": {"clipping_norm": "auto", "warm_start": True}})] + [
            (f"dp-gd T={T}", {"mechanism": "dp-gd", "max_iter": T, "mechanism_options": {"clipping_norm": "auto"}})
            for T in (20, 50, 200)]
        for name, options in settings:
            est = DPLogisticRegression(epsilon=eps, bounds=bounds, classes=[0, 1], random_state=seed, **options)
            rows.append({**base, "setting": name,
                         "gain": float(_quiet(est.fit, Xtr, ytr).score(Xte, yte)) - constant})
        print(f"n={n} p={p} epsilon={eps} {family} seed={seed} done", flush=True)
    return rows


def floor_gcd_table(rows):
    """By ``n epsilon / log p``: DP-GCD's mean gain over the constant predictor, its standard error over the fits,
    and by family."""
    pairs = {}
    for r in rows:
        key = (r["n eps / log p"], r["p"], r["epsilon"], r["seed"], r["family"])
        pairs.setdefault(key, {})[r["mechanism"]] = r["accuracy"]
    table = []
    for band, learner in itertools.product(sorted({k[0] for k in pairs}), ("dp-gcd", "dp-gcd warm")):
        gains = {k: v[learner] - v["constant"] for k, v in pairs.items() if k[0] == band}
        g = np.array(list(gains.values()))
        table.append({"n eps / log p": band, "learner": learner, "fits": int(g.size), "gain": float(g.mean()),
                      "se": float(g.std(ddof=1) / np.sqrt(g.size)),
                      **{f: float(np.mean([v for k, v in gains.items() if k[4] == f]))
                         for f in ("sparse", "dense", "factor", "categorical")}})
    return table


def study_floor_regression(quick):
    """The same for least squares: the rule's learner (what ``auto.choose`` picks above any floor) beside the
    constant predictor, on planted 5-sparse regressions."""
    rows = []
    sizes = itertools.product((300, 1000, 3000), (30, 300), (0.1, 0.5, 1.0), range(2 if quick else 3))
    for n, p, eps, seed in sizes:
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, 5, 3.0, 7 * seed + n + p)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "n eps / log p": round(n * eps / np.log(p), 0)}
        learner = (("two-stage", auto.least_squares_selection(n, p, eps)) if p > auto.SPARSITY else
                   ("dp-gd", {"n_iter": auto.GD_STEPS}))
        for row, mechanism, opts in (("learner", *learner), ("constant", "constant", None)):
            est = DPLasso(epsilon=eps, bounds=bounds, random_state=seed, mechanism=mechanism, mechanism_options=opts)
            r2 = float(r2_score(yte, _quiet(est.fit, Xtr, ytr).predict(Xte)))
            rows.append({**base, "mechanism": row, "accuracy": r2})
    return rows


def floor_table(rows):
    """Mean accuracy (R^2) of each learner minus the constant's, per value of n epsilon / log p (every family)."""
    by = {}
    for r in rows:
        by.setdefault(r["n eps / log p"], {}).setdefault(r["mechanism"], []).append(r["accuracy"])
    return [{"n eps / log p": k, "constant": float(np.mean(v["constant"])),
             **{f"{name} gain": float(np.mean(a) - np.mean(v["constant"])) for name, a in v.items()
                if name != "constant"}}
            for k, v in sorted(by.items())]


def study_least_squares(quick):
    sizes = [(1000, 300), (3000, 1000), (10000, 300)] if not quick else [(1000, 300), (3000, 1000)]
    settings = [dict(second=s2, selection_share=sh, selection_clip=c)
                for s2 in ("adassp", "dp-gd", "dp-gcd") for sh in (0.3, 0.5, 0.7) for c in (0.25, 1.0)]
    seeds = range(2 if quick else 3)
    rows = []
    for (n, p), k, snr, seed in itertools.product(sizes, (5, 10), (1.0, 10.0), seeds):
        Xtr, ytr, Xte, yte, true, half = regression_family(n, p, k, snr, 7 * seed + n + p + k)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        base = {"n": n, "p": p, "k": k, "snr": snr, "seed": seed,
                "non-private": float(r2_score(yte, LinearRegression().fit(Xtr, ytr).predict(Xte)))}
        for opts in settings:
            est = DPLasso(epsilon=1.0, bounds=bounds, random_state=seed, mechanism="two-stage",
                          mechanism_options={"sparsity": 10, **opts})
            m = _quiet(est.fit, Xtr, ytr)
            hits = len(set(m.support_.tolist()) & true)
            rows.append({**base, **opts, "r2": float(r2_score(yte, m.predict(Xte))), "hits": hits})
        print(f"n={n} p={p} k={k} snr={snr} seed={seed} done", flush=True)
    return rows


def study_sparsity(quick):
    """How many features the least-squares rule should select when the records are few for the budget: two-stage
    (DP-GD second, the rule's selection clip) with 3, 5 or 10 features and a selection share of 0.5 or 0.7, beside
    the constant predictor, on planted 5- and 10-sparse regressions, by ``n epsilon / log p``."""
    sizes = itertools.product((500, 1000, 2000, 5000), (300, 1000), (0.5, 1.0), (5, 10), range(1 if quick else 2))
    rows = []
    for n, p, eps, k, seed in sizes:
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, k, 3.0, 13 * seed + n + p + k)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        base = {"n": n, "p": p, "epsilon": eps, "k": k, "seed": seed,
                "n eps / log p": round(n * eps / np.log(p), 0)}
        settings = [("constant", "constant", None)] + [
            (f"s={s} share={sh}", "two-stage", {"second": "dp-gd", "sparsity": s, "selection_share": sh,
                                                "selection_clip": auto.SELECTION_CLIP})
            for s in (3, 5, 10) for sh in (0.5, 0.7)]
        for name, mechanism, opts in settings:
            est = DPLasso(epsilon=eps, bounds=bounds, random_state=seed, mechanism=mechanism, mechanism_options=opts)
            r2 = float(r2_score(yte, _quiet(est.fit, Xtr, ytr).predict(Xte)))
            rows.append({**base, "setting": name, "r2": r2})
        print(f"n={n} p={p} epsilon={eps} k={k} seed={seed} done", flush=True)
    return rows


def sparsity_table(rows):
    """Mean R^2 of each setting per value of ``n epsilon / log p`` (families and seeds averaged)."""
    by = {}
    for r in rows:
        by.setdefault(r["n eps / log p"], {}).setdefault(r["setting"], []).append(r["r2"])
    return [{"n eps / log p": k, **{name: float(np.mean(v)) for name, v in sorted(d.items())}}
            for k, d in sorted(by.items())]


def study_second_steps(quick):
    """The steps of the least-squares rule's second stage (DP-GD on the selected features): the rule's two-stage
    options with ``max_iter`` 50, 100 or 200, on planted 5- and 10-sparse regressions with SNR 1, 10 and 100, by
    ``n epsilon / log p``. DP-GD's step is ``1 / L`` with ``L`` from the bounds (the squared row norm of the
    selected features), so a design whose features fill little of their range converges in more steps."""
    sizes = itertools.product((2000, 5000, 20000), (300, 1000), (0.5, 1.0, 2.0), (5, 10), (1.0, 10.0, 100.0),
                              range(3))
    if quick:
        sizes = itertools.product((2000, 20000), (1000,), (1.0,), (10,), (1.0, 100.0), range(1))
    rows = []
    for n, p, eps, k, snr, seed in sizes:
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, k, snr, 17 * seed + n + p + k)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        _, options, _ = auto.choose(losses.Squared(), norms.build_penalty("l1", 1e-3, p, True), n, p, eps)
        options = {k: v for k, v in options.items() if k != "n_iter"}  # the steps under study: max_iter
        base = {"n": n, "p": p, "epsilon": eps, "k": k, "snr": snr, "seed": seed,
                "n eps / log p": round(n * eps / np.log(p), 0)}
        for T in (50, 100, 200):
            est = DPLasso(epsilon=eps, bounds=bounds, random_state=seed, mechanism="two-stage", max_iter=T,
                          mechanism_options=options)
            rows.append({**base, "setting": f"T={T}", "r2": float(r2_score(yte, _quiet(est.fit, Xtr, ytr).predict(
                Xte)))})
        print(f"n={n} p={p} epsilon={eps} k={k} snr={snr} done", flush=True)
    return rows


LOGISTIC_FAMILIES = [(5, 0.3, False), (10, 1.0, False), ("dense", 0.3, False), (0, 0.3, True)]
"""``(informative features, fill, factor)`` of ``logistic_family``: 5 informative features in 30 % of the range, 10
filling it, dense weights, the latent factor."""


def _logistic_gain_rows(sizes, seeds, offset, settings, keep=None, families=LOGISTIC_FAMILIES,
                        estimator=DPLogisticRegression):
    """Held-out accuracy minus the constant predictor's of every setting ``settings(p)`` (pairs of a name and the
    ``estimator``'s keywords), on the logistic families (``"categorical"``: ``categorical_family``) at every size
    ``(n, p, epsilon)`` that ``keep`` admits."""
    rows = []
    for (n, p, eps), family, seed in itertools.product(sizes, families, seeds):
        if keep is not None and not keep(n, p, eps):
            continue
        if family == "categorical":
            Xtr, ytr, Xte, yte = categorical_family(n, p, 1000 * seed + n + p + offset)
            k, fill, factor = "categorical", 1.0, False
        else:
            k, fill, factor = family
            Xtr, ytr, Xte, yte = logistic_family(n, p, p if k == "dense" else max(k, 1), fill,
                                                 1000 * seed + n + p + offset, factor=factor)
        constant = float(max(np.mean(yte), 1 - np.mean(yte)))
        bounds = Bounds(-np.ones(p), np.ones(p))
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": f"{k}/{fill}/{factor}",
                "n eps / log p": round(n * eps / np.log(p), 0)}
        for name, kw in settings(p):
            est = estimator(epsilon=eps, bounds=bounds, classes=[0, 1], random_state=seed, **kw)
            rows.append({**base, "setting": name,
                         "gain": float(_quiet(est.fit, Xtr, ytr).score(Xte, yte)) - constant})
        print(f"n={n} p={p} epsilon={eps} {base['family']} seed={seed} done", flush=True)
    return rows


def study_logistic_mechanism(quick):
    """Which mechanism for the logistic loss, now that DP-GD clips at a private typical gradient norm: the rule's
    choice, DP-GCD with the rule's options everywhere, and DP-GD (``clipping_norm="auto"``) with 50, 100 and 200
    steps, by the number of features and ``n epsilon / log p``; the held-out accuracy's gain over the constant
    predictor, on the four logistic families."""
    def settings(p):
        gcd = {"mechanism": "dp-gcd", "mechanism_options": {"clipping_norm": "auto",
                                                             "n_iter": 200 if p <= auto.FEW else auto.ITERATIONS}}
        return [("rule", {}), ("dp-gcd", gcd)] + [(f"dp-gd {T}", {"mechanism": "dp-gd", "max_iter": T})
                                                  for T in (50, 100, 200)]

    sizes = itertools.product((200, 1000, 5000), (10, 30, 100, 300, 1000), (0.1, 0.3, 1.0))
    return _logistic_gain_rows(sizes, range(1 if quick else 2), 13, settings)


def study_logistic_cd(quick):
    """DP-CD (Mangold et al., ICML 2022; its automatic per-coordinate clipping, as the estimators name it) against
    the logistic rule's DP-GD on at most ``auto.FEW`` features: DP-CD at its defaults (20 epochs) and with 5 and
    10, by the number of features and ``n epsilon / log p``; the held-out accuracy's gain over the constant
    predictor, on the four logistic families and the categorical one."""
    def settings(p):
        return [("rule (dp-gd)", {})] + [(f"dp-cd T={T}", {"mechanism": "dp-cd", "max_iter": T}) for T in (5, 10, 20)]

    sizes = itertools.product((300, 1000, 5000), (10, 30, 100), (0.1, 0.3, 1.0))
    return _logistic_gain_rows(sizes, range(1 if quick else 2), 83, settings,
                               keep=lambda n, p, eps: n * eps >= auto.FLOOR_FEW * np.log(p),
                               families=LOGISTIC_FAMILIES + ["categorical"])


def study_gd_warm(quick):
    """The logistic rule's DP-GD on at most ``auto.FEW`` features started from the constant predictor's intercept
    (``warm_start``: a noisy label mean, 5 % of the zCDP budget, shrunk towards 0 by twice its noise; DP-GCD's)
    against its cold start, ``auto.GD_STEPS`` steps and automatic clipping norm, between the floor and
    ``n epsilon = GD_MANY_BAND log p``; the gain over the constant predictor on the four logistic families and the
    categorical one (classes about 75 / 25)."""
    def settings(p):
        return [(f"dp-gd {'warm' if warm else 'cold'}",
                 {"mechanism": "dp-gd", "max_iter": auto.GD_STEPS,
                  "mechanism_options": {"clipping_norm": "auto", "warm_start": warm}}) for warm in (False, True)]

    sizes = itertools.product((300, 1000, 5000), (10, 30, 100), (0.1, 0.3, 1.0))
    return _logistic_gain_rows(sizes, range(1 if quick else 2), 89, settings,
                               keep=lambda n, p, eps: auto.FLOOR_FEW <= n * eps / np.log(p) < auto.GD_MANY_BAND,
                               families=LOGISTIC_FAMILIES + ["categorical"])


def study_hinge(quick):
    """Which mechanism for the hinge loss (``DPLinearSVC``): the one-pass noisy SGD (the rule's choice before this
    study), DP-GD with its automatic clipping norm and ``auto.GD_STEPS`` steps (subgradients), and DP-SGD with its
    defaults, by the number of features and ``n epsilon / log p``; the gain over the constant predictor, on the
    four logistic families."""
    def settings(p):
        return [("one-pass-sgd", {"mechanism": "one-pass-sgd"}),
                ("dp-gd", {"mechanism": "dp-gd", "max_iter": auto.GD_STEPS}), ("dp-sgd", {"mechanism": "dp-sgd"})]

    sizes = itertools.product((200, 1000, 5000), (10, 30, 100, 300, 1000), (0.1, 0.3, 1.0))
    return _logistic_gain_rows(sizes, range(1 if quick else 2), 47, settings, estimator=DPLinearSVC)


def study_hinge_step(quick):
    """The step of the hinge rule's DP-GD (``DPLinearSVC``; the hinge has no smoothness, so the gradient methods'
    ``1 / (smoothness R^2)`` has no value of its own): the former ``1 / R^2`` against subgradient descent's
    ``D / (G sqrt(T))`` (``dp_gd.lipschitz_step``) with ``D`` = 3, 10 and 30, the rule's steps and automatic
    clipping, on the four logistic families and the categorical one (about 75 / 25 classes), up to n = 20000; the
    gain over the constant predictor by family and band of ``n epsilon / log p``."""
    def settings(p):
        former = {"mechanism": "dp-gd", "max_iter": auto.GD_STEPS, "mechanism_options": {"learning_rate": 1 / (p + 1)}}
        return [("1/R^2", former)] + [(f"D={D:g}", {"mechanism": "dp-gd", "max_iter": auto.GD_STEPS,
                                                    "mechanism_options": {"step_radius": D}}) for D in (3, 10, 30)]

    sizes = itertools.product((1000, 5000, 20000), (10, 30, 100, 300), (0.1, 0.3, 1.0))
    return _logistic_gain_rows(sizes, range(1 if quick else 2), 59, settings, estimator=DPLinearSVC,
                               families=LOGISTIC_FAMILIES + ["categorical"])


def study_gd_steps(quick):
    """DP-GD's number of steps under the rule (the logistic loss on at most ``auto.FEW`` features, the hinge loss,
    least squares on at most ``auto.SPARSITY``): the rule's ``auto.GD_STEPS`` against 500 and 1000 (``max_iter``,
    everything else the rule's), on the four logistic families and the categorical one (p 10 and 100) and planted
    dense regressions (p 5 and 10, SNR 3, features filling 30 % or all of their range), n up to 20000, epsilon
    0.3-3; the gain over the constant predictor (R^2 for least squares) by family and band of
    ``n epsilon / log p``."""
    sizes = list(itertools.product((1000, 5000, 20000), (10, 100), (0.3, 1.0, 3.0)))
    rows = []
    for loss, estimator in (("logistic", DPLogisticRegression), ("hinge", DPLinearSVC)):
        def settings(p, loss=loss):
            return [(f"{loss} T={T}", {"max_iter": T}) for T in (auto.GD_STEPS, 500, 1000)]

        rows += _logistic_gain_rows(sizes, range(1 if quick else 2), 67, settings, estimator=estimator,
                                    families=LOGISTIC_FAMILIES + ["categorical"])
    for (n, p, eps), fill, seed in itertools.product(itertools.product((1000, 5000, 20000), (5, 10), (0.3, 1.0, 3.0)),
                                                     (0.3, 1.0), range(1 if quick else 2)):
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, p, 3.0, 17 * seed + n + p, fill=fill)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": f"regression/{fill}",
                "n eps / log p": round(n * eps / np.log(p), 0)}
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        for T in (auto.GD_STEPS, 500, 1000):
            m = _quiet(DPLasso(epsilon=eps, bounds=bounds, random_state=seed, max_iter=T).fit, Xtr, ytr)
            rows.append({**base, "setting": f"squared T={T}", "gain": float(r2_score(yte, m.predict(Xte))) - constant})
        print(f"n={n} p={p} epsilon={eps} regression/{fill} seed={seed} done", flush=True)
    return rows


def study_selection_few(quick):
    """Least squares on a few more features than ``auto.SPARSITY`` (p 12-30), and the Huber loss: the selection of
    the least-squares rule (``two-stage``, ``auto.least_squares_selection``) against DP-GD on every feature with the
    rule's steps (``auto.gd_steps``) and automatic clipping norm, for both losses, and DP-GCD at its defaults with
    ``alpha`` 1e-3 (the Huber loss's rule before this study), on planted regressions (5 or ``p`` informative
    features, SNR 3, features filling 30 % or all of their range), n up to 20000, epsilon 0.3-3, above the
    least-squares floor; the R^2 gain over the training mean by family and band of ``n epsilon / log p``."""
    rows = []
    grid = itertools.product((1000, 5000, 20000), (12, 20, 30), (0.3, 1.0, 3.0), ("sparse", "dense"), (0.3, 1.0),
                             range(1 if quick else 2))
    for n, p, eps, kind, fill, seed in grid:
        k = 5 if kind == "sparse" else p
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, k, 3.0, 19 * seed + n + p + k, fill=fill)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        ratio = n * eps / np.log(p)
        if ratio < auto.FLOOR_LEAST_SQUARES:  # the constant predictor under every rule
            continue
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": f"{kind}/{fill}", "n eps / log p": round(ratio)}
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        gd = {"mechanism": "dp-gd", "max_iter": auto.gd_steps(ratio)}
        selection = {"mechanism": "two-stage", "mechanism_options": auto.least_squares_selection(n, p, eps)}
        former = {"mechanism": "dp-gcd", "alpha": auto.ALPHA}  # the Huber loss's rule before this study
        huber_selection = {**selection, "mechanism_options": {
            k: v for k, v in selection["mechanism_options"].items() if k != "selection_clip"}}
        for name, loss, kw in (("squared selection", "squared", selection), ("squared dp-gd", "squared", gd),
                               ("huber dp-gcd", "huber", former), ("huber selection", "huber", huber_selection),
                               ("huber dp-gd", "huber", gd)):
            m = _quiet(DPLasso(epsilon=eps, bounds=bounds, random_state=seed, loss=loss, **kw).fit, Xtr, ytr)
            rows.append({**base, "setting": name, "gain": float(r2_score(yte, m.predict(Xte))) - constant})
        print(f"n={n} p={p} epsilon={eps} {kind}/{fill} seed={seed} done", flush=True)
    return rows


GD_FEW_STEP_CHOICES = (10, 20, 50, 100, 200)
"""The numbers of DP-GD steps that ``--study gd-steps-low`` compares."""

GD_FEW_RATIOS = (60, 80, 100, 130, 160, 200, 250, 300, 400, 600, 1000, 2000)
"""The values of ``n epsilon / log p`` of ``--study gd-steps-low``'s regressions (n set from them, p and epsilon)."""


def study_gd_steps_low(quick):
    """DP-GD's steps where the records are few for the budget (``n epsilon / log p`` from 30 to 3000, below and above
    the floors): 10, 20, 50, 100 and 200 steps (automatic clipping norm, everything else the rule's) for least
    squares on at most ``auto.FEW_LEAST_SQUARES`` features (planted dense and 3-sparse regressions, p 3-30, SNR 3,
    features filling 30 % or all of their range, n set to reach each of ``GD_FEW_RATIOS`` at epsilon 0.3 and 1),
    the logistic loss (p 10-100) and the hinge loss (p 10 and 100; the four
    logistic families and the categorical one); the gain over the constant predictor (R^2 for least squares) by
    family and band of ``n epsilon / log p``, and the noisy label mean's own gain (``constant``)."""
    rows = []
    grid = itertools.product(GD_FEW_RATIOS, (3, 5, 10, 20, 30), (0.3, 1.0), ("sparse", "dense"), (0.3, 1.0),
                             range(1 if quick else 2))
    for target, p, eps, kind, fill, seed in grid:
        n = round(target * np.log(p) / eps)
        ratio = n * eps / np.log(p)
        k = min(3, p) if kind == "sparse" else p
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, k, 3.0, 23 * seed + n + p + k, fill=fill)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": f"regression {kind}/{fill}",
                "n eps / log p": round(ratio)}
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        settings = [("constant", {"mechanism": "constant"})] + [
            (f"T={T}", {"mechanism": "dp-gd", "max_iter": T, "mechanism_options": {"clipping_norm": "auto"}})
            for T in GD_FEW_STEP_CHOICES]
        for name, kw in settings:
            m = _quiet(DPLasso(epsilon=eps, bounds=bounds, random_state=seed, **kw).fit, Xtr, ytr)
            rows.append({**base, "setting": name, "gain": float(r2_score(yte, m.predict(Xte))) - constant})
        print(f"n={n} p={p} epsilon={eps} regression {kind}/{fill} seed={seed} done", flush=True)
    sizes = [s for s in itertools.product((300, 1000, 3000, 10000), (10, 30, 100), (0.1, 0.3, 1.0))
             if 30 <= s[0] * s[2] / np.log(s[1]) <= 3000]
    for loss, estimator in (("logistic", DPLogisticRegression), ("hinge", DPLinearSVC)):
        def settings(p):  # above both floors here: the rule's DP-GD with only its steps changed
            return [(f"T={T}", {"max_iter": T}) for T in GD_FEW_STEP_CHOICES]

        found = _logistic_gain_rows([s for s in sizes if loss == "logistic" or s[1] != 30], range(1 if quick else 2),
                                    71, settings, estimator=estimator, families=LOGISTIC_FAMILIES + ["categorical"])
        rows += [{**r, "family": f"{loss} {r['family']}"} for r in found]
    return rows


def study_hinge_wide(quick):
    """The hinge rule on more than ``auto.FEW`` features, where DP-GCD (the logistic rule's learner there) needs a
    smooth loss: the rule's DP-GD on every feature beside two-stage (a private selection of 10 or 30 features at the
    zero model, then DP-GD on them), on the four logistic families and the categorical one, n 1000 and 5000, p 300
    and 1000, epsilon 0.3, 1 and 3 (above the hinge floor); the gain over the constant predictor by family and band
    of ``n epsilon / log p``."""
    sizes = [s for s in itertools.product((1000, 5000), (300, 1000), (0.3, 1.0, 3.0))
             if s[0] * s[2] >= auto.HINGE_FLOOR * np.log(s[1])]

    def settings(p):
        return [("rule (DP-GD, every feature)", {})] + [
            (f"two-stage {k}", {"mechanism": "two-stage", "mechanism_options": {"sparsity": k, "second": "dp-gd"}})
            for k in (10, 30)]

    return _logistic_gain_rows(sizes, range(1 if quick else 2), 89, settings, estimator=DPLinearSVC,
                               families=LOGISTIC_FAMILIES + ["categorical"])


FLOOR_FEW_RATIOS = (8, 12, 18, 25, 35, 50)
"""The values of ``n epsilon / log p`` of ``--study gd-steps-floor`` (n set from them, p and epsilon)."""


def study_gd_steps_floor(quick):
    """The logistic rule's DP-GD steps just above its floor on few features (``n epsilon / log p`` in
    ``FLOOR_FEW_RATIOS``): 10, 20, 50, 100 and the rule's 200 steps, cold and (at 20 and 200) started from the
    constant predictor's intercept, on the four logistic families and the categorical one (classes about 75 / 25),
    p 10, 30 and 100, epsilon 0.3 and 1, n set from the ratio; the gain over the constant predictor by family and
    value of the ratio."""
    sizes = [(max(20, round(r * np.log(p) / eps)), p, eps) for r in FLOOR_FEW_RATIOS for p in (10, 30, 100)
             for eps in (0.3, 1.0)]

    def settings(p):
        cold = [(f"T={T}", {"mechanism": "dp-gd", "max_iter": T, "mechanism_options": {"clipping_norm": "auto"}})
                for T in (10, 20, 50, 100, 200)]
        warm = [(f"T={T} warm", {"mechanism": "dp-gd", "max_iter": T,
                                 "mechanism_options": {"clipping_norm": "auto", "warm_start": True}})
                for T in (20, 200)]
        return cold + warm

    rows = _logistic_gain_rows(sizes, range(1 if quick else 3), 83, settings,
                               families=LOGISTIC_FAMILIES + ["categorical"])
    return [{**row, "n eps / log p": min(FLOOR_FEW_RATIOS, key=lambda r: abs(r - row["n eps / log p"]))}
            for row in rows]  # the value the size was set from (n rounds it)


def study_floor_steps(quick):
    """``--study gd-steps-floor``'s question on fresh draws and ten seeds: the logistic rule's DP-GD just above its
    floor on few features with 10, 20 and 200 steps (``n epsilon / log p`` 8, 12, 18 and 25; p 10, 30 and 100;
    epsilon 0.3 and 1; the four logistic families and the categorical one)."""
    sizes = [(max(20, round(r * np.log(p) / eps)), p, eps) for r in FLOOR_FEW_RATIOS[:4] for p in (10, 30, 100)
             for eps in (0.3, 1.0)]

    def settings(p):
        return [(f"T={T}", {"mechanism": "dp-gd", "max_iter": T, "mechanism_options": {"clipping_norm": "auto"}})
                for T in (10, 20, 200)]

    rows = _logistic_gain_rows(sizes, range(3, 4 if quick else 13), 97, settings,
                               families=LOGISTIC_FAMILIES + ["categorical"])
    return [{**row, "n eps / log p": min(FLOOR_FEW_RATIOS, key=lambda r: abs(r - row["n eps / log p"]))}
            for row in rows]


def ratio_family_table(rows):
    """Mean gain over the constant predictor of each setting per value of ``n epsilon / log p``, over every family
    and per family."""
    by = {}
    for r in rows:
        for family in ("all", r["family"]):
            by.setdefault((family, r["n eps / log p"]), {}).setdefault(r["setting"], []).append(r["gain"])
    return [{"family": family, "n eps / log p": x, "fits": len(next(iter(d.values()))),
             **{name: float(np.mean(v)) for name, v in d.items()}} for (family, x), d in sorted(by.items())]


def _planted_by_ratio(ratios, salt, quick, seeds=None, labels_inside=False):
    """Planted 5- and 10-sparse regressions (SNR 3 and 10, features filling 30 % or all of their range), p 300 and
    1000, epsilon 1, n set to reach each ``n epsilon / log p`` of ``ratios``; 1 seed (``quick``) or 2, or ``seeds``:
    ``(n, p, seed, split, bounds, row base, the training mean's R^2)`` for each."""
    seeds = range(1 if quick else 2) if seeds is None else seeds
    grid = itertools.product(ratios, (300, 1000), (5, 10), (3.0, 10.0), (0.3, 1.0), seeds)
    for target, p, k, snr, fill, seed in grid:
        n = round(target * np.log(p))
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, k, snr, salt * seed + n + p + k, fill=fill,
                                                        labels_inside=labels_inside)
        base = {"n": n, "p": p, "epsilon": 1.0, "seed": seed, "family": f"k={k} snr={snr:g} fill={fill}",
                "n eps / log p": target}
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        yield n, p, seed, (Xtr, ytr, Xte, yte), Bounds(-np.ones(p), np.ones(p), -half, half), base, constant


SECOND_FEW_RATIOS = (100, 115, 130, 145, 160, 190, 225, 250, 300, 400)
"""The values of ``n epsilon / log p`` of ``--study second-steps-low`` (n set from them, p and epsilon)."""


def study_second_steps_low(quick):
    """The steps of the least-squares rule's second stage where the records are few for the budget (``n epsilon /
    log p`` in ``SECOND_FEW_RATIOS``, below the floor too): the rule's two-stage options (the selection of
    ``auto.least_squares_selection``) with 10, 20 or 50 DP-GD steps, and 5 features selected (where the rule takes
    3) with 20, beside the constant predictor, on planted 5-
    and 10-sparse regressions (SNR 3 and 10, features filling 30 % or all of their range), p 300 and 1000, epsilon
    1; the R^2 gain over the training mean by family and band."""
    rows = []
    for n, p, seed, (Xtr, ytr, Xte, yte), bounds, base, constant in _planted_by_ratio(SECOND_FEW_RATIOS, 29, quick):
        options = {key: v for key, v in auto.least_squares_selection(n, p, 1.0).items() if key != "n_iter"}
        settings = [("constant", {"mechanism": "constant"})] + [
            (f"T={T}", {"mechanism": "two-stage", "max_iter": T, "mechanism_options": options}) for T in (10, 20, 50)]
        if options["sparsity"] == 3:
            settings.append(("5 features T=20", {"mechanism": "two-stage", "max_iter": 20,
                                                 "mechanism_options": {**options, "sparsity": 5}}))
        for name, kw in settings:
            m = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=seed, **kw).fit, Xtr, ytr)
            rows.append({**base, "setting": name, "gain": float(r2_score(yte, m.predict(Xte))) - constant})
        print(f"n={n} p={p} {base['family']} seed={seed} done", flush=True)
    return rows


def mixed_family(n, groups, seed, numeric=5, n_test=4000):
    """Survey-like records with numeric answers: ``numeric`` answers in [-1, 1] and ``groups`` categorical answers
    of 2-16 levels with skewed frequencies (Dirichlet(0.5)), one-hot as 0 / 1; an effect on every column (the levels'
    heavy-tailed), classes about 75 / 25. Returns the split and the one-hot groups' columns."""
    rng = np.random.default_rng(seed)
    rows = n + n_test
    levels = rng.integers(2, 17, groups)
    blocks = [np.clip(rng.normal(rng.uniform(-0.5, 0.5, numeric), rng.uniform(0.2, 0.6, numeric), (rows, numeric)),
                      -1, 1)]
    effects = [1.5 * rng.standard_normal(numeric)]
    for size in levels:
        block = np.zeros((rows, size))
        block[np.arange(rows), rng.choice(size, rows, p=rng.dirichlet(np.full(size, 0.5)))] = 1.0
        blocks.append(block)
        effects.append(rng.standard_normal(size) * rng.exponential(1.0, size))
    X, w = np.hstack(blocks), np.concatenate(effects)
    margin = X @ w
    margin = 3.0 * (margin - margin.mean()) / max(margin.std(), 1e-12) - 1.5
    y = np.where(rng.random(rows) < 1.0 / (1.0 + np.exp(-margin)), 1, 0)
    starts = numeric + np.r_[0, np.cumsum(levels)]
    return X[:n], y[:n], X[n:], y[n:], [list(range(a, b)) for a, b in zip(starts[:-1], starts[1:])]


def _survey_bounds(p, groups):
    """Bounds of a survey-like family's ``p`` columns (the one-hot ``groups`` on [0, 1], the others on [-1, 1]):
    without the groups declared, and with them."""
    low = -np.ones(p)
    low[[j for g in groups for j in g]] = 0.0
    return Bounds(low, np.ones(p)), Bounds(low, np.ones(p), one_hot=groups)


def study_one_hot(quick):
    """The logistic rule on one-hot answers (``Bounds.one_hot``): the rule without the groups declared (the indicators
    centred onto [-1, 1], as before them), the rule with them, and DP-GD (the rule's steps for the band, automatic
    clipping norm) with and without them, on the survey-like families: ``mixed_family`` (5 numeric answers and 8, 20
    or 40 categorical ones; n 2000-30000) and ``categorical_family`` (answers of 6 levels only, p 30-600; n
    1000-20000), epsilon 0.1, 0.3 and 1; the held-out accuracy's gain over the majority class by band of ``n
    epsilon / log p`` and number of features."""
    problems = []
    for (n, groups, eps), seed in itertools.product(itertools.product((2000, 10000, 30000), (8, 20, 40),
                                                                      (0.1, 0.3, 1.0)), range(1 if quick else 2)):
        problems.append(("mixed", n, eps, seed, lambda n=n, g=groups, s=seed: mixed_family(n, g, 1000 * s + n + g + 7)))
    for n, p, eps in itertools.product((1000, 5000, 20000), (30, 120, 300, 600), (0.1, 0.3, 1.0)):
        def categorical(n=n, p=p):
            Xtr, ytr, Xte, yte = categorical_family(n, p, n + p + 91)
            return (Xtr + 1) / 2, ytr, (Xte + 1) / 2, yte, [list(range(j, j + 6)) for j in range(0, p, 6)]
        problems.append(("categorical", n, eps, 0, categorical))
    rows = []
    for family, n, eps, seed, make in problems[::3] if quick else problems:
        Xtr, ytr, Xte, yte, groups = make()
        p = Xtr.shape[1]
        plain, grouped = _survey_bounds(p, groups)
        ratio = n * eps / np.log(p)
        steps = auto.gd_steps(ratio)
        constant = float(max(np.mean(yte), 1 - np.mean(yte)))
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": family, "n eps / log p": round(ratio)}
        settings = [("rule, groups not declared", plain, {}), ("rule, groups declared", grouped, {}),
                    ("DP-GD, groups declared", grouped, {"mechanism": "dp-gd", "max_iter": steps}),
                    ("DP-GD, groups not declared", plain, {"mechanism": "dp-gd", "max_iter": steps})]
        for name, bounds, kw in settings:
            est = DPLogisticRegression(epsilon=eps, bounds=bounds, classes=[0, 1], random_state=seed, **kw)
            rows.append({**base, "setting": name, "gain": float(_quiet(est.fit, Xtr, ytr).score(Xte, yte)) - constant})
        print(f"{family} n={n} p={p} epsilon={eps} seed={seed} done", flush=True)
    return rows


def study_one_hot_sgd(quick):
    """DP-SGD (its defaults, named) with the one-hot groups declared or not, on ``mixed_family`` (8, 20 or 40
    categorical answers; n 2000, 10000, 30000; epsilon 0.1 and 1; one seed): the held-out accuracy's gain over the
    majority class."""
    rows = []
    for n, groups, eps in itertools.product((2000, 10000, 30000), (8, 20, 40), (0.1, 1.0)):
        Xtr, ytr, Xte, yte, columns = mixed_family(n, groups, n + groups + 11)
        p = Xtr.shape[1]
        plain, grouped = _survey_bounds(p, columns)
        constant = float(max(np.mean(yte), 1 - np.mean(yte)))
        base = {"n": n, "p": p, "epsilon": eps, "seed": 0, "family": "mixed",
                "n eps / log p": round(n * eps / np.log(p))}
        for name, bounds in (("DP-SGD, groups not declared", plain), ("DP-SGD, groups declared", grouped)):
            est = DPLogisticRegression(epsilon=eps, bounds=bounds, classes=[0, 1], random_state=0, mechanism="dp-sgd")
            rows.append({**base, "setting": name, "gain": float(_quiet(est.fit, Xtr, ytr).score(Xte, yte)) - constant})
        print(f"n={n} p={p} epsilon={eps} done", flush=True)
    return rows


def one_hot_table(rows):
    """Mean gain of each setting by band of ``n epsilon / log p`` (edges 100, 200, 400, 1000) and by ``p`` up to
    ``FEW`` or above, over both families and per family."""
    by = {}
    for r in rows:
        band = next(b for b in (1000, 400, 200, 100, 0) if r["n eps / log p"] >= b)
        size = f"p <= {auto.FEW}" if r["p"] <= auto.FEW else f"p > {auto.FEW}"
        for family in ("all", r["family"]):
            by.setdefault((family, size, band), {}).setdefault(r["setting"], []).append(r["gain"])
    return [{"family": family, "features": size, "n eps / log p from": band, "fits": len(next(iter(d.values()))),
             **{name: float(np.mean(v)) for name, v in d.items()}} for (family, size, band), d in sorted(by.items())]


def study_floor_selection(quick, labels_inside=False):
    """The least-squares floor of the selection branch (``auto.FLOOR_SELECTION``) once the selection clips the labels
    at ``auto.SELECTION_CLIP``: the rule's options just above it (3 features, 20 DP-GD steps) against the noisy label
    mean (the constant predictor it releases below), at ``n epsilon / log p`` = 100, 110, 120, on the planted
    regressions of ``_planted_by_ratio`` with 4 seeds other than the other studies' (2-5); the R^2 gain by family and
    ratio. With ``labels_inside`` (``--study floor-selection-inside``): their label ranges around the labels' mean,
    and 8 seeds (2-9)."""
    rows = []
    seeds = range(2, 3 if quick else 10 if labels_inside else 6)
    for n, p, seed, (Xtr, ytr, Xte, yte), bounds, base, _ in _planted_by_ratio((100, 110, 120), 37, quick, seeds,
                                                                               labels_inside):
        options = auto.least_squares_selection(round(131 * np.log(p)), p, 1.0)  # the band just above the floors
        steps = options.pop("n_iter")
        scores = {}
        for name, kw in (("noisy label mean", {"mechanism": "constant"}),
                         ("3 features, 20 steps", {"mechanism": "two-stage", "max_iter": steps,
                                                   "mechanism_options": options})):
            m = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=seed, **kw).fit, Xtr, ytr)
            scores[name] = float(r2_score(yte, m.predict(Xte)))
        rows.append({**base, "setting": "gain over the noisy mean",
                     "gain": scores["3 features, 20 steps"] - scores["noisy label mean"]})
        print(f"n={n} p={p} {base['family']} seed={seed} done", flush=True)
    return rows


SELECTION_CLIP_RATIOS = (130, 145, 175, 225, 290, 350, 450, 600, 1000)
"""The values of ``n epsilon / log p`` of ``--study selection-clip``."""


def study_selection_clip(quick):
    """The labels' clip in the least-squares rule's selection scores (``auto.SELECTION_CLIP``, in units of the label
    range) and the number of features selected: clips 0.05, 0.1 and 0.25 with 3, 5 or 10 features, each with the
    rule's selection share and steps for its band, on planted 5- and 10-sparse regressions (SNR 3 and 10, features
    filling 30 % or all of their range), p 300 and 1000, epsilon 1, ``n epsilon / log p`` in
    ``SELECTION_CLIP_RATIOS``; the R^2 gain over the training mean by family and ratio."""
    rows = []
    for n, p, seed, (Xtr, ytr, Xte, yte), bounds, base, constant in _planted_by_ratio(SELECTION_CLIP_RATIOS, 31,
                                                                                      quick):
        options = auto.least_squares_selection(n, p, 1.0)
        steps = options.pop("n_iter")
        for clip, sparsity in itertools.product((0.05, 0.1, 0.25), (3, 5, 10)):
            kw = {"mechanism": "two-stage", "max_iter": steps,
                  "mechanism_options": {**options, "selection_clip": clip, "sparsity": sparsity}}
            m = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=seed, **kw).fit, Xtr, ytr)
            rows.append({**base, "setting": f"clip {clip:g}, {sparsity} features",
                         "gain": float(r2_score(yte, m.predict(Xte))) - constant})
        print(f"n={n} p={p} {base['family']} seed={seed} done", flush=True)
    return rows


SPARSITY_LOW_RATIOS = (130, 145, 160, 175, 190)
"""The values of ``n epsilon / log p`` of ``--study sparsity-low``."""


def study_sparsity_low(quick):
    """Three or four features where the least-squares rule's band changes (``auto.SPARSITY_STEPS``: 3 features and 20
    DP-GD steps below ``175 log p``, 4 and 50 above; 160 before this study), on six seeds of the planted
    regressions of ``_planted_by_ratio`` other than the other studies' (``--study selection-clip`` chose the band on
    two): the rule's selection share and label clip, 3 features with 20 steps, 4 with 20 and 4 with 50; the R^2 gain
    over the training mean by family and ratio."""
    rows = []
    for n, p, seed, (Xtr, ytr, Xte, yte), bounds, base, constant in _planted_by_ratio(
            SPARSITY_LOW_RATIOS, 41, quick, range(10, 11 if quick else 16)):
        options = {key: v for key, v in auto.least_squares_selection(n, p, 1.0).items()
                   if key not in ("n_iter", "sparsity")}
        for sparsity, steps in ((3, 20), (4, 20), (4, 50)):
            kw = {"mechanism": "two-stage", "max_iter": steps, "mechanism_options": {**options, "sparsity": sparsity}}
            m = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=seed, **kw).fit, Xtr, ytr)
            rows.append({**base, "setting": f"{sparsity} features, {steps} steps",
                         "gain": float(r2_score(yte, m.predict(Xte))) - constant})
        print(f"n={n} p={p} {base['family']} seed={seed} done", flush=True)
    return rows


def shaped_family(n, p, k, snr, seed, shape, n_test=2000):
    """Planted k-sparse regression on [-1, 1] whose features fill more or less of the box (the fill the rule reads,
    ``estimators._fill_sum``, in brackets): ``"offset"`` as ``regression_family`` at fill 0.3 (a spread of 0.3 around
    a random centre: 0.14; ``"offset-s"`` a spread of ``s``, a fill of about ``0.48 s``), ``"mixed"`` as it at fill 1
    (two uniforms mixed, 0.48), ``"uniform"`` (0.58), ``"gaussian"`` (standard normals clipped to the box, 0.72),
    ``"wide"`` (uniforms 1.5 times the box, clipped: 0.75); weights of random sign and size 0.5-1.5, declared label
    range centred on 0 and reaching five label standard deviations beyond the labels' mean on either side."""
    rng = np.random.default_rng(seed)
    size = (n + n_test, p)

    def mixed():
        return 0.8 * rng.uniform(-1, 1, size) + 0.2 * rng.uniform(-1, 1, size)

    spread = float(shape.split("-")[1]) if shape.startswith("offset-") else 0.3
    X = np.clip({"offset": lambda: rng.uniform(spread - 1, 1 - spread, p) + spread * mixed(), "mixed": mixed,
                 "uniform": lambda: rng.uniform(-1, 1, size), "gaussian": lambda: rng.standard_normal(size),
                 "wide": lambda: 1.5 * rng.uniform(-1, 1, size)}[shape.split("-")[0]](), -1, 1)
    w = np.zeros(p)
    idx = rng.choice(p, k, replace=False)
    w[idx] = rng.choice([-1.0, 1.0], k) * rng.uniform(0.5, 1.5, k)
    signal = X @ w
    y = signal + signal.std() / np.sqrt(snr) * rng.standard_normal(n + n_test)
    return X[:n], y[:n], X[n:], y[n:], abs(y.mean()) + 5.0 * y.std()


SHAPES = ("offset", "mixed", "uniform", "gaussian", "wide")
"""``shaped_family``'s shapes, by the fill they give."""


def study_sparsity_fill(quick):
    """Why a fourth feature pays on some problems below ``175 log p`` and not on the rule's families: 3 features with
    20 DP-GD steps against 4 with 20 and with 50 (the rule's selection share and label clip) on ``shaped_family``'s
    three shapes, 5- and 10-sparse, SNR 3 and 10, p = 1000, epsilon 1, ``n epsilon / log p`` 145 and 160, 8 seeds
    (2 with ``quick``); the R^2 gain over the training mean by shape (as ``family``) and ratio."""
    rows, p, seeds = [], 1000, range(2 if quick else 8)
    grid = itertools.product((145, 160), ("mixed", "uniform", "gaussian"), (5, 10), (3.0, 10.0), seeds)
    for ratio, shape, k, snr, seed in grid:
        n = round(ratio * np.log(p))
        Xtr, ytr, Xte, yte, half = shaped_family(n, p, k, snr, 7000 + 13 * seed + k + ratio, shape)
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        options = {key: v for key, v in auto.least_squares_selection(n, p, 1.0).items()
                   if key not in ("n_iter", "sparsity")}
        for sparsity, steps in ((3, 20), (4, 20), (4, 50)):
            kw = {"mechanism": "two-stage", "max_iter": steps, "mechanism_options": {**options, "sparsity": sparsity}}
            m = _quiet(DPLasso(epsilon=1.0, bounds=Bounds(-np.ones(p), np.ones(p), -half, half), random_state=seed,
                               **kw).fit, Xtr, ytr)
            rows.append({"n": n, "p": p, "seed": seed, "family": shape,
                         "n eps / log p": ratio, "setting": f"{sparsity} features, {steps} steps",
                         "gain": float(r2_score(yte, m.predict(Xte))) - constant})
    return rows


FILL_RATIOS = (115, 130, 145, 160, 170)
"""The values of ``n epsilon / log p`` of ``--study fill-threshold``."""


def study_fill_threshold(quick):
    """Where a fourth feature pays below ``175 log p`` as a function of how much of the box the features fill: 3
    features against 4, both with 20 DP-GD steps (the rule's selection share and label clip), on ``shaped_family``'s
    five shapes, 5- and 10-sparse, SNR 3 and 10, p 300 and 1000, epsilon 1, ``n epsilon / log p`` in ``FILL_RATIOS``,
    4 seeds (1 with ``quick``); each row also holds the fill the rule would release (``estimators._fill_sum`` over
    its pairs, here without noise)."""
    rows = []
    grid = itertools.product(FILL_RATIOS, ("offset", "mixed", "uniform", "gaussian", "wide"), (300, 1000), (5, 10),
                             (3.0, 10.0), range(1 if quick else 4))
    for ratio, shape, p, k, snr, seed in grid:
        n = round(ratio * np.log(p))
        Xtr, ytr, Xte, yte, half = shaped_family(n, p, k, snr, 9000 + 17 * seed + k + ratio + p, shape)
        fill = _fill_sum(Xtr, ytr, Bounds(-np.ones(p), np.ones(p), -half, half), True,
                         np.random.default_rng(seed).permutation(n)) / (n // 2)
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        options = {key: v for key, v in auto.least_squares_selection(n, p, 1.0).items() if key != "sparsity"}
        for sparsity in (3, 4):
            kw = {"mechanism": "two-stage", "max_iter": 20, "mechanism_options": {**options, "sparsity": sparsity}}
            m = _quiet(DPLasso(epsilon=1.0, bounds=Bounds(-np.ones(p), np.ones(p), -half, half), random_state=seed,
                               **kw).fit, Xtr, ytr)
            rows.append({"n": n, "p": p, "seed": seed, "family": shape, "fill": fill, "n eps / log p": ratio,
                         "setting": f"{sparsity} features", "gain": float(r2_score(yte, m.predict(Xte))) - constant})
    return rows


def fill_table(rows):
    """By shape and ratio: the mean fill, each setting's mean gain, and the paired difference of 4 features from 3
    with its standard error."""
    by = {}
    for r in rows:
        by.setdefault((r["family"], r["n eps / log p"]), []).append(r)
    table = []
    for (shape, ratio), rs in sorted(by.items(), key=lambda kv: (np.mean([r["fill"] for r in kv[1]]), kv[0][1])):
        three = np.array([r["gain"] for r in rs if r["setting"] == "3 features"])
        four = np.array([r["gain"] for r in rs if r["setting"] == "4 features"])
        d = four - three
        table.append({"family": shape, "n eps / log p": ratio, "fits": int(d.size),
                      "fill": float(np.mean([r["fill"] for r in rs])), "3 features": float(three.mean()),
                      "4 features": float(four.mean()), "4 - 3": float(d.mean()),
                      "se": float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")})
    return table


COUNT_RATIOS = (115, 130, 145, 160, 175, 200, 225, 260, 300, 340)
"""The values of ``n epsilon / log p`` of ``--study fill-count`` and ``--study fill-bands``."""


def study_fill_count(quick):
    """How many features the least-squares rule should select below ``350 log p`` as a function of how much of their
    box the records fill: 3 to 8 features with the rule's DP-GD steps (20 below ``175 log p``, 50 above), selection
    share and label clip, on ``shaped_family``'s five shapes, 5- and 10-sparse, SNR 3 and 10, p 300 and 1000,
    epsilon 1, ``n epsilon / log p`` in ``COUNT_RATIOS``, 4 seeds no other study used (1 with ``quick``), each cell
    with its own noise seed (every count the same); the R^2 gain over the training mean by shape and ratio, and each
    cell's fill (``estimators._fill_sum`` over its pairs, here without noise)."""
    rows = []
    grid = itertools.product(COUNT_RATIOS, SHAPES, (300, 1000), (5, 10), (3.0, 10.0), range(20, 21 if quick else 24))
    for ratio, shape, p, k, snr, seed in grid:
        n = round(ratio * np.log(p))
        Xtr, ytr, Xte, yte, half = shaped_family(n, p, k, snr, 9000 + 17 * seed + k + ratio + p, shape)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        options = {key: v for key, v in auto.least_squares_selection(n, p, 1.0).items() if key != "sparsity"}
        cell = 100_000 * seed + 1000 * k + 10 * ratio + p + int(snr)
        fill = _fill_sum(Xtr, ytr, bounds, True, np.random.default_rng(cell).permutation(n)) / (n // 2)
        for sparsity in range(3, 9):
            kw = {"mechanism": "two-stage", "mechanism_options": {**options, "sparsity": sparsity}}
            m = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=cell, alpha=auto.RULE_ALPHA, **kw).fit,
                       Xtr, ytr)
            rows.append({"n": n, "p": p, "k": k, "snr": snr, "seed": seed, "family": shape, "fill": fill,
                         "n eps / log p": ratio, "setting": f"{sparsity} features",
                         "gain": float(r2_score(yte, m.predict(Xte))) - constant})
    return rows


def study_fill_rule(quick):
    """The least-squares rule with the fill's release (``auto.FILL_MORE``: its default, as a user calls it, so with
    ``--study fill-count``'s counts since that study; docs/defaults.md's table is of the first version, 4 features
    where the fill reached 0.65) against the rule without it (3 features below ``175 log p``, the whole budget:
    ``two-stage`` named with the rule's options and penalty strength), on ``shaped_family``'s five shapes, 5- and
    10-sparse, SNR 3 and 10, p 300 and 1000, epsilon 1, ``n epsilon / log p`` in ``FILL_RATIOS``, 4 seeds other than
    ``--study fill-threshold``'s (1 with ``quick``), each cell with its own noise seed (both arms the same); the R^2
    gain over the training mean by shape and ratio, the fill each default released, and its mean count of features."""
    rows = []
    grid = itertools.product(FILL_RATIOS, ("offset", "mixed", "uniform", "gaussian", "wide"), (300, 1000), (5, 10),
                             (3.0, 10.0), range(4, 5 if quick else 8))
    for ratio, shape, p, k, snr, seed in grid:
        n = round(ratio * np.log(p))
        Xtr, ytr, Xte, yte, half = shaped_family(n, p, k, snr, 9000 + 17 * seed + k + ratio + p, shape)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        base = {"n": n, "p": p, "seed": seed, "family": shape, "n eps / log p": ratio}
        cell = 100_000 * seed + 1000 * k + 10 * ratio + p + int(snr)  # each cell's own noise (the fill's draw too)
        default = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=cell).fit, Xtr, ytr)
        fill = float(default.privacy_report_.noise["the rule's fill"].split(",")[0])
        before = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=cell, mechanism="two-stage",
                                alpha=auto.RULE_ALPHA, mechanism_options=auto.least_squares_selection(n, p, 1.0)).fit,
                        Xtr, ytr)
        for name, m in (("with the fill", default), ("without", before)):
            rows.append({**base, "setting": name, "fill": fill, "features": int(m.support_.size),
                         "gain": float(r2_score(yte, m.predict(Xte))) - constant})
    return rows


def _previous_selection(n, p, fill):
    """The least-squares rule's options before ``--study fill-count``: 3 features below ``175 log p`` (4 where
    the fill was at least 0.65), 4 below 225, 5 below 350; the same shares and steps."""
    options = auto.least_squares_selection(n, p, 1.0)
    ratio = auto.per_log_feature(n, p, 1.0)
    options["sparsity"] = 4 if 175 <= ratio < 225 else 5 if 225 <= ratio < 350 else 4 if fill >= 0.65 else 3
    return options


def study_fill_bands(quick):
    """The least-squares rule's counts of ``auto.SPARSITY_STEPS`` below ``FILL_BAND log p`` (its default, as a user
    calls it, the fill released) against the rule before them (``_previous_selection`` on the fill the default
    released, ``two-stage`` named with the rule's penalty strength and the whole budget), on seeds no other study
    used: ``shaped_family``'s five shapes and ``regression_family`` at fill 0.3 and 1 with the labels inside their
    range, 5- and 10-sparse, SNR 3 and 10, p 300 and 1000, epsilon 1, ``n epsilon / log p`` in ``COUNT_RATIOS``, 2
    seeds (1 with ``quick``), each cell with its own noise seed (both arms the same); the R^2 gain over the training
    mean by family and ratio, the fill each default released and its mean count."""
    rows, seeds = [], range(24, 25 if quick else 26)

    def problems():
        for ratio, shape, p, k, snr, seed in itertools.product(COUNT_RATIOS, SHAPES, (300, 1000), (5, 10),
                                                               (3.0, 10.0), seeds):
            n = round(ratio * np.log(p))
            Xtr, ytr, Xte, yte, half = shaped_family(n, p, k, snr, 9000 + 17 * seed + k + ratio + p, shape)
            yield ratio, shape, p, k, snr, seed, n, (Xtr, ytr, Xte, yte), Bounds(-np.ones(p), np.ones(p), -half, half)
        for n, p, seed, split, bounds, base, _ in _planted_by_ratio(COUNT_RATIOS, 43, quick, seeds, labels_inside=True):
            k, snr, fill = (float(part.split("=")[1]) for part in base["family"].split())
            yield base["n eps / log p"], f"regression fill={fill:g}", p, int(k), snr, seed, n, split, bounds

    for ratio, family, p, k, snr, seed, n, (Xtr, ytr, Xte, yte), bounds in problems():
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        base = {"n": n, "p": p, "k": k, "snr": snr, "seed": seed, "family": family, "n eps / log p": ratio}
        cell = 100_000 * seed + 1000 * k + 10 * ratio + p + int(snr)
        default = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=cell).fit, Xtr, ytr)
        fill = float(default.privacy_report_.noise["the rule's fill"].split(",")[0])
        before = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=cell, mechanism="two-stage",
                                alpha=auto.RULE_ALPHA, mechanism_options=_previous_selection(n, p, fill)).fit,
                        Xtr, ytr)
        for name, m in (("with the fill", default), ("without", before)):
            rows.append({**base, "setting": name, "fill": fill, "features": int(m.support_.size),
                         "gain": float(r2_score(yte, m.predict(Xte))) - constant})
    return rows


def study_huber_bands(quick):
    """The Huber loss follows the least-squares rule's counts where no fill is read (``auto.SPARSITY_STEPS``'
    second entry): its default (5 features below ``225 log p``, 6 below 350) against the counts before
    ``--study fill-count`` (4 and 5), ``two-stage`` named with the rule's options and penalty strength, on
    ``shaped_family``'s five shapes, 5- and 10-sparse, SNR 3 and 10, p 1000, epsilon 1, ``n epsilon / log p`` 200, 260
    and 300, 2 seeds no other study used (1 with ``quick``); the R^2 gain over the training mean by shape and ratio."""
    rows = []
    grid = itertools.product((200, 260, 300), SHAPES, (5, 10), (3.0, 10.0), range(26, 27 if quick else 28))
    for ratio, shape, k, snr, seed in grid:
        p, n = 1000, round(ratio * np.log(1000))
        Xtr, ytr, Xte, yte, half = shaped_family(n, p, k, snr, 9000 + 17 * seed + k + ratio + p, shape)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        cell = 100_000 * seed + 1000 * k + 10 * ratio + p + int(snr)
        options = {key: v for key, v in _previous_selection(n, p, 0.0).items() if key != "selection_clip"}
        for name, kw in (("rule", {}), ("before", {"mechanism": "two-stage", "alpha": auto.RULE_ALPHA,
                                                   "mechanism_options": options})):
            m = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=cell, loss="huber", **kw).fit, Xtr, ytr)
            rows.append({"n": n, "p": p, "seed": seed, "family": shape, "n eps / log p": ratio, "setting": name,
                         "gain": float(r2_score(yte, m.predict(Xte))) - constant})
    return rows


def study_fill_floor(quick):
    """Where the records fill little of their box: the least-squares rule as a user calls it (``"default"``, with
    ``auto.FILL_FLOOR``), its selection without the floor (``"selection"``: ``two-stage`` named with the rule's
    options at the fill the default released, its penalty strength and the whole budget) and the constant predictor
    (the noisy label mean, ``mechanism="constant"``), on ``shaped_family``'s features spread over 0.1, 0.3, 0.5 and
    0.7 of the box around random centres (fills about 0.05, 0.14, 0.24, 0.33) and its two uniforms mixed (0.48), 5-
    and 10-sparse, SNR 3, 10 and 30, p 300 and 1000, epsilon 1, ``n epsilon / log p`` in ``COUNT_RATIOS``, 4 seeds no
    other study used (the floor was chosen on the first two; 1 seed with ``quick``), each cell with its own noise
    seed; the R^2 gain over the training mean by shape and ratio, and the fill each default released."""
    rows = []
    grid = itertools.product(COUNT_RATIOS, ("offset-0.1", "offset", "offset-0.5", "offset-0.7", "mixed"), (300, 1000),
                             (5, 10), (3.0, 10.0, 30.0), range(28, 29 if quick else 32))
    for ratio, shape, p, k, snr, seed in grid:
        n = round(ratio * np.log(p))
        Xtr, ytr, Xte, yte, half = shaped_family(n, p, k, snr, 9000 + 17 * seed + k + ratio + p, shape)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        cell = 100_000 * seed + 1000 * k + 10 * ratio + p + int(snr)
        default = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=cell).fit, Xtr, ytr)
        fill = float(default.privacy_report_.noise["the rule's fill"].split(",")[0])
        selection = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=cell, mechanism="two-stage",
                                   alpha=auto.RULE_ALPHA,
                                   mechanism_options=auto.least_squares_selection(n, p, 1.0, fill)).fit, Xtr, ytr)
        mean = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=cell, mechanism="constant").fit, Xtr, ytr)
        for name, m in (("default", default), ("selection", selection), ("constant", mean)):
            rows.append({"n": n, "p": p, "k": k, "snr": snr, "seed": seed, "family": shape, "n eps / log p": ratio,
                         "setting": name, "fill": fill, "gain": float(r2_score(yte, m.predict(Xte))) - constant})
    return rows


def fill_floor_table(rows):
    """By shape and ratio: the mean released fill and each setting's mean gain."""
    by = {}
    for r in rows:
        by.setdefault((r["family"], r["n eps / log p"]), {}).setdefault(r["setting"], []).append(r)
    return [{"family": shape, "n eps / log p": ratio, "fits": len(d["default"]),
             "fill": float(np.mean([r["fill"] for r in d["default"]])),
             **{name: float(np.mean([r["gain"] for r in rs])) for name, rs in d.items()}}
            for (shape, ratio), d in sorted(by.items(), key=lambda kv: (SHAPE_ORDER.index(kv[0][0]), kv[0][1]))]


SHAPE_ORDER = ("offset-0.1", "offset", "offset-0.5", "offset-0.7", "mixed")
"""``--study fill-floor``'s shapes, by their fill."""


def fill_rule_table(rows):
    """By shape and ratio: the mean released fill, the default's mean count of features, each setting's mean gain,
    and the paired difference with its standard error."""
    by = {}
    for r in rows:
        by.setdefault((r["family"], r["n eps / log p"]), []).append(r)
    table = []
    for (shape, ratio), rs in sorted(by.items(), key=lambda kv: (np.mean([r["fill"] for r in kv[1]]), kv[0][1])):
        new = [r for r in rs if r["setting"] == "with the fill"]
        old = np.array([r["gain"] for r in rs if r["setting"] == "without"])
        d = np.array([r["gain"] for r in new]) - old
        table.append({"family": shape, "n eps / log p": ratio, "fits": int(d.size),
                      "fill": float(np.mean([r["fill"] for r in new])),
                      "features": float(np.mean([r["features"] for r in new])),
                      "with the fill": float(old.mean() + d.mean()), "without": float(old.mean()),
                      "difference": float(d.mean()),
                      "se": float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0})
    return table


def study_structured(quick):
    """Which mechanism for a structured norm (``penalty="group-l2"`` on groups of 5 features, ``"linf"``): the rule's
    DP-SGD (its defaults) against DP-GD with the proximal step of the whole norm and the rule's steps for the loss
    (``auto.least_squares_steps``, ``auto.gd_steps``) and automatic clipping norm, on planted regressions (3 or p
    informative features, SNR 3, features filling 30 % or all of their range; p 10 and 30) and the four logistic
    families (p 10 and 30), n 1000-20000, epsilon 0.3-3; the gain over the constant predictor (R^2 for least
    squares) by family and band of ``n epsilon / log p``."""
    from dpsparse import DPLinearRegression

    rows = []
    grid = itertools.product((1000, 5000, 20000), (10, 30), (0.3, 1.0, 3.0), ("group-l2", "linf"),
                             range(1 if quick else 2))
    for n, p, eps, penalty, seed in grid:
        ratio = n * eps / np.log(p)
        groups = [list(range(i, i + 5)) for i in range(0, p, 5)] if penalty == "group-l2" else None
        common = {"penalty": penalty, "groups": groups, "random_state": seed, "epsilon": eps}
        for kind, fill in itertools.product(("sparse", "dense"), (0.3, 1.0)):
            k = 3 if kind == "sparse" else p
            Xtr, ytr, Xte, yte, _, half = regression_family(n, p, k, 3.0, 41 * seed + n + p + k, fill=fill)
            bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
            constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
            base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": f"regression {kind}/{fill} {penalty}",
                    "n eps / log p": round(ratio)}
            gd = {"mechanism": "dp-gd", "max_iter": auto.least_squares_steps(ratio),
                  "mechanism_options": {"clipping_norm": "auto"}}
            for name, kw in (("dp-sgd (rule)", {}), ("dp-gd", gd)):
                m = _quiet(DPLinearRegression(bounds=bounds, **common, **kw).fit, Xtr, ytr)
                rows.append({**base, "setting": name, "gain": float(r2_score(yte, m.predict(Xte))) - constant})
        for family in LOGISTIC_FAMILIES:
            k, fill, factor = family
            Xtr, ytr, Xte, yte = logistic_family(n, p, p if k == "dense" else max(k, 1), fill,
                                                 1000 * seed + n + p + 43, factor=factor)
            constant = float(max(np.mean(yte), 1 - np.mean(yte)))
            base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": f"logistic {k}/{fill}/{factor} {penalty}",
                    "n eps / log p": round(ratio)}
            gd = {"mechanism": "dp-gd", "max_iter": auto.gd_steps(ratio),
                  "mechanism_options": {"clipping_norm": "auto"}}
            for name, kw in (("dp-sgd (rule)", {}), ("dp-gd", gd)):
                est = DPLogisticRegression(bounds=Bounds(-np.ones(p), np.ones(p)), classes=[0, 1], **common, **kw)
                accuracy = float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))
                rows.append({**base, "setting": name, "gain": accuracy - constant})
        print(f"n={n} p={p} epsilon={eps} {penalty} seed={seed} done", flush=True)
    return rows


def study_second_steps_many(quick):
    """The steps of the least-squares rule's second stage where the records are many for the budget (``n epsilon /
    log p`` from 600, where the rule selects ``auto.SPARSITY`` features and fits them with 200 DP-GD steps): 200,
    500 and 1000 steps, on planted 5- and 10-sparse regressions (SNR 3 and 30, features filling 30 % or all of their
    range), n 5000 and 20000, p 300 and 1000, epsilon 1 and 3; the R^2 gain over the training mean by family and
    band."""
    rows = []
    grid = itertools.product((5000, 20000), (300, 1000), (1.0, 3.0), (5, 10), (3.0, 30.0), (0.3, 1.0),
                             range(1 if quick else 2))
    for n, p, eps, k, snr, fill, seed in grid:
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, k, snr, 53 * seed + n + p + k, fill=fill)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": f"k={k} snr={snr:g} fill={fill}",
                "n eps / log p": round(n * eps / np.log(p))}
        constant = float(r2_score(yte, np.full_like(yte, np.mean(ytr))))
        options = {key: v for key, v in auto.least_squares_selection(n, p, eps).items() if key != "n_iter"}
        for T in (200, 500, 1000):
            m = _quiet(DPLasso(epsilon=eps, bounds=bounds, random_state=seed, mechanism="two-stage", max_iter=T,
                               mechanism_options=options).fit, Xtr, ytr)
            rows.append({**base, "setting": f"T={T}", "gain": float(r2_score(yte, m.predict(Xte))) - constant})
        print(f"n={n} p={p} epsilon={eps} {base['family']} seed={seed} done", flush=True)
    return rows


def study_gd_many(quick, wide=False):
    """DP-GD with many steps where the records are many for the budget (``n epsilon / log p`` from
    ``auto.GD_MANY_BAND``): the rule's choice beside DP-GD with 1000 and 3000 steps (automatic clipping norm; 3000
    only on at most 100 features, where the rule takes 1000), on the four logistic families and the categorical one,
    n 5000 and 20000, p 30, 100, 150, 300 and 500, epsilon 1 and 3; ``wide``: n 10000, p 1000 and 3000, DP-GD with
    1000 steps only. The gain over the constant predictor by family and band of ``n epsilon / log p`` (edges 1000,
    3000, 10000). Measured with the rule of DP-GCD on more than ``auto.FEW`` features, before ``auto.FEW_MANY``."""
    ns, ps, steps = ((10_000,), (1000, 3000), (1000,)) if wide else ((5000, 20000), (30, 100, 150, 300, 500),
                                                                    (1000, 3000))
    sizes = [s for s in itertools.product(ns, ps, (1.0, 3.0)) if s[0] * s[2] >= auto.GD_MANY_BAND * np.log(s[1])]

    def settings(p):
        gd = [(f"dp-gd {T}", {"mechanism": "dp-gd", "max_iter": T, "mechanism_options": {"clipping_norm": "auto"}})
              for T in (steps if p > auto.FEW else (3000,))]
        return [("rule", {})] + gd

    return _logistic_gain_rows(sizes, range(1 if quick else 2), 97, settings,
                               families=LOGISTIC_FAMILIES + ["categorical"])


def study_gd_mid(quick):
    """Below ``auto.GD_MANY_BAND`` on 150 and 300 features (``n epsilon / log p`` 300-1000, adult's 509 at epsilon
    0.1 among them): the rule's DP-GCD (50 steps from the constant predictor's intercept below ``auto.GCD_BAND``, 100
    above) beside DP-GD with 200 and 500 steps (automatic clipping norm), on the four logistic families and the
    categorical one, n 2000-20000, epsilon 0.1-1; the gain over the constant predictor by family and band (edges
    300, 600)."""
    sizes = [(2000, 150, 1.0), (5000, 150, 1.0), (10000, 150, 0.3), (20000, 150, 0.1), (2000, 300, 1.0),
             (5000, 300, 1.0), (10000, 300, 0.3), (20000, 300, 0.1)]

    def settings(p):
        return [("rule", {})] + [(f"dp-gd {T}", {"mechanism": "dp-gd", "max_iter": T,
                                                 "mechanism_options": {"clipping_norm": "auto"}}) for T in (200, 500)]

    return _logistic_gain_rows(sizes, range(1 if quick else 2), 101, settings,
                               families=LOGISTIC_FAMILIES + ["categorical"])


def many_band_table(rows, edges=(10_000, 3000, 1000)):
    """``family_band_table`` on the bands of many records for the budget (``edges``, default 1000, 3000, 10000), by
    the number of features too (at most 100, 101-300, more)."""
    by = {}
    for r in rows:
        band = next(b for b in (*edges, 0) if r["n eps / log p"] >= b)
        wide = "p <= 100" if r["p"] <= 100 else "p 101-300" if r["p"] <= 300 else "p > 300"
        for family in ("all", r["family"]):
            key = (family, band, wide)
            by.setdefault(key, {}).setdefault(r["setting"], []).append(r["gain"])
    return [{"family": family, "n eps / log p from": band, "features": wide, "fits": len(next(iter(d.values()))),
             **{name: float(np.mean(v)) for name, v in d.items()}} for (family, band, wide), d in sorted(by.items())]


def family_band_table(rows):
    """Mean gain over the constant predictor of each setting per band of ``n epsilon / log p`` (edges 30, 100, 300,
    1000), over every family and per family."""
    by = {}
    for r in rows:
        band = next(b for b in (1000, 300, 100, 30, 0) if r["n eps / log p"] >= b)
        for family in ("all", r["family"]):
            by.setdefault((family, band), {}).setdefault(r["setting"], []).append(r["gain"])
    return [{"family": family, "n eps / log p from": band, "fits": len(next(iter(d.values()))),
             **{name: float(np.mean(v)) for name, v in d.items()}} for (family, band), d in sorted(by.items())]


def study_fw_radius(quick):
    """The radius of private Frank-Wolfe's L1 ball when a user names ``mechanism="fw"`` and nothing else
    (``fw.default_radius``): radius 1, 3, 10 and 30 for the logistic loss, the hinge loss (the four logistic
    families, p up to 1000) and least squares (planted 5-sparse regressions, SNR 10, features filling all or 30 % of
    their range); the gain over the constant predictor (R^2 for least squares) by band of ``n epsilon / log p``."""
    radii = (1, 3, 10, 30)
    sizes = list(itertools.product((1000, 5000, 20000), (30, 300), (0.3, 1.0)))
    wide = list(itertools.product((5000, 20000), (1000,), (0.3, 1.0, 3.0)))  # many vertices: a noisy choice costs more
    rows = []
    for loss, estimator, offset in (("logistic", DPLogisticRegression, 71), ("hinge", DPLinearSVC, 73)):
        def settings(p, loss=loss):
            return [(f"{loss} radius {r}", {"mechanism": "fw", "mechanism_options": {"radius": r}}) for r in radii]

        for chosen, at in ((sizes, offset), (wide, offset + 4)):
            rows += _logistic_gain_rows(chosen[::2] if quick else chosen, range(1), at, settings, estimator=estimator)
    for (n, p, eps), fill in itertools.product(sizes[::2] if quick else sizes, (1.0, 0.3)):
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, 5, 10.0, n + p, fill=fill)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        for r in radii:
            est = DPLasso(epsilon=eps, bounds=bounds, random_state=0, mechanism="fw", mechanism_options={"radius": r})
            rows.append({"n": n, "p": p, "epsilon": eps, "family": f"regression/{fill}",
                         "n eps / log p": round(n * eps / np.log(p), 0), "setting": f"least squares radius {r}",
                         "gain": float(r2_score(yte, _quiet(est.fit, Xtr, ytr).predict(Xte)))})
    return rows


IHT_STEPS = ((1.0, 10), (0.5, 10), (0.5, 20), (0.25, 10), (0.25, 20), (0.25, 40), (0.125, 20), (0.125, 40))
"""``(step as a multiple of 1 / sup f'', iterations)`` of the ``iht-step`` study."""


def study_iht_step(quick):
    """dp-iht's step and iterations when a user names ``mechanism="dp-iht"`` and nothing else (its step
    ``1 / sup f''`` and 10 iterations before): ``IHT_STEPS`` on the four logistic families and the categorical one,
    and on planted 5-sparse regressions (SNR 10, features filling all or 30 % of their range); n 2000 and 10000,
    p 100 and 300, epsilon 0.5 and 1, one seed; the gain over the constant predictor (R^2 for least squares) by
    family and number of features."""
    sizes = list(itertools.product((2000, 10000), (100, 300), (0.5, 1.0)))[:: 2 if quick else 1]

    def options(curvature):
        return [(f"step x{m} T{T}", {"learning_rate": m / curvature, "n_iter": T}) for m, T in IHT_STEPS]

    def settings(p):
        return [(name, {"mechanism": "dp-iht", "mechanism_options": o}) for name, o in options(0.25)]

    rows = _logistic_gain_rows(sizes, range(1), 91, settings, families=LOGISTIC_FAMILIES + ["categorical"])
    for (n, p, eps), fill in itertools.product(sizes, (1.0, 0.3)):
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, 5, 10.0, n + p + 5, fill=fill)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        for name, o in options(1.0):
            est = DPLasso(epsilon=eps, bounds=bounds, random_state=0, mechanism="dp-iht", mechanism_options=o)
            rows.append({"n": n, "p": p, "epsilon": eps, "family": f"regression/{fill}",
                         "n eps / log p": round(n * eps / np.log(p), 0), "setting": name,
                         "gain": float(r2_score(yte, _quiet(est.fit, Xtr, ytr).predict(Xte)))})
    return rows


def study_logistic_wide(quick):
    """On more than ``auto.FEW`` features, the rule's DP-GCD against ``two-stage`` (10 features selected with half
    the budget, then 200 steps of DP-GD with its automatic clipping norm), by the number of features, on the four
    logistic families and the categorical one (many weak effects) above the floor; the gain over the constant
    predictor."""
    two_stage = {"mechanism": "two-stage", "max_iter": auto.GD_STEPS, "mechanism_options": {
        "sparsity": auto.SPARSITY, "selection_share": 0.5, "second": "dp-gd"}}
    sizes = itertools.product((2000, 5000, 20000), (150, 200, 300, 1000), (0.3, 1.0))
    return _logistic_gain_rows(sizes, range(1 if quick else 2), 31, lambda p: [("rule", {}), ("two-stage", two_stage)],
                               keep=lambda n, p, eps: n * eps >= auto.FLOOR * np.log(p),
                               families=LOGISTIC_FAMILIES + ["categorical"])


def study_steps_wide(quick):
    """DP-GCD's steps (automatic clipping) on more than ``auto.FEW`` features, on the four logistic families and the
    categorical one above the floor, by ``n epsilon / log p``; the held-out accuracy's gain over the constant."""
    sizes = itertools.product((2000, 5000, 20000), (150, 300, 1000), (0.3, 1.0))
    settings = [(f"T={T}", {"mechanism": "dp-gcd", "max_iter": T, "mechanism_options": {"clipping_norm": "auto"}})
                for T in (25, 50, 100, 200)]
    return _logistic_gain_rows(sizes, range(1 if quick else 2), 53, lambda p: settings,
                               keep=lambda n, p, eps: n * eps >= auto.FLOOR * np.log(p),
                               families=LOGISTIC_FAMILIES + ["categorical"])


def study_steps_band(quick):
    """DP-GCD's 50 against 100 steps (automatic clipping) where ``n epsilon / log p`` is 250-1000, the band between
    the ``steps-wide`` study's sizes, on the four logistic families and the categorical one, 3 seeds; the held-out
    accuracy's gain over the constant."""
    sizes = [(2000, 150, 1.0), (3000, 150, 1.0), (5000, 300, 0.5), (10000, 1000, 0.3), (3000, 300, 1.0),
             (8000, 1000, 0.5), (6000, 1000, 0.7), (4000, 300, 1.0), (20000, 1000, 0.25), (6000, 1000, 1.0),
             (8000, 1000, 1.0)]
    settings = [(f"T={T}", {"mechanism": "dp-gcd", "max_iter": T, "mechanism_options": {"clipping_norm": "auto"}})
                for T in (50, 100)]
    return _logistic_gain_rows(sizes, range(1 if quick else 3), 97, lambda p: settings,
                               families=LOGISTIC_FAMILIES + ["categorical"])


def study_start_imbalanced(quick):
    """DP-GCD's warm start from the constant predictor's intercept (the option ``warm_start``: a noisy label mean,
    ``SHARE`` of the budget) against a cold start, with the rule's steps and automatic clipping, where the classes
    are imbalanced (the logistic families shifted to about 75 / 25 and 85 / 15, and the categorical family) and one
    balanced family, at epsilon 0.1-1 and ``n epsilon / log p`` 300-2000 (the ``start`` study: epsilon 1, at most
    300 features); the held-out accuracy's gain over the constant."""
    sizes = [(5000, 150, 0.3), (10000, 300, 0.3), (20000, 1000, 0.2), (30000, 120, 0.1), (20000, 150, 0.2),
             (10000, 150, 1.0)]
    families = [("sparse", 0.0), ("sparse", -2.5), ("dense", -2.5), ("factor", -2.5), ("categorical", None)]
    rows = []
    for (n, p, eps), (family, offset), seed in itertools.product(sizes, families, range(1 if quick else 2)):
        s = 500 + 1000 * seed + n + p
        if family == "categorical":
            Xtr, ytr, Xte, yte = categorical_family(n, p, s)
        else:
            k = {"sparse": 5, "dense": p, "factor": 1}[family]
            Xtr, ytr, Xte, yte = logistic_family(n, p, k, 1.0 if family == "sparse" else 0.3, s, offset=offset,
                                                 factor=family == "factor")
        constant = float(max(np.mean(yte), 1 - np.mean(yte)))
        steps = auto.GCD_FEW_STEPS if n * eps < auto.GCD_BAND * np.log(p) else auto.ITERATIONS
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": f"{family}/{offset}",
                "n eps / log p": round(n * eps / np.log(p), 0)}
        for warm in (False, True):
            est = DPLogisticRegression(epsilon=eps, bounds=Bounds(-np.ones(p), np.ones(p)), classes=[0, 1],
                                       random_state=seed, mechanism="dp-gcd", max_iter=steps,
                                       mechanism_options={"clipping_norm": "auto", "warm_start": warm})
            rows.append({**base, "setting": "warm" if warm else "cold",
                         "gain": float(_quiet(est.fit, Xtr, ytr).score(Xte, yte)) - constant})
        print(f"n={n} p={p} epsilon={eps} {base['family']} seed={seed} done", flush=True)
    return rows


def study_alpha(quick):
    """The penalty strength ``alpha`` (L1, the estimators' default penalty) under the logistic rule, on the four
    logistic families and the categorical one above the floor, by ``n epsilon / log p``: the rule's mechanism and
    steps, only ``alpha`` changed; the held-out accuracy's gain over the constant."""
    sizes = itertools.product((1000, 5000, 20000), (30, 100, 300, 1000), (0.3, 1.0))
    settings = [(f"alpha={a:g}", {"alpha": a}) for a in ALPHAS]
    return _logistic_gain_rows(sizes, range(1 if quick else 2), 71, lambda p: settings,
                               keep=lambda n, p, eps: n * eps >= auto.FLOOR * np.log(p),
                               families=LOGISTIC_FAMILIES + ["categorical"])


def study_alpha_regression(quick):
    """``alpha`` under the least-squares rule (``DPLasso``'s defaults, only ``alpha`` changed), on planted 5- and
    10-sparse regressions (SNR 3 and 30) and 8 dense features, above the floor; held-out R^2 (the constant's is
    about 0) in the column ``gain``."""
    sizes = itertools.product((1000, 5000, 20000), (8, 300, 1000), (0.3, 1.0), (5, 10), (3.0, 30.0),
                              range(1 if quick else 2))
    rows = []
    for n, p, eps, k, snr, seed in sizes:
        if n * eps < auto.FLOOR_LEAST_SQUARES * np.log(p):
            continue
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, min(k, p), snr, 17 * seed + n + p + k)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        base = {"n": n, "p": p, "epsilon": eps, "n eps / log p": round(n * eps / np.log(p), 0)}
        for a in ALPHAS:
            est = DPLasso(epsilon=eps, bounds=bounds, random_state=seed, alpha=a)
            rows.append({**base, "setting": f"alpha={a:g}",
                         "gain": float(r2_score(yte, _quiet(est.fit, Xtr, ytr).predict(Xte)))})
    return rows


ALPHAS = (0.0, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2)


def study_large(quick):
    """The rule's steps where records are many (n = 10^5 and 10^6, beyond the other studies' 30,000): the rule's
    choice against the same mechanism and options with half and twice its steps, for the logistic rule (two logistic
    families) and the least-squares rule (planted 5-sparse regressions, SNR 10); the gain over the constant
    predictor (held-out accuracy, R^2)."""
    rows = []
    logistic = [(10**5, 30, 1.0), (10**5, 300, 1.0), (10**6, 30, 0.3)]
    regression = [(10**5, 300, 1.0), (10**6, 30, 0.3)]
    if quick:
        logistic, regression = logistic[:1], regression[:1]
    for (n, p, eps), family in itertools.product(logistic, LOGISTIC_FAMILIES[1:3]):
        k, fill, factor = family
        Xtr, ytr, Xte, yte = logistic_family(n, p, p if k == "dense" else k, fill, n + p, factor=factor)
        constant = float(max(np.mean(yte), 1 - np.mean(yte)))
        name, options, _ = auto.choose(losses.Logistic(), norms.build_penalty("l1", auto.ALPHA, p, True), n, p, eps)
        steps = options.pop("n_iter")
        base = {"n": n, "p": p, "epsilon": eps, "family": f"{k}/{fill}", "mechanism": name,
                "n eps / log p": round(n * eps / np.log(p), 0)}
        for factor_ in (0.5, 1, 2):
            est = DPLogisticRegression(epsilon=eps, bounds=Bounds(-np.ones(p), np.ones(p)), classes=[0, 1],
                                       random_state=0, mechanism=name, max_iter=int(steps * factor_),
                                       mechanism_options=options)
            rows.append({**base, "setting": f"steps x{factor_:g}", "steps": int(steps * factor_),
                         "gain": float(_quiet(est.fit, Xtr, ytr).score(Xte, yte)) - constant})
        print(f"logistic n={n} p={p} epsilon={eps} {base['family']} done", flush=True)
    for n, p, eps in regression:
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, 5, 10.0, n + p)
        name, options, _ = auto.choose(losses.Squared(), norms.build_penalty("l1", auto.ALPHA, p, True), n, p, eps)
        steps = options.pop("n_iter")
        base = {"n": n, "p": p, "epsilon": eps, "family": "regression 5/10", "mechanism": name,
                "n eps / log p": round(n * eps / np.log(p), 0)}
        for factor_ in (0.5, 1, 2):
            est = DPLasso(epsilon=eps, bounds=Bounds(-np.ones(p), np.ones(p), -half, half), random_state=0,
                          mechanism=name, max_iter=int(steps * factor_), mechanism_options=options)
            rows.append({**base, "setting": f"steps x{factor_:g}", "steps": int(steps * factor_),
                         "gain": float(r2_score(yte, _quiet(est.fit, Xtr, ytr).predict(Xte)))})
        print(f"least squares n={n} p={p} epsilon={eps} done", flush=True)
    return rows


def study_bounds_share(quick):
    """``bounds_share``, the budget's share for the private preprocessing (the labels' moments of ``clip="auto"``,
    and the quantiles that narrow the declared ranges where affordable): DPLasso's and DPLogisticRegression's
    defaults with shares 0.05 to 0.3, on planted 5-sparse regressions (SNR 10) and two logistic families whose
    features fill 30 % or all of their declared range; the gain over the constant predictor."""
    shares = (0.05, 0.1, 0.2, 0.3)
    rows = []
    sizes = itertools.product((2000, 10000, 50000), (8, 100), (0.5, 1.0))
    if quick:
        sizes = itertools.product((2000, 50000), (8,), (1.0,))
    for n, p, eps in sizes:
        for fill in (0.3, 1.0):
            Xtr, ytr, Xte, yte, _, half = regression_family(n, p, min(5, p), 10.0, n + p + 7, fill=fill)
            base = {"n": n, "p": p, "epsilon": eps, "family": f"regression fill {fill}",
                    "n eps / log p": round(n * eps / np.log(p), 0)}
            for share in shares:
                est = DPLasso(epsilon=eps, bounds=Bounds(-np.ones(p), np.ones(p), -half, half), random_state=0,
                              bounds_share=share)
                rows.append({**base, "setting": f"share {share:g}",
                             "gain": float(r2_score(yte, _quiet(est.fit, Xtr, ytr).predict(Xte)))})
            Xtr, ytr, Xte, yte = logistic_family(n, p, min(5, p), fill, n + p + 11)
            constant = float(max(np.mean(yte), 1 - np.mean(yte)))
            base = {**base, "family": f"logistic fill {fill}"}
            for share in shares:
                est = DPLogisticRegression(epsilon=eps, bounds=Bounds(-np.ones(p), np.ones(p)), classes=[0, 1],
                                           random_state=0, bounds_share=share)
                rows.append({**base, "setting": f"share {share:g}",
                             "gain": float(_quiet(est.fit, Xtr, ytr).score(Xte, yte)) - constant})
        print(f"n={n} p={p} epsilon={eps} done", flush=True)
    return rows


def raw_family(kind, n, p, seed, n_test=2000, classification=False):
    """Records in their own units, for the private bounds (nothing declared): ``uniform`` (each feature uniform on
    a range of random centre and width 10^-2 to 10^3), ``lognormal`` (sigma 0.5-1.2), ``mixed`` (uniform, an
    income-like lognormal, Poisson counts and 0/1 answers with 10-50 % ones, in turn) or ``outliers`` (Gaussians
    with 1 % of values 20 times as far); the label a planted linear function of the standardized features (all
    of them, weights of both signs) plus noise (SNR 4), or a logistic draw from it. Returns the split."""
    rng = np.random.default_rng(seed)
    N = n + n_test
    if kind == "uniform":
        width = 10.0 ** rng.uniform(-2, 3, p)
        X = (rng.uniform(-0.5, 0.5, (N, p)) + rng.uniform(-1, 1, p)) * width
    elif kind == "lognormal":
        X = rng.lognormal(rng.uniform(-1, 3, p), rng.uniform(0.5, 1.2, p), (N, p))
    elif kind == "mixed":
        makers = (lambda: rng.uniform(-1, 1, N), lambda: rng.lognormal(10, 0.7, N), lambda: rng.poisson(3, N),
                  lambda: rng.random(N) < rng.uniform(0.1, 0.5))
        X = np.column_stack([makers[j % 4]() for j in range(p)]).astype(float)
    else:
        X = rng.standard_normal((N, p)) * (1.0 + 19.0 * (rng.random((N, p)) < 0.01))
    Z = (X - X.mean(0)) / X.std(0)
    signal = Z @ (rng.choice([-1.0, 1.0], p) * rng.uniform(0.5, 1.5, p))
    if classification:
        y = (rng.random(N) < 1.0 / (1.0 + np.exp(-signal / signal.std() * 2.0))).astype(float)
    else:
        y = signal + signal.std() / 2.0 * rng.standard_normal(N)
    return X[:n], y[:n], X[n:], y[n:]


def study_private_tail(quick):
    """The level of the private bounds' outer quantiles (``private_bounds.TAIL_DIVISOR``: the tail is ``r / (D n)``
    of the records, ``r`` the selections' rank error), where nothing is declared: D 4, 3 and 2, and D 2 for the
    label only, on ``raw_family``'s four families, DPLasso and DPLogisticRegression (classes declared) at their
    defaults, p 5 and 15, (n, epsilon) from (3000, 1) to (30000, 0.3); the gain over the constant predictor (R^2
    minus the training mean's, accuracy minus the majority class's). A fit refused for too few records counts as
    the constant."""
    import dpsparse.private_bounds as pb

    settings = (("D 4", 4.0, 4.0), ("D 3", 3.0, 3.0), ("D 2", 2.0, 2.0), ("D 2 label, 4 features", 4.0, 2.0))
    quantile = pb.PendingDesign._quantile

    def relevel(features, label):
        def select(self, counts, level, noise, name, anchor=None):
            if name.startswith(("lower bound", "upper bound")):  # the outer quantiles, not the label's quartiles
                tail = max(pb.MIN_TAIL, self.tail * pb.TAIL_DIVISOR / (label if name.endswith("label") else features))
                level = tail if level < 0.5 else 1.0 - tail
            return quantile(self, counts, level, noise, name, anchor)
        return select

    sizes = ((3000, 1.0), (10000, 0.5), (10000, 1.0), (30000, 0.3)) if not quick else ((3000, 1.0), (10000, 1.0))
    rows = []
    for (n, eps), p, kind, seed in itertools.product(sizes, (5, 15), ("uniform", "lognormal", "mixed", "outliers"),
                                                     range(1 if quick else 3)):
        for classification in (False, True):
            Xtr, ytr, Xte, yte = raw_family(kind, n, p, 1000 * seed + n + p, classification=classification)
            constant = (float(max(np.mean(yte), 1 - np.mean(yte))) if classification
                        else float(r2_score(yte, np.full_like(yte, np.mean(ytr)))))
            base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "n eps / log p": round(n * eps / np.log(p)),
                    "family": f"{kind} {'logistic' if classification else 'least squares'}"}
            for name, features, label in settings:
                pb.PendingDesign._quantile = relevel(features, label)
                est = (DPLogisticRegression(epsilon=eps, classes=[0, 1], random_state=seed) if classification
                       else DPLasso(epsilon=eps, random_state=seed))
                try:
                    score = float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))
                except ValueError:  # refused: too few records for the bounds
                    score = constant
                finally:
                    pb.PendingDesign._quantile = quantile
                rows.append({**base, "setting": name, "gain": score - constant})
        print(f"n={n} epsilon={eps} p={p} {kind} seed {seed} done", flush=True)
    return rows



def study_slots(quick):
    """The private bounds' selections over the grid points alone (before) or with each grid point standing for itself
    and the open interval next to it on the quantile's outer side (``private_bounds._interval_scores``, the rule):
    ``raw_family``'s four families, least squares and the logistic loss (classes declared), nothing else declared,
    the estimators at their defaults, p 4 and 15, (n, epsilon) from (3000, 1) to (30000, 0.3), the features (and a
    regression's label) as drawn and shifted by 5 and 50 of their standard deviations (a longitude, a percentage near
    its top, a temperature in kelvin); the gain over the constant predictor (R^2, or accuracy minus the majority
    class's), a fit refused for too few records counted as the constant, a fit below -9.99 as -9.99."""
    import dpsparse.private_bounds as pb

    quantile = pb.PendingDesign._quantile

    def grid_only(self, counts, level, noise, name, anchor=None, intervals=True):
        return quantile(self, counts, level, noise, name, anchor, intervals=False)

    settings = (("grid points (before)", grid_only), ("grid points and their intervals", quantile))
    sizes = ((3000, 1.0), (10000, 0.5), (10000, 1.0), (30000, 0.3)) if not quick else ((3000, 1.0), (10000, 1.0))
    rows = []
    for (n, eps), p, kind, seed in itertools.product(sizes, (4, 15), ("uniform", "lognormal", "mixed", "outliers"),
                                                     range(1 if quick else 2)):
        for classification in (False, True):
            Xtr, ytr, Xte, yte = raw_family(kind, n, p, 1000 * seed + n + p + 11, classification=classification)
            constant = (float(max(np.mean(yte), 1 - np.mean(yte))) if classification
                        else float(r2_score(yte, np.full_like(yte, np.mean(ytr)))))
            for shift in (0.0, 5.0, 50.0):
                offset, label = shift * Xtr.std(0), 0.0 if classification else shift * float(np.std(ytr))
                base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "n eps / log p": round(n * eps / np.log(p)),
                        "family": f"{kind} {'logistic' if classification else 'least squares'}, shifted {shift:g} sd"}
                for name, select in settings:
                    pb.PendingDesign._quantile = select
                    est = (DPLogisticRegression(epsilon=eps, classes=[0, 1], random_state=seed) if classification
                           else DPLasso(epsilon=eps, random_state=seed))
                    try:
                        score = float(_quiet(est.fit, Xtr + offset, ytr + label).score(Xte + offset, yte + label))
                    except ValueError:  # refused: too few records for the bounds
                        score = constant
                    finally:
                        pb.PendingDesign._quantile = quantile
                    rows.append({**base, "setting": name, "gain": max(score - constant, -9.99)})
        print(f"n={n} epsilon={eps} p={p} {kind} seed {seed} done", flush=True)
    return rows


def published_family(n, p, seed, n_test=2000, regression=False):
    """Records whose declared ranges are the Min and Max of a published description: each feature positive and
    right-skewed (lognormal, sigma 0.3-1), its range the extremes of a public sample of 20,000 other records (so a
    few held-out values fall outside and are clipped); the label a logistic draw from three planted weights on the
    log features, which share one latent factor (cells measured several ways, breast cancer's kind)."""
    rng = np.random.default_rng(seed)
    mu, sigma = rng.uniform(-2, 6, p), rng.uniform(0.3, 1.0, p)
    loading = rng.uniform(0.3, 0.9, p)

    def draw(m):
        f = rng.standard_normal(m)
        Z = loading * f[:, None] + np.sqrt(1 - loading**2) * rng.standard_normal((m, p))
        return np.exp(mu + sigma * Z), Z, f

    reference = draw(20000)[0]
    X, Z, f = draw(n + n_test)
    w = np.zeros(p)
    w[rng.choice(p, min(3, p), replace=False)] = rng.choice([-1.0, 1.0], min(3, p))
    margin = Z @ w + f
    margin = 4.0 * (margin - margin.mean()) / margin.std()
    if regression:  # the same slope, a continuous label (SNR 2) declared within five of its sds
        return _regression_split(X, margin, n, rng, Bounds(reference.min(0), reference.max(0)))
    y = np.where(rng.random(n + n_test) < 1.0 / (1.0 + np.exp(-margin)), 1, 0)
    return X[:n], y[:n], X[n:], y[n:], Bounds(reference.min(0), reference.max(0))


def _regression_split(X, signal, n, rng, bounds, snr=2.0):
    """A continuous label from ``signal`` (SNR ``snr``), its range declared five label sds either side of 0 in
    ``bounds``; the split."""
    y = signal + signal.std() / np.sqrt(snr) * rng.standard_normal(signal.size)
    half = 5.0 * y.std()
    return X[:n], y[:n], X[n:], y[n:], dataclasses.replace(bounds, label_low=-half, label_high=half)


def heterogeneous_family(n, p, seed, n_test=2000, regression=False):
    """Records whose features share an a-priori range, [0, 1], but not a spread (madelon's kind): around 0.5, nine
    in ten are narrow noise (sd 0.02-0.05), the rest (at least one) carry the label and spread wide (sd 0.13)."""
    rng = np.random.default_rng(seed)
    wide = max(1, p // 10)
    sd = np.r_[np.full(wide, 0.13), rng.uniform(0.02, 0.05, p - wide)]
    Z = rng.standard_normal((n + n_test, p))
    X = np.clip(0.5 + sd * Z, 0.0, 1.0)
    margin = Z[:, :wide] @ rng.choice([-1.0, 1.0], wide)
    margin = 4.0 * margin / margin.std()
    if regression:
        return _regression_split(X, margin, n, rng, Bounds(np.zeros(p), np.ones(p)))
    y = np.where(rng.random(n + n_test) < 1.0 / (1.0 + np.exp(-margin)), 1, 0)
    return X[:n], y[:n], X[n:], y[n:], Bounds(np.zeros(p), np.ones(p))


def study_joint_tightening(quick):
    """The joint tightening of declared ranges (``private_bounds.JointTighteningDesign``), where no quantile of each
    feature is affordable: ``DPLogisticRegression``'s default without it ("declared"), and with it (share 0.05, tail
    ``JOINT_TAIL`` 0.05 unless named) scoring a cut by the mean, the median, the 0.9 quantile or the largest
    (``JOINT_ACROSS``) of the features' counts beyond it, on ``published_family``, ``heterogeneous_family`` and
    ``logistic_family``'s features filling 30 % or all of [-1, 1]; n 300 to 3000, p 10 to 300, epsilon 0.5 and 1,
    12 seeds; the gain over the constant predictor. (An earlier run, 16 seeds, p up to 100, without the
    heterogeneous family, compared the mean's tails 0.02-0.1 and shares 0.05-0.1: docs/defaults.md.)"""
    import dpsparse.estimators as E
    import dpsparse.private_bounds as pb
    from dpsparse.accounting import zcdp_budget

    settings = (("declared", None, None, None), ("mean", 0.05, 0.05, "mean"), ("median", 0.05, 0.05, 0.5),
                ("q0.9", 0.05, 0.05, 0.9), ("max", 0.05, 0.05, 1.0), ("max tail 0.02", 0.05, 0.02, 1.0))
    joint, share, tail = E.DPLogisticRegression._joint, E.JOINT_SHARE, pb.JOINT_TAIL
    across, statistic = pb.JOINT_ACROSS, pb._across
    widest, coarsest = E.JOINT_MAX_FEATURES, pb.JOINT_MAX_ERROR
    E.JOINT_MAX_FEATURES, pb.JOINT_MAX_ERROR = 10**6, np.inf  # measured everywhere: the study sets these limits
    sizes = itertools.product((300, 1000, 3000), (10, 30, 100, 300), (0.5, 1.0))
    if quick:
        sizes = itertools.product((300, 1000), (30,), (1.0,))
    rows = []
    for (n, p, eps), seed in itertools.product(sizes, range(1 if quick else 12)):
        problems = {"published": published_family(n, p, 1000 * seed + n + p),
                    "heterogeneous": heterogeneous_family(n, p, 1000 * seed + n + p + 5)}
        for fill in (0.3, 1.0):
            problems[f"fill {fill}"] = (*logistic_family(n, p, min(5, p), fill, 1000 * seed + n + p + 3),
                                        Bounds(-np.ones(p), np.ones(p)))
        for family, (Xtr, ytr, Xte, yte, bounds) in problems.items():
            constant = float(max(np.mean(yte), 1 - np.mean(yte)))
            rho = zcdp_budget(eps, 1.0 / n**2)
            base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": family,
                    "selection error": 2.0 * np.log(pb.JOINT_GRID.size) / (np.sqrt(4.0 * 0.05 * rho) * n)}
            for name, s, t, variant in settings:
                if s is None:
                    E.DPLogisticRegression._joint = lambda self, *args: None
                else:
                    E.JOINT_SHARE, pb.JOINT_TAIL = s, t
                if variant == "mean":
                    pb._across = lambda counts: counts.mean(axis=0)
                elif variant is not None:
                    pb.JOINT_ACROSS = variant
                try:
                    est = DPLogisticRegression(epsilon=eps, bounds=bounds, classes=[0, 1], random_state=seed)
                    score = float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))
                finally:
                    E.DPLogisticRegression._joint, E.JOINT_SHARE, pb.JOINT_TAIL = joint, share, tail
                    pb.JOINT_ACROSS, pb._across = across, statistic
                rows.append({**base, "setting": name, "gain": score - constant})
        print(f"n={n} p={p} epsilon={eps} seed {seed} done", flush=True)
    E.JOINT_MAX_FEATURES, pb.JOINT_MAX_ERROR = widest, coarsest
    return rows



def study_regression_cuts(quick, seeds=range(6), salt=0, tails=(0.05, 0.01), slopes=(0.0,)):
    """Joint cuts of a regression's declared ranges (``private_bounds.JointLabelDesign``: the cuts, then the label
    range narrowed privately, as a user calls ``DPLasso``): the regressor without them ("declared", as before), and
    with them at each ``tails`` target, on ``published_family`` and ``heterogeneous_family`` with a continuous label
    and ``regression_family`` (labels inside their declared range) with features filling 30 % or all of [-1, 1];
    n 300 to 3000, p 5 to 50, epsilon 0.5 and 1; the R^2 gain over the constant predictor (0). ``slopes``: the
    tie-break ``JOINT_SLOPE`` of each tail. ``tails=None``: the rule's own (``JOINT_TAIL_REGRESSION``,
    ``JOINT_SLOPE``), on other seeds (``--study regression-cuts-confirm``)."""
    import dpsparse.estimators as E
    import dpsparse.private_bounds as pb

    if tails is None:
        tails, slopes = (pb.JOINT_TAIL_REGRESSION,), (pb.JOINT_SLOPE,)
    settings = [("declared", None, None), *((f"cuts tail {t:g}" + (f" slope {c:g}" if c else ""), t, c)
                                            for t, c in itertools.product(tails, slopes))]

    sizes = itertools.product((300, 1000, 3000), (5, 10, 20, 50), (0.5, 1.0))
    if quick:
        sizes = itertools.product((1000,), (10,), (1.0,))
    rows, tail, slope = [], pb.JOINT_TAIL_REGRESSION, pb.JOINT_SLOPE
    for (n, p, eps), seed in itertools.product(sizes, range(1) if quick else seeds):
        base_seed = 1000 * seed + n + p + salt
        problems = {"published": published_family(n, p, base_seed, regression=True),
                    "heterogeneous": heterogeneous_family(n, p, base_seed + 5, regression=True)}
        for fill in (0.3, 1.0):
            Xtr, ytr, Xte, yte, _, half = regression_family(n, p, min(5, p), 3.0, base_seed + 3, fill=fill,
                                                            labels_inside=True)
            problems[f"fill {fill}"] = (Xtr, ytr, Xte, yte, Bounds(-np.ones(p), np.ones(p), -half, half))
        for family, (Xtr, ytr, Xte, yte, bounds) in problems.items():
            base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": family,
                    "ratio": n * eps / np.log(p)}
            for name, cut, tie in settings:
                if cut is None:  # the regressor as before: its label range narrowed, its feature ranges kept
                    E.DPElasticNet._joint = lambda self, *args: None
                pb.JOINT_TAIL_REGRESSION, pb.JOINT_SLOPE = cut or tail, slope if tie is None else tie
                try:
                    est = _quiet(DPLasso(epsilon=eps, bounds=bounds, random_state=seed).fit, Xtr, ytr)
                finally:
                    pb.JOINT_TAIL_REGRESSION, pb.JOINT_SLOPE = tail, slope
                    if cut is None:
                        del E.DPElasticNet._joint
                rows.append({**base, "setting": name, "gain": float(r2_score(yte, est.predict(Xte)))})
        print(f"n={n} p={p} epsilon={eps} seed {seed} done", flush=True)
    return rows


def study_classifier_cut_slope(quick, seeds=range(6)):
    """The tie-break toward the tightest cut (``private_bounds.JOINT_SLOPE``) on a classifier's joint cuts (``--study
    joint-tightening`` measured them without one), in every band of ``n epsilon / log p``: ``DPLogisticRegression``'s
    default without the cuts ("declared"), with them without a tie-break ("cuts"), with a slope of 0.5 and 1 noise
    scales a grid step, and as the rule takes it ("rule": 0.5 from ``estimators.JOINT_SLOPE_BAND``), on ``--study
    joint-tightening``'s four families, n 300 to 3000, p 10 to 50 (where the cuts are bought), epsilon 0.5 and 1; the
    accuracy gain over "declared" (``cuts_table``). ``seeds`` 40-45: ``--study classifier-cut-slope-confirm``."""
    import dpsparse.estimators as E
    import dpsparse.private_bounds as pb

    sizes = itertools.product((300, 1000, 3000), (10, 20, 50), (0.5, 1.0))
    if quick:
        sizes = itertools.product((1000,), (20,), (1.0,))
    rows, keep = [], (pb.JOINT_SLOPE, E.JOINT_SLOPE_BAND)
    settings = (("declared", None), ("cuts", 0.0), ("cuts slope 0.5", 0.5), ("cuts slope 1", 1.0), ("rule", keep[0]))
    for (n, p, eps), seed in itertools.product(sizes, range(1) if quick else seeds):
        problems = {"published": published_family(n, p, 1000 * seed + n + p + 17),
                    "heterogeneous": heterogeneous_family(n, p, 1000 * seed + n + p + 22)}
        for fill in (0.3, 1.0):
            problems[f"fill {fill}"] = (*logistic_family(n, p, min(5, p), fill, 1000 * seed + n + p + 20),
                                        Bounds(-np.ones(p), np.ones(p)))
        for family, (Xtr, ytr, Xte, yte, bounds) in problems.items():
            base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": family, "ratio": n * eps / np.log(p)}
            for name, slope in settings:
                if slope is None:
                    E.DPLogisticRegression._joint = lambda self, *args: None
                pb.JOINT_SLOPE, E.JOINT_SLOPE_BAND = slope or 0.0, keep[1] if name == "rule" else 0.0
                try:
                    est = DPLogisticRegression(epsilon=eps, bounds=bounds, classes=[0, 1], random_state=seed)
                    score = float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))
                finally:
                    pb.JOINT_SLOPE, E.JOINT_SLOPE_BAND = keep
                    if slope is None:
                        del E.DPLogisticRegression._joint
                rows.append({**base, "setting": name, "gain": score})
        print(f"n={n} p={p} epsilon={eps} seed {seed} done", flush=True)
    return rows


def cuts_table(rows):
    """Mean gain of each setting over "declared", paired, by p and by band of ``n epsilon / log p`` (edges 200,
    500, 1000), over every family and by family."""
    declared = {(r["n"], r["p"], r["epsilon"], r["seed"], r["family"]): r["gain"] for r in rows
                if r["setting"] == "declared"}
    by = {}
    for r in rows:
        if r["setting"] == "declared":
            continue
        d = r["gain"] - declared[(r["n"], r["p"], r["epsilon"], r["seed"], r["family"])]
        band = next(f"below {e}" for e in (200, 500, 1000, np.inf) if r["ratio"] < e)
        for key in (("p", r["p"], "all"), ("p", r["p"], r["family"]), ("band", band, "all"),
                    ("band", band, r["family"]), ("p band", f"{'5' if r['p'] < 10 else '10+'} {band}", "all")):
            by.setdefault((*key, r["setting"]), []).append(d)
    return [{"by": k[0], "value": k[1], "family": k[2], "setting": k[3], "fits": len(v),
             "difference": float(np.mean(v)), "se": float(np.std(v) / np.sqrt(len(v)))}
            for k, v in sorted(by.items(), key=lambda kv: tuple(map(str, kv[0])))]


def joint_table(rows):
    """Mean gain of each setting over "declared", by p (every family, and each) and, on at most 50 features, by band
    of the selections' typical error (``private_bounds.joint_affordable``'s measure: 0.1, 0.2, 0.4)."""
    by = {}
    for r in rows:
        keys = [("p", r["p"], "all"), ("p", r["p"], r["family"])]
        if r["p"] <= 50:
            band = next(b for b in (0.4, 0.2, 0.1, 0.0) if r["selection error"] >= b)
            keys.append(("error from (p <= 50)", band, "all"))
        for key in keys:
            by.setdefault(key, {}).setdefault(r["setting"], []).append(r["gain"])
    table = []
    for (kind, value, family), d in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])):
        base = float(np.mean(d["declared"]))
        table.append({kind: value, "family": family, "fits": len(d["declared"]), "declared": base,
                      **{name: float(np.mean(v)) - base for name, v in d.items() if name != "declared"}})
    return table

def large_table(rows):
    """Each problem's gain per setting (the rule's steps x1)."""
    by = {}
    for r in rows:
        key = (r["family"], r["n"], r["p"], r["epsilon"], r["mechanism"])
        by.setdefault(key, {})[f"{r['setting']} ({r['steps']})"] = r["gain"]
    return [{"family": f, "n": n, "p": p, "epsilon": e, "mechanism": m, **d} for (f, n, p, e, m), d in by.items()]


def planted_logistic_family(n, p, seed, n_test=2000):
    """The planted logistic problem of the utility and sparse benchmarks (``utility._planted``: features normal with
    sd 0.5 clipped to [-1, 1], 10 weights of +-1, ``P(y = 1) = sigmoid(4 <x, w>)``, balanced classes; no other family
    here has both a sparse support and balanced classes), ``n`` training and ``n_test`` held-out records."""
    from utility import _planted

    X, y, _ = _planted(seed=seed, n=n + n_test, p=p, classification=True)
    return X[:n], y[:n], X[n:], y[n:]


GCD_FEW_BANDS = (50, 100, 200, 400, 800)
"""Values of ``n epsilon / log p`` of ``--study gcd-few-steps`` (n set from them)."""


def study_gcd_few_steps(quick):
    """DP-GCD with fewer steps than the rule's ``GCD_FEW_STEPS`` below ``GCD_BAND``: 10, 20 and 50 steps (automatic
    clipping, started from the constant predictor's intercept, as the rule runs it) at ``n epsilon / log p`` in
    ``GCD_FEW_BANDS``, p = 300, 1000 (and 3000 up to 200), epsilon 0.3 and 1, the four logistic families, the
    categorical one and the planted one (``planted_logistic_family``), 3 seeds; the gain over the constant."""
    rows = []
    families = [*LOGISTIC_FAMILIES, "categorical", "planted"]
    for band, p, eps, seed, family in itertools.product(GCD_FEW_BANDS[::2] if quick else GCD_FEW_BANDS,
                                                        (300, 1000, 3000), (0.3, 1.0), range(1 if quick else 3),
                                                        families):
        if p == 3000 and band > 200:
            continue
        n = int(round(band * np.log(p) / eps))
        data_seed = 61 * seed + n + p
        if family == "categorical":
            Xtr, ytr, Xte, yte = categorical_family(n, p, data_seed)
        elif family == "planted":
            Xtr, ytr, Xte, yte = planted_logistic_family(n, p, data_seed)
        else:
            k, fill, factor = family
            Xtr, ytr, Xte, yte = logistic_family(n, p, p if k == "dense" else max(k, 1), fill, data_seed,
                                                 factor=factor)
            family = f"{k}/{fill}/{factor}"
        constant = float(max(np.mean(yte), 1 - np.mean(yte)))
        base = {"n": n, "p": p, "epsilon": eps, "seed": seed, "family": family, "n eps / log p": band}
        for T in (10, 20, auto.GCD_FEW_STEPS):
            est = DPLogisticRegression(epsilon=eps, bounds=Bounds(-np.ones(p), np.ones(p)), classes=[0, 1],
                                       random_state=seed, mechanism="dp-gcd", max_iter=T,
                                       mechanism_options={"clipping_norm": "auto", "warm_start": True})
            accuracy = float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))
            rows.append({**base, "setting": f"T={T}", "gain": accuracy - constant})
    return rows


def study_floor_planted(quick):
    """The default as a user calls it beside the constant predictor (the held-out majority, not private) on the
    planted logistic problem of the utility benchmark (``planted_logistic_family``'s law; n = 1000, p = 1000, one
    split of 750 training records each) over 100 draws of the problem (20 with ``quick``), at epsilon 0.3, 0.5 and 1
    (``n epsilon / log p`` 33, 54 and 109): where the benchmark's one draw puts the default below the constant."""
    from sklearn.model_selection import train_test_split

    rows = []
    for eps, seed in itertools.product((0.3, 0.5, 1.0), range(20 if quick else 100)):
        X, y, _, _ = planted_logistic_family(1000, 1000, seed, n_test=0)  # the benchmark's problem at its seed
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y)
        est = DPLogisticRegression(epsilon=eps, bounds=Bounds(-np.ones(1000), np.ones(1000)), classes=[0, 1],
                                   random_state=seed)
        rows.append({"epsilon": eps, "seed": seed, "n eps / log p": round(750 * eps / np.log(1000)),
                     "setting": "default", "gain": float(_quiet(est.fit, Xtr, ytr).score(Xte, yte))
                     - float(max(np.mean(yte), 1 - np.mean(yte)))})
    return rows


def mean_se_table(rows):
    """Each setting's mean gain over the constant predictor and its standard error, per value of ``n epsilon /
    log p``."""
    by = {}
    for r in rows:
        by.setdefault((r["n eps / log p"], r["setting"]), []).append(r["gain"])
    return [{"n eps / log p": x, "setting": name, "fits": len(v), "gain": float(np.mean(v)),
             "se": float(np.std(v, ddof=1) / np.sqrt(len(v)))} for (x, name), v in sorted(by.items())]


def ratio_table(rows):
    """Mean gain over the constant predictor of each setting per value of ``n epsilon / log p``."""
    by = {}
    for r in rows:
        by.setdefault(r["n eps / log p"], {}).setdefault(r["setting"], []).append(r["gain"])
    return [{"n eps / log p": x, "fits": len(next(iter(d.values()))),
             **{name: float(np.mean(v)) for name, v in sorted(d.items())}} for x, d in sorted(by.items())]


def band_table(rows):
    """Mean gain over the constant predictor of each setting per band of ``n epsilon / log p``."""
    by = {}
    for r in rows:
        x = r["n eps / log p"]
        band = next(b for b in (2000, 1000, 500, 250, 0) if x >= b)
        by.setdefault(band, {}).setdefault(r["setting"], []).append(r["gain"])
    return [{"n eps / log p from": band, "fits": len(next(iter(d.values()))),
             **{name: float(np.mean(v)) for name, v in sorted(d.items())}} for band, d in sorted(by.items())]


def wide_table(rows):
    """Mean gain over the constant predictor of each setting per number of features, and per family."""
    by = {}
    for r in rows:
        for key in (("p", r["p"]), ("family", r["family"])):
            by.setdefault(key, {}).setdefault(r["setting"], []).append(r["gain"])
    return [{key: value, **{name: float(np.mean(v)) for name, v in sorted(d.items())}}
            for (key, value), d in sorted(by.items(), key=lambda kv: (kv[0][0], str(kv[0][1])))]


def mechanism_table(rows):
    """Mean gain over the constant predictor of each setting, per number of features and band of
    ``n epsilon / log p``."""
    by = {}
    for r in rows:
        x = r["n eps / log p"]
        band = next(b for b in (1000, 300, 100, 30, 0) if x >= b)
        by.setdefault((r["p"], band), {}).setdefault(r["setting"], []).append(r["gain"])
    return [{"p": p, "n eps / log p from": band, **{name: float(np.mean(v)) for name, v in sorted(d.items())}}
            for (p, band), d in sorted(by.items())]


def study_band(quick):
    """Where the least-squares rule moves from 5 features to 10: each setting ``features / selection share / DP-GD
    steps`` (5/0.7/50, 5/0.7/200, 10/0.5/50, 10/0.5/200, 10/0.7/200), on planted 5- and 10-sparse regressions
    (SNR 3 and 30) with ``225 <= n epsilon / log p < 900``."""
    sizes = itertools.product((1000, 2000, 5000), (300, 1000), (0.5, 1.0, 2.0), (5, 10), (3.0, 30.0),
                              range(1 if quick else 3))
    settings = [("5/0.7/50", 5, 0.7, 50), ("5/0.7/200", 5, 0.7, 200), ("10/0.5/50", 10, 0.5, 50),
                ("10/0.5/200", 10, 0.5, 200), ("10/0.7/200", 10, 0.7, 200)]
    rows = []
    for n, p, eps, k, snr, seed in sizes:
        ratio = n * eps / np.log(p)
        if not 225 <= ratio < 900:
            continue
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, k, snr, 13 * seed + n + p + k + 1)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        band = 225 if ratio < 350 else (350 if ratio < 600 else 600)  # the band's lower end
        for name, sparsity, share, T in settings:
            est = DPLasso(epsilon=eps, bounds=bounds, random_state=seed, mechanism="two-stage", max_iter=T,
                          mechanism_options={"second": "dp-gd", "sparsity": sparsity, "selection_share": share,
                                             "selection_clip": auto.SELECTION_CLIP})
            rows.append({"n eps / log p": band, "setting": name, "r2": float(r2_score(
                yte, _quiet(est.fit, Xtr, ytr).predict(Xte)))})
    return rows


FEW_FEATURE_CANDIDATES = (
    ("adassp", "adassp", None, None),
    ("dp-gd, 50 steps, automatic clipping norm (its defaults before this study)", "dp-gd", 50, None),
    ("dp-gd, 200 steps", "dp-gd", 200, None),
    ("dp-gd, 400 steps", "dp-gd", 400, None),
    ("dp-gd, 1000 steps", "dp-gd", 1000, None),
    ("dp-gcd, 50 steps, no clipping", "dp-gcd", None, {"clipping_norm": None}),
    ("dp-gcd, 50 steps, automatic clipping (its defaults in an estimator)", "dp-gcd", None, None),
    ("dp-gcd, 100 steps, automatic clipping", "dp-gcd", 100, {"clipping_norm": "auto"}),
)
"""The few-features study's candidates: (label, mechanism, max_iter, mechanism_options)."""


def study_few_features(quick):
    """At most ``auto.SPARSITY`` features: nothing to select; which mechanism fits them all."""
    rows = []
    for n, fill, seed in itertools.product((1000, 5000, 20000), (0.3, 1.0), range(2 if quick else 3)):
        p = 8
        Xtr, ytr, Xte, yte, _, half = regression_family(n, p, p, 3.0, 11 * seed + n, fill=fill)
        bounds = Bounds(-np.ones(p), np.ones(p), -half, half)
        base = {"n": n, "p": fill, "fill": fill, "seed": seed,
                "non-private": float(r2_score(yte, LinearRegression().fit(Xtr, ytr).predict(Xte)))}
        for label, mechanism, max_iter, options in FEW_FEATURE_CANDIDATES:
            m = _quiet(DPLasso(epsilon=1.0, bounds=bounds, random_state=seed, mechanism=mechanism, max_iter=max_iter,
                               mechanism_options=options).fit, Xtr, ytr)
            rows.append({**base, "mechanism": label, "r2": float(r2_score(yte, m.predict(Xte)))})
        print(f"n={n} fill={fill} seed={seed} done", flush=True)
    return rows


def summarize(rows, keys, measure):
    """Mean of ``measure`` per setting (``keys``), per problem size, and over everything."""
    out = {}
    for r in rows:
        key = tuple(r[k] for k in keys)
        out.setdefault(key, {}).setdefault((r["n"], r["p"]), []).append(r[measure])
    table = []
    for key, by_size in out.items():
        means = {f"n={n} p={p}": float(np.mean(v)) for (n, p), v in sorted(by_size.items())}
        table.append({**dict(zip(keys, key)), **means, "mean": float(np.mean(list(means.values())))})
    return sorted(table, key=lambda t: -t["mean"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", choices=["logistic", "start", "start-wide", "steps", "least-squares", "few-features",
                                        "floor", "floor-regression", "sparsity", "second-steps", "band",
                                        "logistic-mechanism", "logistic-wide", "steps-wide", "alpha",
                                        "alpha-regression", "steps-band", "start-imbalanced", "floor-gcd", "large",
                                        "bounds-share", "hinge", "hinge-step", "gd-steps", "selection-few",
                                        "gd-steps-low", "second-steps-low", "floor-wide-gd", "structured",
                                        "logistic-cd", "gd-warm", "second-steps-many", "fw-radius",
                                        "iht-step", "gd-steps-floor", "hinge-wide", "gd-many",
                                        "gd-many-wide", "gd-mid", "floor-steps", "selection-clip", "one-hot",
                                        "one-hot-sgd", "floor-selection", "private-tail", "joint-tightening",
                                        "sparsity-low", "sparsity-fill", "fill-threshold",
                                        "fill-rule", "fill-count", "fill-bands", "huber-bands",
                                        "fill-floor", "floor-selection-inside", "regression-cuts",
                                        "regression-cuts-confirm", "regression-cuts-slope",
                                        "classifier-cut-slope", "classifier-cut-slope-confirm", "gcd-few-steps",
                                        "floor-planted", "slots"],
                    required=True)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.study in ("floor", "floor-regression", "steps", "sparsity", "second-steps", "band", "logistic-mechanism",
                      "logistic-wide", "steps-wide", "alpha", "alpha-regression", "steps-band", "start-imbalanced",
                      "floor-gcd", "large", "bounds-share", "hinge", "hinge-step", "gd-steps", "selection-few",
                      "gd-steps-low", "second-steps-low", "floor-wide-gd", "structured", "logistic-cd",
                      "gd-warm", "second-steps-many", "fw-radius", "iht-step", "gd-steps-floor", "hinge-wide",
                      "gd-many", "gd-many-wide", "gd-mid", "floor-steps", "selection-clip", "one-hot",
                      "one-hot-sgd", "floor-selection", "private-tail", "joint-tightening", "sparsity-low",
                      "sparsity-fill", "fill-threshold", "fill-rule", "fill-count", "fill-bands", "huber-bands",
                      "fill-floor", "regression-cuts", "regression-cuts-confirm", "regression-cuts-slope",
                      "classifier-cut-slope", "classifier-cut-slope-confirm", "gcd-few-steps", "floor-planted",
                      "floor-selection-inside", "slots"):
        study, tabulate = {"floor": (study_floor, floor_table),
                           "floor-gcd": (study_floor_gcd, floor_gcd_table),
                           "floor-regression": (study_floor_regression, floor_table),
                           "steps": (study_steps, steps_table),
                           "sparsity": (study_sparsity, sparsity_table),
                           "second-steps": (study_second_steps, sparsity_table),
                           "band": (study_band, sparsity_table),
                           "logistic-mechanism": (study_logistic_mechanism, mechanism_table),
                           "hinge": (study_hinge, mechanism_table),
                           "hinge-step": (study_hinge_step, family_band_table),
                           "gd-steps": (study_gd_steps, family_band_table),
                           "selection-few": (study_selection_few, family_band_table),
                           "gd-steps-low": (study_gd_steps_low, family_band_table),
                           "gd-steps-floor": (study_gd_steps_floor, ratio_family_table),
                           "floor-steps": (study_floor_steps, ratio_family_table),
                           "hinge-wide": (study_hinge_wide, family_band_table),
                           "gd-many": (study_gd_many, many_band_table),
                           "gd-many-wide": (lambda quick: study_gd_many(quick, wide=True), many_band_table),
                           "gd-mid": (study_gd_mid, lambda rows: many_band_table(rows, (600, 300))),
                           "second-steps-low": (study_second_steps_low, family_band_table),
                           "selection-clip": (study_selection_clip, ratio_family_table),
                           "sparsity-low": (study_sparsity_low, ratio_family_table),
                           "sparsity-fill": (study_sparsity_fill, ratio_family_table),
                           "fill-threshold": (study_fill_threshold, fill_table),
                           "fill-rule": (study_fill_rule, fill_rule_table),
                           "fill-count": (study_fill_count, ratio_family_table),
                           "fill-bands": (study_fill_bands, fill_rule_table),
                           "huber-bands": (study_huber_bands, ratio_family_table),
                           "fill-floor": (study_fill_floor, fill_floor_table),
                           "one-hot": (study_one_hot, one_hot_table),
                           "one-hot-sgd": (study_one_hot_sgd, one_hot_table),
                           "floor-selection": (study_floor_selection, ratio_family_table),
                           "floor-selection-inside": (lambda quick: study_floor_selection(quick, labels_inside=True),
                                                      ratio_family_table),
                           "private-tail": (study_private_tail, family_band_table),
                           "slots": (study_slots, family_band_table),
                           "joint-tightening": (study_joint_tightening, joint_table),
                           "regression-cuts": (study_regression_cuts, cuts_table),
                           "classifier-cut-slope": (study_classifier_cut_slope, cuts_table),
                           "gcd-few-steps": (study_gcd_few_steps, ratio_family_table),
                           "floor-planted": (study_floor_planted, mean_se_table),
                           "classifier-cut-slope-confirm": (lambda quick: study_classifier_cut_slope(
                               quick, seeds=range(40, 46)), cuts_table),
                           "regression-cuts-slope": (lambda quick: study_regression_cuts(
                               quick, seeds=range(6, 12), salt=3, slopes=(0.0, 0.2, 0.5, 1.0)), cuts_table),
                           "regression-cuts-confirm": (lambda quick: study_regression_cuts(
                               quick, seeds=range(40, 46), salt=13, tails=None), cuts_table),
                           "floor-wide-gd": (study_floor_wide_gd, family_band_table),
                           "structured": (study_structured, family_band_table),
                           "logistic-cd": (study_logistic_cd, family_band_table),
                           "gd-warm": (study_gd_warm, family_band_table),
                           "second-steps-many": (study_second_steps_many, family_band_table),
                           "fw-radius": (study_fw_radius, band_table),
                           "iht-step": (study_iht_step, wide_table),
                           "logistic-wide": (study_logistic_wide, wide_table),
                           "steps-wide": (study_steps_wide, band_table),
                           "alpha": (study_alpha, mechanism_table),
                           "alpha-regression": (study_alpha_regression, mechanism_table),
                           "steps-band": (study_steps_band, ratio_table),
                           "large": (study_large, large_table),
                           "bounds-share": (study_bounds_share, lambda rows: [
                               t for t in wide_table(rows) if "family" in t] + band_table(rows)),
                           "start-imbalanced": (study_start_imbalanced, lambda rows: ratio_table(rows) + [
                               t for t in wide_table(rows) if "family" in t])}[args.study]
        rows = study(args.quick)
        table = tabulate(rows)
        for t in table:
            print("  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in t.items()))
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"defaults_rule_{args.study}.json").write_text(json.dumps({"rows": rows, "table": table}, indent=1))
        return
    if args.study == "logistic":
        rows = study_logistic(args.quick)
        table = summarize(rows, ["T", "clip"], "accuracy")
        refs = summarize([{**r, "T": 0} for r in rows], ["T"], "constant")[0], summarize(
            [{**r, "T": 0} for r in rows], ["T"], "non-private")[0]
    elif args.study in ("start", "start-wide"):
        rows = study_start(args.quick, wide=args.study == "start-wide")
        table = summarize(rows, ["T", "warm_start"], "accuracy")
        refs = ()
    elif args.study == "few-features":
        rows = study_few_features(args.quick)
        table = summarize(rows, ["mechanism"], "r2")
        refs = (summarize([{**r, "x": 0} for r in rows], ["x"], "non-private")[0],)
    else:
        rows = study_least_squares(args.quick)
        table = summarize(rows, ["second", "selection_share", "selection_clip"], "r2")
        refs = (summarize([{**r, "x": 0} for r in rows], ["x"], "non-private")[0],)
    cols = [c for c in table[0] if c.startswith("n=")] + ["mean"]
    keys = [c for c in table[0] if c not in cols]
    print(" ".join(f"{k:>14}" for k in keys + cols))
    for t in table:
        print(" ".join(f"{str(t[k]):>14}" for k in keys) + " " + " ".join(f"{t[c]:>14.3f}" for c in cols))
    for ref, name in zip(refs, ["constant", "non-private"] if len(refs) == 2 else ["non-private"][:len(refs)]):
        print(f"{name:>29} " + " ".join(f"{ref[c]:>14.3f}" for c in cols))
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"defaults_rule_{args.study}.json"
    path.write_text(json.dumps({"rows": rows, "table": table}, indent=1))
    print(f"{len(rows)} fits in {time.perf_counter() - t0:.0f} s; {path}")


if __name__ == "__main__":
    main()
