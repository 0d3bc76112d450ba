"""Private Frank-Wolfe on the primal (Talwar, Thakurta & Zhang, NIPS 2015).

Source: "Nearly-Optimal Private LASSO", Algorithm 2 ``A_Noise-FW(polytope)`` (seed 001,
refs 19-20; SPEC section 4.5). It minimizes the average loss
``F(w) = (1/n) sum_i f(<w, x_i>, y_i)`` over a polytope ``C = conv(S)``; every step

1. computes the **full-data** gradient ``g_t = (1/n) sum_i f'(<w_t, x_i>, y_i) x_i`` (all
   ``n`` records: the noise is calibrated for this quantity, never for a minibatch);
2. selects the vertex ``v`` of ``C`` minimizing ``<v, g_t>`` by report-noisy-min;
3. steps ``w_{t+1} = (1 - mu_t) w_t + mu_t v`` with ``mu_t = 2 / (t + 2)`` (``w_0 = 0``).

The set ``C``. ``penalty`` only chooses the ball; its ``alpha`` is ignored and ``radius``
(``c``) is its size:

- ``L1`` (weights ``d_j``): ``{sum_j d_j |w_j| <= c}`` on the penalized coordinates,
  vertices ``+-(c / d_j) e_j``;
- a structured norm (``SubmodularNorm``, ``GroupLasso``): ``{Omega(w) <= c}``, LMO by
  the norm's exact ``lmo_ball``;
- the unpenalized coordinates (the intercept column) form a box factor
  ``[-c0, c0]`` (``c0 = intercept_radius``, default ``c``): ``C`` is the product of the
  ball and the box. The linear minimization over a product separates, so the intercept
  is updated by Frank-Wolfe like the other coordinates (``docs/mechanisms/fw.md``).

Selection (replace-one; ``|f'| <= L`` and ``|x_ij| <= b_j`` public):

- **Laplace** (``calibration="paper"``, TTZ15 exactly): one report-noisy-min over all the
  vertices of ``C`` (``2 p`` of them, ``4 p`` with the intercept box) with
  ``Lap(L_1 ||C||_1 sqrt(8 T log(1/delta)) / (n epsilon))`` on each score,
  ``L_1 = L max_j b_j``, ``||C||_1 = max_{s in S} ||s||_1``. Score ``<v, g>`` has
  sensitivity ``Delta = 2 L sum_k |v_k| b_k / n``; the scores are not monotone in the
  data, so a step is ``2 max_v Delta_v / lambda``-DP (``docs/privacy.md``).
- **Gumbel** (the tight default for L1): the exponential mechanism
  ``P(v) ~ exp(-<v, g> / beta)`` (Gumbel-max trick), run per factor of ``C`` (ball, then
  each intercept box, the same ``beta``: the same law as one exponential mechanism over
  the product's vertices), each ``2 Delta_factor / beta``-DP and bounded-range.
- **Gaussian** (structured balls; optional for L1): ``g~ = g + N(0, sigma^2 I)`` with
  L2 sensitivity ``2 L R / n`` (``R`` the public row-norm bound), then the exact LMO on
  ``g~`` (post-processing): one Gaussian mechanism per step.

``calibration="tight"`` (default): the smallest scale whose ``T`` steps the accountants
(PLD, RDP) compose to ``(epsilon, delta)``. ``calibration="paper"``: TTZ15's Laplace
scale for L1 balls; the report gives the accountant's epsilon for it and warns
(``PrivacyCalibrationWarning``) when it misses the target, which it does under
replace-one with the non-monotone report-noisy-max factor (the accountant finds
about ``1.5-1.6 epsilon`` at ``epsilon = 1``, ``delta = 1e-5``).

Privacy does not need a smooth loss; Frank-Wolfe's convergence does: non-smooth losses
(hinge) are accepted, with a note in the report.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from ..accounting import Ledger, PrivacyReport, calibrate, check_privacy_params
from ..exceptions import PrivacyCalibrationWarning
from ._common import check_n_iter, row_norm_bound
from .dp_gcd import report_noisy_max

__all__ = ["fw", "frank_wolfe", "full_gradient", "report_noisy_min", "paper_scale", "step_sensitivities",
           "CALIBRATIONS", "SELECTIONS"]

CALIBRATIONS = ("tight", "paper")
SELECTIONS = ("gumbel", "laplace", "gaussian")


def full_gradient(X, y, loss, w):
    """``(1/n) sum_i f'(<w, x_i>, y_i) x_i`` over **all** ``n`` records (clipped derivative)."""
    return (X.T @ loss.bounded_derivative(X @ w, y)) / X.shape[0]


