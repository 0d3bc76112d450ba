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
  the constant's (the held-out labels' mean) is 0 by definition.

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

__all__ = ["private_score"]

SOURCE = ("Gaussian mechanism in zCDP (Bun & Steinke 2016, Prop. 1.6) on a held-out part; parallel composition with "
          "the fit (McSherry 2009, Thm 4)")


VARIANCE_FLOOR = 1e-3
"""The least label variance the private R^2 divides by, in the units of the label range mapped onto [-1, 1] (whose
variance is at most 1): a noisy variance near 0 gave an R^2 of -1e11; floored, the R^2 is at least -4000 and the
score says ``variance_floored`` (a score to disregard). A floor of a few noise deviations instead would raise the
R^2 of a small held-out set towards 1, where its noise exceeds the variance it divides by."""


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
        ``metric`` ("accuracy" or "r2"), ``model`` and ``constant`` (noisy), ``noise_sd`` (of each
        released coordinate), ``difference_sd`` (the noise of ``model - constant``, to first order),
        ``records`` (m), ``rho``, ``source``.
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
        score = {"metric": "accuracy", "model": float(noisy[0]), "constant": float(np.max(noisy[1:])),
                 "difference_sd": math.sqrt(2.0) * sigma}
    else:
        # the noisy variance can be tiny or negative where the noise dominates: floored (public; post-processing)
        raw = float(noisy[2] - noisy[1] ** 2)
        variance = max(raw, VARIANCE_FLOOR)
        score = {"metric": "r2", "model": 1.0 - float(noisy[0]) / variance, "constant": 0.0,
                 "difference_sd": sigma / variance,  # the mse's noise through R^2 (first order)
                 "variance_floored": raw < VARIANCE_FLOOR}
    margin = 2.0 * score["difference_sd"]
    if score["model"] <= score["constant"] + margin:
        warnings.warn(
            f"the private score does not show the model beating the constant predictor (held-out {score['metric']} "
            f"{score['model']:.4f} against {score['constant']:.4f}, a gap below {margin:.2g}, twice the sd of the "
            "noise of their difference): at this epsilon and number of records, predicting "
            f"{'the majority class' if classification else 'the mean'} may be as good; a larger epsilon or more "
            "records help, and more held-out records make the score less noisy", NoBetterThanConstantWarning,
            stacklevel=2)
    return {**score, "noise_sd": sigma, "records": int(m), "rho": rho, "source": SOURCE}
