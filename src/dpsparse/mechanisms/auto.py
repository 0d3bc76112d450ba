"""``mechanism="auto"``: the mechanism and its options from public quantities (and, for least squares where the
records are few, a private release).

The rule reads the loss, the penalty, ``n``, ``p`` and epsilon, never the data (for least squares on many features below
``n epsilon = FILL_BAND log p``, ``reads_fill``, also a differentially private release of the records' fill of their
box, which the estimators buy inside the same budget); it was chosen by measurement on synthetic families only
(``benchmarks/defaults_rule.py``, docs/defaults.md), so the real datasets of the benchmarks stay an honest test.

- least squares (and the Huber loss) with a separable penalty: the constant predictor when
  ``n epsilon < FLOOR_LEAST_SQUARES log p`` (``FLOOR_SELECTION`` for the squared loss on more than
  ``FEW_LEAST_SQUARES`` features); otherwise DP-GD (its clipping norm set privately) on every feature
  when there are at most ``FEW_LEAST_SQUARES`` of them (its steps growing with ``n epsilon / log p``:
  ``LEAST_SQUARES_GD_STEPS``), otherwise ``two-stage``: features selected by peeling (the
  labels clipped at ``SELECTION_CLIP`` in the scores), then DP-GD (its clipping norm set privately) on them; how many
  and DP-GD's steps grow with ``n epsilon / log p`` (``SPARSITY_STEPS``), and for the squared loss more of them below
  ``FILL_BAND log p`` where the records fill at least ``FILL_MORE`` of their box;
- the logistic loss with a separable penalty: on at most ``FEW`` features, the constant predictor when
  ``n epsilon < FLOOR_FEW log p`` (too few records for the budget), otherwise DP-GD (its clipping norm set
  privately), and so on at most ``FEW_MANY`` features from ``n epsilon = GD_MANY_BAND log p``; on more, the constant
  predictor when ``n epsilon < FLOOR log p``, otherwise DP-GCD with its clipping
  threshold set privately (``clipping_norm="auto"``), ``GCD_FEW_STEPS`` steps below
  ``n epsilon = GCD_BAND log p``, started there from the constant predictor's intercept (a noisy label mean,
  ``warm_start``), and ``ITERATIONS`` above;
- the hinge loss: the constant predictor when ``n epsilon < HINGE_FLOOR log p``; otherwise DP-GD on its
  subgradients (its clipping norm set privately), where the one-pass noisy SGD stayed within 0.01 of the constant
  (``--study hinge``), with the step ``D / (G sqrt(T))`` of subgradient descent's bound (``dp_gd.lipschitz_step``),
  ``D`` from ``HINGE_RADII`` below and from ``n epsilon = HINGE_BAND log p`` (``--study hinge-step``);
- the rule's DP-GD in the logistic and hinge branches takes ``GD_STEPS`` steps, and ``GD_MANY_STEPS`` from
  ``n epsilon = GD_MANY_BAND log p`` (``gd_steps``; ``--study gd-steps``); on least squares, fewer below
  ``n epsilon = 600 log p`` (``least_squares_steps``; ``--study gd-steps-low``);
- a structured norm: for least squares and the Huber loss on at most ``FEW_LEAST_SQUARES`` features and the
  logistic loss on at most ``FEW``, DP-GD with the prox of the whole norm and the separable rule's floor and steps
  (``--study structured``); otherwise DP-SGD (the prox of the whole norm), DP-GD when a label set bought privately
  composes with the fit in zCDP; any other loss: DP-GCD.

The penalty strength of ``alpha="auto"`` (``penalty_strength``): ``RULE_ALPHA`` (1e-4) under the least-squares and
logistic rules with a separable penalty, where a larger strength only biased the rule's learners (their sparsity
comes from the selection or the greedy steps); ``ALPHA`` (1e-3) elsewhere.
"""
from __future__ import annotations

import math

from ._common import per_log_feature
from .base import penalty_capabilities