def report_noisy_min(scores, scale, noise, kind="laplace"):
    """Index of the smallest score, privately: ``argmax_j -scores_j + noise_j``.

    Laplace noise (symmetric: the same law as ``argmin scores + Lap``) or Gumbel, which
    samples ``j`` with probability proportional to ``exp(-scores_j / scale)`` (the
    exponential mechanism; ``argmin scores + Gumbel`` would not be).
    """
    return report_noisy_max(-np.asarray(scores, dtype=float), scale, noise, kind)


def paper_scale(lipschitz_l1, diameter_l1, n, epsilon, delta, n_iter):
    """TTZ15 Algorithm 2's Laplace scale ``L_1 ||C||_1 sqrt(8 T log(1/delta)) / (n epsilon)``."""
    return lipschitz_l1 * diameter_l1 * math.sqrt(8.0 * n_iter * math.log(1.0 / delta)) / (n * epsilon)


class _Set:
    """The constraint set: a ball on the penalized coordinates times a box on the free ones."""

    def __init__(self, penalty, p, radius, intercept_radius):
        self.radius, self.c0 = float(radius), float(intercept_radius)
        self.lmo = getattr(penalty, "lmo_ball", None) if not getattr(penalty, "is_separable", False) else None
        if self.lmo is not None:
            if getattr(penalty, "n_features", p) != p:
                raise ValueError(f"the penalty is defined on {penalty.n_features} coordinates, the data have {p}")
            self.free = np.asarray(penalty.unpenalized, dtype=int)
            self.pen = np.setdiff1d(np.arange(p), self.free)
            self.kind, self.r = "lmo", None
            return
        if not getattr(penalty, "is_separable", False) or getattr(penalty, "l1_ratio", None) != 1.0:
            raise ValueError(f"private Frank-Wolfe needs an L1 ball or a structured norm ball with lmo_ball; "
                             f"{type(penalty).__name__} has neither (elastic net and L2 balls are not supported)")
        d = np.ones(p) if penalty.weights is None else np.asarray(penalty.weights, dtype=float)
        if d.shape != (p,):
            raise ValueError(f"the L1 penalty has {d.size} weights, the data have {p} columns")
        self.pen, self.free = np.flatnonzero(d > 0), np.flatnonzero(d == 0)
        self.kind, self.r = "l1", self.radius / d[self.pen]
        if self.pen.size == 0:
            raise ValueError("the L1 penalty leaves every coordinate unpenalized: no ball to optimize over")

    def vertex(self, j, sign_pen, free_signs):
        """The vertex ``sign * r_j e_j`` of the ball plus ``c0 sign_k`` on the free coordinates."""
        v = np.zeros(self.pen.size + self.free.size)
        v[self.pen[j]] = sign_pen * self.r[j]
        v[self.free] = self.c0 * np.asarray(free_signs, dtype=float)
        return v

    def l1_scores(self, g):
        """Scores ``<v, g>`` of the ``2 p'`` ball vertices: ``(r g_pen, -r g_pen)``."""
        s = self.r * g[self.pen]
        return np.concatenate([s, -s])

    def select(self, g, selection, scale, noise):
        """The next Frank-Wolfe vertex, by the given private selection (``scale = 0``: exact)."""
        p = g.shape[0]
        if selection == "gaussian":
            g = g + noise.gaussian(scale, p) if scale > 0 else g
            v = np.zeros(p)
            if self.kind == "lmo":
                v[self.pen] = self.radius * self.lmo(-g)[self.pen]
            else:
                j = int(np.argmax(self.r * np.abs(g[self.pen])))
                v[self.pen[j]] = -np.sign(g[self.pen[j]]) * self.r[j]
            v[self.free] = -self.c0 * np.sign(g[self.free])
            return v
        scores, m = self.l1_scores(g), self.pen.size
        if selection == "laplace":  # TTZ15: one report-noisy-min over every vertex of C
            free = np.array([self.c0 * g[self.free[0]], -self.c0 * g[self.free[0]]]) if self.free.size else np.zeros(1)
            joint = (scores[:, None] + free[None, :]).ravel()
            k = _argmin(joint, scale, noise, "laplace")
            i, f = divmod(k, free.size)
            return self.vertex(i % m, 1.0 if i < m else -1.0, [1.0 if f == 0 else -1.0] if self.free.size else [])
        i = _argmin(scores, scale, noise, "gumbel")
        signs = []
        for k in self.free:  # each box factor: its own exponential mechanism, the same beta
            f = _argmin(np.array([self.c0 * g[k], -self.c0 * g[k]]), scale, noise, "gumbel")
            signs.append(1.0 if f == 0 else -1.0)
        return self.vertex(i % m, 1.0 if i < m else -1.0, signs)


