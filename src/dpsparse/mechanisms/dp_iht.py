"""Noisy iterative hard thresholding with peeling (Cai, Wang & Zhang 2021).

Source: Cai, Wang & Zhang, "The cost of privacy: optimal rates of convergence for parameter
estimation with differential privacy", Annals of Statistics 49(5), 2021, Algorithm 1
("Peeling") and Algorithm 2 (noisy iterative hard thresholding for the sparse linear model;
Section 4 for generalized linear models). Each of the ``T`` iterations

1. takes a full-data gradient step ``v = w_t - eta (1/n) sum_i f'(<w_t, x_i>, y_i) x_i``
   with the bounded derivative of the loss (the squared loss clips its residual, the
   counterpart of the paper's truncation of the responses);
2. peels: ``s`` successive report-noisy-max draws of the largest ``|v_j|`` among the
   features not yet chosen (the intercept is always kept);
3. releases ``v`` on the chosen coordinates and the intercept plus Gaussian noise; every
   other coordinate is 0. The released model has exactly ``s`` nonzero features.

Privacy (replace-one; ``|f'| <= c`` and ``|x_ij| <= b_j`` public; docs/privacy.md). At the
same iterate ``w_t``, ``v_j`` moves by at most ``lambda_j = 2 eta c b_j / n``. A peeling draw
is the exponential mechanism on the scores ``|v_j|`` (Gumbel-max; sensitivity
``lambda = max_j lambda_j``, not monotone), ``2 lambda / beta``-DP and bounded-range, hence
``(2 lambda / beta)^2 / 8``-zCDP (Cesar & Rogers 2021). The released values are a Gaussian
mechanism of L2 sensitivity ``sqrt(sum_{j in S} lambda_j^2) <= lambda sqrt(s + k)`` (``k`` kept
coordinates). One normalized scale ``u`` sets ``beta = u lambda`` and ``sigma = u lambda sqrt(s + k)``,
so each release has noise multiplier at least ``u``; the ``T s`` draws and ``T`` releases (multiplier
``u``) are composed by dp-accounting (PLD and RDP), and ``u`` is the smallest meeting the target.
Until 2026-11-25 (unreleased; dp-iht is not in 0.1.0) the ledger booked the releases at multiplier
``u sqrt(s + k)`` and claimed less than was spent (CHANGELOG). The paper composes with Laplace noise and the advanced
composition theorem; the accountant is tighter for the same events.

The data is read only through the gradient ``X^T f'(X w_t) / n``, a sum over rows: on a dask
array each iteration is one pass over the chunks (docs/scale.md), and the peeling and the
noise are drawn on the client after the reduction.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..accounting import Ledger, calibrate
from ..distributed import gradient_sums, is_dask, labels
from ._common import per_log_feature
from .base import MAX_ITERATIONS, Mechanism, Option, Plan

SOURCE = ("Cai, Wang & Zhang, 'The cost of privacy: optimal rates of convergence for parameter estimation with "
          "differential privacy', Annals of Statistics 2021, Algorithms 1-2; exponential mechanism as zCDP: Cesar & "
          "Rogers, ALT 2021; composed by PLD/RDP (dp-accounting)")


STEPS = ((800, 0.125, 20), (math.inf, 0.25, 40))
"""``(bound, step factor, iterations)``: when dp-iht is named with nothing else set, below ``n epsilon = bound log p``
it takes the step ``factor / sup f''`` and that many iterations, for the squared and Huber losses; the logistic loss
takes the first row at every size (``default_steps``). The step ``1 / sup f''`` with 10 iterations (the defaults
before) assumes weakly correlated, centred features; with the intercept always kept, features that sit off the middle
of their range, or indicators mapped onto [-1, 1], are nearly collinear with it, the restricted smoothness grows
towards ``(s + 1) sup f''`` and the noisy iteration blew up (adult 0.241; the synthetic regressions filling 30 % of
their range, R^2 -4 to -12). On the synthetic families (``python benchmarks/defaults_rule.py --study iht-step``,
docs/defaults.md) an eighth of the step with 20 iterations had the best mean gain over the constant predictor for
the logistic loss in both bands and for least squares below ``800 log p`` (each iteration's noise counts there); a
quarter with 40 had it for least squares from there, where the centred designs need more progress than an eighth of
the step makes in 20."""


def default_steps(loss, n, p, epsilon):
    """``(step factor, iterations)`` of ``STEPS`` for ``loss``, ``n`` records, ``p`` columns and ``epsilon``
    (public)."""
    if getattr(loss, "name", "") == "logistic":
        return STEPS[0][1:]
    return next((factor, T) for bound, factor, T in STEPS if per_log_feature(n, p, epsilon) < bound)


def _ledger(u, n_iter, sparsity):
    """``T s`` peeling draws (``2/u``-DP exponential mechanisms) and ``T`` Gaussian releases of noise multiplier
    ``u`` (at least: ``sigma = u lambda sqrt(s + k)`` on an L2 sensitivity ``||lambda_S||_2 <= lambda sqrt(s + k)``)."""
    return (Ledger().exponential(2.0 / u, n_iter * sparsity)
            .gaussian(u, 1.0, n_iter))


@functools.lru_cache(maxsize=256)
def _tight_scale(n_iter, sparsity, epsilon, delta, rho=None):
    u0 = 2.0 * math.sqrt(n_iter * sparsity) / epsilon
    return calibrate(lambda u: _ledger(u, n_iter, sparsity), epsilon, delta, u0, rho=rho)


def _kept(info):
    """The coordinates always in the support: the penalty's unpenalized ones (the intercept)."""
    return np.asarray(getattr(info.penalty, "unpenalized", np.array([], dtype=int)), dtype=int)


def _sparsity(info):
    """The option, or ``min(10, number of features)`` (public)."""
    s = info.options["sparsity"]
    return min(10, info.p - _kept(info).size) if s is None else s


def _check(info):
    free = info.p - _kept(info).size
    if info.options["sparsity"] is not None and info.options["sparsity"] > free:
        raise ValueError(f"mechanism dp-iht: option sparsity must be at most the number of features ({free}), got "
                         f"{info.options['sparsity']}")


def _plan(info):
    o, n = info.options, info.n
    kept = _kept(info)
    factor, steps = default_steps(info.loss, n, info.p, info.epsilon)
    s, T = _sparsity(info), steps if o["n_iter"] is None else o["n_iter"]
    c = float(info.loss.lipschitz)
    eta = factor / float(info.loss.smoothness) if o["learning_rate"] is None else o["learning_rate"]
    lam = 2.0 * eta * c * np.asarray(info.feature_bounds, dtype=float) / n
    u = _tight_scale(T, s, info.epsilon, info.delta, info.zcdp)
    ledger = _ledger(u, T, s)
    lam_max = float(lam.max())
    details = {
        "selection": "peeling: gumbel report-noisy-max, s draws per iteration",
        "release": "gaussian noise on the s chosen coordinates and the intercept",
        "sparsity s": int(s),
        "learning rate": float(eta),
        "score sensitivity (L_inf)": lam_max,
        "gumbel scale": float(u * lam_max),
        "noise std": float(u * lam_max * math.sqrt(s + kept.size)),
        "epsilon of one peeling draw": 2.0 / u,
        "noise multiplier of a release (at least)": float(u),
    }
    params = {"eta": eta, "lam": lam, "kept": kept, "sparsity": s, "n_iter": T, "beta": u * lam_max,
              "sigma": u * lam_max * math.sqrt(s + kept.size)}
    return Plan(ledger=ledger, accountant_epsilon=ledger.epsilon(info.delta), accountant=ledger.accountant,
                iterations=T, details=details, params=params)


def peel(scores, sparsity, kept, beta, sensitivity, noise):
    """Peeling (Cai, Wang & Zhang 2021, Algorithm 1): ``sparsity`` successive Gumbel report-noisy-max
    draws of scale ``beta`` among the coordinates not chosen yet and not ``kept``.

    Returns
    -------
    ndarray of int
        The chosen coordinates (sorted), then ``kept``.
    """
    available = np.ones(scores.size, dtype=bool)
    available[kept] = False
    chosen = []
    for _ in range(sparsity):
        cand = np.flatnonzero(available)
        k = noise.select(scores[cand], "gumbel", beta, sensitivity=sensitivity[cand], name="peeling")
        chosen.append(cand[k])
        available[cand[k]] = False
    return np.concatenate([np.sort(np.asarray(chosen, dtype=int)), kept])


def _gradient_sum(X, y, w, loss):
    """``X^T f'(X w, y)`` with the bounded derivative: in memory, or one pass over the chunks of a dask array."""
    if is_dask(X):
        return gradient_sums(X, y, w, loss.bounded_derivative)[0]
    return np.asarray(X.T @ loss.bounded_derivative(np.asarray(X @ w).ravel(), y)).ravel()


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    X, y, n = design.X, design.y, design.n
    if is_dask(X):  # the labels in the chunks of X, once
        y = labels(X, y)
    loss, s, kept, lam = info.loss, q["sparsity"], q["kept"], q["lam"]
    w = np.zeros(design.p)
    for t in range(q["n_iter"]):
        grad = _gradient_sum(X, y, w, loss) / n
        v = w - q["eta"] * grad
        support = peel(np.abs(v), s, kept, q["beta"], lam, noise)
        w = np.zeros(design.p)
        w[support] = noise.release(v[support], "gaussian", q["sigma"], sensitivity=float(np.linalg.norm(lam[support])),
                                   name="peeled values")
        if callback is not None:
            callback(t, w)
    return w


MECHANISM = Mechanism(
    name="dp-iht",
    title="noisy iterative hard thresholding with peeling (Cai, Wang & Zhang 2021, Algorithms 1-2)",
    citation=SOURCE,
    summary="sparse model with exactly s nonzero features: noisy gradient steps, s private top-k draws (peeling)",
    options=(
        Option("n_iter", "int", None, "number of iterations T (Cai et al. take T of order log n)", low=1,
               high=MAX_ITERATIONS, default_help="20; for least squares 40 from n epsilon = 800 log p"),
        Option("sparsity", "int", None, "number s of nonzero features of the released model", low=1, high=10**6,
               default_help="min(10, number of features)"),
        Option("learning_rate", "float", None, "gradient step eta", low=0.0, low_open=True, high=1e6,
               default_help="1 / (8 sup f''); for least squares 1 / (4 sup f'') from n epsilon = 800 log p: "
                            "features nearly collinear with the intercept make the restricted smoothness up to "
                            "(s + 1) sup f''"),
    ),
    calibrations=("tight",),
    loss_needs=("smooth", "Lipschitz"),
    penalty_needs=(),
    plan=_plan, run=_run, check=_check,
    zcdp_calibration=True,
    dask=True,
)