__all__ = ["FEW", "FEW_LEAST_SQUARES", "FEW_MANY", "FLOOR", "FLOOR_FEW", "FLOOR_LEAST_SQUARES", "FLOOR_SELECTION",
           "GCD_BAND",
           "GCD_FEW_STEPS", "GCD_MANY_BAND", "GCD_MANY_STEPS", "GD_MANY_BAND", "GD_MANY_STEPS", "GD_STEPS",
           "FILL_BAND", "FILL_FLOOR", "FILL_MORE", "FILL_SHARE", "HINGE_BAND", "HINGE_FLOOR", "HINGE_RADII",
           "ITERATIONS",
           "LEAST_SQUARES_GD_STEPS", "ONE_HOT_BAND",
           "SELECTION_CLIP",
           "SPARSITY", "SPARSITY_STEPS",
           "ALPHA", "RULE_ALPHA", "choose", "gd_steps", "least_squares_selection", "least_squares_steps",
           "penalty_strength", "reads_fill"]

SPARSITY = 10
"""Features kept by the selection of the least-squares rule when the records are many for the budget."""

GD_MANY_BAND, GD_MANY_STEPS = 1000, 1000
"""From ``n epsilon = GD_MANY_BAND log p`` the rule's DP-GD (the logistic loss on at most ``FEW`` features, the hinge
loss, least squares on at most ``FEW_LEAST_SQUARES`` and the second stage of its selection beyond) takes
``GD_MANY_STEPS`` steps instead of ``GD_STEPS``: there 1000 steps beat 200 in every band on the synthetic families,
and below it 200 beat or tied with 1000 (``--study gd-steps``, ``--study second-steps-many``, docs/defaults.md)."""

SPARSITY_STEPS = ((130, 3, 4, 0.7, 20), (175, 3, 5, 0.7, 20), (225, 5, 6, 0.7, 50), (350, 6, 7, 0.7, 50),
                  (600, SPARSITY, SPARSITY, 0.7, 100), (GD_MANY_BAND, SPARSITY, SPARSITY, 0.7, 200),
                  (math.inf, SPARSITY, SPARSITY, 0.7, GD_MANY_STEPS))
"""``(bound, sparsity, sparsity where the records fill their box, selection share, steps)``: below
``n epsilon = bound log p`` the least-squares rule selects ``sparsity`` features (the third entry where the records'
released fill is at least ``FILL_MORE``) with ``selection share`` of the zCDP budget, then fits them with ``steps``
of DP-GD (measured: docs/defaults.md; the 20 steps of the lowest bands by ``--study second-steps-low``, the 1000 from
``GD_MANY_BAND`` by ``--study second-steps-many``; the features below 350 by ``--study fill-count``, 3 to 8 of
them on five shapes of features, and confirmed on fresh seeds by ``--study fill-bands``)."""

FLOOR_FEW, FLOOR, FLOOR_LEAST_SQUARES = 8, 50, 130
"""Below ``n epsilon = FLOOR_FEW log p`` (at most ``FEW`` features) or ``FLOOR log p`` (more) the logistic rule
releases the constant predictor, below ``FLOOR_LEAST_SQUARES log p`` the least-squares rule (measured:
docs/defaults.md; the least-squares floor moved from 160 to 130 once DP-GD took 20 steps there,
``--study gd-steps-low`` and ``second-steps-low``)."""

FLOOR_SELECTION = 110
"""Below ``n epsilon = FLOOR_SELECTION log p`` the least-squares rule on more than ``FEW_LEAST_SQUARES`` features (the
squared loss: its selection clips the labels at ``SELECTION_CLIP``) releases the constant predictor: from 110 its
selection of 3 features and 20 DP-GD steps beat the noisy label mean where the features fill their range (+0.03 to
+0.41 by family) and stayed within 0.015 of it where they fill 30 % (--study second-steps-low rerun and 4 other seeds,
docs/defaults.md); at 100 the latter lost up to 0.031. The few-features branch and the Huber loss keep
``FLOOR_LEAST_SQUARES``."""

FEW_MANY = 300
"""From ``n epsilon = GD_MANY_BAND log p`` the logistic rule's DP-GD (``GD_MANY_STEPS`` steps) covers at most
``FEW_MANY`` features, not ``FEW``: on 150 and 300 features there its 1000 steps beat DP-GCD's 100-200 on average in
every band of ``n epsilon / log p`` (by 0.038, 0.068 and 0.041 from 1000, 3000 and 10,000; the dense and planted
families gain most). On 500 features the two are mixed (DP-GD -0.013 from 1000, +0.064 from 3000) and on 1000 and
3000 DP-GCD keeps 0.030 and 0.012 over it: DP-GCD stays there (``--study gd-many`` and ``gd-many-wide``,
docs/defaults.md)."""