def _argmin(scores, scale, noise, kind):
    return int(np.argmin(scores)) if scale == 0 else report_noisy_min(scores, scale, noise, kind)


def frank_wolfe(X, y, loss, cset, n_iter, selection, scale, noise, callback=None):
    """Frank-Wolfe with a private vertex selection of the given scale (0: the exact method).

    Returns the last iterate. Every step uses ``full_gradient`` on all the records.
    """
    w = np.zeros(X.shape[1])
    for t in range(n_iter):
        v = cset.select(full_gradient(X, y, loss, w), selection, scale, noise)
        mu = 2.0 / (t + 2.0)
        w = (1.0 - mu) * w + mu * v
        if callback is not None:
            callback(t, w)
    return w


def step_sensitivities(cset, lipschitz, feature_bounds, n, row_norm=None):
    """Replace-one sensitivities of one step's released quantity.

    Returns
    -------
    dict with
        ``ball``: ``max_j 2 L b_j r_j / n``, sensitivity of the ball's L1 vertex scores;
        ``free``: list of ``2 L b_k c0 / n``, one per intercept box factor;
        ``joint``: ``ball + sum(free)``, sensitivity of a score over the product's vertices;
        ``l2``: ``2 L R / n``, L2 sensitivity of the gradient (Gaussian route).
    """
    b = np.asarray(feature_bounds, dtype=float)
    ball = float(np.max(2.0 * lipschitz * b[cset.pen] * cset.r) / n) if cset.kind == "l1" else float("nan")
    free = [2.0 * lipschitz * float(b[k]) * cset.c0 / n for k in cset.free]
    R = row_norm_bound(b, row_norm, b.size)
    return {"ball": ball, "free": free, "joint": ball + sum(free), "l2": 2.0 * lipschitz * R / n}


def _event_constants(selection, sens):
    """Per-step privacy at scale ``s``: pure/exponential epsilons ``c / s``, or the Gaussian's sensitivity."""
    if selection == "laplace":
        return (2.0 * sens["joint"],)
    if selection == "gumbel":
        return tuple(2.0 * d for d in [sens["ball"], *sens["free"]])
    return (sens["l2"],)


def _ledger(s, selection, constants, n_iter):
    ledger = Ledger()
    if selection == "laplace":
        return ledger.pure(constants[0] / s, n_iter)
    if selection == "gaussian":  # T Gaussian steps compose exactly to one with sigma / sqrt(T) (Dong, Roth & Su 2022)
        return ledger.gaussian(s / math.sqrt(n_iter), constants[0])
    for c in constants:
        ledger.exponential(c / s, n_iter)
    return ledger


