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

import collections
import math

import numpy as np
from scipy.special import ndtri

from .accounting import zcdp_budget, zcdp_epsilon

__all__ = ["DELTA_SHARE", "MIN_SHARE_OF_RECORDS", "SHARES", "budget", "canonical", "class_index", "plan_share",
           "records_for_selection", "select_labels", "whole_epsilon"]

SHARES = (0.05, 0.1, 0.2)
"""Shares of the zCDP budget the selection may take (``DELTA_SHARE`` of delta is its failure probability): the
smallest with which a label holding ``MIN_SHARE_OF_RECORDS`` of the records passes the threshold by two noise
deviations."""

MIN_SHARE_OF_RECORDS = 0.25

DELTA_SHARE = 0.1
"""The share of delta that is the selection's failure probability; the fit converts the rest. Half of it, as before,
cost the fit about 4 % of its zCDP budget (``log(1 / delta)`` in the conversion) for a threshold only 5 % lower."""

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
        In the form ``canonical`` gives them.
    details : dict
        Public parameters for the privacy report.
    """
    values, counts = _counts(np.asarray(y))
    sigma = 1.0 / math.sqrt(rho)
    threshold = 1.0 - sigma * float(ndtri(delta))  # ndtri(delta) = -Phi^-1(1 - delta)
    noisy = noise.release(counts.astype(float), "gaussian", sigma, sensitivity=math.sqrt(2.0), name="label counts")
    details = {"label set": f"selected privately: labels whose count + N(0, {sigma:.3g}^2) exceeds {threshold:.4g}",
               "label set: zCDP rho, delta": f"{rho:.4g}, {delta:.3g}", "label set: source": SOURCE}
    return canonical(values[np.asarray(noisy) > threshold]), details


def _counts(y):
    """The distinct label values and their counts: ``np.unique``'s, or for an object array (a pandas column of mixed
    Python objects) counted value by value in their canonical form (``canonical``), ordered by kind (numbers, text,
    others by their text) then value, since one record of another type would make ``np.unique``'s comparisons fail
    after the budget is charged."""
    if y.dtype != object:
        return np.unique(y, return_counts=True)
    tally = collections.Counter(_one(v) for v in y.tolist())
    keys = sorted(tally, key=lambda v: (0, v, "") if isinstance(v, int | float) else (1, 0, v) if isinstance(v, str)
                  else (2, 0, repr(v)))
    values = np.empty(len(keys), dtype=object)
    values[:] = keys
    return values, np.array([tally[k] for k in keys])


def _one(v):
    """One label in its canonical form: ``bool`` and integral numbers as ``int``, other numbers as ``float`` with
    ``+ 0.0`` (no ``-0.0``), anything else as it is."""
    if isinstance(v, bool | int | np.integer | np.bool_):
        return int(v)
    if isinstance(v, float | np.floating):
        return int(v) if float(v).is_integer() else float(v) + 0.0
    return v


def class_index(y, classes):
    """Each label's index among ``classes`` (selected privately, ``canonical``), -1 for a label outside them; an
    object array is matched value by value in canonical form, by equality only (no comparison across types).

    Parameters
    ----------
    y : ndarray of shape (n,)
    classes : ndarray of shape (k,), sorted

    Returns
    -------
    ndarray of int of shape (n,)
    """
    if y.dtype == object:
        lookup = {v: i for i, v in enumerate(classes.tolist())}
        return np.array([lookup.get(_one(v), -1) for v in y.tolist()], dtype=int)
    index = np.minimum(np.searchsorted(classes, y), classes.size - 1)
    return np.where(classes[index] == y, index, -1)


def canonical(values):
    """The selected label values in a form read off themselves only, never off the labels that did not pass.

    ``np.unique`` gives them the dtype of the whole label array, which one record can change: a label 0.5 makes an
    integer array float, a long text widens the text dtype, a ``-0.0`` may stand for the class 0. Each value is
    written on its own (``bool`` and integral numbers as ``int``, other numbers as ``float`` with ``+ 0.0``, text as
    ``str``), and the array takes the dtype those values alone give.

    Parameters
    ----------
    values : ndarray of shape (k,)

    Returns
    -------
    ndarray of shape (k,)
    """
    return np.array([_one(v) for v in values.tolist()])


def budget(epsilon, delta):
    """``(rho, delta_labels)``: the zCDP budget of a fit at ``(epsilon, delta)`` whose label set is selected privately,
    and the selection's failure probability, ``DELTA_SHARE`` of delta: the largest ``rho`` with ``whole_epsilon(rho,
    delta) <= epsilon``.

    Raises
    ------
    ValueError
        ``epsilon`` at most ``log(1 / (1 - delta_L))``: nothing left for the selection and the fit.
    """
    delta_labels = DELTA_SHARE * delta
    excess = _failure_excess(delta_labels)
    if epsilon <= excess:
        raise ValueError(f"classes='private' with delta={delta:g}: the label selection fails with probability "
                         f"delta/10, which costs log(1 / (1 - delta/10)) = {excess:.3g} of epsilon, all of "
                         f"epsilon={epsilon:g}; lower delta (1/n^2 is the default) or declare the classes "
                         "(classes=[...], --classes in the CLI)")
    return zcdp_budget(epsilon - excess, delta - delta_labels), delta_labels


def whole_epsilon(rho, delta):
    """Epsilon at ``delta`` of the selection and the fit together, ``DELTA_SHARE * delta = delta_L``-approximately
    ``rho``-zCDP: ``zcdp_epsilon(rho, delta - delta_L) + log(1 / (1 - delta_L))`` (the conversion holds conditioned
    on the selection not failing, an event of probability at least ``1 - delta_L`` on either dataset; dividing by
    that probability adds the log term, and the failure adds ``delta_L`` to delta; docs/privacy.md)."""
    delta_labels = DELTA_SHARE * delta
    return zcdp_epsilon(rho, delta - delta_labels) + _failure_excess(delta_labels)


def _failure_excess(delta_labels):
    """``log(1 / (1 - delta_L))``: what conditioning on the selection not failing adds to epsilon."""
    return -math.log1p(-delta_labels)


def records_needed(rho, delta):
    """The count a label needs to pass the threshold with probability 1/2 (public, for error messages)."""
    return 1.0 - float(ndtri(delta)) / math.sqrt(rho)


def plan_share(n, rho, delta):
    """The smallest of ``SHARES`` of ``rho`` with which a label of ``MIN_SHARE_OF_RECORDS n`` records passes the
    threshold by two noise deviations (public: n, rho, delta).

    Raises
    ------
    ValueError
        When none does: too few records to select the label set privately (before the data is read).
    """
    for share in SHARES:
        if records_needed(share * rho, delta) + 2.0 / math.sqrt(share * rho) <= MIN_SHARE_OF_RECORDS * n:
            return share
    raise ValueError(f"{n} records are too few to select the label set privately at this epsilon: a label holding "
                     f"{MIN_SHARE_OF_RECORDS:.0%} of the records must pass the selection's threshold (about "
                     f"{records_needed(SHARES[-1] * rho, delta):.0f} records with {SHARES[-1]:.0%} of the budget) by "
                     f"two noise deviations, which takes at least {records_for_selection(rho, delta)} records; declare "
                     "the classes (classes=[...], --classes in the CLI)")


def records_for_selection(rho, delta):
    """The fewest records ``n`` with which ``plan_share`` plans the selection at ``(rho, delta)`` (public)."""
    share = SHARES[-1] * rho
    return math.ceil((records_needed(share, delta) + 2.0 / math.sqrt(share)) / MIN_SHARE_OF_RECORDS)