FEW, GD_STEPS, ITERATIONS = 100, 200, 100
"""The logistic rule: DP-GD (``GD_STEPS`` steps, ``gd_steps``) on at most ``FEW`` features, DP-GCD (``ITERATIONS``
steps, fewer below ``GCD_BAND``) on more; the least-squares rule: DP-GD (``LEAST_SQUARES_GD_STEPS``) on at most
``FEW_LEAST_SQUARES`` features (measured: docs/defaults.md)."""

ONE_HOT_BAND = 400
"""On more than ``FEW`` features declared in one-hot groups (``data.Bounds.one_hot``) whose records' squared norm is
at most ``FEW`` (groups plus other features), the logistic rule runs DP-GD (its steps ``gd_steps``) from
``n epsilon = ONE_HOT_BAND log p``: with the groups' zeros kept, DP-GD's noise follows that norm, not ``p``. On the
survey-like synthetic families (one-hot answers, with and without numeric ones) it ties DP-GCD (the rule otherwise)
from 400 and gains 0.016-0.021 from 1000; below 400 it loses (``--study one-hot``, docs/defaults.md)."""

LEAST_SQUARES_GD_STEPS = ((250, 20), (600, 100), (GD_MANY_BAND, GD_STEPS), (math.inf, GD_MANY_STEPS))
"""``(bound, steps)``: below ``n epsilon = bound log p`` the least-squares rule's DP-GD on every feature takes
``steps``. The noise of each step adds up in the last iterate along the directions the squared loss barely curves,
so where the records are few for the budget many steps lose far more than they gain: at ``n epsilon / log p``
100-200, 200 steps lost 0.35-3.7 of R^2 to the noisy label mean where 20 gained 0.08-0.19; from 250 to 600, 100 steps
tie with or beat 200 (``--study gd-steps-low``, docs/defaults.md)."""

FEW_LEAST_SQUARES = 30
"""Least squares (and the Huber loss) on at most ``FEW_LEAST_SQUARES`` features: DP-GD on all of them above the
floor, no selection (with 12-30 features it gained 0.13-0.20 of R^2 on average over the selection of ``SPARSITY``
in every band of ``n epsilon / log p``: ``--study selection-few``, docs/defaults.md)."""

HINGE_FLOOR, HINGE_BAND, HINGE_RADII = 30, 100, (3.0, 10.0)
"""The hinge rule: the constant predictor below ``n epsilon = HINGE_FLOOR log p`` (there DP-GD lost to it on three
of the five families, the imbalanced categorical one by 0.04-0.07), then DP-GD with the step's ``D`` the first of
``HINGE_RADII``, the second from ``HINGE_BAND``; the step ``1 / R^2`` before it was 0.05-0.06 below ``D`` = 10 from
there (measured: docs/defaults.md)."""

GCD_BAND, GCD_FEW_STEPS = 800, 50
"""Below ``n epsilon = GCD_BAND log p`` the logistic rule's DP-GCD takes ``GCD_FEW_STEPS`` steps: there 50 steps tie
with or beat 100 on the synthetic families in every band (``--study steps-wide`` and ``steps-band``; from 800, 100
win), and where they tie the fewer steps are taken: each greedy step can add a noisy coordinate to the support.
There it also starts from the constant predictor's intercept: few steps rarely reach the intercept that imbalanced
classes need (``--study floor-gcd``; above, with 100 steps, the start did not help: ``start-imbalanced``; measured:
docs/defaults.md)."""

GCD_MANY_BAND, GCD_MANY_STEPS = 10_000, 200
"""From ``n epsilon = GCD_MANY_BAND log p`` the logistic rule's DP-GCD takes ``GCD_MANY_STEPS`` steps: there twice
the 100 steps gain 0.016-0.018 on the synthetic families at n = 10^5 (``--study large``) and still find the planted
support (F1 1.00 with both at ``n epsilon / log p`` = 14,476); from 2000 they gain 0.016 too (``steps-wide``) but
cost the support of the planted problems near 2900 and 5800, where each extra step adds a noisy coordinate
(measured: docs/defaults.md)."""

