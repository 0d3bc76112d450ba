"""A label set selected privately: the classes a classifier releases, when none are declared.

Gaussian partition selection (Desfontaines, Voss, Gipson & Mandayam, "Differentially private
partition selection", PoPETs 2022; the thresholded noisy histogram of Google's DP library):
every label value present in the data gets its count plus ``N(0, sigma^2)``; the values
whose noisy count exceeds ``tau = 1 + sigma Phi^-1(1 - delta_L)`` are released, sorted, the
counts are not. Replacing one record moves two counts by 1 (L2 sensitivity ``sqrt(2)``), so
with ``sigma = 1 / sqrt(rho_L)`` the counts of the values present on both sides are a
``rho_L``-zCDP release; a value present on one side only has count 1 there and is released
with probability at most ``delta_L``. The selection is ``delta_L``-approximately
``rho_L``-zCDP (Bun & Steinke, TCC 2016, Definition 8.1), and it composes with a
``rho``-zCDP fit into ``(rho_L + rho)``-zCDP up to ``delta_L``: (epsilon, delta) with
``delta = delta_L + delta'`` and epsilon the conversion of ``rho_L + rho`` at ``delta'``.
docs/privacy.md, "A private label set", has the analysis.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

__all__ = ["SHARE", "select_labels"]

SHARE = 0.05
"""Share of the zCDP budget the selection takes (half of delta is its failure probability)."""

SOURCE = ("Gaussian partition selection (Desfontaines et al., PoPETs 2022), approximate zCDP (Bun & Steinke 2016, "
          "Def. 8.1)")


def select_labels(y, rho, delta, noise):
    """The label values whose noisy count passes the threshold, sorted.

    Parameters
    ----------
    y : ndarray of shape (n,)
        The private labels.
    rho : float > 0
        zCDP budget of the counts.
    delta : float in (0, 1)
        Probability that a value held by one record only is released.
    noise : NoiseSource

    Returns
    -------
    selected : ndarray
    details : dict
        Public parameters for the privacy report.
    """
    values, counts = np.unique(np.asarray(y), return_counts=True)
    sigma = 1.0 / math.sqrt(rho)
    threshold = 1.0 + sigma * float(norm.isf(delta))
    noisy = noise.release(counts.astype(float), "gaussian", sigma, sensitivity=math.sqrt(2.0), name="label counts")
    details = {"label set": f"selected privately: labels whose count + N(0, {sigma:.3g}^2) exceeds {threshold:.4g}",
               "label set: zCDP rho, delta": f"{rho:.4g}, {delta:.3g}", "label set: source": SOURCE}
    return values[np.asarray(noisy) > threshold], details


def records_needed(rho, delta):
    """The count a label needs to pass the threshold with probability 1/2 (public, for error messages)."""
    return 1.0 + float(norm.isf(delta)) / math.sqrt(rho)
