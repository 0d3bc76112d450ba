"""Setups of Kumar & Deisenroth 2019: excess empirical risk against epsilon, every mechanism.

Kumar & Deisenroth, "Differentially Private Empirical Risk Minimization with Sparsity-Inducing
Norms", arXiv 2019.

Problems (delta = 1/n^2, intercept unpenalized, features mapped onto [-1, 1] by
``data.prepare`` from the public bounds declared below):

- ``leukemia``: LIBSVM leu (38 x 7129), L1-logistic;
- ``colon-cancer``: LIBSVM colon-cancer (62 x 2000), L1-logistic;
- ``cadata``: California housing (20640 x 8, dense), Lasso, ``bench.a_priori_bounds("cadata")``;
- ``bardet-group-l2`` / ``bardet-group-linf``: Bardet-Biedl (120 x 100), squared loss with the
  group Lasso / the group L_inf norm on 20 groups of 5 consecutive columns;
- ``birthwt-group-l2`` / ``birthwt-group-linf``: birth weight (189 x 16, target ``bwt``, the
  column ``low`` dropped: it is ``bwt < 2.5``, a leak of the target), the 8 groups of
  ``birthwt.groups.csv``.

For each problem, each mechanism of ``dpsparse.mechanisms.REGISTRY`` and each epsilon in
{0.1, 0.5, 1, 2, 5} the mechanism runs ``--runs`` times (seeds 0..runs-1) with its default
calibration and the fixed public hyperparameters of ``HYPER`` (printed in the header). A
mechanism that refuses a problem is shown as "n/a" with the first sentence of its own
error message.

The measure is the excess empirical risk ``F(w_priv) - F*`` on ONE objective per problem,
the same for every mechanism: ``F(w) = (1/n) sum_i f(<w, x_i>, y_i) + alpha Omega(w)``
(logistic or unclipped squared loss, no ridge, no constraint), ``F*`` from
``solvers.solve`` (L1) or ``solvers.solve_prox`` (group norms) with its certified gap.
Several mechanisms optimize another objective (output perturbation and dual-fw add
``(mu/2)||w||^2`` and use the clipped squared loss, i.e. the Huber loss; objective
perturbation and fw solve a constrained problem over ``{Omega(w) <= radius}``; the
private datafit of the squared-loss problems clips residuals): their released models are
nevertheless measured on ``F``.

Bounds. Theorem 1 (output perturbation, ``theorem1_excess_risk_bound``: Kumar & Deisenroth 2019, Lemma 1
with the factor sigma restored) bounds ``E F_mu(w_priv) - F_mu*`` for the mechanism's own
objective ``F_mu`` (private datafit + penalty + ridge); Theorem 4 (dual-fw,
``theorem4_bound``, constant 1 in its O(.)) bounds the dual excess risk ``D* - D(s_T)``
at Theorem 4's ``T`` (``theorem4_iterations``, used as dual-fw's ``T``). Objective perturbation:
section 4.3's Lipschitz-case bound (``objective_bound``, constant 1) on ``E L(w_priv) - min_C L``,
``L`` the private datafit and ``C = {Omega <= radius}``. Gradient perturbation (dp-sgd): Table 3's
convex-SGD rate ``O~(sqrt(p) / (epsilon n))`` (``gradient_bound``, constant 1, logarithms dropped)
on ``E F(w_priv) - F*``. All are evaluated with the actual constants of each run and compared with
the quantity they bound, measured beside (``own`` columns); a bound below that measurement
contradicts its theorem and is listed at the end. They are drawn, dashed, in the panels of ``F``.
``run_theorems`` (called by ``benchmarks/seed_figures.py``) runs the three perturbations alone and
states the claims: each bound above its measurement, and the measured excess risk's slope in epsilon
against the bound's.

Usage::

    python benchmarks/kumar.py [--runs 10] [--quick] [--data-dir DIR] [--out-dir DIR]

Prints the tables and writes ``kumar.json`` and ``kumar.png`` in ``--out-dir`` (default
``benchmarks/results``). ``--quick``: 2 runs, epsilon in {0.5, 5}.
"""
from __future__ import annotations

import csv
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import bench
from dpsparse import data, losses, norms, solvers
from dpsparse.exceptions import FixedSeedWarning, PrivacyCalibrationWarning, PrivacyLeakWarning
from dpsparse.mechanisms import REGISTRY, fit_mechanism
from dpsparse.mechanisms import dual_fw as dfw
from dpsparse.mechanisms import objective_perturbation as objp
from dpsparse.mechanisms import output_perturbation as op
from dpsparse.mechanisms._common import row_norm_bound
from dpsparse.noise import make_noise

REPO_ROOT = Path(__file__).resolve().parents[1]
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
QUICK_EPSILONS = (0.5, 5.0)
BLAS_THREADS = 1
REFERENCE_TOL = 1e-9
SQUARED_CLIP = bench.SQUARED_CLIP  # residual clipping of the private squared loss (1 on labels in [-1, 1])
# Penalty strength: alpha = ALPHA_RATIO * alpha_max, alpha_max the smallest alpha whose solution
# has no nonzero feature (dual norm of the gradient at the intercept-only fit). It is computed on
# the data: it fixes the reference problem, as in benchmarks/dp_gcd.py, and is not a private step.
ALPHA_RATIO = 0.1
# Ridge of output perturbation and dual-fw (both need mu > 0): one public value for all problems.
MU = 0.01
# Standardized microarrays (LIBSVM leu, colon-cancer: every feature centred and scaled to unit
# variance, per the LIBSVM description): declared range [-3, 3], three standard deviations, a
# conventional winsorization level fixed before the runs (not tuned); values beyond are clipped
# (counted in the table). The standardization itself used the data (outside this guarantee).
STANDARDIZED_RANGE = 3.0

