"""A private score of a released model: its held-out accuracy or R^2, with noise, beside the constant's.

The records are split, independently of the data, into a training part and a held-out part;
the model is trained on the first at (epsilon, delta), and the score is one Gaussian release
on the second, calibrated to the zCDP budget ``rho`` that meets the same (epsilon, delta).
A replace-one neighbour changes one record, in one part only, so the pair (model, score) is
(epsilon, delta)-DP: parallel composition over a data-independent split (McSherry,
"Privacy integrated queries", SIGMOD 2009, Theorem 4). The analysis is in docs/privacy.md,
"A private score".

What is released, for ``m`` held-out records (labels and predictions of a regression mapped
onto [-1, 1] by the released label range, predictions clipped to it as ``predict`` does):

- classification: the model's accuracy (each term in [0, 1]: sensitivity ``1/m``) and the
  share of each class (replace-one moves two shares by ``1/m``: L2 sensitivity
  ``sqrt(2)/m``); the constant predictor's accuracy is the largest released share;
- regression: the model's mean squared error (each term in [0, 4]: ``4/m``) and the labels'
  mean (``2/m``) and mean square (``1/m``); R^2 is ``1 - mse / (mean square - mean^2)``, and
  the constant's (the held-out labels' mean) is 0 by definition. R^2 divides by a noisy
  variance: its spread (``model_sd``) is propagated from both the mse's noise and the
  variance's, to first order, and where the variance is not above ``RELIABLE`` times its own
  noise the ratio is not a score at all (its draws spread over orders of magnitude: -400 to
  1.2 in repeated fits on diabetes' 88 held-out records) and the score says ``unreliable``;
  the mean squared errors of the model and of the constant (the variance), in label units,
  are released beside it, each with its plain Gaussian noise.

The noisy accuracy is clipped to [0, 1], the R^2 to at most 1 and the mean squared errors to at
least 0 (post-processing: the exact values lie there). An accuracy whose noise has a standard deviation of
at least ``1 / RELIABLE`` (a quarter: ``RELIABLE`` of them span its whole range) is not a score either, and
says ``unreliable`` (a 1.000 clipped from a draw of sd 0.9 on 5 held-out records read as a perfect model).

The vector is released at once with Gaussian noise of L2 sensitivity the norm of the
per-coordinate ones: ``sigma = sensitivity / sqrt(2 rho)`` (Bun & Steinke, "Concentrated
differential privacy", TCC 2016, Proposition 1.6).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .accounting import zcdp_budget
from .exceptions import NoBetterThanConstantWarning

__all__ = ["mse_gap_shown", "noisy_square", "private_score"]

SOURCE = ("Gaussian mechanism in zCDP (Bun & Steinke 2016, Prop. 1.6) on a held-out part; parallel composition with "
          "the fit (McSherry 2009, Thm 4)")


VARIANCE_FLOOR = 1e-3
"""The least label variance the private R^2 divides by, in the units of the label range mapped onto [-1, 1] (whose
variance is at most 1): a noisy variance near 0 gave an R^2 of -1e11; floored, the R^2 is at least -4000 and the
score says ``variance_floored`` (a score to disregard). A floor of a few noise deviations instead would raise the
R^2 of a small held-out set towards 1, where its noise exceeds the variance it divides by."""


RELIABLE = 4.0
"""The private R^2 is reported as a score only where the noisy label variance exceeds this many standard
deviations of its noise (a divisor known to within about a quarter of itself)."""


def private_score(estimator, X, y, epsilon, delta, noise):
    """The noisy held-out score of a fitted estimator and of the constant predictor.

    Parameters
    ----------
    estimator : fitted dpsparse estimator
        Trained on records disjoint from ``X`` (the split drawn independently of the data).
    X : array-like of shape (m, n_features)
    y : array-like of shape (m,)
    epsilon, delta : float
        The fit's budget; the score meets it on the held-out part.
    noise : NoiseSource

    Warns
    -----
    NoBetterThanConstantWarning
        The model's score does not exceed the constant's by twice ``difference_sd``.

    Returns
    -------
    dict
        ``metric`` ("accuracy" or "r2"), ``model`` and ``constant`` (noisy), ``model_sd`` (the noise's
        standard deviation in the model's score; for R^2 to first order through the ratio), ``noise_sd`` (of
        each released coordinate), ``difference_sd`` (the noise of ``model - constant``, to first order),
        ``records`` (m), ``rho``, ``source``, ``unreliable`` (no score: an accuracy's noise sd at least
        ``1 / RELIABLE``; an R^2's noisy variance within ``RELIABLE`` deviations of its noise, or floored; ``model``
        is then None, JSON null, not a number that would read as one);
        for a regression also ``variance_floored``, and
        ``model_mse``, ``constant_mse``, their noise ``mse_sd`` and ``constant_mse_sd`` (label units squared).
    """
    y = np.asarray(y)
    m = y.shape[0]
    rho = zcdp_budget(epsilon, delta)
    classification = hasattr(estimator, "classes_")
    if classification:
        shares = [np.mean(y == c) for c in estimator.classes_]
        values = np.array([np.mean(estimator.predict(X) == y), *shares])
        sensitivity = math.sqrt(1.0 + 2.0) / m  # the accuracy by 1/m, two shares by 1/m each
    else:
        low, high = estimator.label_range_
        u = np.clip((2.0 * y.astype(float) - (low + high)) / (high - low), -1.0, 1.0)
        z = np.clip((2.0 * np.asarray(estimator.predict(X), dtype=float) - (low + high)) / (high - low), -1.0, 1.0)
        values = np.array([np.mean((u - z) ** 2), np.mean(u), np.mean(u**2)])
        sensitivity = math.sqrt(4.0**2 + 2.0**2 + 1.0**2) / m
    sigma = sensitivity / math.sqrt(2.0 * rho)
    noisy = noise.release(values, "gaussian", sigma, sensitivity=sensitivity, name="private score")
    if classification:
        unreliable = RELIABLE * sigma >= 1.0  # RELIABLE sd span the accuracy's whole range
        score = {"metric": "accuracy", "model": None if unreliable else float(np.clip(noisy[0], 0.0, 1.0)),
                 "constant": float(np.clip(np.max(noisy[1:]), 0.0, 1.0)), "model_sd": sigma,
                 "difference_sd": math.sqrt(2.0) * sigma, "unreliable": unreliable}
    else:
        score = _r2(noisy, sigma, (estimator.label_range_[1] - estimator.label_range_[0]) / 2.0)
    margin = 2.0 * score["difference_sd"]
    if score.get("unreliable") and classification:
        warnings.warn(
            f"the private accuracy at epsilon {epsilon:g} is not a score here: its noise has sd {sigma:.2g}, "
            f"{RELIABLE:g} of which span the accuracy's whole range ({m} held-out records at this epsilon; the "
            "released values are clipped to [0, 1]); more held-out records or a larger epsilon make it one",
            NoBetterThanConstantWarning, stacklevel=2)
    elif score.get("unreliable"):
        model = noisy_square(score["model_mse"], score["mse_sd"])
        constant = noisy_square(score["constant_mse"], score["constant_mse_sd"])
        warnings.warn(
            f"the private R^2 at epsilon {epsilon:g} is not a score here: the held-out labels' noisy variance is "
            f"within {RELIABLE:g} standard deviations of its noise ({m} held-out records at this epsilon); the mean "
            f"squared errors released beside it: the model's {model} against the constant's {constant} (noise sd "
            f"{score['mse_sd']:.2g} and {score['constant_mse_sd']:.2g}), "
            + ("the constant's above the model's by more than twice the noise of their gap: they show the model "
               "beating the constant predictor" if mse_gap_shown(score) else
               "a gap within twice its noise: they do not show the model beating the constant predictor either")
            + "; more held-out records or a larger epsilon make the R^2 a score", NoBetterThanConstantWarning,
            stacklevel=2)
    elif score["model"] <= score["constant"] + margin:
        warnings.warn(
            f"the private score at epsilon {epsilon:g} does not show the model beating the constant predictor "
            f"(held-out {score['metric']} "
            f"{score['model']:.4f} against {score['constant']:.4f}, a gap below {margin:.2g}, twice the sd of the "
            "noise of their difference): at this epsilon and number of records, predicting "
            f"{'the majority class' if classification else 'the mean'} may be as good; a larger epsilon or more "
            "records help, and more held-out records make the score less noisy", NoBetterThanConstantWarning,
            stacklevel=2)
    return {**score, "noise_sd": sigma, "records": int(m), "rho": rho, "source": SOURCE}


def noisy_square(value, sd):
    """A noisy mean of squares as text, to the digits its noise's standard deviation ``sd`` leaves (one more than the
    sd's first): 0 where its noise took it below 0 (``private_score`` clips it there)."""
    if value == 0:
        return "0 (the noise took it below 0: clipped)"
    if not sd > 0:
        return f"{value:.4g}"
    digits = 1 - math.floor(math.log10(sd))  # decimals; below 0, tens, hundreds... rounded away
    if digits < -3:  # 4.2e+09 (sd 2.6e+08), not 4240000000
        return f"{value:.{max(0, math.floor(math.log10(abs(value))) + digits)}e}" if value else "0"
    return f"{round(value, digits):.{max(0, digits)}f}"