SELECTION_CLIP = 0.05
"""The labels' clip in the selection's scores, in units of the label range: about a tenth of the labels' standard
deviation once the range is narrowed privately, so that the scores weigh the labels' signs more than their sizes
(measured: ``--study selection-clip``, docs/defaults.md)."""


FILL_MORE, FILL_SHARE = 0.65, 0.02
"""Where the records fill at least ``FILL_MORE`` of their box, the least-squares rule selects the filled column's
count of ``SPARSITY_STEPS`` (below ``FILL_BAND log p``, from its selection's floor): the fill is the private mean over
pairs of records of ``min(||x_i - x_j|| / (sqrt(2) R), 1)`` (their spread, ``estimators._fill_sum``), the records
mapped onto the declared bounds (``R`` the design's row-norm bound), released with ``FILL_SHARE`` of the zCDP budget
before the fit (Gaussian, sensitivity 1; docs/privacy.md). Where the features fill more of their box the selection's
scores stand further above its noise: on synthetic regressions whose features fill 0.72-0.75 of it (clipped normals,
wide uniforms) a fourth feature gained +0.02 to +0.08 of R^2 at every ``n epsilon / log p`` from 115 to 170, where it
lost up to 0.04 at 0.48 (two uniforms mixed) and lost or tied at 0.58 (uniforms) from 115 to 160
(``--study fill-threshold``), and a fifth gained again from 130 (``--study fill-count``; docs/defaults.md)."""

FILL_FLOOR = 0.15
"""Where the records' released fill is below ``FILL_FLOOR`` (features spread over less than about a third of their
declared ranges), the least-squares rule releases the constant predictor (the noisy label mean) below
``FILL_BAND log p``: on synthetic regressions whose features spread over 0.1 of their box (a fill of about 0.06) the
selection lost 0.02-0.11 of R^2 to it at every ``n epsilon / log p`` from 115 to 340, over 0.3 (0.14) 0.005 on
average, and from 0.5 (0.24) it won by 0.025-0.21 from 130 (``--study fill-floor``; docs/defaults.md)."""

FILL_BAND = max(bound for bound, k, filled, _, _ in SPARSITY_STEPS if filled != k)
"""The rule reads the records' fill below ``n epsilon = FILL_BAND log p``: above it the count is the same either way."""


ALPHA = 1e-3
"""The strength of ``alpha="auto"`` where no rule was measured: a named mechanism (output and objective perturbation
need ``alpha > 0``), a structured norm (its strength is the structure the user asks for), the hinge and Huber
losses."""


RULE_ALPHA = 1e-4
"""The strength of ``alpha="auto"`` under the least-squares and logistic rules with a separable penalty
(``penalty_strength``)."""


_GD_BANDS = ((GD_MANY_BAND, GD_STEPS), (math.inf, GD_MANY_STEPS))
_GCD_BANDS = ((GCD_BAND, GCD_FEW_STEPS), (GCD_MANY_BAND, ITERATIONS), (math.inf, GCD_MANY_STEPS))
"""``(bound, steps)`` of the logistic rule's DP-GD and DP-GCD: below ``n epsilon = bound log p``, ``steps``."""


def _band_value(bands, ratio):
    """The value of the first ``(bound, value)`` of ``bands`` whose bound exceeds ``ratio``."""
    return next(value for bound, value in bands if ratio < bound)


def gd_steps(ratio):
    """The rule's number of DP-GD steps at ``n epsilon / log p = ratio``: ``GD_STEPS``, or ``GD_MANY_STEPS`` from
    ``GD_MANY_BAND``."""
    return _band_value(_GD_BANDS, ratio)


def least_squares_steps(ratio):
    """DP-GD's steps under the least-squares rule on at most ``FEW_LEAST_SQUARES`` features at
    ``n epsilon / log p = ratio`` (``LEAST_SQUARES_GD_STEPS``; ``gd_steps`` from ``GD_MANY_BAND``)."""
    return _band_value(LEAST_SQUARES_GD_STEPS, ratio)


