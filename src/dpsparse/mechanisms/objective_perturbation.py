"""Objective perturbation over a norm ball, and the dual route of seed 001 Proposition 2.

Sources: Kifer, Smith & Thakurta, COLT 2012, "Private convex empirical risk minimization
and high-dimensional regression", Algorithm 1 and Theorem 2 (KST); Chaudhuri, Monteleoni
& Sarwate JMLR 2011, Algorithm 2; Kumar & Deisenroth (seed 001) section 4.3, Eq. 23,
Proposition 2 and the dual derivation (Eq. 11-13, 24-25). SPEC section 4, item 2.
Derivation and proofs: docs/mechanisms/perturbation.md, section 2.

Mechanism (``objective_perturbation``). Release an approximate minimizer over
``C = {Omega(w) <= c}`` (``Omega = psi / alpha``, the penalty's norm; seed Eq. 23) of

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
(projection by bisection on the penalty's prox), stopped at a certified gap
``g <= tol`` (a Frank-Wolfe-type gap through the dual norm, plus a strong-convexity term
for unpenalized coordinates). ``J_b`` is ``Delta/n``-strongly convex and the iterate is
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
penalized form ``min_w J_b(w) + psi(w)`` (psi a norm times alpha, seed Eq. 11 with the
perturbation), the dual is ``max_{s in K} D(s)``, ``D(s) = min_w J_b(w) + <s, w> =
-J_b*(-s)``, ``K = dpsi(0) = alpha |P|(F)`` for a submodular norm (seed Eq. 24, where
``J_b* (-s) = L*(-(s + b/n))`` with the seed's normalization), and the primal solution
is ``w(s*) = argmin_w J_b(w) + <s*, w>`` (Eq. 13). Both are solved here for a given
``b`` (no privacy claim for the penalized form: KST's argument is for a constraint set);
the tests check that the two routes agree to 1e-6 with the same ``b``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from .. import losses as _losses
from .. import norms as _norms
from .. import solvers
from ..accounting import Ledger, PrivacyReport, calibrate, check_privacy_params
from ._common import row_norm_bound

__all__ = ["objective_perturbation", "kst_constants", "replace_one_tail", "perturbed_constrained",
           "perturbed_penalized_primal", "perturbed_penalized_dual", "CALIBRATIONS"]

CALIBRATIONS = ("paper",)
SOURCE = ("Kifer, Smith & Thakurta COLT 2012 Alg. 1 / Thm 2 (Delta >= 2 lambda/eps, b ~ N(0, zeta^2 (8 log(2/delta) "
          "+ 4 eps)/eps^2 I), zeta -> 2 zeta for replace-one); seed 001 sec. 4.3 Eq. 23; inexact solve: certified gap "
          "+ Gaussian on the approximate minimizer (docs/mechanisms/perturbation.md)")


# --- losses ----------------------------------------------------------------------------------

def _second_derivative(loss):
    """``f''(z, y)`` of a twice-differentiable loss, or a ValueError saying why the loss is refused."""
    if isinstance(loss, _losses.Hinge) or not np.isfinite(loss.smoothness):
        raise ValueError(f"objective perturbation needs a twice-differentiable loss (KST Thm 2); the {loss.name} "
                         "loss is not differentiable")
    if isinstance(loss, _losses.Squared) and loss.clip is None:
        raise ValueError("objective perturbation needs a bounded gradient (KST Thm 2: ||grad|| <= zeta); the squared "
                         "loss without clipping has none")
    if isinstance(loss, (_losses.Huber, _losses.Squared)):
        raise ValueError(f"objective perturbation needs a twice-differentiable loss (KST Thm 2): the {loss.name} "
                         "loss (clipped squared = Huber) has a second derivative that jumps at the threshold, so "
                         "the change of variables of the proof fails there")
    if callable(getattr(loss, "second_derivative", None)):
        return loss.second_derivative
    if isinstance(loss, _losses.Logistic):
        return lambda z, y: expit(y * z) * expit(-y * z)
    raise ValueError(f"objective perturbation: no second derivative known for the {loss.name} loss")


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
        self.L = 1.01 * loss.smoothness * solvers._spectral_norm_sq(X) / self.n + self.mu

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
        a, _ = pen._strengths(self.p)  # weighted L1: max_j |g_j| / w_j over penalized j
        wts = a / pen.alpha
        mask = ~self.free
        return float(np.max(np.abs(g[mask]) / wts[mask])) if mask.any() else 0.0

    def project(self, x, c):
        """Point of ``{Omega <= c}`` near the projection of ``x``: ``prox_{t psi}(x)`` with ``Omega = c`` (bisection)."""
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


def perturbed_constrained(X, y, loss, penalty, radius, Delta, b, tol, max_iter=50_000, check_every=10):
    """Minimize ``J_b`` over ``{Omega(w) <= radius}``: accelerated projected gradient with restart.

    Returns
    -------
    w : ndarray, in the ball
    gap : float
        Certified bound on ``J_b(w) - min``.
    iterations : int
    """
    pb = _Problem(X, y, loss, penalty, Delta, b)
    step = 1.0 / pb.L
    w = np.zeros(pb.p)
    z, t = w.copy(), 1.0
    gap = pb.gap(w, radius)
    it = 0
    for it in range(1, max_iter + 1):
        w_new = pb.project(z - step * pb.grad(z), radius)
        if float((z - w_new) @ (w_new - w)) > 0:
            t = 1.0
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        z = w_new + ((t - 1.0) / t_new) * (w_new - w)
        w, t = w_new, t_new
        if it % check_every == 0:
            gap = pb.gap(w, radius)
            if gap <= tol:
                break
    w = pb.feasible(w, radius)
    return w, pb.gap(w, radius), it


# --- the mechanism --------------------------------------------------------------------------

def _split(epsilon, delta, kappa):
    eps_g = kappa * epsilon / 2.0
    eps_1 = (1.0 - kappa) * epsilon
    delta_1 = delta / (2.0 * math.exp(eps_g))
    delta_g = delta / (2.0 * (1.0 + math.exp(eps_1 + eps_g)))
    return eps_1, delta_1, eps_g, delta_g


def objective_perturbation(X, y, loss, penalty, feature_bounds, *, epsilon, delta, radius, n_iter=None,
                           calibration="paper", noise, callback=None, tol=None, row_norm=None, Delta=None,
                           kappa=0.05):
    """Objective perturbation over ``{Omega(w) <= radius}`` (module docstring; KST Alg. 1, seed Eq. 23).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Records with ``||x_i||_2 <= R`` (public).
    y : ndarray of shape (n,)
    loss : Datafit
        Twice differentiable with bounded ``f'`` and ``f''`` (logistic).
    penalty : L1 (weighted), SubmodularNorm or GroupLasso with ``alpha > 0``
        Defines the norm ``Omega = psi / alpha`` of the constraint; its ``alpha`` does not
        enter the objective. Unpenalized coordinates (the intercept) are unconstrained.
    feature_bounds : ndarray of shape (p,)
    epsilon : float > 0
    delta : float in (0, 1)
    radius : float > 0
        ``c`` of the constraint set (public).
    n_iter : int or None
        Maximum solver iterations (default 50000).
    calibration : {"paper"}
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
        Called once with the solver's point before the output noise.
    tol : float > 0 or None
        Certified-gap target (data-independent); None: ``Delta (1e-4 radius)^2 / (2 n)``,
        so that the shift bound ``r = sqrt(2 n tol / Delta)`` is ``1e-4 radius``.
    row_norm : float or None
    Delta : float or None
        Ridge of the perturbed objective, ``>= 2 lambda_max / epsilon_1``; None: that minimum.
    kappa : float in (0, 1)
        Share of epsilon for the output noise that covers the solver's inexactness.

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, calibration, radius, Delta or kappa; a loss that is not twice
        differentiable with bounded derivatives; a penalty without a norm ball.
    RuntimeError
        The solver did not certify ``gap <= tol``.
    """
    check_privacy_params(epsilon, delta)
    if calibration not in CALIBRATIONS:
        raise ValueError(f"unknown calibration {calibration!r}; allowed: {list(CALIBRATIONS)} (the accountants do "
                         "not model KST's Jacobian factor)")
    if not (0 < kappa < 1):
        raise ValueError(f"kappa must be in (0, 1), got {kappa!r}")
    if not (isinstance(radius, (int, float, np.number)) and math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}")
    _second_derivative(loss)
    _norms.require(penalty, ("value", "prox"), "objective perturbation")
    if not getattr(penalty, "alpha", 0) > 0 or (isinstance(penalty, _norms.ElasticNet) and penalty.l1_ratio != 1.0):
        raise ValueError("objective perturbation needs a norm (L1, submodular norm, group Lasso) with alpha > 0 to "
                         "define the ball {Omega <= radius}")
    n, p = X.shape
    R = row_norm_bound(feature_bounds, row_norm, p)
    eps_1, delta_1, eps_g, delta_g = _split(float(epsilon), float(delta), float(kappa))
    k = kst_constants(loss, R, eps_1, delta_1)
    if Delta is None:
        Delta = k["Delta_min"]
    if not (math.isfinite(Delta) and Delta >= k["Delta_min"] * (1 - 1e-12)):
        raise ValueError(f"Delta must be >= 2 lambda_max / epsilon_1 = {k['Delta_min']:.6g} (KST Thm 2), got {Delta!r}")
    if tol is None:
        tol = Delta * (1e-4 * radius) ** 2 / (2.0 * n)
    r = math.sqrt(2.0 * n * tol / Delta)

    b = noise.gaussian(k["beta"], p)
    w, gap, iters = perturbed_constrained(X, y, loss, penalty, radius, Delta, b, tol,
                                          max_iter=50_000 if n_iter is None else int(n_iter))
    if not gap <= tol:
        raise RuntimeError(f"objective perturbation: certified gap {gap:.3g} > tol={tol:.3g} after {iters} "
                           "iterations; the declared shift bound would not hold (raise n_iter or tol)")
    if callback is not None:
        callback(0, w.copy())
    m_g = calibrate(lambda m: Ledger().gaussian(m, 1.0), eps_g, delta_g,
                    math.sqrt(2.0 * math.log(1.25 / delta_g)) / eps_g)
    sigma_2 = m_g * r
    ledger = Ledger().gaussian(m_g, 1.0)
    eps_g_acc = ledger.epsilon(delta_g)
    # KST's part is a proof, not an accountant: it contributes (eps_1, delta_1) as derived.
    accounted = eps_1 + 2.0 * eps_g_acc
    w_out = w + noise.gaussian(sigma_2, p) if sigma_2 > 0 else w
    report = PrivacyReport(
        mechanism="objective-perturbation (Kifer, Smith & Thakurta 2012 Alg. 1; seed 001 sec. 4.3, Eq. 23)",
        calibration=calibration,
        epsilon=float(epsilon),
        delta=float(delta),
        accountant_epsilon=float(accounted),
        accountant=f"KST Thm 2 for ({eps_1:.4g}, {delta_1:.3g}) + 2 x {ledger.accountant} Gaussian",
        iterations=int(iters),
        noise={
            "release": "argmin over {Omega <= radius} of the perturbed objective + gaussian",
            "objective noise std (beta)": float(k["beta"]),
            "KST printed beta (zeta, not 2 zeta)": float(k["beta_kst"]),
            "Delta": float(Delta),
            "zeta": k["zeta"],
            "lambda_max": k["lambda_max"],
            "radius": float(radius),
            "solver tolerance": float(tol),
            "certified gap": float(gap),
            "shift bound r": float(r),
            "output noise std": float(sigma_2),
            "budget split": f"eps_1={eps_1:.4g}, delta_1={delta_1:.3g}, eps_g={eps_g:.4g}, delta_g={delta_g:.3g}",
            "source": SOURCE,
        },
        noise_source=noise.describe(),
    )
    return w_out, report


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
        H = (X.T * d2(z, pb.y)) @ X / pb.n + pb.mu * np.eye(pb.p)
        w = w - np.linalg.solve(H, g)
    return w


def perturbed_penalized_primal(X, y, loss, penalty, Delta, b, tol=1e-12, max_iter=100_000):
    """``argmin_w J_b(w) + psi(w)`` by FISTA with restart (proximal gradient).

    Stops when the prox-gradient step moves less than ``tol``: with the
    ``Delta/n``-strongly convex smooth part and step ``1/L``, ``||w - w*|| <= (L / mu)
    ||w - prox(w - grad/L)||`` bounds the error. Returns ``w``.
    """
    pb = _Problem(X, y, loss, penalty, Delta, b)
    step = 1.0 / pb.L
    w = np.zeros(pb.p)
    z, t = w.copy(), 1.0
    for _ in range(max_iter):
        w_new = penalty.prox(z - step * pb.grad(z), step)
        if float((z - w_new) @ (w_new - w)) > 0:
            t = 1.0
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        z = w_new + ((t - 1.0) / t_new) * (w_new - w)
        w, t = w_new, t_new
        if np.linalg.norm(w - penalty.prox(w - step * pb.grad(w), step)) * pb.L / pb.mu <= tol:
            break
    return w


def perturbed_penalized_dual(X, y, loss, penalty, Delta, b, tol=1e-12, max_iter=100_000):
    """Seed 001 Proposition 2: ``max_{s in K} D(s)``, ``D(s) = min_w J_b(w) + <s, w>``; primal by Eq. 13.

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
    step = pb.mu  # 1 / Lipschitz constant of grad D

    def proj(v):
        return v - penalty.prox(v, 1.0)

    s = np.zeros(pb.p)
    z, t = s.copy(), 1.0
    wz = _inner(pb, z, np.zeros(pb.p), d2)
    ws = wz
    for _ in range(max_iter):
        s_new = proj(z + step * wz)
        if float((z - s_new) @ (s_new - s)) > 0:
            t = 1.0
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        z = s_new + ((t - 1.0) / t_new) * (s_new - s)
        moved = np.linalg.norm(s_new - s)
        s, t = s_new, t_new
        ws = _inner(pb, s, wz, d2)
        wz = _inner(pb, z, ws, d2)
        if moved <= tol * pb.mu:
            break
    return ws, s
