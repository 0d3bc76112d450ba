"""The constant predictor: an intercept from a noisy label mean, every coefficient zero.

Where the records are too few for the budget to learn any feature (the rule of
``mechanism="auto"``, docs/defaults.md), the best private model is often the constant one:
the share of positive labels (classification: the intercept is its log-odds) or the mean
label (regression). Labels mapped onto [-1, 1] (classification: +-1) have a mean of
replace-one sensitivity ``2 / n``; it is released with Gaussian noise of multiplier ``m``
calibrated to (epsilon, delta) or to the zCDP target, one Gaussian mechanism (Dwork & Roth
2014, Theorem A.1; the accountant's exact epsilon, Balle & Wang 2018). Alone against an
(epsilon, delta) target, one scalar is better served by the Laplace mechanism (Dwork, McSherry,
Nissim & Smith 2006), pure epsilon-DP with a standard deviation of ``sqrt(2) / epsilon`` times
the sensitivity, whenever that is below the Gaussian's ``m`` (at delta = 1/n^2 it is about
three times smaller: at epsilon 0.1 on 426 records the sign of the Gaussian mean flipped in 14%
of the fits); the choice reads only epsilon and delta. In a zCDP composition (the label
selection, the search) the Gaussian stays: it is the better of the two there. The same release
is the constant candidate of the private search (``dpsparse.tuning``).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..accounting import Ledger, calibrate
from .base import Mechanism, Option, Plan

SOURCE = ("the Gaussian mechanism on the label mean (Dwork & Roth 2014, Theorem A.1), calibrated by the PLD "
          "accountant (Balle & Wang, ICML 2018), or the Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006) "
          "when it adds less noise")
MEAN_CAP = 0.999
"""The released mean is clipped to [-MEAN_CAP, MEAN_CAP] so that its log-odds stay finite (post-processing)."""


@functools.lru_cache(maxsize=256)
def _multiplier(epsilon, delta, rho=None):
    return calibrate(lambda m: Ledger().gaussian(m, 1.0), epsilon, delta, 1.0 / epsilon, rho=rho)


def noise_family(epsilon, delta, rho=None):
    """``(kind, multiplier)`` of the release: the Laplace mechanism of scale ``1 / epsilon`` (times the
    sensitivity) when no zCDP target is set and its standard deviation ``sqrt(2) / epsilon`` is below the
    calibrated Gaussian's multiplier, else that Gaussian. Public inputs only."""
    m = _multiplier(epsilon, delta, rho)
    if rho is None and math.sqrt(2.0) / epsilon < m:
        return "laplace", 1.0 / epsilon
    return "gaussian", m


def _plan(info):
    kind, m = noise_family(info.epsilon, info.delta, info.zcdp)
    sens = 2.0 / info.n
    ledger = getattr(Ledger(), kind)(m, 1.0)
    std = m * sens * (math.sqrt(2.0) if kind == "laplace" else 1.0)
    details = {"release": f"the label mean + {kind} noise; every coefficient 0", "sensitivity": sens,
               "noise std": std}
    return Plan(ledger=ledger, accountant_epsilon=ledger.epsilon(info.delta), accountant=ledger.accountant,
                iterations=1, details=details, params={"kind": kind, "scale": m * sens, "sensitivity": sens})


def label_mean(y, scale, sensitivity, noise, kind="gaussian"):
    """The noisy mean of labels in [-1, 1] (``kind`` noise of ``scale``), clipped to ``[-MEAN_CAP, MEAN_CAP]``."""
    mean = float(noise.release(np.array([np.mean(y)]), kind, scale, sensitivity=sensitivity,
                               name="label mean", norm="l1" if kind == "laplace" else "l2")[0])
    return min(max(mean, -MEAN_CAP), MEAN_CAP)


def intercept(mean, classification):
    """The intercept of the constant model: the log-odds of the share of +1 labels, or the mean label."""
    return math.log((1.0 + mean) / (1.0 - mean)) if classification else mean


WARM_SHRINK = 2.0
"""The warm start's noisy label mean is shrunk towards 0 by this many standard deviations of its noise (a soft
threshold, post-processing): only a label set clearly away from balance moves the start's intercept."""


WARM_OPTION = Option("warm_start", "bool", False, "start from the constant predictor's intercept (a noisy label "
                     "mean, its own share of the budget)")
"""The option ``warm_start`` of the iterative mechanisms that take it (DP-GCD, DP-GD)."""


def warm_details(multiplier, share):
    """The report's line on the warm start: its release and its share of the zCDP budget."""
    return (f"the intercept of the constant predictor (the noisy label mean, Gaussian, multiplier {multiplier:.4g}, "
            f"{share:g} of the zCDP budget)")


def warm_start(design, multiplier, loss, noise):
    """The start of an iterative mechanism's option ``warm_start``: every coefficient 0 and the constant predictor's
    intercept, from the label mean released with Gaussian noise of ``multiplier`` (a release of its own, sensitivity
    ``2 / n``) and shrunk towards 0 by ``WARM_SHRINK`` standard deviations of its noise (public): a balanced label
    set keeps the intercept at 0, which its noise alone would move enough to flip every prediction where the
    features' margins are small. None without an intercept.

    Returns
    -------
    ndarray of shape (p,) or None
    """
    if not design.fit_intercept:
        return None
    w0 = np.zeros(design.p)
    sens = 2.0 / design.n
    mean = label_mean(design.y, multiplier * sens, sens, noise)
    mean = math.copysign(max(abs(mean) - WARM_SHRINK * multiplier * sens, 0.0), mean)
    w0[-1] = intercept(mean, getattr(loss, "name", "") == "logistic")
    return w0


def _run(design, plan, noise, callback):
    w = np.zeros(design.p)
    if design.fit_intercept:
        classification = getattr(plan.info.loss, "name", "") in ("logistic", "hinge")
        q = plan.params
        w[-1] = intercept(label_mean(design.y, q["scale"], q["sensitivity"], noise, q["kind"]), classification)
    if callback is not None:
        callback(0, w)
    return w


MECHANISM = Mechanism(
    name="constant",
    title="the constant predictor from a noisy label mean",
    citation=SOURCE,
    summary="intercept only, from the noisy mean label: the floor of every model (too few records for the budget)",
    options=(),
    calibrations=("tight",),
    loss_needs=(),
    penalty_needs=(),
    plan=_plan, run=_run,
    zcdp_calibration=True,
    dask=True,  # it reads the labels only, which stay on the client
)