def penalty_strength(loss, penalty):
    """The penalty strength ``alpha`` of ``alpha="auto"`` under the rule (``choose``): ``RULE_ALPHA`` for least
    squares, the Huber loss (which follows the least-squares rule) and the logistic loss with a separable penalty,
    ``ALPHA`` otherwise.

    Measured (``python benchmarks/defaults_rule.py --study alpha`` and ``--study alpha-regression``, docs/defaults.md):
    on the logistic families (p = 30-1000) and the planted regressions (p = 8-1000), n 1000-20000, epsilon 0.3 and 1,
    the held-out score falls as ``alpha`` grows beyond 1e-3 in every band of ``n epsilon / log p`` (0.01 loses up to
    0.05); 0, 1e-4 and 1e-3 are within the seed spread, 1e-4 the best on average and never below 0 by more than
    0.001. Above 0, the penalized problem keeps an optimum (the non-private comparison's solve on separable data).

    Parameters
    ----------
    loss : Datafit
    penalty : Penalty
        Read for its kind only (separable or not), never its strength.

    Returns
    -------
    float
    """
    name = getattr(loss, "name", "")
    separable = "separable" in penalty_capabilities(penalty)
    return RULE_ALPHA if name in ("squared", "huber", "logistic") and separable else ALPHA


def least_squares_selection(n, p, epsilon, fill=None):
    """The least-squares rule's ``two-stage`` options above its floor: fewer features, with more of the budget, where
    ``n epsilon / log p`` is small (``SPARSITY_STEPS``), and more where the records fill at least ``FILL_MORE`` of
    their box.

    Parameters
    ----------
    n, p : int
        Records and features (the intercept excluded), ``p > FEW_LEAST_SQUARES``.
    epsilon : float
    fill : float or None
        The records' fill of their box, released privately (``reads_fill``); None: not released.

    Returns
    -------
    dict
        Options of ``two-stage``.
    """
    ratio = per_log_feature(n, p, epsilon)
    _, sparsity, filled, share, steps = next(step for step in SPARSITY_STEPS if ratio < step[0])
    if fill is not None and fill >= FILL_MORE:
        sparsity = filled
    return {"second": "dp-gd", "sparsity": sparsity, "selection_share": share, "selection_clip": SELECTION_CLIP,
            "n_iter": steps}


def _shown(ratio):
    """``n epsilon / log p`` for the report, cut (not rounded) to one decimal, so that a ratio below a band's bound
    never reads as the bound (349.96 reads 349.9, not 350)."""
    return f"{math.floor(ratio * 10) / 10:g}"


def _rule_words(floor, bands, what="steps"):
    """The numbers the rule compared ``n epsilon / log p`` with, for the report: ``" (the rule, on n epsilon / log p:
    the constant below 8; steps: 200 below 1000, 1000 above)"`` (``bands``: ``(bound, value)`` pairs, the last bound
    infinite; a run of equal values named once, by its last bound)."""
    kept = [(bound, value) for k, (bound, value) in enumerate(bands) if k + 1 == len(bands) or bands[k + 1][1] != value]
    words = [f"{value} above" if math.isinf(bound) else f"{value} below {bound:g}" for bound, value in kept]
    return f" (the rule, on n epsilon / log p: the constant below {floor:g}; {what}: {', '.join(words)})"


def _below_floor(n, p, epsilon, factor, what=""):
    """The rule's choice below its floor ``n epsilon < factor log p``: the constant predictor, and why."""
    return ("constant", {}, f"n epsilon = {n * epsilon:.3g} is below {factor} log p = "
            f"{factor * math.log(max(p, 2)):.3g}: too few records for the budget to learn a feature; the constant "
            f"predictor{what}")


