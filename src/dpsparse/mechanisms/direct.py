"""Calling a mechanism directly on arrays: ``dp_gcd(X, y, loss, penalty, feature_bounds, ...)``.

Each mechanism module keeps a function of that shape for experiments and tests. It is
``fit_mechanism`` on ``BoundedDesign.from_arrays``, which enforces the bounds it is given
(clipping, counted) and records in the report that they were passed by the caller.
"""
from __future__ import annotations

from ..accounting import check_privacy_params
from ..data import BoundedDesign
from .base import fit_mechanism

__all__ = ["call_direct"]


def call_direct(mechanism, X, y, loss, penalty, feature_bounds, *, epsilon, delta, calibration, noise, callback,
                row_norm, options, budget=None):
    """``fit_mechanism`` on arrays within ``feature_bounds`` (and ``row_norm``), checked first.

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport
    """
    check_privacy_params(epsilon, delta)
    mechanism.resolve_calibration(calibration)
    mechanism.resolve_options(options)
    design = BoundedDesign.from_arrays(X, y, feature_bounds, row_norm)
    return fit_mechanism(mechanism, design, loss, penalty, epsilon=epsilon, delta=delta, calibration=calibration,
                         options=options, noise=noise, callback=callback, budget=budget)