# Fixed, public hyperparameters per problem (the same for every epsilon). T: iterations of
# dp-gcd, epochs of p updates for dp-cd, steps (Poisson batches of expected size sqrt(n)) for
# dp-sgd, Frank-Wolfe steps for fw. radius: the ball {Omega(w) <= radius} of objective
# perturbation and fw (fw's intercept box: the same radius), and the L2 ball of the one-pass
# SGD. The radii are round numbers near Omega(w*) / ||w*||_2 of the non-private solution
# (read once from the data: a benchmark convenience, not a private choice). dual-fw's T is
# Theorem 4's (theorem4_iterations, public: n, epsilon and public constants), capped at
# DUAL_FW_MAX_T.
HYPER = {
    "leukemia": {"dp-gcd": 5, "dp-cd": 1, "dp-sgd": 100, "fw": 20, "radius": 10.0, "sgd_radius": 5.0},
    "colon-cancer": {"dp-gcd": 5, "dp-cd": 1, "dp-sgd": 100, "fw": 20, "radius": 10.0, "sgd_radius": 5.0},
    "cadata": {"dp-gcd": 100, "dp-cd": 50, "dp-sgd": 1000, "fw": 50, "radius": 2.0, "sgd_radius": 2.0},
    "bardet-group-l2": {"dp-sgd": 300, "fw": 20, "radius": 0.1, "sgd_radius": 0.1},
    "bardet-group-linf": {"dp-sgd": 300, "fw": 20, "radius": 0.1, "sgd_radius": 0.1},
    "birthwt-group-l2": {"dp-sgd": 300, "fw": 20, "radius": 1.0, "sgd_radius": 1.0},
    "birthwt-group-linf": {"dp-sgd": 300, "fw": 20, "radius": 1.0, "sgd_radius": 1.0},
}
DUAL_FW_MAX_T = 200
MECHANISM_ORDER = ("dp-gcd", "dp-cd", "dp-sgd", "one-pass-sgd", "output", "objective", "dual-fw", "fw")
# The bound evaluated beside each mechanism, and what it bounds (measured in the "own" rows).
BOUND_LABELS = {"output": "Thm 1: E F_mu - F_mu*", "dual-fw": "Thm 4: D* - D(s_T)",
                "objective": "Sec 4.3: E L - min_C L", "dp-sgd": "Table 3: E F - F*"}
# Iterations of the non-private solve of min over {Omega <= radius} of the datafit (objective perturbation's
# reference; a lower estimate of the excess whatever its accuracy, see ``constrained_reference``).
CONSTRAINED_MAX_ITER = 3000


class Problem:
    """A design on its public bounds, the private datafit, the reference datafit and the penalty."""

    def __init__(self, name, description, design, loss, reference_loss, penalty_name, groups=None,
                 bounds_note="a-priori"):
        self.name, self.description, self.design = name, description, design
        self.loss, self.reference_loss = loss, reference_loss
        self.penalty_name, self.groups, self.bounds_note = penalty_name, groups, bounds_note
        n, p = design.X.shape
        unit = norms.build_penalty(penalty_name, 1.0, p - 1, groups=groups)
        self.alpha_max = alpha_max(design, reference_loss, unit, penalty_name)
        self.alpha = ALPHA_RATIO * self.alpha_max
        self.penalty = norms.build_penalty(penalty_name, self.alpha, p - 1, groups=groups)

    @property
    def delta(self):
        return 1.0 / self.design.X.shape[0] ** 2


def alpha_max(design, loss, unit_penalty, penalty_name):
    """Smallest penalty strength whose solution has no nonzero feature (the intercept, last, unpenalized):
    the dual norm of the gradient at the intercept-only fit (``unit_penalty`` unused for ``"l1"``)."""
    X, y = design.X, design.y
    n, p = X.shape
    if isinstance(loss, losses.Logistic):
        frac = float(np.mean(y > 0))
        b0 = math.log(frac / (1.0 - frac))
    else:
        b0 = float(np.mean(y))
    w0 = np.zeros(p)
    w0[-1] = b0
    g = X.T @ loss.derivative(X @ w0, y) / n
    if penalty_name == "l1":
        return float(np.max(np.abs(g[:-1])))
    g[-1] = 0.0
    return float(unit_penalty.dual_norm(g))


def _dense_svm(path, p):
    X, y = data.load_svmlight(path, n_features=p)
    return X.toarray(), y