def _structured_gd(name, regression, n, p, epsilon, ratio):
    """A structured norm on few features (least squares and the Huber loss on at most ``FEW_LEAST_SQUARES``, the
    logistic loss on at most ``FEW``): DP-GD with the proximal step of the whole norm and the steps of the
    separable rule, above its floor (``--study structured``: DP-SGD lost up to 2.7 of R^2 to the noisy mean where the
    records are few, and 0.02-0.17 to DP-GD from ``n epsilon = 1000 log p``)."""
    floor = FLOOR_LEAST_SQUARES if regression else FLOOR_FEW
    if ratio < floor:
        return _below_floor(n, p, epsilon, floor, " (the noisy label mean)" if regression else "")
    steps = least_squares_steps(ratio) if regression else gd_steps(ratio)
    bands = LEAST_SQUARES_GD_STEPS if regression else _GD_BANDS
    return ("dp-gd", {"n_iter": steps, "clipping_norm": "auto"},
            f"a structured norm on {p} features, n epsilon / log p = {_shown(ratio)}: DP-GD with its proximal step, "
            f"{steps} steps, automatic clipping norm" + _rule_words(floor, bands))


def reads_fill(loss, penalty, n, p, epsilon):
    """Whether the rule's choice reads the records' fill of their box (``FILL_MORE``): least squares with a
    separable penalty on more than ``FEW_LEAST_SQUARES`` features, from the selection's floor to ``FILL_BAND``.
    Public inputs only.

    Returns
    -------
    bool
    """
    ratio = per_log_feature(n, p, epsilon)
    return (getattr(loss, "name", "") == "squared" and "separable" in penalty_capabilities(penalty)
            and p > FEW_LEAST_SQUARES and FLOOR_SELECTION <= ratio < FILL_BAND)


