"""Private support selection, then a private fit on the selected features.

Stage 1 selects ``s`` features by peeling (``s`` successive Gumbel report-noisy-max draws,
as in Cai, Wang & Zhang, "The cost of privacy", Annals of Statistics 2021, Algorithm 1) on
the scores ``|g_j|`` of the gradient at the zero model, ``g = (1/n) sum_i f'(0, y_i) x_i``
(for the squared loss, the marginal correlations of the features with the clipped labels:
sure independence screening, Fan & Lv, JRSS-B 2008, made private). Stage 2 runs a registered
mechanism (DP-GD with its automatic clipping norm by default, or output perturbation, DP-GCD,
AdaSSP) on the design restricted to the selected features and the intercept, with the penalty
restricted to them. The model is zero outside the selected features.

Privacy (replace-one; docs/privacy.md): the scores move by at most ``lambda_j = 2 c0 b_j / n``
(``c0 = max |f'(0, y)|`` over labels in [-1, 1], ``|x_ij| <= b_j``), each draw is the ``2 lambda / beta``-DP exponential
mechanism (``lambda = max_j lambda_j``), and stage 2 is the registered mechanism's own plan,
computed from public quantities only (the restricted bounds are the largest declared bound
for every selected column, so the plan does not depend on which columns are chosen). The
budget is split: stage 1 gets ``selection_share`` (default 0.7: on the planted problems of
benchmarks/sparse_models.py the selection is what a small budget misses first) of the zCDP
budget ``rho`` (the largest meeting (epsilon, delta) by dp-accounting's RDP accountant),
stage 2 the rest, calibrated to its share in zCDP; both ledgers are composed in
one by the accountant, whose epsilon is reported and meets the target (zCDP adds up, Bun &
Steinke, TCC 2016, Lemma 1.7).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..accounting import Ledger, epsilon_of_zcdp, zcdp_budget
from ..distributed import is_dask, labels, row_sum
from ..losses import Squared
from ..norms import ElasticNet
from . import adassp, dp_gcd, dp_gd, output_perturbation
from ._common import derivative_at_zero
from .auto import GD_STEPS
from .base import Mechanism, Option, Plan, PublicInfo, n_iter_option
from .dp_iht import peel

SOURCE = ("peeling: Cai, Wang & Zhang, 'The cost of privacy: optimal rates of convergence for parameter estimation "
          "with differential privacy', Annals of Statistics 2021, Algorithm 1; screening at the zero model: Fan & Lv, "
          "'Sure independence screening for ultrahigh dimensional feature space', JRSS-B 2008; stage 2: the chosen "
          "mechanism's own analysis; composition in zCDP: Bun & Steinke, TCC 2016, Lemma 1.7; dp-accounting")
SECOND = {"dp-gcd": dp_gcd.MECHANISM, "output": output_perturbation.MECHANISM, "adassp": adassp.MECHANISM,
          "dp-gd": dp_gd.MECHANISM}


def _kept(penalty):
    return np.asarray(getattr(penalty, "unpenalized", np.array([], dtype=int)), dtype=int)


def _sparsity(info):
    s = info.options["sparsity"]
    return min(10, info.p - _kept(info.penalty).size) if s is None else s


def _selection_loss(info):
    """The loss whose derivative at zero scores the features: the fit's, or the squared loss clipped at
    ``selection_clip`` when that option is set (least squares only)."""
    c = info.options["selection_clip"]
    if c is None:
        return info.loss
    if getattr(info.loss, "name", "") != "squared":
        raise ValueError("mechanism two-stage: option selection_clip is for the squared loss")
    return Squared(clip=c)


def _selection_ledger(u, sparsity):
    return Ledger().exponential(2.0 / u, sparsity)


def _restricted_penalty(penalty, columns):
    """The separable penalty on ``columns`` (weights kept, intercept unpenalized)."""
    a, c = penalty.strengths(max(columns) + 1)
    a, c = a[columns], c[columns]
    total = a + c
    l1_ratio = float(penalty.l1_ratio)
    weights = total / penalty.alpha if penalty.alpha > 0 else np.where(total > 0, 1.0, 0.0)
    return ElasticNet(penalty.alpha, l1_ratio, weights)


def _check(info):
    if info.options["sparsity"] is not None and info.options["sparsity"] > info.p - _kept(info.penalty).size:
        raise ValueError(f"mechanism two-stage: option sparsity must be at most the number of features "
                         f"({info.p - _kept(info.penalty).size}), got {info.options['sparsity']}")
    if not callable(getattr(info.penalty, "strengths", None)):
        raise ValueError("mechanism two-stage needs a separable penalty (L1, L2, elastic net) to restrict to the "
                         f"selected features; {type(info.penalty).__name__} is not")


def _second_info(info, s, kept, rho):
    """Stage 2's public information: s columns at the largest bound, the kept ones, its share of ``rho``."""
    o = info.options
    b = np.asarray(info.feature_bounds, dtype=float)
    free = np.setdiff1d(np.arange(info.p), kept)
    bounds = np.r_[np.full(s, b[free].max()), b[kept]]
    columns = np.r_[free[:s], kept]  # placeholder columns of the right kinds: the penalty depends on kinds only
    share = o["selection_share"]
    second = SECOND[o["second"]]
    options = {"n_iter": o["n_iter"]} if "n_iter" in second.option_names else {}
    options = second.resolve_options(options)
    zcdp = rho * (1.0 - share)
    return PublicInfo(n=info.n, p=s + kept.size, feature_bounds=bounds,
                      row_norm=min(info.row_norm, float(np.linalg.norm(bounds))), loss=info.loss,
                      penalty=_restricted_penalty(info.penalty, columns), epsilon=epsilon_of_zcdp(zcdp, info.delta),
                      delta=info.delta, calibration=second.calibrations[0], options=options, zcdp=zcdp)


