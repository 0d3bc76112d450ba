"""Full-batch DP gradient descent: the plain reference of private ERM.

Source: Bassily, Smith & Thakurta, "Private empirical risk minimization: efficient
algorithms and tight error bounds", FOCS 2014 (noisy gradient descent), with per-sample
clipping (Abadi et al. 2016) and zCDP composition (Bun & Steinke 2016).

Step ``t``: every per-sample gradient ``f'(<w, x_i>, y_i) x_i`` is clipped to L2 norm
``C``; the clipped gradients are summed over all ``n`` records and ``N(0, sigma^2 I)`` is
added; the sum is divided by ``n``; then a proximal step on the penalty,
``w <- prox_{eta psi}(w - eta g)``.

Privacy (replace-one): one record changes the clipped sum by at most ``2 C`` in L2 norm,
so each step is a Gaussian mechanism of sensitivity ``2 C``; the ``T`` steps compose
(``Ledger.gaussian``: Gaussian DP composition, exact for Gaussian-only ledgers), and the
tight calibration finds the smallest ``sigma``. With ``clipping_norm="auto"`` (the default) ``C`` is
released first (``dp_sgd.auto_clipping_norm``: a Gaussian release of sensitivity 1, ``SHARE`` of the zCDP
budget, composed in the same ledger) and every step's noise is ``sigma / C`` times it. With ``warm_start`` the run
starts from the constant predictor's intercept, a Gaussian release of the label mean with another ``SHARE``
(``constant.warm_start``, as DP-GCD's), composed before the steps too. The data is read
only through the sum over rows, so the same run works chunk by chunk on a dask array (docs/scale.md): the
noise is drawn once per step, on the client, after the reduction.
"""
from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from ..accounting import calibrate
from ..distributed import is_dask, labels, row_sum
from . import constant
from ._common import SHARE, ledger_after, row_norms, share_multiplier
from .auto import GD_STEPS
from .base import Mechanism, Option, Plan, n_iter_option
from .direct import call_direct
from .dp_sgd import (
    CLIPPING_OPTION,
    STEP_OPTION,
    clipped_gradient_sum,
    clipping_and_step,
    noise_details,
    run_clipping_norm,
)

__all__ = ["MECHANISM", "dp_gd"]

SOURCE = ("Bassily, Smith & Thakurta, 'Private empirical risk minimization: efficient algorithms and tight error "
          "bounds', FOCS 2014 (noisy gradient descent); per-sample clipping: Abadi et al., CCS 2016; the automatic "
          "clipping norm at a private typical gradient norm: after Andrew, Thakkar, McMahan & Ramaswamy, "
          "'Differentially private learning with adaptive clipping', NeurIPS 2021; Gaussian composition: Dong, "
          "Roth & Su, 'Gaussian differential privacy', 2022")


def _ledger(multiplier, n_iter, before=()):
    """``T`` Gaussian steps at ``sigma / (2 C)`` = ``multiplier``, after the Gaussian releases ``before``."""
    return ledger_after(before).gaussian(multiplier, 1.0, n_iter)


@functools.lru_cache(maxsize=256)
def _multiplier(n_iter, epsilon, delta, rho, before=()):
    """Smallest ``sigma / (2 C)`` meeting (epsilon, delta), or the zCDP target ``rho``, for ``T`` steps after the
    releases ``before``."""
    return calibrate(lambda m: _ledger(m, n_iter, before), epsilon, delta, 1.0, rho=rho)


def lipschitz_step(C, multiplier, n, p, n_iter, radius):
    """The step of ``T`` noisy subgradient steps on a loss without smoothness: ``D / (G sqrt(T))``, the minimizer
    over the step of the bound ``D^2 / (2 eta T) + eta G^2 / 2`` on the averaged iterate's excess risk of
    subgradient descent with subgradients of expected squared norm at most ``G^2`` (Nesterov, "Introductory
    lectures on convex optimization", 2004, Theorem 3.2.2; the noisy gradient descent of Bassily, Smith & Thakurta
    2014 uses the same step). The mean clipped gradient has norm at most ``C``; the noise adds
    ``p (2 C multiplier / n)^2`` to its squared norm, so ``G^2 = C^2 (1 + 4 p multiplier^2 / n^2)``. ``D`` is
    ``radius``, the option ``step_radius``. Public given ``C``. The run returns the last iterate: the average of
    the second half measured no better on the synthetic families (docs/defaults.md).

    Returns
    -------
    float
    """
    return radius / (C * math.sqrt(n_iter * (1.0 + 4.0 * p * multiplier**2 / n**2)))