def choose(loss, penalty, n, p, epsilon, fit_intercept=True, zcdp=False, one_hot=None, fill=None):
    """The mechanism of ``mechanism="auto"``.

    Parameters
    ----------
    loss : Datafit
    penalty : Penalty
    n, p : int
        Records and features (the intercept excluded).
    epsilon : float
    fit_intercept : bool
        Without an intercept there is none to start DP-GCD from (no warm start bought).
    zcdp : bool
        The fit composes in zCDP with a private step before it (a label set bought privately): a mechanism
        calibrated in zCDP only. It changes the choice for a structured norm (DP-GD instead of DP-SGD, whose
        subsampled steps have no zCDP calibration).
    one_hot : float or None
        With one-hot groups declared (``data.Bounds.one_hot``): the bound on the records' squared norm they give
        (``Bounds.record_norm(p) ** 2``, public), which DP-GD's noise follows (``ONE_HOT_BAND``); None otherwise.
    fill : float or None
        Where ``reads_fill``: the records' fill of their box, released privately (a post-processing of that
        release); None otherwise.

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
    ratio = per_log_feature(n, p, epsilon)
    shown = _shown(ratio)
    regression = name in ("squared", "huber")  # the Huber loss follows least squares (--study selection-few)
    floor = FLOOR_SELECTION if name == "squared" and p > FEW_LEAST_SQUARES else FLOOR_LEAST_SQUARES
    if regression and separable and ratio < floor:
        return _below_floor(n, p, epsilon, floor, " (the noisy label mean)")
    if fill is not None and fill < FILL_FLOOR:
        return ("constant", {}, f"least squares on {p} > {FEW_LEAST_SQUARES} features, n epsilon / log p = "
                f"{shown}: the records fill {fill:.3f} of their box (released privately), below {FILL_FLOOR:g}: "
                "their features spread too little within the declared ranges for the budget to learn one; the "
                "constant predictor (the noisy label mean; narrower public ranges would let it learn)")
    if regression and separable:
        kind = "least squares" if name == "squared" else "the Huber loss"
        if p <= FEW_LEAST_SQUARES:
            steps = least_squares_steps(ratio)
            return ("dp-gd", {"n_iter": steps, "clipping_norm": "auto"},
                    f"{kind} on {p} features, n epsilon / log p = {shown}: DP-GD on all of them, {steps} steps, "
                    "automatic clipping norm" + _rule_words(FLOOR_LEAST_SQUARES, LEAST_SQUARES_GD_STEPS))
        options = least_squares_selection(n, p, epsilon, fill)
        band = least_squares_selection(n, p, epsilon)["sparsity"]
        if name == "huber":  # its derivative is already bounded by its threshold: no label clip in the scores
            del options["selection_clip"]
        filled = ("" if fill is None else f"; the records fill {fill:.3f} of their box (released privately), "
                  + (f"at least {FILL_MORE:g}: {options['sparsity']} features instead of {band}" if fill >= FILL_MORE
                     else f"below {FILL_MORE:g}: the band's {band}"))
        return ("two-stage", options, f"{kind} on {p} > {FEW_LEAST_SQUARES} features, n epsilon / log p = "
                f"{shown}: select {options['sparsity']} privately, then {options['n_iter']} "
                "steps of DP-GD on them" + _rule_words(floor, [(b, k) for b, k, _, _, _ in SPARSITY_STEPS],
                                                       "features selected") + filled)
    if name == "hinge" and ratio < HINGE_FLOOR:
        return _below_floor(n, p, epsilon, HINGE_FLOOR)
    if name == "hinge":
        radius = HINGE_RADII[ratio >= HINGE_BAND]
        steps = gd_steps(ratio)
        return ("dp-gd", {"n_iter": steps, "clipping_norm": "auto", "step_radius": radius},
                f"hinge loss: DP-GD on its subgradients, {steps} steps, automatic clipping norm, step "
                f"{radius:g} / (C sqrt(T)) (n epsilon / log p = {shown})" + _rule_words(HINGE_FLOOR, _GD_BANDS))
    few = p <= (FEW_LEAST_SQUARES if regression else FEW)
    if not separable and few and (regression or name == "logistic"):
        return _structured_gd(name, regression, n, p, epsilon, ratio)
    if not separable and zcdp:
        return ("dp-gd", {"n_iter": GD_STEPS, "clipping_norm": "auto"},
                f"a structured norm with a label set bought privately (zCDP): DP-GD with its proximal step, "
                f"{GD_STEPS} steps, automatic clipping norm (DP-SGD, the rule's choice otherwise, has no zCDP "
                "calibration)")
    if not separable:
        return "dp-sgd", {}, "a structured norm: DP-SGD with its proximal step"
    factor = FLOOR_FEW if p <= FEW else FLOOR
    if name == "logistic" and ratio < factor:
        return _below_floor(n, p, epsilon, factor)
    if name == "logistic" and p <= FEW:
        steps = gd_steps(ratio)
        return ("dp-gd", {"n_iter": steps, "clipping_norm": "auto"},
                f"logistic loss on {p} <= {FEW} features, n epsilon / log p = {shown}: DP-GD, {steps} steps, "
                "automatic clipping norm" + _rule_words(FLOOR_FEW, _GD_BANDS))
    if name == "logistic" and one_hot is not None and one_hot <= FEW and ratio >= ONE_HOT_BAND:
        steps = gd_steps(ratio)
        return ("dp-gd", {"n_iter": steps, "clipping_norm": "auto"},
                f"logistic loss on {p} features with one-hot groups declared, a record's squared norm at most "
                f"{one_hot:.3g} (one per group and per other feature) <= {FEW}, n epsilon / log p = {shown} from "
                f"{ONE_HOT_BAND}: DP-GD, {steps} steps, automatic clipping norm" + _rule_words(FLOOR, _GD_BANDS))
    if name == "logistic" and p <= FEW_MANY and ratio >= GD_MANY_BAND:
        return ("dp-gd", {"n_iter": GD_MANY_STEPS, "clipping_norm": "auto"},
                f"logistic loss on {p} <= {FEW_MANY} features, n epsilon / log p = {shown} from {GD_MANY_BAND}: "
                f"DP-GD, {GD_MANY_STEPS} steps, automatic clipping norm (below {GD_MANY_BAND}, or on more than "
                f"{FEW_MANY} features, DP-GCD)")
    if name == "logistic":
        steps = _band_value(_GCD_BANDS, ratio)
        warm = ratio < GCD_BAND and fit_intercept
        return ("dp-gcd", {"n_iter": steps, "clipping_norm": "auto", "warm_start": warm},
                f"logistic loss on {p} > {FEW} features, n epsilon / log p = {shown}: DP-GCD, {steps} steps, "
                "automatic clipping" + (", started from the constant predictor's intercept" if warm else "")
                + _rule_words(FLOOR, _GCD_BANDS))
    return "dp-gcd", {}, "a smooth loss with a separable penalty: DP-GCD"