@functools.lru_cache(maxsize=256)
def _tight_scale(selection, constants, n_iter, epsilon, delta, scale0):
    return calibrate(lambda s: _ledger(s, selection, constants, n_iter), epsilon, delta, scale0)


def _check_args(calibration, selection, cset):
    if calibration not in CALIBRATIONS:
        raise ValueError(f"unknown calibration {calibration!r}; allowed: {list(CALIBRATIONS)}")
    if selection is not None and selection not in SELECTIONS:
        raise ValueError(f"unknown selection {selection!r}; allowed: {list(SELECTIONS)}")
    if calibration == "paper":
        if cset.kind != "l1":
            raise ValueError("calibration='paper' is TTZ15's Laplace report-noisy-min over the vertices of an L1 "
                             "ball; a structured ball has no source constant: use calibration='tight'")
        if selection not in (None, "laplace"):
            raise ValueError("calibration='paper' is TTZ15's Laplace noise; leave selection unset or 'laplace'")
        selection = "laplace"
    if selection is None:
        selection = "gumbel" if cset.kind == "l1" else "gaussian"
    if cset.kind == "lmo" and selection != "gaussian":
        raise ValueError("a structured ball's vertices are not enumerated: its LMO is privatized by Gaussian noise "
                         "on the gradient (selection='gaussian')")
    if selection == "laplace" and cset.free.size > 1:
        raise ValueError("Laplace selection runs over every vertex of C, 2^k of them per ball vertex for k "
                         f"unpenalized coordinates; this penalty has {cset.free.size}: use selection='gumbel'")
    return selection