def _plan(info):
    o = info.options
    C, eta = clipping_and_step(info, "dp-gd")
    m_auto = share_multiplier(info) if C == "auto" else None
    m_warm = share_multiplier(info) if o["warm_start"] else None
    before = tuple(m for m in (m_auto, m_warm) if m is not None)
    multiplier = _multiplier(o["n_iter"], info.epsilon, info.delta, info.zcdp, before)
    ledger = _ledger(multiplier, o["n_iter"], before)
    if o["learning_rate"] is None and not np.isfinite(info.loss.smoothness):  # None: from the released C
        eta = None if C == "auto" else lipschitz_step(C, multiplier, info.n, info.p, o["n_iter"], o["step_radius"])
    details = {"noise multiplier": multiplier, "clipping norm": C,
               "learning rate": eta if eta is not None else (
                   f"{o['step_radius']:g} / (C sqrt(T (1 + 4 p m^2 / n^2))), m the noise multiplier (subgradient "
                   "steps on a loss without smoothness)"),
               **noise_details(multiplier, C, m_auto, 2.0, info.row_norm)}
    if m_warm is not None:
        details["warm start"] = constant.warm_details(m_warm, SHARE)
    return Plan(ledger=ledger, accountant_epsilon=ledger.epsilon(info.delta), accountant=ledger.accountant,
                iterations=o["n_iter"], details=details,
                params={"C": C, "eta": eta, "multiplier": multiplier, "auto_multiplier": m_auto,
                        "warm_multiplier": m_warm})


def _clipped_sum(X, y, w, loss, C, norms):
    """The clipped gradient sum: in memory (the rows' norms ``norms`` computed once a run), or one pass over the
    chunks of a dask array."""
    if is_dask(X):
        return row_sum(lambda xc, yc: clipped_gradient_sum(xc, xc @ w, yc, loss, C), X, y, X.shape[1])
    return np.asarray(clipped_gradient_sum(X, X @ w, y, loss, C, norms), dtype=float).ravel()


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    X, y, n = design.X, design.y, design.n
    if is_dask(X):  # the labels in the chunks of X, once
        y = labels(X, y)
    C = run_clipping_norm(design, plan, noise)
    sigma = 2.0 * C * q["multiplier"]
    eta = q["eta"]
    if eta is None:
        eta = plan.record("learning rate", lipschitz_step(C, q["multiplier"], n, design.p, info.options["n_iter"],
                                                          info.options["step_radius"]))
    w0 = None if q["warm_multiplier"] is None else constant.warm_start(design, q["warm_multiplier"], info.loss, noise)
    w = np.zeros(design.p) if w0 is None else w0
    norms = None if is_dask(X) else row_norms(X)
    for t in range(info.options["n_iter"]):
        total = _clipped_sum(X, y, w, info.loss, C, norms)
        g = noise.release(total, "gaussian", sigma, sensitivity=2.0 * C, name="clipped gradient sum")
        w = info.penalty.prox(w - eta * g / n, eta)
        if callback is not None:
            callback(t, w)
    return w


MECHANISM = Mechanism(
    name="dp-gd",
    title="full-batch DP gradient descent (Bassily, Smith & Thakurta 2014)",
    citation=SOURCE,
    summary="noisy proximal full-batch gradient descent with per-sample clipping (any penalty with a prox)",
    options=(
        n_iter_option(GD_STEPS, "number of steps T (the budget is split over them; the default is the rule's, "
                                "measured in docs/defaults.md)"),
        CLIPPING_OPTION,
        dataclasses.replace(STEP_OPTION, default_help="1 / (smoothness * row_norm^2); a loss without smoothness (the "
                            "hinge): step_radius / (C sqrt(T (1 + 4 p m^2 / n^2))), m the noise multiplier"),
        Option("step_radius", "float", 10.0, "D of the default step on a loss without smoothness (the hinge), "
               "D / (C sqrt(T (1 + 4 p m^2 / n^2))): the model norm of subgradient descent's bound",
               low=0.0, low_open=True,
               default_help="10; under mechanism 'auto', 3 below n epsilon = 100 log p"),
        constant.WARM_OPTION,
    ),
    calibrations=("tight",),
    loss_needs=(),
    penalty_needs=("prox",),
    plan=_plan, run=_run,
    zcdp_calibration=True,
    dask=True,
    one_hot=True,
)


def dp_gd(X, y, loss, penalty, feature_bounds, *, epsilon, delta, calibration="tight", noise, callback=None,
          row_norm=None, **options):
    """Full-batch DP gradient descent (module docstring).

    ``fit_mechanism`` on ``BoundedDesign.from_arrays(X, y, feature_bounds, row_norm)``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit
    penalty : Penalty with ``prox``
    feature_bounds : ndarray of shape (p,)
    epsilon : float > 0
    delta : float in (0, 1)
    calibration : {"tight"}
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
    row_norm : float or None
        Public bound on ``||x_i||_2`` (None: ``||feature_bounds||_2``).
    **options
        ``n_iter`` (T, default 200), ``clipping_norm`` (C; default ``"auto"``, None: ``sup|f'| R``),
        ``learning_rate`` (default ``1 / (smoothness R^2)``; a loss without smoothness, the hinge:
        ``lipschitz_step``), ``step_radius`` (its ``D``, default 10).

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, options, or calibration other than "tight".
    """
    return call_direct(MECHANISM, X, y, loss, penalty, feature_bounds, epsilon=epsilon, delta=delta,
                       calibration=calibration, noise=noise, callback=callback, row_norm=row_norm, options=options)
