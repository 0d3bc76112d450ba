"""Objective perturbation over a norm ball, and the dual route of Kumar & Deisenroth's Proposition 2.

Sources: Kifer, Smith & Thakurta, COLT 2012, "Private convex empirical risk minimization
and high-dimensional regression", Algorithm 1 and Theorem 2 (KST); Chaudhuri, Monteleoni
& Sarwate JMLR 2011, Algorithm 2; Kumar & Deisenroth, "Differentially Private Empirical
Risk Minimization with Sparsity-Inducing Norms", 2019, section 4.3, Eq. 23, Proposition 2
and the dual derivation (Eq. 11-13, 24-25).
Derivation and proofs: docs/mechanisms/perturbation.md, section 2.

Mechanism (``objective_perturbation``). Release an approximate minimizer over
``C = {Omega(w) <= c}`` (``Omega = psi / alpha``, the penalty's norm; Kumar & Deisenroth Eq. 23) of

    J_b(w) = (1/n) sum_i f(<w, x_i>, y_i) + (Delta / (2n)) ||w||^2 + <b, w> / n,

plus a small Gaussian ``N(0, sigma_2^2 I)`` that covers the solver's inexactness.

Constants (per record, ``R`` the public bound on ``||x_i||_2``): ``zeta = sup|f'| R``
bounds ``||grad f(<w, x>)||``; the Hessian ``f'' x x^T`` has rank one and eigenvalue at
most ``lambda_max = sup f'' R^2``. KST Theorem 2: ``Delta >= 2 lambda_max / epsilon`` and
``b ~ N(0, beta^2 I)``, ``beta = zeta sqrt(8 log(2/delta) + 4 epsilon) / epsilon``.
These constants were checked against independent implementations of KST's Algorithm 1
(stored public code), not against KST's printed text, which was not reachable; see the
doc. **Replace-one.** The noise density part of the argument sees the gradient of the
replaced record change by ``grad f(w; d) - grad f(w; d')``, of norm up to ``2 zeta``,
not ``zeta``; dpsparse therefore uses ``zeta_ro = 2 zeta`` in the formula for ``beta``
(conservative if KST's ``zeta`` already meant the difference).
``tests/test_mechanisms_objective_perturbation.py`` checks numerically that with
``2 zeta`` the Gaussian tail of the proof (a shift in the 2-dimensional span of the two
records, the GLM structure) is below ``delta`` and that with ``zeta`` it is not.

The loss must be convex and twice differentiable with bounded ``f'`` and ``f''``: the
logistic loss qualifies (any datafit with a ``second_derivative`` method and finite
``lipschitz`` and ``smoothness`` too). Refused: the hinge loss (not differentiable), the
squared loss without clipping (unbounded gradient), and the Huber loss / clipped squared
loss (``f''`` jumps at the threshold: KST's change of variables needs the Jacobian of
``w -> b`` everywhere; no accepted relaxation is used here).

Inexact solver (docs, "approximate minimizer"). Accelerated projected gradient over C
(V-FISTA, projection by bisection on the penalty's prox) with the public step
``1 / (sup f'' R^2 + Delta/n)``, run for the public number of iterations after which
its linear rate guarantees ``J_b(w) - min <= tol`` (the initial suboptimality is at
most ``2 (max_y f(0, y) + ||b||^2 / (2 n Delta))``, a function of the noise ``b`` only),
or stopped earlier at a certified gap ``g <= tol`` (a Frank-Wolfe-type gap through the
dual norm, plus a strong-convexity term for unpenalized coordinates). A fit never fails
on the data. ``J_b`` is ``Delta/n``-strongly convex and the iterate is
in C, so ``||w_g - w*|| <= r = sqrt(2 n tol / Delta)``. Releasing ``w_g + N(0,
sigma_2^2 I)`` is then (epsilon_1 + 2 epsilon_g, delta_1 e^{epsilon_g} + delta_g (1 +
e^{epsilon_1 + epsilon_g}))-DP, where (epsilon_1, delta_1) is KST's guarantee for the
exact minimizer and ``sigma_2`` makes a Gaussian with shift ``r`` (epsilon_g,
delta_g)-DP (a triangle argument through the exact minimizer; proof in the doc). This
is in the spirit of Iyengar et al. (2019)'s approximate minima perturbation but uses a
certified gap instead of a gradient-norm test. The budget split: ``epsilon_g = kappa
epsilon / 2``, ``epsilon_1 = (1 - kappa) epsilon``, ``delta_1 = delta / (2
e^{epsilon_g})``, ``delta_g = delta / (2 (1 + e^{epsilon_1 + epsilon_g}))``, ``kappa =
0.05`` by default; ``sigma_2`` by the PLD accountant (exact for one Gaussian).

Calibration: ``"paper"`` only (KST's constants as above); the accountants of dpsparse
do not model the Jacobian factor, so no "tight" calibration is offered.

Proposition 2 (``perturbed_penalized_primal``, ``perturbed_penalized_dual``). For the
penalized form ``min_w J_b(w) + psi(w)`` (psi a norm times alpha, Eq. 11 with the
perturbation), the dual is ``max_{s in K} D(s)``, ``D(s) = min_w J_b(w) + <s, w> =
-J_b*(-s)``, ``K = dpsi(0) = alpha |P|(F)`` for a submodular norm (Eq. 24, where
``J_b* (-s) = L*(-(s + b/n))`` with the paper's normalization), and the primal solution
is ``w(s*) = argmin_w J_b(w) + <s*, w>`` (Eq. 13). Both are solved here for a given
``b`` (no privacy claim for the penalized form: KST's argument is for a constraint set);
the tests check that the two routes agree to 1e-6 with the same ``b``.

On a dask array (docs/scale.md) ``J_b`` and its gradient come from one pass over the chunks
at each point, and the minimizer over C is found on the client by spectral projected
gradient steps (``distributed.spectral_gradient``) to the same certified gap ``g <= tol``;
should that not certify within the public iteration count, V-FISTA runs as in memory, one
pass a step. ``b`` and both noises are drawn on the client as in memory.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import solvers
from ..accounting import Ledger, calibrate
from ..affine import gram
from ..distributed import MeanLoss, is_dask, spectral_gradient
from .base import Mechanism, Option, Plan, penalty_capabilities
from .direct import call_direct
from .output_perturbation import zero_loss_bound

__all__ = [
    "CALIBRATIONS",
    "MECHANISM",
    "kst_constants",
    "objective_perturbation",
    "perturbed_constrained",
    "perturbed_penalized_dual",
    "perturbed_penalized_primal",
    "replace_one_tail",
]

CALIBRATIONS = ("paper",)
SOURCE = ("Kifer, Smith & Thakurta, 'Private convex empirical risk minimization and high-dimensional regression', "
          "COLT 2012, Algorithm 1 / Theorem 2 (Delta >= 2 lambda/eps, "
          "b ~ N(0, zeta^2 (8 log(2/delta) + 4 eps)/eps^2 I), "
          "zeta -> 2 zeta for replace-one); Kumar & Deisenroth, 'Differentially private empirical risk minimization "
          "with sparsity-inducing norms', 2019, sec. 4.3, Eq. 23; inexact solve: Gaussian on the approximate "
          "minimizer (derived in docs/mechanisms/perturbation.md)")


# --- losses ----------------------------------------------------------------------------------

def _second_derivative(loss):
    """``f''(z, y)`` of a twice-differentiable loss, or a ValueError saying why the loss is refused.

    The Huber loss (and the clipped squared loss, which is Huber) has a second derivative
    that jumps at its threshold and declares none: KST's change of variables needs the
    Jacobian of ``w -> b`` everywhere.
    """
    if not callable(getattr(loss, "second_derivative", None)):
        raise ValueError(f"mechanism objective needs a twice-differentiable loss with bounded f' and f'' "
                         f"(Kifer, Smith & Thakurta 2012, Thm 2); the {loss.name} loss is not: use logistic")
    return loss.second_derivative


def kst_constants(loss, R, epsilon, delta):
    """KST Theorem 2 constants for a GLM loss with ``||x|| <= R``, replace-one.

    Returns
    -------
    dict
        ``zeta = sup|f'| R``, ``lambda_max = sup f'' R^2``, ``Delta_min = 2 lambda_max / epsilon``,
        ``beta_kst = zeta sqrt(8 log(2/delta) + 4 epsilon) / epsilon`` (as printed) and
        ``beta = 2 zeta sqrt(...) / epsilon`` (replace-one, used).
    """
    zeta = float(loss.lipschitz) * R
    lam = float(loss.smoothness) * R * R
    root = math.sqrt(8.0 * math.log(2.0 / delta) + 4.0 * epsilon) / epsilon
    return {"zeta": zeta, "lambda_max": lam, "Delta_min": 2.0 * lam / epsilon, "beta_kst": zeta * root,
            "beta": 2.0 * zeta * root}


def replace_one_tail(beta, shift, epsilon, dim=2):
    """Probability that the Gaussian part of KST's privacy loss exceeds ``epsilon / 2``.

    The loss is ``(2 <b, v> + ||v||^2) / (2 beta^2)`` with ``||v|| <= shift`` and ``v`` in a
    fixed ``dim``-dimensional subspace (the span of the two records' features for a GLM);
    it exceeds ``epsilon/2`` only if ``||P b|| > t = (epsilon beta^2 / 2 - shift^2 / 2) / shift``,
    whose probability is the chi tail ``P(chi^2_dim > t^2 / beta^2)``.
    """
    from scipy.stats import chi2

    t = (epsilon * beta**2 / 2.0 - shift**2 / 2.0) / shift
    return 1.0 if t <= 0 else float(chi2.sf((t / beta) ** 2, dim))


# --- the constrained problem ----------------------------------------------------------------

class _Problem:
    """``J_b(w) = (1/n) sum f + (Delta/2n)||w||^2 + <b, w>/n`` and the norm ball of a penalty."""

    def __init__(self, X, y, loss, penalty, Delta, b):
        self.X, self.y, self.loss, self.penalty = X, np.asarray(y, dtype=float), loss, penalty
        self.n, self.p = X.shape
        self.Delta, self.b = float(Delta), np.asarray(b, dtype=float)
        self.mu = self.Delta / self.n
        free = getattr(penalty, "unpenalized", np.array([], dtype=int))
        self.free = np.zeros(self.p, dtype=bool)
        self.free[np.asarray(free, dtype=int)] = True

    @functools.cached_property
    def L(self):
        """A smoothness bound of ``J_b`` estimated from X (power iteration with a 1% margin), computed when asked."""
        return 1.01 * self.loss.smoothness * solvers._spectral_norm_sq(self.X) / self.n + self.mu

    def value(self, w):
        return self.loss.objective(self.X @ w, self.y) + 0.5 * self.mu * float(w @ w) + float(self.b @ w) / self.n

    def grad(self, w):
        return self.X.T @ self.loss.derivative(self.X @ w, self.y) / self.n + self.mu * w + self.b / self.n

    def omega(self, w):
        return self.penalty.value(w) / self.penalty.alpha

    def dual_norm(self, g):
        """``Omega*(g)`` on the penalized coordinates."""
        pen = self.penalty
        if callable(getattr(pen, "dual_norm", None)):
            return float(pen.dual_norm(np.where(self.free, 0.0, g)))
        a, _ = pen.strengths(self.p)  # weighted L1: max_j |g_j| / w_j over penalized j
        wts = a / pen.alpha
        mask = ~self.free
        return float(np.max(np.abs(g[mask]) / wts[mask])) if mask.any() else 0.0

    def project(self, x, c):
        """Point of ``{Omega <= c}`` near ``x``: ``prox_{t psi}(x)`` with ``Omega = c``, by bisection."""
        if self.omega(x) <= c:
            return x
        prox = self.penalty.prox
        lo, hi = 0.0, 1.0
        while self.omega(prox(x, hi)) > c:
            lo, hi = hi, 2.0 * hi
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.omega(prox(x, mid)) > c:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-15 * hi:
                break
        return self.feasible(prox(x, hi), c)

    def feasible(self, w, c):
        """Scale the penalized coordinates into the ball if rounding left ``Omega(w)`` above ``c``."""
        om = self.omega(w)
        if om > c:
            w = w.copy()
            w[~self.free] *= c / om * (1.0 - 1e-15)
        return w

    def gap(self, w, c):
        """Certified bound on ``J_b(w) - min_C J_b`` for ``w`` in C.

        ``<g, w_pen> + c Omega*(g_pen)`` (Frank-Wolfe gap over the ball) plus
        ``||g_free||^2 / (2 mu)`` (strong convexity along the unconstrained coordinates).
        """
        g = self.grad(w)
        gp = np.where(self.free, 0.0, g)
        gf = np.where(self.free, g, 0.0)
        return max(float(gp @ w) + c * self.dual_norm(-gp), 0.0) + float(gf @ gf) / (2.0 * self.mu)


class _PassProblem(_Problem):
    """``_Problem`` on a dask array: ``J_b`` and its gradient at a point from one pass over the chunks
    (``distributed.MeanLoss``)."""

    def __init__(self, X, y, loss, penalty, Delta, b):
        super().__init__(X, y, loss, penalty, Delta, b)
        self.mean_loss = MeanLoss(X, self.y, loss)

    def value(self, w):
        return self.mean_loss(w)[0] + 0.5 * self.mu * float(w @ w) + float(self.b @ w) / self.n

    def grad(self, w):
        return self.mean_loss(w)[1] + self.mu * w + self.b / self.n


def _problem(X, y, loss, penalty, Delta, b):
    """``_Problem``, or ``_PassProblem`` on a dask array."""
    return (_PassProblem if is_dask(X) else _Problem)(X, y, loss, penalty, Delta, b)


def _projected_vfista(pb, radius, tol, max_iter, L, check_every=10):
    """V-FISTA over the ball with the step ``1 / L``, stopped at a certified gap ``<= tol``; ``(w, iterations)``."""
    w, it = solvers.accelerated_proximal_gradient(
        pb.grad, lambda v, step: pb.project(v, radius), np.zeros(pb.p), 1.0 / L, max_iter,
        strong_convexity=pb.mu, stop=lambda w: pb.gap(w, radius) <= tol, check_every=check_every)
    return pb.feasible(w, radius), it


def perturbed_constrained(X, y, loss, penalty, radius, Delta, b, tol, max_iter=50_000, check_every=10,
                          smoothness=None):
    """Minimize ``J_b`` over ``{Omega(w) <= radius}``: accelerated projected gradient (V-FISTA).

    ``smoothness``: a public bound on the smoothness of ``J_b`` (None: estimated from X, in memory only).
    ``X`` may be a dask array (one pass a step).

    Returns
    -------
    w : ndarray, in the ball
    gap : float
        Certified bound on ``J_b(w) - min``.
    iterations : int
    """
    pb = _problem(X, y, loss, penalty, Delta, b)
    w, it = _projected_vfista(pb, radius, tol, max_iter, pb.L if smoothness is None else float(smoothness),
                              check_every)
    return w, pb.gap(w, radius), it


def _pass_minimizer(design, info, q, b, max_iter):
    """The minimizer over the ball on a dask array, to a certified gap ``<= tol`` (module docstring): spectral
    projected gradient, else V-FISTA for the public iteration count."""
    radius, tol = info.options["radius"], q["tol"]
    pb = _PassProblem(design.X, design.y, info.loss, info.penalty, q["Delta"], b)
    w, certified = spectral_gradient(lambda w: (pb.value(w), pb.grad(w), pb.gap(w, radius) <= tol),
                                     lambda v, step: pb.project(v, radius), np.zeros(pb.p), 1.0 / q["smoothness"],
                                     max_iter)
    return pb.feasible(w, radius) if certified else _projected_vfista(pb, radius, tol, max_iter, q["smoothness"])[0]


# --- the mechanism --------------------------------------------------------------------------

def _split(epsilon, delta, kappa):
    eps_g = kappa * epsilon / 2.0
    eps_1 = (1.0 - kappa) * epsilon
    delta_1 = delta / (2.0 * math.exp(eps_g))
    delta_g = delta / (2.0 * (1.0 + math.exp(eps_1 + eps_g)))
    return eps_1, delta_1, eps_g, delta_g


def _plan(info):
    o, n = info.options, info.n
    caps = penalty_capabilities(info.penalty)
    if "l1 ball" not in caps and "dual_norm" not in caps:
        raise ValueError("mechanism objective needs a norm (L1, submodular norm, group Lasso) to define the ball "
                         "{Omega <= radius}")
    _second_derivative(info.loss)
    R = info.row_norm
    eps_1, delta_1, eps_g, delta_g = _split(info.epsilon, info.delta, o["kappa"])
    k = kst_constants(info.loss, R, eps_1, delta_1)
    Delta = k["Delta_min"] if o["Delta"] is None else o["Delta"]
    if Delta < k["Delta_min"] * (1 - 1e-12):
        raise ValueError(f"mechanism objective: option Delta must be >= 2 lambda_max / epsilon_1 = "
                         f"{k['Delta_min']:.6g} (Kifer, Smith & Thakurta 2012, Thm 2), got {Delta!r}")
    radius = o["radius"]
    tol = Delta * (1e-4 * radius) ** 2 / (2.0 * n) if o["tol"] is None else o["tol"]
    r = math.sqrt(2.0 * n * tol / Delta)
    m_g = _gaussian_multiplier(eps_g, delta_g)
    ledger = Ledger().gaussian(m_g, 1.0)
    # KST's part is a proof, not an accountant: it contributes (eps_1, delta_1) as derived.
    accounted = eps_1 + 2.0 * ledger.epsilon(delta_g)
    details = {
        "release": "argmin over {Omega <= radius} of the perturbed objective + gaussian",
        "objective noise std (beta)": float(k["beta"]),
        "KST printed beta (zeta, not 2 zeta)": float(k["beta_kst"]),
        "Delta": float(Delta),
        "zeta": k["zeta"],
        "lambda_max": k["lambda_max"],
        "radius": float(radius),
        "solver tolerance": float(tol),
        "shift bound r": float(r),
        "output noise std": float(m_g * r),
        "budget split": f"eps_1={eps_1:.4g}, delta_1={delta_1:.3g}, eps_g={eps_g:.4g}, delta_g={delta_g:.3g}",
    }
    params = {"beta": k["beta"], "zeta": k["zeta"], "Delta": Delta, "tol": tol, "r": r, "sigma_2": m_g * r,
              "eps_1": eps_1, "delta_1": delta_1,
              "smoothness": float(info.loss.smoothness) * R**2 + Delta / n}
    return Plan(ledger=ledger, accountant_epsilon=float(accounted),
                accountant=f"KST Thm 2 for ({eps_1:.4g}, {delta_1:.3g}) + 2 x {ledger.accountant} Gaussian",
                iterations=1, details=details, params=params)


def _gaussian_multiplier(epsilon, delta):
    return calibrate(lambda m: Ledger().gaussian(m, 1.0), epsilon, delta,
                     math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon)


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    n, p = design.n, design.p
    b = noise.perturbation("gaussian", q["beta"], p, epsilon=q["eps_1"], delta=q["delta_1"],
                           name="objective noise b (Kifer, Smith & Thakurta 2012, Theorem 2)")
    Delta, mu = q["Delta"], q["Delta"] / n
    initial = 2.0 * (zero_loss_bound(info.loss) + float(b @ b) / (2.0 * n * Delta))
    max_iter = solvers.linear_rate_iterations(q["smoothness"], mu, initial, q["tol"])
    if is_dask(design.X):
        w = _pass_minimizer(design, info, q, b, max_iter)
    else:
        w, _, _ = perturbed_constrained(design.X, design.y, info.loss, info.penalty, info.options["radius"], Delta,
                                        b, q["tol"], max_iter=max_iter, smoothness=q["smoothness"])
    w = noise.check(w, sensitivity=2.0 * q["zeta"] / Delta + 2.0 * q["r"], name="perturbed minimizer (b fixed)")
    released = noise.release(w, "gaussian", q["sigma_2"], sensitivity=q["r"], name="approximate minimizer",
                             sampling=("chain", None))
    if callback is not None:  # the released vector only: the perturbed minimizer is not private before its noise
        callback(0, released.copy())
    return released


MECHANISM = Mechanism(
    name="objective",
    title="objective perturbation over a norm ball (Kifer, Smith & Thakurta 2012, Algorithm 1)",
    citation=SOURCE,
    summary="minimize a randomly perturbed objective over a norm ball (twice-differentiable losses: logistic)",
    options=(
        Option("radius", "float", 1.0, "radius c of the ball {Omega(w) <= c} of models", low=0.0, low_open=True),
        Option("Delta", "float", None, "ridge of the perturbed objective", low=0.0, low_open=True,
               default_help="2 lambda_max / epsilon_1, the smallest Kifer, Smith & Thakurta allow"),
        Option("kappa", "float", 0.05, "share of epsilon for the noise covering the solver's inexactness",
               low=0.0, high=1.0, low_open=True, high_open=True),
        Option("tol", "float", None, "suboptimality target of the solver", low=0.0, low_open=True,
               default_help="Delta (1e-4 radius)^2 / (2 n): a shift bound of 1e-4 radius"),
    ),
    calibrations=CALIBRATIONS,
    loss_needs=("twice differentiable", "Lipschitz"),
    penalty_needs=("value", "prox", "positive strength"),
    plan=_plan, run=_run,
    dask=True,
)


def objective_perturbation(X, y, loss, penalty, feature_bounds, *, epsilon, delta, calibration="paper", noise,
                           callback=None, row_norm=None, **options):
    """Objective perturbation over ``{Omega(w) <= radius}`` (module docstring; KST Alg. 1).

    ``fit_mechanism`` on ``BoundedDesign.from_arrays(X, y, feature_bounds, row_norm)``.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit
        Twice differentiable with bounded ``f'`` and ``f''`` (logistic).
    penalty : L1 (weighted), SubmodularNorm or GroupLasso with ``alpha > 0``
        Defines the norm ``Omega = psi / alpha`` of the constraint; its ``alpha`` does not
        enter the objective. Unpenalized coordinates (the intercept) are unconstrained.
    feature_bounds : ndarray of shape (p,)
    epsilon : float > 0
    delta : float in (0, 1)
    calibration : {"paper"}
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
        Called once with the solver's point before the output noise.
    row_norm : float or None
    **options
        ``radius`` (c, default 1), ``Delta`` (default ``2 lambda_max / epsilon_1``),
        ``kappa`` (default 0.05), ``tol`` (default: a shift bound of ``1e-4 radius``).

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, calibration or option; a loss that is not twice differentiable
        with bounded derivatives; a penalty without a norm ball.
    """
    return call_direct(MECHANISM, X, y, loss, penalty, feature_bounds, epsilon=epsilon, delta=delta,
                       calibration=calibration, noise=noise, callback=callback, row_norm=row_norm, options=options)


# --- Proposition 2: the penalized form, primal and dual ---------------------------------------

def _inner(pb, s, w0, d2, tol=1e-13, max_iter=100):
    """``w(s) = argmin_w J_b(w) + <s, w>`` by Newton's method (smooth, ``Delta/n``-strongly convex)."""
    w = w0.copy()
    X = pb.X
    for _ in range(max_iter):
        z = X @ w
        g = pb.grad(w) + s
        if np.linalg.norm(g) <= tol:
            break
        H = gram(X, d2(z, pb.y)) / pb.n + pb.mu * np.eye(pb.p)
        w = w - np.linalg.solve(H, g)
    return w


def perturbed_penalized_primal(X, y, loss, penalty, Delta, b, tol=1e-12, max_iter=100_000):
    """``argmin_w J_b(w) + psi(w)`` by accelerated proximal gradient (V-FISTA).

    Stops when the prox-gradient step moves less than ``tol``: with the
    ``Delta/n``-strongly convex smooth part and step ``1/L``, ``||w - w*|| <= (L / mu)
    ||w - prox(w - grad/L)||`` bounds the error. Returns ``w``.
    """
    pb = _Problem(X, y, loss, penalty, Delta, b)
    step = 1.0 / pb.L

    def small_step(w):
        return np.linalg.norm(w - penalty.prox(w - step * pb.grad(w), step)) * pb.L / pb.mu <= tol

    return solvers.accelerated_proximal_gradient(pb.grad, penalty.prox, np.zeros(pb.p), step, max_iter,
                                                 strong_convexity=pb.mu, stop=small_step, check_every=1)[0]


def perturbed_penalized_dual(X, y, loss, penalty, Delta, b, tol=1e-12, max_iter=100_000):
    """Kumar & Deisenroth (2019) Proposition 2: ``max_{s in K} D(s)``, ``D(s) = min_w J_b(w) + <s, w>``.

    The primal comes from Eq. 13.

    ``K = d psi(0)`` (``alpha |P|(F)`` for a submodular norm; the box ``|s_j| <= alpha
    w_j`` for a weighted L1); projection by Moreau, ``proj_K(v) = v - prox_psi(v, 1)``.
    ``grad D(s) = w(s)`` (Danskin), Lipschitz with constant ``n / Delta``, and ``D`` is
    strongly concave (``J_b`` is smooth), so accelerated projected gradient ascent with
    restart converges linearly. ``w(s)`` by Newton (``_inner``).

    Returns
    -------
    w : ndarray
        ``w(s*)``, the primal solution.
    s : ndarray
        The dual solution, in K.
    """
    d2 = _second_derivative(loss)
    pb = _Problem(X, y, loss, penalty, Delta, b)
    state = {"w": np.zeros(pb.p), "s": np.zeros(pb.p)}

    def neg_grad(z):  # ascent on D: the gradient of -D at z is -w(z) (Danskin)
        state["w"] = _inner(pb, z, state["w"], d2)
        return -state["w"]

    def converged(s):
        moved = np.linalg.norm(s - state["s"])
        state["s"] = s.copy()
        return moved <= tol * pb.mu

    # -D is (n / Delta)-smooth and strongly convex (J_b is smooth); step 1 / smoothness = mu.
    s, _ = solvers.accelerated_proximal_gradient(neg_grad, lambda v, step: v - penalty.prox(v, 1.0),
                                                 np.zeros(pb.p), pb.mu, max_iter, stop=converged, check_every=1)
    return _inner(pb, s, state["w"], d2), s