def fw(X, y, loss, penalty, feature_bounds, *, epsilon, delta, n_iter=50, calibration="tight", selection=None,
       noise, callback=None, radius=1.0, intercept_radius=None, row_norm=None):
    """Differentially private Frank-Wolfe over a norm ball (TTZ15 Algorithm 2; module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
        Records with ``|X[i, j]| <= feature_bounds[j]`` (public bounds; see ``data.prepare``).
    y : ndarray of shape (n,)
    loss : Datafit
        Its ``lipschitz`` bounds ``|f'|``; a non-smooth loss is accepted (no convergence
        guarantee, noted in the report).
    penalty : L1, SubmodularNorm or GroupLasso
        Chooses the ball; ``alpha`` is **ignored** (``radius`` sets the size). Its
        unpenalized coordinates (the intercept) are constrained to ``[-c0, c0]``.
    feature_bounds : ndarray of shape (p,) of floats > 0
    epsilon : float > 0
    delta : float in (0, 1)
    n_iter : int >= 1
        Number of Frank-Wolfe steps T (one private selection each).
    calibration : {"tight", "paper"}
        "paper": TTZ15's Laplace scale (L1 balls only). "tight": the smallest scale that
        the accountants compose to (epsilon, delta).
    selection : {"gumbel", "laplace", "gaussian"} or None
        None: "gumbel" for L1 balls, "gaussian" for structured ones (the only choice
        there); "laplace" with calibration="paper".
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
    radius : float > 0
        ``c``: the ball is ``{Omega(w) <= c}`` (``{sum_j d_j |w_j| <= c}`` for L1).
    intercept_radius : float > 0 or None
        ``c0``, the box of the unpenalized coordinates (None: ``radius``).
    row_norm : float or None
        Public bound on ``||x_i||_2`` for the Gaussian route (None: ``||feature_bounds||_2``).

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, calibration, selection, iteration count, radius, bounds, or a
        penalty whose ball is not supported.

    Warns
    -----
    PrivacyCalibrationWarning
        With ``calibration="paper"`` when the accountant finds TTZ15's noise short of the target.
    """
    check_privacy_params(epsilon, delta)
    check_n_iter(n_iter)
    c0 = radius if intercept_radius is None else intercept_radius
    for name, val in (("radius", radius), ("intercept_radius", c0)):
        if isinstance(val, bool) or not isinstance(val, (int, float, np.number)) or not (np.isfinite(val) and val > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {val!r}")
    n, p = X.shape
    b = np.asarray(feature_bounds, dtype=float)
    if b.shape != (p,) or not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError(f"feature_bounds must be {p} finite numbers > 0")
    if penalty is None:
        raise ValueError("private Frank-Wolfe needs a penalty to choose its ball (L1, SubmodularNorm, GroupLasso)")
    cset = _Set(penalty, p, radius, c0)
    selection = _check_args(calibration, selection, cset)
    lip = float(loss.lipschitz)

    sens = step_sensitivities(cset, lip, b, n, row_norm)
    constants = _event_constants(selection, sens)
    diameter = (float(np.max(cset.r)) if cset.kind == "l1" else float("nan")) + cset.c0 * cset.free.size
    lam_paper = paper_scale(lip * float(np.max(b)), diameter, n, epsilon, delta, n_iter) if cset.kind == "l1" else None
    if calibration == "paper":
        scale = lam_paper
    else:
        scale0 = lam_paper if lam_paper is not None else sens["l2"] * math.sqrt(n_iter) / epsilon
        scale = _tight_scale(selection, constants, int(n_iter), float(epsilon), float(delta), float(scale0))
    ledger = _ledger(scale, selection, constants, n_iter)
    accounted = ledger.epsilon(delta)

    w = frank_wolfe(X, y, loss, cset, n_iter, selection, scale, noise, callback)

    report_warnings = []
    if accounted > epsilon * (1 + 1e-9):
        msg = (f"TTZ15's calibration gives epsilon={accounted:.4g} > target {epsilon:g} under replace-one once the "
               "non-monotone report-noisy-min is accounted for; use calibration='tight'")
        report_warnings.append(msg)
        warnings.warn(msg, PrivacyCalibrationWarning, stacklevel=2)
    n_vertices = 2 * cset.pen.size * 2 ** cset.free.size if cset.kind == "l1" else None
    info = {
        "selection": {"laplace": f"laplace report-noisy-min over the {n_vertices} vertices of C",
                      "gumbel": "gumbel report-noisy-min (exponential mechanism) per factor of C",
                      "gaussian": "gaussian noise on the gradient, then the exact LMO"}[selection],
        "scale": float(scale),
        "paper scale": float(lam_paper) if lam_paper is not None else "n/a (no source constant)",
        "sensitivity": float(sens["l2"] if selection == "gaussian" else
                             sens["joint"] if selection == "laplace" else sens["ball"]),
        "step epsilon (select)": (float(constants[0] / scale) if selection == "laplace"
                                  else [float(c / scale) for c in constants] if selection == "gumbel" else "n/a"),
        "ball": f"{'L1' if cset.kind == 'l1' else type(penalty).__name__} ball of radius {cset.radius:g} "
                "(penalty alpha ignored)",
        "intercept box": (f"[-{cset.c0:g}, {cset.c0:g}] on coordinates {cset.free.tolist()}"
                          if cset.free.size else "none"),
        "gradient": f"full data, all n={n} records each step",
        "step size": "2/(t+2)",
        "source": "Talwar, Thakurta & Zhang NIPS 2015 Alg. 2; report-noisy-max, Dwork & Roth 2014 sec. 3.3; "
                  "exponential mechanism as zCDP, Cesar & Rogers 2021",
    }
    if not np.isfinite(loss.smoothness):
        info["note"] = f"the {loss.name} loss is not smooth: private, but Frank-Wolfe has no convergence guarantee"
    report = PrivacyReport(
        mechanism="fw (private Frank-Wolfe, Talwar, Thakurta & Zhang NIPS 2015)",
        calibration=calibration, epsilon=float(epsilon), delta=float(delta), accountant_epsilon=accounted,
        accountant=ledger.accountant, iterations=int(n_iter), noise=info, noise_source=noise.describe(),
        warnings=report_warnings,
    )
    return w, report
