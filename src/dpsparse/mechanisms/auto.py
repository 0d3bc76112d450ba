"""``mechanism="auto"``: the mechanism and its options from public quantities only.

The rule reads the loss, the penalty, ``n``, ``p``, epsilon and delta, never the data; it
was chosen by measurement on synthetic families only (``benchmarks/defaults_rule.py``,
docs/defaults.md), so the real datasets of the benchmarks stay an honest test.

- least squares with a separable penalty: sufficient statistics perturbation with an
  adaptive ridge (AdaSSP, Wang 2018) on every feature when there are at most
  ``SPARSITY`` of them, otherwise ``two-stage``: ``SPARSITY`` features selected by
  peeling, then AdaSSP on them;
- the hinge loss: the one-pass noisy SGD (the only mechanism without a smoothness need
  and without tuning);
- everything else (logistic, Huber, structured norms): see ``_classifier``.
"""
from __future__ import annotations

from .base import penalty_capabilities

__all__ = ["SPARSITY", "SELECTION_SHARE", "choose"]

SPARSITY = 10
"""Features kept by the selection of the least-squares rule."""

SELECTION_SHARE = 0.5
"""Share of the zCDP budget the least-squares rule spends on the selection (measured: docs/defaults.md)."""


def choose(loss, penalty, n, p):
    """The mechanism of ``mechanism="auto"``.

    Parameters
    ----------
    loss : Datafit
    penalty : Penalty
    n, p : int
        Records and features (the intercept excluded).

    Returns
    -------
    name : str
        A key of ``REGISTRY``.
    options : dict
        Its options (the others keep their public defaults).
    reason : str
        The rule that chose it, in words, for the report.
    """
    name = getattr(loss, "name", "")
    separable = "separable" in penalty_capabilities(penalty)
    if name == "squared" and separable:
        if p <= SPARSITY:
            return "adassp", {}, f"least squares on {p} <= {SPARSITY} features: AdaSSP on all of them"
        return ("two-stage", {"second": "adassp", "sparsity": SPARSITY, "selection_share": SELECTION_SHARE},
                f"least squares on {p} > {SPARSITY} features: select {SPARSITY} privately, then AdaSSP on them")
    if name == "hinge":
        return "one-pass-sgd", {}, "the hinge loss is not smooth: one-pass noisy SGD"
    return _classifier(separable)


def _classifier(separable):
    if separable:
        return "dp-gcd", {}, "a smooth loss with a separable penalty: DP-GCD"
    return "dp-sgd", {}, "a structured norm: DP-SGD with its proximal step"
