"""Private Frank-Wolfe on the primal (Talwar, Thakurta & Zhang, NIPS 2015).

Source: Talwar, Thakurta & Zhang, "Nearly-Optimal Private LASSO", NIPS 2015, Algorithm 2
``A_Noise-FW(polytope)``. It minimizes the average loss
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

import numpy as np

from ..accounting import Ledger, calibrate
from ..distributed import is_dask, labels, row_sum
from ..noise import batched
from ._common import column, per_log_feature, row_norm_bound
from .base import Mechanism, Option, Plan, loss_capabilities, n_iter_option
from .direct import call_direct
from .dp_gcd import by_columns, report_noisy_max

__all__ = [
    "CALIBRATIONS",
    "CLASSIFICATION_RADIUS",
    "MECHANISM",
    "RADIUS_BAND",
    "REGRESSION_RADII",
    "SELECTIONS",
    "default_radius",
    "frank_wolfe",
    "full_gradient",
    "fw",
    "paper_scale",
    "report_noisy_min",
    "step_sensitivities",
]

CALIBRATIONS = ("tight", "paper")
SELECTIONS = ("gumbel", "laplace", "gaussian")

CLASSIFICATION_RADIUS, REGRESSION_RADII, RADIUS_BAND = 10.0, (1.0, 3.0), 1000
"""The ball's radius when ``radius`` is not given (``default_radius``): ``CLASSIFICATION_RADIUS`` for the logistic
and hinge losses; for the others ``REGRESSION_RADII[0]`` below ``n epsilon = RADIUS_BAND log p``, ``[1]`` from there.
With features in [-1, 1] a classifier needs margins of several units (an L1 norm of several), where a least-squares
fit on labels mapped onto [-1, 1] needs less. Measured on synthetic families only (``python
benchmarks/defaults_rule.py --study fw-radius``; docs/defaults.md): radius 10 gained over radius 1 in every band
of ``n epsilon / log p`` for both classification losses, and for least squares radius 1 won below 1000 and radius 3
from there."""


def default_radius(loss, n, p, epsilon):
    """The radius of the ball when none is given, from public quantities only: the loss, ``n``, the ``p`` columns of
    the design and ``epsilon`` (``CLASSIFICATION_RADIUS``, ``REGRESSION_RADII``, ``RADIUS_BAND``)."""
    if getattr(loss, "name", "") in ("logistic", "hinge"):
        return CLASSIFICATION_RADIUS
    return REGRESSION_RADII[int(per_log_feature(n, p, epsilon) >= RADIUS_BAND)]


def full_gradient(X, y, loss, w, z=None):
    """``(1/n) sum_i f'(<w, x_i>, y_i) x_i`` over **all** ``n`` records (clipped derivative); ``z``: the
    margins ``X w`` when the caller keeps them. On a dask array (``y`` its labels in the chunks of ``X``,
    ``distributed.labels``) one pass over the chunks, the margins computed there."""
    n, p = X.shape
    if is_dask(X):
        return row_sum(lambda xc, yc: np.asarray(xc.T @ loss.bounded_derivative(xc @ w, yc)), X, y, p) / n
    z = X @ w if z is None else z
    g = np.array(X.T @ loss.bounded_derivative(z, y), dtype=float, copy=None).ravel()
    g /= n
    return g


def report_noisy_min(scores, scale, noise, kind="laplace", sensitivity=None):
    """Index of the smallest score, privately: ``argmax_j -scores_j + noise_j``.

    Laplace noise (symmetric: the same law as ``argmin scores + Lap``) or Gumbel, which
    samples ``j`` with probability proportional to ``exp(-scores_j / scale)`` (the
    exponential mechanism; ``argmin scores + Gumbel`` would not be).
    """
    return report_noisy_max(-np.asarray(scores, dtype=float), scale, noise, kind, sensitivity)


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

    def select(self, g, selection, scale, noise, sens=None):
        """The next Frank-Wolfe vertex, by the given private selection (``scale = 0``: exact).

        ``sens``: ``step_sensitivities`` with ``"b"`` (feature bounds) and ``"L"``, declared
        to the noise source for the audit.
        """
        p = g.shape[0]
        if selection == "gaussian":
            g = noise.release(g, "gaussian", scale, sensitivity=sens and sens["l2"], name="gradient")
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
            k = report_noisy_min(joint, scale, noise, "laplace", sens and sens["joint"])
            i, f = divmod(k, free.size)
            return self.vertex(i % m, 1.0 if i < m else -1.0, [1.0 if f == 0 else -1.0] if self.free.size else [])
        ball_sens = None if sens is None else np.tile(2.0 * sens["L"] * sens["b"][self.pen] * self.r / sens["n"], 2)
        i = report_noisy_min(scores, scale, noise, "gumbel", ball_sens)
        signs = []
        for k, d in zip(self.free, [None] * self.free.size if sens is None else sens["free"]):
            # each box factor: its own exponential mechanism, the same beta
            f = report_noisy_min(np.array([self.c0 * g[k], -self.c0 * g[k]]), scale, noise, "gumbel", d)
            signs.append(1.0 if f == 0 else -1.0)
        return self.vertex(i % m, 1.0 if i < m else -1.0, signs)

    def select_compiled(self, g, scale, u, buffer):
        """``select`` with Gumbel noise (``scale > 0``) of an L1 ball, compiled: each factor's exponential
        mechanism by inverse transform of its uniform in ``u`` (``_kernels.exp_mechanism``, the law of
        Gumbel-max), the ball's ``2 p'`` negated scores written into ``buffer``."""
        from .._kernels import exp_mechanism

        m = self.pen.size
        neg, s = buffer[:m], buffer[m:]
        np.take(g, self.pen, out=s)
        s *= self.r
        np.negative(s, out=neg)  # the scores (s, -s), negated: report-noisy-min
        i = exp_mechanism(buffer, scale, u[0])
        signs = [1.0 if exp_mechanism(np.array([-self.c0 * g[k], self.c0 * g[k]]), scale, u[f + 1]) == 0 else -1.0
                 for f, k in enumerate(self.free)]
        return self.vertex(i % m, 1.0 if i < m else -1.0, signs)


def _step(X, w, z, v, mu):
    """``w <- (1 - mu) w + mu v`` and ``z <- (1 - mu) z + mu X v`` (unless None) in place, over the nonzeros of
    the vertex ``v`` (one column and the intercept for an L1 vertex)."""
    nz = np.flatnonzero(v != 0.0)
    w *= 1.0 - mu
    w[nz] += mu * v[nz]
    if z is None:
        return
    z *= 1.0 - mu
    if nz.size > 8:  # a structured ball's vertex: one product
        z += mu * np.asarray(X[:, nz] @ v[nz]).ravel()
        return
    for k in nz:
        rows, vals = column(X, k)
        z[rows] += (mu * v[k]) * vals


def frank_wolfe(X, y, loss, cset, n_iter, selection, scale, noise, callback=None, sens=None):
    """Frank-Wolfe with a private vertex selection of the given scale (0: the exact method).

    Returns the last iterate. Every step uses the full gradient on all the records; the margins
    ``z = X w`` are kept, ``z <- (1 - mu) z + mu X v``, with ``X v`` over the nonzeros of the vertex
    ``v`` (one column and the intercept for the L1 ball): one pass over X per step, not two. On a dask
    array the margins are not kept: each step is one pass over the chunks. With Gumbel selection and a
    plain ``NoiseSource`` (``noise.batched``) the selection runs compiled on uniforms drawn up front for every
    step (``_Set.select_compiled``); otherwise through ``noise.select``.
    """
    X, w = by_columns(X), np.zeros(X.shape[1])
    z = None if is_dask(X) else np.zeros(X.shape[0])
    if is_dask(X):
        y = labels(X, y)
    compiled = selection == "gumbel" and scale > 0 and batched(noise)
    if compiled:
        u, buffer = noise.rng.random((n_iter, 1 + cset.free.size)), np.empty(2 * cset.pen.size)
    for t in range(n_iter):
        g = full_gradient(X, y, loss, w, z)
        v = cset.select_compiled(g, scale, u[t], buffer) if compiled else cset.select(g, selection, scale, noise, sens)
        _step(X, w, z, v, 2.0 / (t + 2.0))
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
def _tight_scale(selection, constants, n_iter, epsilon, delta, scale0, rho=None):
    return calibrate(lambda s: _ledger(s, selection, constants, n_iter), epsilon, delta, scale0, rho=rho)


def _check_args(calibration, selection, cset):
    if calibration == "paper":
        if cset.kind != "l1":
            raise ValueError("mechanism fw: calibration='paper' is TTZ15's Laplace report-noisy-min over the vertices "
                             "of an L1 ball; a structured ball has no source constant: use calibration='tight'")
        if selection not in (None, "laplace"):
            raise ValueError("mechanism fw: calibration='paper' is TTZ15's Laplace noise; leave selection unset or "
                             "'laplace'")
        selection = "laplace"
    if selection is None:
        selection = "gumbel" if cset.kind == "l1" else "gaussian"
    if cset.kind == "lmo" and selection != "gaussian":
        raise ValueError("mechanism fw: a structured ball's vertices are not enumerated: its LMO is privatized by "
                         "Gaussian noise on the gradient (selection='gaussian')")
    if selection == "laplace" and cset.free.size > 1:
        raise ValueError("mechanism fw: Laplace selection runs over every vertex of C, 2^k of them per ball vertex "
                         f"for k unpenalized coordinates; this penalty has {cset.free.size}: use selection='gumbel'")
    return selection


def _plan(info):
    o, n, p = info.options, info.n, info.p
    radius = default_radius(info.loss, n, p, info.epsilon) if o["radius"] is None else o["radius"]
    c0 = radius if o["intercept_radius"] is None else o["intercept_radius"]
    cset = _Set(info.penalty, p, radius, c0)
    selection = _check_args(info.calibration, o["selection"], cset)
    lip = float(info.loss.lipschitz)
    b, n_iter = info.feature_bounds, o["n_iter"]
    sens = step_sensitivities(cset, lip, b, n, info.row_norm)
    constants = _event_constants(selection, sens)
    diameter = (float(np.max(cset.r)) if cset.kind == "l1" else float("nan")) + cset.c0 * cset.free.size
    lam_paper = (paper_scale(lip * float(np.max(b)), diameter, n, info.epsilon, info.delta, n_iter)
                 if cset.kind == "l1" else None)
    if info.calibration == "paper":
        scale = lam_paper
    else:
        scale0 = lam_paper if lam_paper is not None else sens["l2"] * math.sqrt(n_iter) / info.epsilon
        scale = _tight_scale(selection, constants, n_iter, info.epsilon, info.delta, float(scale0), info.zcdp)
    ledger = _ledger(scale, selection, constants, n_iter)
    n_vertices = 2 * cset.pen.size * 2 ** cset.free.size if cset.kind == "l1" else None
    details = {
        "selection": {"laplace": f"laplace report-noisy-min over the {n_vertices} vertices of C",
                      "gumbel": "gumbel report-noisy-min (exponential mechanism) per factor of C",
                      "gaussian": "gaussian noise on the gradient, then the exact LMO"}[selection],
        "scale": float(scale),
        "scale by the source's formula": float(lam_paper) if lam_paper is not None else "n/a (no source constant)",
        "sensitivity": float(sens["l2"] if selection == "gaussian" else
                             sens["joint"] if selection == "laplace" else sens["ball"]),
        "epsilon of one selection": (float(constants[0] / scale) if selection == "laplace"
                                  else [float(c / scale) for c in constants] if selection == "gumbel" else "n/a"),
        "ball": f"{'L1' if cset.kind == 'l1' else type(info.penalty).__name__} ball of radius {cset.radius:g} "
                "(penalty alpha ignored)",
        "intercept box": (f"[-{cset.c0:g}, {cset.c0:g}] on coordinates {cset.free.tolist()}"
                          if cset.free.size else "none"),
        "gradient": f"full data, all n={n} records each step",
        "step size": "2/(t+2)",
    }
    if "smooth" not in loss_capabilities(info.loss):
        details["note"] = (f"the {info.loss.name} loss is not smooth: private, but Frank-Wolfe has no convergence "
                           "guarantee")
    return Plan(ledger=ledger, accountant_epsilon=ledger.epsilon(info.delta), accountant=ledger.accountant,
                iterations=n_iter, details=details,
                miss_reason=" under replace-one once the non-monotone report-noisy-min is accounted for (TTZ15)",
                params={"cset": cset, "selection": selection, "scale": scale,
                        "sens": {**sens, "b": b, "L": lip, "n": n}})


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    return frank_wolfe(design.X, design.y, info.loss, q["cset"], info.options["n_iter"], q["selection"], q["scale"],
                       noise, callback, q["sens"])


MECHANISM = Mechanism(
    name="fw",
    title="private Frank-Wolfe over a norm ball (Talwar, Thakurta & Zhang 2015, Algorithm 2)",
    citation=("Talwar, Thakurta & Zhang, 'Nearly-optimal private LASSO', NIPS 2015, Algorithm 2; report-noisy-max: "
              "Dwork & Roth, 'The Algorithmic Foundations of Differential Privacy', 2014, sec. 3.3; exponential "
              "mechanism as zCDP: Cesar & Rogers, ALT 2021"),
    summary="Frank-Wolfe over an L1 or structured norm ball, a private vertex choice per step",
    options=(
        n_iter_option(50, "number of Frank-Wolfe steps T"),
        Option("radius", "float", None, "radius c of the ball {Omega(w) <= c} (the penalty's alpha is ignored)",
               low=0.0, low_open=True,
               default_help="10 for the logistic and hinge losses; otherwise 1, or 3 from n epsilon = 1000 log p"),
        Option("intercept_radius", "float", None, "box [-c0, c0] of the unpenalized coordinates", low=0.0,
               low_open=True, default_help="radius"),
        Option("selection", "choice", None, "private vertex selection", choices=SELECTIONS,
               default_help="gumbel for L1 balls, gaussian for structured ones"),
    ),
    calibrations=CALIBRATIONS,
    loss_needs=("Lipschitz",),
    penalty_needs=("ball",),
    plan=_plan, run=_run,
    zcdp_calibration=True,
    dask=True,
)


def fw(X, y, loss, penalty, feature_bounds, *, epsilon, delta, calibration="tight", noise, callback=None,
       row_norm=None, **options):
    """Differentially private Frank-Wolfe over a norm ball (TTZ15 Algorithm 2; module docstring).

    ``fit_mechanism`` on ``BoundedDesign.from_arrays(X, y, feature_bounds, row_norm)``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
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
    calibration : {"tight", "paper"}
        "paper": TTZ15's Laplace scale (L1 balls only). "tight": the smallest scale that
        the accountants compose to (epsilon, delta).
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
    row_norm : float or None
    **options
        ``n_iter`` (T, default 50), ``radius`` (c, default ``default_radius``: 10 for the
        logistic and hinge losses; otherwise 1, or 3 from ``n epsilon = 1000 log p``), ``intercept_radius`` (c0,
        default ``radius``), ``selection`` ("gumbel", "laplace", "gaussian"; None:
        "gumbel" for L1 balls, "gaussian" for structured ones).

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, calibration, option, bounds, or a penalty whose ball is not
        supported.

    Warns
    -----
    PrivacyCalibrationWarning
        With ``calibration="paper"`` when the accountant finds TTZ15's noise short of the target.
    """
    return call_direct(MECHANISM, X, y, loss, penalty, feature_bounds, epsilon=epsilon, delta=delta,
                       calibration=calibration, noise=noise, callback=callback, row_norm=row_norm, options=options)