def make_problems(data_dir):
    """The seven problems (module docstring)."""
    d = Path(data_dir)
    out = []
    sr = STANDARDIZED_RANGE
    for name, file, p in (("leukemia", "leu.svm.gz", 7129), ("colon-cancer", "colon-cancer.svm.gz", 2000)):
        X, y = _dense_svm(d / "libsvm" / file, p)
        bounds = data.Bounds(-sr * np.ones(p), sr * np.ones(p),
                             source=f"a-priori [-{sr:g}, {sr:g}] on standardized features")
        design = data.prepare(X, y, bounds, classification=True)
        out.append(Problem(name, f"{name} {X.shape[0]}x{p}, L1-logistic", design, losses.Logistic(),
                           losses.Logistic(), "l1"))
    X, y = _dense_svm(d / "libsvm" / "cadata.svm.gz", 8)
    design = data.prepare(X, y, bench.a_priori_bounds("cadata"), classification=False)
    out.append(Problem("cadata", "cadata 20640x8, Lasso", design, losses.Squared(clip=SQUARED_CLIP),
                       losses.Squared(), "l1"))
    # Bardet: the columns are B-spline basis values (nonnegative, a partition of unity): [0, 1]
    # a priori. The label is a log2 expression level of an Affymetrix array (16-bit scanner):
    # [0, 16] a priori.
    X, y = _dense_svm(d / "regression" / "bardet.svm.gz", 100)
    bounds = data.Bounds(np.zeros(100), np.ones(100), 0.0, 16.0,
                         source="a-priori: B-spline values in [0, 1], log2 expression in [0, 16]")
    design = data.prepare(X, y, bounds, classification=False)
    groups = [list(range(5 * g, 5 * g + 5)) for g in range(20)]
    for pen in ("group-l2", "group-linf"):
        out.append(Problem(f"bardet-{pen}", f"bardet 120x100, squared + {pen} (20 groups of 5)", design,
                           losses.Squared(clip=SQUARED_CLIP), losses.Squared(), pen, groups))
    # Birthwt (grpreg coding): age1-3 and lwt1-3 are orthonormal polynomial columns (unit L2 norm
    # over the records, so |x| <= 1 a priori), the others 0/1 indicators; bwt in kg, [0, 6] a
    # priori (heavier newborns are clipped and counted).
    X, y, names = data.load_csv(d / "regression" / "birthwt.csv", target="bwt")
    keep = [k for k, c in enumerate(names) if c != "low"]
    X, names = X[:, keep], [names[k] for k in keep]
    poly = np.array([c[:3] in ("age", "lwt") for c in names])
    bounds = data.Bounds(np.where(poly, -1.0, 0.0), np.ones(len(names)), 0.0, 6.0,
                         source="a-priori: unit-norm polynomial columns in [-1, 1], indicators in [0, 1], "
                                "bwt in [0, 6] kg", feature_names=names)
    design = data.prepare(X, y, bounds, classification=False)
    with open(d / "regression" / "birthwt.groups.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    labels = list(dict.fromkeys(r["group"] for r in rows))
    groups = [[names.index(r["column"]) for r in rows if r["group"] == g] for g in labels]
    for pen in ("group-l2", "group-linf"):
        out.append(Problem(f"birthwt-{pen}", f"birthwt 189x16, squared + {pen} ({len(groups)} groups)", design,
                           losses.Squared(clip=SQUARED_CLIP), losses.Squared(), pen, groups))
    return out


# --------------------------------------------------------------------------- references


def reference(problem):
    """``F*`` of the benchmark objective, with its certified gap, and ``F(0)``."""
    d = problem.design
    t0 = time.perf_counter()
    if problem.penalty_name == "l1":
        res = solvers.solve(d.X, d.y, problem.reference_loss, problem.penalty, tol=REFERENCE_TOL)
    else:
        res = solvers.solve_prox(d.X, d.y, problem.reference_loss, problem.penalty, tol=REFERENCE_TOL,
                                 max_iter=200_000)
    f0 = solvers.objective(d.X, d.y, np.zeros(d.X.shape[1]), problem.reference_loss, problem.penalty)
    return {"f_star": float(res.objective), "gap": float(res.gap), "f_zero": float(f0),
            "omega_star": float(problem.penalty.value(res.coef) / problem.alpha),
            "l2_star": float(np.linalg.norm(res.coef)),
            "support": int(np.count_nonzero(res.coef[:-1])), "solve_s": time.perf_counter() - t0}


def _private_datafit(loss):
    """The datafit output perturbation and dual-fw minimize (a clipped squared loss is the Huber loss)."""
    return losses.Huber(loss.clip) if isinstance(loss, losses.Squared) else loss


def own_reference(problem):
    """``F_mu* = min private datafit + penalty + (mu/2)||w||^2`` (= ``D*`` of dual-fw), certified."""
    d = problem.design
    fit = _private_datafit(problem.loss)
    res = solvers.solve_prox(d.X, d.y, fit, problem.penalty, mu=MU, tol=REFERENCE_TOL, max_iter=200_000)
    return {"value": float(res.objective), "gap": float(res.gap)}


def constrained_reference(problem, radius):
    """``L(w_C)``, ``w_C`` a near-minimizer of the private datafit ``L`` over ``C = {Omega(w) <= radius}`` (the
    intercept free, a ridge of 1e-6 for the solver): ``L(w) - L(w_C)`` is a lower estimate of ``L(w) - min_C L``."""
    d = problem.design
    n = d.X.shape[0]
    w, gap, _ = objp.perturbed_constrained(d.X, d.y, problem.loss, problem.penalty, radius, 1e-6 * n,
                                           np.zeros(d.X.shape[1]), REFERENCE_TOL, max_iter=CONSTRAINED_MAX_ITER)
    value = datafit(problem, w)
    return {"value": value, "radius": radius, "gap": float(gap),
            "at_zero": datafit(problem, np.zeros_like(w)) - value}


def datafit(problem, w):
    """The private datafit ``(1/n) sum_i f(<w, x_i>, y_i)``."""
    d = problem.design
    return float(problem.loss.objective(d.X @ w, d.y))


def f_objective(problem, w):
    d = problem.design
    return solvers.objective(d.X, d.y, w, problem.reference_loss, problem.penalty)


def own_objective(problem, w):
    d = problem.design
    return solvers.objective(d.X, d.y, w, _private_datafit(problem.loss), problem.penalty, mu=MU)


# --------------------------------------------------------------------------- Theorem 4 constants


def theorem4_constants(problem, epsilon):
    """(T, bound, constants) of Kumar & Deisenroth 2019, Theorem 4, for dual-fw.

    (T, None, reason) where the theorem gives no bound.
    """
    d = problem.design
    n, p = d.X.shape
    c = float(problem.loss.lipschitz)
    L = c * row_norm_bound(d.feature_bounds, None, p)
    penalty = dfw.l1_as_cardinality(problem.penalty)  # L1 as the norm of the cardinality function
    structure = dfw.selection_structure(penalty)
    width, _ = norms.gaussian_width(penalty, n_samples=10_000, random_state=0)
    G = problem.alpha * width
    if structure is None:
        # K's extreme points are a continuum (group Lasso): log|S| is infinite. T from the
        # Euclidean diameter of K = alpha * (dual ball): 2 alpha max_g d_g.
        diameter = 2.0 * problem.alpha * float(np.max(penalty.weights))
        T = min(dfw.theorem4_iterations(n, epsilon, diameter, L, G), DUAL_FW_MAX_T)
        return T, None, {"diameter": diameter, "L": L, "G_K": G, "log|S|": math.inf,
                         "note": "K has infinitely many extreme points (log|S| infinite): no bound"}
    diameter = 2.0 * structure.max_norm
    T = min(dfw.theorem4_iterations(n, epsilon, diameter, L, G), DUAL_FW_MAX_T)
    bound = dfw.theorem4_bound(n, epsilon, problem.delta, diameter, L, G, structure.log_n_vertices)
    return T, float(bound), {"diameter": diameter, "L": L, "G_K": G, "log|S|": structure.log_n_vertices}


def l1_ball_width(p):
    """Gaussian width ``E max_j |g_j|``, ``g ~ N(0, I_p)``, of the unit L1 ball: the integral of ``P(max > t)``."""
    from scipy import integrate, special

    with np.errstate(divide="ignore"):
        return float(integrate.quad(lambda t: -np.expm1(p * np.log(special.erf(t / math.sqrt(2.0)))), 0.0,
                                    np.inf)[0])


def _lipschitz_constants(problem):
    """``(c R, sup f'' R^2)``: L2-Lipschitz and smoothness constants of a record's loss on the public bounds."""
    d = problem.design
    R = row_norm_bound(d.feature_bounds, None, d.X.shape[1])
    return float(problem.loss.lipschitz) * R, float(problem.loss.smoothness) * R * R


def objective_bound(problem, epsilon, radius):
    """Kumar & Deisenroth 2019, section 4.3, Lipschitz case (objective perturbation over ``C = {Omega <= radius}``,
    from Kifer, Smith & Thakurta 2012 and Talwar, Thakurta & Zhang 2015), its O(.) with constant 1:

        E L(w_priv) - min_C L <= (L G_C sqrt(1/delta) + lambda_max Gamma_C) / (n epsilon),

    ``L = c R``, ``lambda_max = sup f'' R^2``, ``G_C = radius E||g||_inf`` and ``Gamma_C = 2 radius`` (the L1 ball on
    the features; the unconstrained intercept is left out of both); ``sqrt(1/delta)`` as printed.
    """
    n, p = problem.design.X.shape
    L, lam = _lipschitz_constants(problem)
    G, diameter = radius * l1_ball_width(p - 1), 2.0 * radius
    return {"bound": (L * G * math.sqrt(1.0 / problem.delta) + lam * diameter) / (n * epsilon), "L": L,
            "lambda_max": lam, "G_C": G, "Gamma_C": diameter}


def gradient_bound(problem, epsilon, l2_star):
    """Kumar & Deisenroth 2019, Table 3, gradient perturbation by SGD on a convex loss (Bassily, Smith & Thakurta
    2014): ``O~(sqrt(p) / (epsilon n))``, evaluated as ``L ||w*||_2 sqrt(p) / (n epsilon)`` (constant 1, logarithms
    dropped; ``L = c R``, ``||w*||`` in place of the domain's diameter: DP-SGD here is not constrained)."""
    n, p = problem.design.X.shape
    L, _ = _lipschitz_constants(problem)
    return {"bound": L * l2_star * math.sqrt(p) / (n * epsilon), "L": L, "||w*||": l2_star}


# --------------------------------------------------------------------------- runs


def _options(problem, mechanism, epsilon):
    h = HYPER[problem.name]
    if mechanism in ("dp-gcd", "dp-cd", "dp-sgd", "fw"):
        opts = {"n_iter": h.get(mechanism, 1)}  # absent: the mechanism refuses the problem (n/a)
        if mechanism == "fw":
            opts["radius"] = h["radius"]
        return opts
    if mechanism == "one-pass-sgd":
        return {"radius": h["sgd_radius"]}
    if mechanism == "output":
        return {"mu": MU}
    if mechanism == "objective":
        return {"radius": h["radius"]}
    if mechanism == "dual-fw":
        return {"mu": MU, "n_iter": theorem4_constants(problem, epsilon)[0]}
    raise KeyError(mechanism)


def fit(problem, mechanism, epsilon, seed, options, callback=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FixedSeedWarning)
        warnings.simplefilter("ignore", PrivacyCalibrationWarning)
        return fit_mechanism(REGISTRY[mechanism], problem.design, problem.loss, problem.penalty, epsilon=epsilon,
                             delta=problem.delta, options=options, noise=make_noise(seed), callback=callback)


def _reason(exc):
    msg = str(exc).split(":")[0].split(";")[0].strip()
    return msg[:90]


def _dual_value(problem, s):
    d = problem.design
    resp = dfw.PrimalResponse(d.X, d.y, problem.loss, MU, 1e-10, private=True)
    return float(resp.value(resp(s), s))


def mechanism_runs(problem, ref, own_ref, mechanism, epsilons, runs):
    """All runs of one mechanism on one problem; ``{"na": reason}`` when it refuses the problem."""
    res = {"epsilon": list(epsilons), "excess": [], "mean": [], "std": [], "options": [], "accountant_epsilon": [],
           "own": [], "own_mean": [], "bound": [], "bound_terms": [], "seconds": []}
    for epsilon in epsilons:
        options = _options(problem, mechanism, epsilon)
        excess, own, t0 = [], [], time.perf_counter()
        for seed in range(runs):
            duals = []
            cb = (lambda t, s, duals=duals: duals.append(s)) if mechanism == "dual-fw" else None
            try:
                w, report = fit(problem, mechanism, float(epsilon), seed, options, cb)
            except (ValueError, NotImplementedError) as exc:
                return {"na": _reason(exc), "error": str(exc)}
            excess.append(float(f_objective(problem, w) - ref["f_star"]))
            if mechanism == "output":
                own.append(float(own_objective(problem, w) - own_ref["value"]))
                if seed == 0:
                    sigma = report.noise["noise std"]
                    b = op.theorem1_excess_risk_bound(problem.loss, problem.penalty, problem.design.feature_bounds,
                                                      sigma=sigma, mu=MU, tol=report.noise["solver tolerance"])
            elif mechanism == "dual-fw":
                # D* - D(s_T) >= (F_mu(w_ref) - gap) - D(s_T): the lower end, conservative for the check.
                own.append(float(own_ref["value"] - own_ref["gap"] - _dual_value(problem, duals[-1])))
                if seed == 0:
                    T, bound, consts = theorem4_constants(problem, float(epsilon))
                    b = {"bound": bound, **consts}
            elif mechanism == "objective":
                if "constrained" not in own_ref:
                    own_ref["constrained"] = constrained_reference(problem, options["radius"])
                # L(w) - L(w_C) <= L(w) - min_C L: the lower end, conservative for the check.
                own.append(float(datafit(problem, w) - own_ref["constrained"]["value"]))
                if seed == 0:
                    b = objective_bound(problem, float(epsilon), options["radius"])
            elif mechanism == "dp-sgd":
                own.append(excess[-1])
                if seed == 0:
                    b = gradient_bound(problem, float(epsilon), ref["l2_star"])
            if seed == 0:
                first = report
        res["seconds"].append(time.perf_counter() - t0)
        res["excess"].append(excess)
        res["mean"].append(float(np.mean(excess)))
        res["std"].append(float(np.std(excess)))
        res["options"].append({k: v for k, v in options.items()})
        res["accountant_epsilon"].append(float(first.accountant_epsilon))
        res["own"].append(own)
        res["own_mean"].append(float(np.mean(own)) if own else None)
        if mechanism in BOUND_LABELS:
            res["bound"].append(b["bound"])
            res["bound_terms"].append({k: v for k, v in b.items() if k != "bound"})
        else:
            res["bound"].append(None)
            res["bound_terms"].append(None)
    return res


def run(problems, epsilons, runs, log=print, mechanisms=MECHANISM_ORDER):
    results = {"epsilons": list(epsilons), "runs": runs, "seeds": list(range(runs)), "delta": "1/n^2",
               "mu": MU, "alpha_ratio": ALPHA_RATIO, "squared_clip": SQUARED_CLIP, "hyper": HYPER,
               "dual_fw_max_T": DUAL_FW_MAX_T, "blas_threads": BLAS_THREADS, "problems": {}}
    with threadpool_limits(BLAS_THREADS, user_api="blas"):
        for problem in problems:
            t0 = time.perf_counter()
            n, p = problem.design.X.shape
            ref, own_ref = reference(problem), own_reference(problem)
            d = problem.design
            entry = {"description": problem.description, "n": n, "p": p, "alpha": problem.alpha,
                     "alpha_max": problem.alpha_max, "penalty": problem.penalty_name,
                     "bounds_source": d.bounds.source, "bounds_public": bool(d.bounds.public),
                     "clipped": {"feature values": d.clipped_values, "labels": d.clipped_labels},
                     "reference": ref, "own_reference": own_ref, "mechanisms": {}, "seconds": {}}
            for mechanism in mechanisms:
                t1 = time.perf_counter()
                entry["mechanisms"][mechanism] = mechanism_runs(problem, ref, own_ref, mechanism, epsilons, runs)
                entry["seconds"][mechanism] = time.perf_counter() - t1
                log(f"  {problem.name} {mechanism}: {entry['seconds'][mechanism]:.1f} s")
            results["problems"][problem.name] = entry
            log(f"{problem.name}: {time.perf_counter() - t0:.1f} s")
    return results


# --------------------------------------------------------------------------- output


def _opt_label(mechanism, res):
    if "na" in res:
        return ""
    o = res["options"]
    if mechanism == "dual-fw":
        return "T=" + "/".join(str(x["n_iter"]) for x in o) + f" mu={MU:g}"
    x = o[0]
    parts = [f"T={x['n_iter']}"] if "n_iter" in x else []
    parts += [f"r={x['radius']:g}"] if "radius" in x else []
    parts += [f"mu={x['mu']:g}"] if "mu" in x else []
    return " ".join(parts)


def format_table(results):
    eps = results["epsilons"]
    runs = results["runs"]
    w = 19
    lines = [
        f"Excess empirical risk F(w_priv) - F*, mean +- std over {runs} runs (seeds 0..{runs - 1}), delta = 1/n^2.",
        "F = (1/n) sum f(<w,x_i>,y_i) + alpha Omega(w) of each problem (logistic or UNclipped squared loss, no ridge, "
        "no constraint): every mechanism's released model is measured on this SAME F, whatever it optimizes "
        f"(output/dual-fw add (mu/2)||w||^2, mu={MU:g}; objective/fw solve over {{Omega <= radius}}; private "
        f"squared losses clip residuals at {SQUARED_CLIP:g}).",
        f"alpha = {ALPHA_RATIO:g} alpha_max; default calibration of each mechanism; fixed public hyperparameters "
        "(T: dp-gcd iterations, dp-cd epochs, dp-sgd steps with batch sqrt(n), fw steps; r: radius; dual-fw T = "
        f"Theorem 4's T(eps), capped at {results['dual_fw_max_T']}).",
        f"{'problem':<20}{'mechanism':<13}{'hyper':<22}" + "".join(f"{'eps=' + format(e, 'g'):>{w}}" for e in eps),
    ]
    for name, e in results["problems"].items():
        for mechanism, res in e["mechanisms"].items():
            if "na" in res:
                lines.append(f"{name:<20}{mechanism:<13}{'':<22}  n/a ({res['na']})")
                continue
            cells = [f"{m:.3g} +- {s:.2g}" for m, s in zip(res["mean"], res["std"])]
            lines.append(f"{name:<20}{mechanism:<13}{_opt_label(mechanism, res):<22}"
                         + "".join(f"{c:>{w}}" for c in cells))
            if res["bound"] and any(b is not None or o is not None for b, o in zip(res["bound"], res["own_mean"])):
                what = BOUND_LABELS[mechanism]
                own = [f"{o:.3g}" if o is not None else "-" for o in res["own_mean"]]
                bnd = [f"{b:.3g}" if b is not None else "n/a" for b in res["bound"]]
                lines.append(f"{'':<20}{'  own':<13}{what[:21]:<22}" + "".join(f"{c:>{w}}" for c in own))
                lines.append(f"{'':<20}{'  bound':<13}{what[:21]:<22}" + "".join(f"{c:>{w}}" for c in bnd))
        if not e["bounds_public"]:
            lines.append(f"{name:<20}NOTE: bounds computed from the data: these rows carry NO privacy guarantee")
        lines.append("")
    lines += ["own: the quantity the theorem bounds, measured (output: F_mu(w_priv) - F_mu(w_ref), F_mu = private "
              "datafit + penalty + ridge; dual-fw: F_mu(w_ref) - gap - D(s_T), the dual excess risk of the private "
              "dual iterate; objective: L(w_priv) - L(w_C), L the private datafit, w_C its near-minimizer over "
              "{Omega <= radius}; dp-sgd: F(w_priv) - F*); all are lower estimates (the reference's certified gap "
              "is not added), so a bound below them is a genuine contradiction. The O(.) of Theorem 4, section 4.3 "
              "and Table 3 are taken with constant 1 (Table 3's logarithms dropped).", "",
              f"{'problem':<20}{'n x p':>11}{'alpha':>10}{'F(0)':>10}{'F*':>11}{'gap':>9}{'supp':>6}"
              f"{'Omega(w*)':>10}{'clipped x/y':>13}  bounds"]
    for name, e in results["problems"].items():
        r = e["reference"]
        lines.append(f"{name:<20}{e['n']:>6}x{e['p'] - 1:<4}{e['alpha']:>10.3g}{r['f_zero']:>10.4g}{r['f_star']:>11.4g}"
                     f"{r['gap']:>9.1g}{r['support']:>6}{r['omega_star']:>10.3g}"
                     f"{str(e['clipped']['feature values']) + '/' + str(e['clipped']['labels']):>13}  "
                     f"{e['bounds_source']}")
    return "\n".join(lines)


def anomalies(results):
    out = []
    eps = results["epsilons"]
    runs = results["runs"]
    for name, e in results["problems"].items():
        for mechanism, res in e["mechanisms"].items():
            if "na" in res:
                continue
            for k, (b, o) in enumerate(zip(res["bound"], res["own"])):
                # The theorems bound an expectation: a mean above the bound by more than two standard
                # errors contradicts it; within that, it is sampling error (reported too).
                if b is not None and o and np.mean(o) > b:
                    se = float(np.std(o, ddof=1)) / math.sqrt(len(o)) if len(o) > 1 else math.inf
                    kind = ("BOUND BELOW MEASUREMENT (> 2 s.e.)" if np.mean(o) > b + 2 * se else
                            "bound below the mean but within 2 standard errors (sampling)")
                    out.append(f"{kind}: {name} {mechanism} eps={eps[k]:g}: bound {b:.5g}, measured mean "
                               f"{np.mean(o):.5g} +- {se:.2g} (s.e.)")
            mean, std = res["mean"], res["std"]
            for k in range(1, len(mean)):
                se = math.hypot(std[k], std[k - 1]) / math.sqrt(max(runs, 1))
                if mean[k] > mean[k - 1] + 2 * se:
                    out.append(f"{name} {mechanism}: risk grows from eps={eps[k - 1]:g} ({mean[k - 1]:.3g}) "
                               f"to eps={eps[k]:g} ({mean[k]:.3g})")
            if len(mean) > 1 and not mean[-1] < mean[0]:
                out.append(f"{name} {mechanism}: risk does not fall from eps={eps[0]:g} ({mean[0]:.3g}) to "
                           f"eps={eps[-1]:g} ({mean[-1]:.3g})")
    return out


def plot(results, path):
    names = list(results["problems"])
    fig, axes = bench.panel_figure(len(names), 3, 5.5, 4.3)
    x = np.array(results["epsilons"])
    colors = {m: f"C{k}" for k, m in enumerate(MECHANISM_ORDER)}
    for ax, name in zip(axes, names):
        entry = results["problems"][name]
        for mechanism, res in entry["mechanisms"].items():
            if "na" in res:
                continue
            mean = np.array(res["mean"])
            ax.plot(x, np.where(mean > 0, mean, np.nan), "o-", color=colors[mechanism], label=mechanism, ms=4)
            bound = np.array([np.nan if b is None else b for b in res["bound"]], dtype=float)
            if np.any(np.isfinite(bound)):
                ax.plot(x, bound, "--", color=colors[mechanism], label=f"{BOUND_LABELS[mechanism]} bound")
                own = np.array([np.nan if o is None else o for o in res["own_mean"]], dtype=float)
                ax.plot(x, np.where(own > 0, own, np.nan), "x:", color=colors[mechanism],
                        label=f"{mechanism}: what it bounds")
        bench.epsilon_axis(ax, x)
        ax.set_title(f"{name} ({entry['n']}x{entry['p'] - 1})", fontsize=10)
        ax.set_ylabel("F(w_priv) - F*")
        ax.legend(fontsize=6)
    bench.save_figure(fig, path, "Excess empirical risk on each problem's penalized objective, mean over "
                      f"{results['runs']} runs; dashed: theorem bounds", dpi=110, fontsize=11)


# --------------------------------------------------------------------------- the bounds against epsilon


THEOREM_MECHANISMS = ("output", "objective", "dp-sgd")
THEOREM_NAMES = {"output": "output perturbation, Theorem 1 (Lemma 1)",
                 "objective": "objective perturbation, section 4.3 (Lipschitz case)",
                 "dp-sgd": "gradient perturbation (DP-SGD), Table 3 (convex SGD)"}
SLOPE_TOLERANCE = 0.25


def run_theorems(data_dir, names, epsilons, runs, log=print):
    """Output, objective and gradient perturbation on the problems ``names``, with their bounds and the claims."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # every bound here is declared a priori
        problems = [pr for pr in make_problems(data_dir) if pr.name in names]
    results = run(problems, epsilons, runs, log, THEOREM_MECHANISMS)
    results["claims"] = theorem_claims(results)
    return results


def _slope(epsilons, values):
    """Least-squares slope of ``log values`` against ``log epsilon`` (None unless every value is > 0)."""
    v = np.asarray(values, dtype=float)
    return float(np.polyfit(np.log(epsilons), np.log(v), 1)[0]) if np.all(v > 0) else None


def theorem_claims(results):
    """Per mechanism and problem: the bound above its measurement at every epsilon, and the measured slope in
    epsilon within ``SLOPE_TOLERANCE`` of the bound's. Rows ``(claim, problem, measured, verdict)``."""
    eps = results["epsilons"]
    rows = []
    for mechanism in THEOREM_MECHANISMS:
        for name, e in results["problems"].items():
            res = e["mechanisms"][mechanism]
            if "na" in res:
                rows.append((THEOREM_NAMES[mechanism], name, f"n/a: {res['na']}", "n/a"))
                continue
            own, bound = res["own_mean"], res["bound"]
            ratio = max(o / b for o, b in zip(own, bound))
            # the bounds are on an expectation: a mean above by less than two standard errors is sampling
            above = [k for k, (o, b) in enumerate(zip(res["own"], bound))
                     if np.mean(o) > b + 2.0 * float(np.std(o, ddof=1)) / math.sqrt(len(o))]
            sampling = ", above it within 2 standard errors" if ratio > 1 and not above else ""
            verdict = "NOT reproduced" if above else "reproduced"
            rows.append((f"{THEOREM_NAMES[mechanism]}: bound >= measured", name,
                         f"largest measured / bound {ratio:.3g}{sampling}", verdict))
            s_own, s_bound = _slope(eps, own), _slope(eps, bound)
            ok = s_own is not None and abs(s_own - s_bound) <= SLOPE_TOLERANCE
            measured = "slope n/a (a measurement <= 0)" if s_own is None else f"slope {s_own:.2f}"
            rows.append((f"{THEOREM_NAMES[mechanism]}: rate in epsilon (slope within {SLOPE_TOLERANCE:g})", name,
                         f"{measured} vs bound {s_bound:.2f}", "reproduced" if ok else "NOT reproduced"))
    return rows


def format_theorems(results):
    """The measured excess risk beside each bound, epsilon by epsilon, and the claims."""
    eps = results["epsilons"]
    lines = [f"Kumar & Deisenroth (2019): mean over {results['runs']} runs of what each bound bounds, delta = 1/n^2",
             f"{'problem':<14}{'mechanism':<11}{'':<8}" + "".join(f"{'eps=' + format(x, 'g'):>11}" for x in eps)]
    for name, e in results["problems"].items():
        for mechanism in THEOREM_MECHANISMS:
            res = e["mechanisms"][mechanism]
            if "na" in res:
                lines.append(f"{name:<14}{mechanism:<11}n/a ({res['na']})")
                continue
            for row, values in (("measured", res["own_mean"]), ("bound", res["bound"])):
                lines.append(f"{name:<14}{mechanism:<11}{row:<8}" + "".join(f"{v:>11.3g}" for v in values))
    lines += ["", f"{'claim':<90}{'problem':<14}{'verdict':<16}measured"]
    lines += [f"{c:<90}{p:<14}{v:<16}{m}" for c, p, m, v in results["claims"]]
    return "\n".join(lines)


def plot_theorems(results, path):
    """One panel per perturbation: measured (solid) and bound (dashed) against epsilon, one colour per problem."""
    fig, axes = bench.panel_figure(len(THEOREM_MECHANISMS), 3, 5.5, 4.5)
    x = np.array(results["epsilons"])
    for ax, mechanism in zip(axes, THEOREM_MECHANISMS):
        for k, (name, e) in enumerate(results["problems"].items()):
            res = e["mechanisms"][mechanism]
            if "na" in res:
                continue
            own = np.array(res["own_mean"], dtype=float)
            ax.plot(x, np.where(own > 0, own, np.nan), "o-", color=f"C{k}", label=f"{name}: measured")
            ax.plot(x, res["bound"], "--", color=f"C{k}", label=f"{name}: bound")
        bench.epsilon_axis(ax, x)
        ax.set_title(THEOREM_NAMES[mechanism], fontsize=10)
        ax.set_ylabel(BOUND_LABELS[mechanism].split(": ")[1])
        ax.legend(fontsize=7)
    bench.save_figure(fig, path, f"Kumar & Deisenroth (2019): measured excess risk (mean of {results['runs']} runs) "
                      "and the bounds (dashed), delta = 1/n^2", dpi=110, fontsize=11)


def parse_args(argv=None):
    return bench.parse_benchmark_args(__doc__.split("\n\n")[0], REPO_ROOT, "kumar.json and kumar.png",
                                      "smoke test: 2 runs, epsilon in {0.5, 5}", argv)


def main(argv=None):
    args = parse_args(argv)
    t0 = time.perf_counter()
    epsilons = QUICK_EPSILONS if args.quick else EPSILONS
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # every bound here is declared a priori
        problems = make_problems(args.data_dir)
    for pr in problems:
        d = pr.design
        print(f"{pr.name}: {pr.description}; alpha={pr.alpha:.4g}; bounds: {d.bounds.source}; clipped "
              f"{d.clipped_values} values, {d.clipped_labels} labels", file=sys.stderr)
    results = run(problems, epsilons, args.runs, log=lambda m: print(m, file=sys.stderr, flush=True))
    results["wall_s"] = time.perf_counter() - t0
    results["anomalies"] = anomalies(results)
    print(format_table(results))
    print("\nAnomalies (bound below its measurement; risk not falling with epsilon):")
    print("\n".join(results["anomalies"]) or "none")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "kumar.json").write_text(json.dumps(results, indent=1, default=float))
    plot(results, args.out_dir / "kumar.png")
    print(f"\nwall time {results['wall_s']:.0f} s; wrote kumar.json and kumar.png in {args.out_dir}")


if __name__ == "__main__":
    main()