def mse_gap_shown(score):
    """Whether a regression's released mean squared errors show the model beating the constant predictor: the
    constant's above the model's by more than twice the noise of their difference (each noise's sd, added in
    quadrature). Post-processing of the released score."""
    gap_sd = math.hypot(score["mse_sd"], score["constant_mse_sd"])
    return score["constant_mse"] - score["model_mse"] > 2.0 * gap_sd


def _r2(noisy, sigma, half_range):
    """R^2 from the noisy (mse, mean, mean square) in the mapped units, with its first-order noise and whether it
    is a score at all (module docstring)."""
    mse, mean = float(noisy[0]), float(noisy[1])
    # the noisy variance can be tiny or negative where the noise dominates: floored (public; post-processing)
    raw = float(noisy[2] - mean**2)
    variance = max(raw, VARIANCE_FLOOR)
    variance_sd = sigma * math.sqrt(1.0 + 4.0 * mean**2)  # d(ms - mean^2) = d ms - 2 mean d mean
    r2_sd = math.hypot(sigma / variance, mse * variance_sd / variance**2)
    units = half_range**2
    unreliable = raw < max(RELIABLE * variance_sd, VARIANCE_FLOOR)
    return {"metric": "r2", "model": None if unreliable else min(1.0 - mse / variance, 1.0), "constant": 0.0,
            "model_sd": r2_sd, "difference_sd": r2_sd, "variance_floored": raw < VARIANCE_FLOOR,
            "unreliable": unreliable, "model_mse": max(mse, 0.0) * units,
            "constant_mse": max(raw, 0.0) * units, "mse_sd": sigma * units, "constant_mse_sd": variance_sd * units}