def _plan(info):
    o, n = info.options, info.n
    kept = _kept(info.penalty)
    s, share = _sparsity(info), o["selection_share"]
    lam = 2.0 * derivative_at_zero(_selection_loss(info)) * np.asarray(info.feature_bounds, dtype=float) / n
    rho = zcdp_budget(info.epsilon, info.delta) if info.zcdp is None else info.zcdp
    u = math.sqrt(s / (2.0 * share * rho))  # s exponential mechanisms of 2/u-DP: s (2/u)^2 / 8 = share rho
    second = SECOND[o["second"]]
    info2 = _second_info(info, s, kept, rho)
    second.check_compatible(info.loss, info2.penalty)
    if second.check is not None:
        second.check(info2)
    plan2 = second.plan(info2)
    plan2.info = info2
    ledger = Ledger()
    ledger.events = _selection_ledger(u, s).events + plan2.ledger.events
    eps = ledger.epsilon(info.delta)
    details = {
        "stage 1": f"peeling: {s} gumbel report-noisy-max draws on |gradient at 0|, zCDP rho {share * rho:.4g}",
        "stage 1 gumbel scale": float(u * lam.max()),
        "epsilon of one stage-1 draw": 2.0 / u,
        "stage 2": f"{second.name} on the {s} selected features and the intercept",
        **{f"stage 2: {k}": v for k, v in plan2.details.items()},
        "budget split": (f"zCDP rho={rho:.4g} ("
                         + ("the largest meeting the target by dp-accounting's RDP accountant" if info.zcdp is None
                            else "the mechanism's share of the whole, after the releases before it")
                         + f"), {share:g} of it for stage 1 and {1 - share:g} for stage 2; both stages' events "
                         "composed together by the accountant"),
    }
    params = {"lam": lam, "beta": u * lam.max(), "kept": kept, "sparsity": s, "second": second, "plan2": plan2}
    return Plan(ledger=ledger, accountant_epsilon=eps, accountant=ledger.accountant,
                iterations=plan2.iterations, details=details, params=params)


def _gradient_at_zero(X, y, loss):
    """``X^T f'(0, y)``: in memory, or one pass over the chunks of a dask array."""
    def at_zero(xc, yc):
        return np.asarray(xc.T @ loss.bounded_derivative(np.zeros(xc.shape[0]), yc)).ravel()

    if is_dask(X):
        return row_sum(at_zero, X, labels(X, y), X.shape[1])
    return at_zero(X, y)


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    X, y, n, kept, lam = design.X, design.y, design.n, q["kept"], q["lam"]
    grad = _gradient_at_zero(X, y, _selection_loss(info)) / n
    columns = peel(np.abs(grad), q["sparsity"], kept, q["beta"], lam, noise)
    plan2 = q["plan2"]
    plan2.info = dataclasses.replace(plan2.info, penalty=_restricted_penalty(info.penalty, columns))
    sub = dataclasses.replace(design, X=X[:, columns], feature_bounds=plan2.info.feature_bounds,
                              row_norm=plan2.info.row_norm)
    plan2.released.clear()
    w_sub = np.asarray(q["second"].run(sub, plan2, noise, None), dtype=float)
    for name, values in plan2.released.items():
        for value in values:
            plan.record(f"stage 2: {name}", value)
    w = np.zeros(design.p)
    w[columns] = w_sub
    if callback is not None:
        callback(0, w)
    return w


MECHANISM = Mechanism(
    name="two-stage",
    title="private support selection by peeling, then a private fit on the selected features",
    citation=SOURCE,
    summary="select s features privately (peeling at the zero model), then dp-gd (the default), output "
            "perturbation, dp-gcd or adassp on them",
    options=(
        n_iter_option(GD_STEPS, "iterations of the stage-2 mechanism (where it has them)"),
        Option("sparsity", "int", None, "number s of selected features", low=1, high=10**6,
               default_help="min(10, number of features)"),
        Option("selection_share", "float", 0.7, "share of the zCDP budget spent on the selection", low=0.0, high=1.0,
               low_open=True, high_open=True),
        Option("second", "choice", "dp-gd", "mechanism of stage 2 (dp-gd: with its automatic clipping norm, as the "
               "least-squares rule runs it)", choices=tuple(SECOND)),
        Option("selection_clip", "float", None, "squared loss: the labels' clip in the selection's scores (a "
               "smaller clip than the fit's ranks the features by the sign of the label: less noise for the same "
               "ranking)", low=0.0, low_open=True, high=1.0, default_help="the loss's own clip"),
    ),
    calibrations=("tight",),
    loss_needs=("Lipschitz",),  # the selection reads f'(0); the second stage checks its own needs
    penalty_needs=("separable",),
    plan=_plan, run=_run, check=_check,
    zcdp_calibration=True,
    dask=lambda options: SECOND[options["second"]].dask is True,
)
