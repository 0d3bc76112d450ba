"""Output perturbation: the strongly convex regularized minimizer plus Gaussian noise.

Sources: Chaudhuri, Monteleoni & Sarwate, JMLR 2011, Algorithm 1 (output perturbation,
sensitivity of the minimizer of a strongly convex objective, their Corollary 8); Jain &
Thakurta, ICML 2014 (Gaussian noise); Kumar & Deisenroth, "Differentially Private
Empirical Risk Minimization with Sparsity-Inducing Norms", 2019, section 4.1, Eq. 17 and
Theorem 1 / Lemma 1 (excess risk with the Gaussian width of the dual ball); Balle & Wang,
ICML 2018, Theorem 8 (analytic Gaussian mechanism).
Derivation in docs/mechanisms/perturbation.md, section 1.

Algorithm. Minimize ``F(w) = (1/n) sum_i f(<w, x_i>, y_i) + psi(w) + (mu/2)||w||^2``
(``psi``: any convex penalty with a prox, e.g. ``alpha * Omega``) to a certified duality
gap ``g <= tol`` (``solvers.solve_prox``), release ``w_g + N(0, sigma^2 I)``.

Privacy (replace-one). ``F`` is ``mu``-strongly convex; neighbouring objectives differ by
``(f_i - f_i') / n``, whose gradient has norm at most ``2 L / n`` with ``L = sup|f'| R``
(``R`` the public bound on ``||x_i||_2``, the intercept column included). Strong
monotonicity of ``dF`` gives ``||w*(D) - w*(D')|| <= 2 L / (n mu)`` (Chaudhuri et al.
2011, Corollary 8, with the penalty's subgradient in the optimality condition). The
solver stops at ``w_g`` with ``F(w_g) - F* <= tol``, and strong convexity gives
``||w_g - w*|| <= sqrt(2 tol / mu)``; hence the L2 sensitivity of the released point is

    Delta_2 = 2 L / (n mu) + 2 sqrt(2 tol / mu),

data-independent because ``tol`` is. ``F(w_g) - F* <= tol`` holds whatever the data: the
solver (V-FISTA, ``solvers.accelerated_proximal_gradient``) runs with the public step
``1 / (sup f'' R^2 + mu)`` for at most the public number of iterations
``solvers.linear_rate_iterations`` after which its linear rate guarantees it (the
initial suboptimality is at most ``2 max_y f(0, y)``), and stops earlier only once the
certified duality gap is ``<= tol``. So a fit never fails on the data. ``mu <= 0`` is
refused: the minimizer of a merely convex objective has unbounded sensitivity (the Lasso
with two identical columns has a whole segment of minimizers, and one record can move
the selected one across it).

Noise:

- ``calibration="tight"`` (default): the smallest ``sigma`` such that one Gaussian
  mechanism with sensitivity ``Delta_2`` is (epsilon, delta)-DP, by bisection on the PLD
  accountant (``calibrate``); the PLD of one Gaussian is exact up to its pessimistic
  discretization, so this is the analytic Gaussian mechanism of Balle & Wang (2018,
  Theorem 8) up to the 1e-4 relative tolerance of the bisection
  (``analytic_gaussian_delta`` is their formula; the tests compare).
- ``calibration="paper"``: Kumar & Deisenroth's Theorem 1 prints ``sigma = L R2 sqrt(log(1/delta)
  + epsilon) / (lambda epsilon)`` inside an O(.) statement, with no constant and with
  ``lambda`` the penalty weight of a penalty that is not strongly convex; it cannot be
  used as a calibration. dpsparse uses the classic Gaussian mechanism instead (Dwork &
  Roth 2014, Theorem A.1): ``sigma = Delta_2 sqrt(2 log(1.25 / delta)) / epsilon``, which
  that theorem proves only for ``epsilon < 1``: larger epsilons are refused.

On a dask array (docs/scale.md) the minimizer is found on the client by spectral proximal
gradient steps (``distributed.spectral_gradient``), each evaluation one pass over the chunks
that also gives the certified duality gap, and stops at the same ``gap <= tol``; should it not
certify within the public iteration count, V-FISTA runs as in memory, one pass a step. The
released point then satisfies ``F(w_g) - F* <= tol`` as in memory, so the sensitivity and the
noise are the same.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import ndtr

from .. import norms as _norms
from .. import solvers
from ..accounting import Ledger, calibrate
from ..distributed import gradient_sums, is_dask, labels, spectral_gradient
from ._common import row_norm_bound
from .base import Mechanism, Option, Plan
from .direct import call_direct

__all__ = [
    "CALIBRATIONS",
    "MECHANISM",
    "analytic_gaussian_delta",
    "classic_sigma",
    "default_mu",
    "default_tol",
    "output_perturbation",
    "sensitivity",
    "theorem1_excess_risk_bound",
    "zero_loss_bound",
]

CALIBRATIONS = ("tight", "paper")
SOURCE = ("Chaudhuri, Monteleoni & Sarwate, 'Differentially private empirical risk minimization', JMLR 2011, "
          "Algorithm 1 (sensitivity 2L/(n mu), Corollary 8); Kumar & Deisenroth, 'Differentially private empirical "
          "risk minimization with sparsity-inducing norms', 2019, sec. 4.1, Eq. 17; inexact solve: + 2 sqrt(2 tol/mu) "
          "by strong convexity, public iteration count by Beck, 'First-Order Methods in Optimization', 2017, "
          "Thm 10.42; noise: analytic Gaussian (Balle & Wang, ICML 2018, Thm 8, by the PLD accountant) or classic "
          "Gaussian (Dwork & Roth 2014, Thm A.1)")


def sensitivity(lipschitz, n, mu, tol):
    """L2 sensitivity ``2 L / (n mu) + 2 sqrt(2 tol / mu)`` of the released minimizer (replace-one).

    Parameters
    ----------
    lipschitz : float
        ``L = sup|f'| * R``: bound on the norm of a per-sample gradient.
    n : int
    mu : float > 0
    tol : float >= 0
        Certified bound on the duality gap of the released point.
    """
    return 2.0 * lipschitz / (n * mu) + 2.0 * math.sqrt(2.0 * tol / mu)


def default_tol(lipschitz, n, mu):
    """Gap target whose solver term is 1% of the exact sensitivity: ``2 sqrt(2 tol/mu) = 0.01 * 2L/(n mu)``.

    Public constants only (``L``, ``n``, ``mu``), so the sensitivity stays data-independent.
    """
    return 0.5 * mu * (0.01 * lipschitz / (n * mu)) ** 2


def classic_sigma(sens, epsilon, delta):
    """Classic Gaussian mechanism ``sigma = Delta sqrt(2 log(1.25/delta)) / epsilon``.

    Dwork & Roth (2014), Theorem A.1; valid for epsilon < 1.
    """
    return sens * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def analytic_gaussian_delta(sigma, sens, epsilon):
    """Smallest delta for which ``N(0, sigma^2)`` on sensitivity ``sens`` is (epsilon, delta)-DP.

    Balle & Wang (2018), Theorem 8.

    ``delta(eps) = Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta)``.
    """
    a, b = sens / (2.0 * sigma), epsilon * sigma / sens
    return float(ndtr(a - b) - math.exp(epsilon) * ndtr(-a - b))


@functools.lru_cache(maxsize=256)
def _tight_multiplier(epsilon, delta, rho=None):
    """Smallest ``sigma / Delta`` of one Gaussian mechanism meeting (epsilon, delta), by the PLD accountant."""
    return calibrate(lambda m: Ledger().gaussian(m, 1.0), epsilon, delta,
                     math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon, rho=rho)


def zero_loss_bound(loss):
    """``max_{y in {-1, 1}} f(0, y)``: a public bound on ``F(0) - F*`` for labels in [-1, 1]
    (``f(0, y)`` grows with ``|y|`` for the squared and Huber losses; ``F* >= 0``)."""
    return float(np.max(loss.value(np.zeros(2), np.array([-1.0, 1.0]))))


def default_mu(lipschitz, n, multiplier):
    """Public default ridge ``mu = 2 L sqrt(m / n)`` (``m`` the noise multiplier).

    It minimizes ``L E|<b, x>| + mu B^2 / 2`` over ``mu`` for a model of norm ``B = 1``
    in the bounded coordinates: the loss term of Kumar & Deisenroth's Lemma 1 with
    ``sigma ~ m 2 L / (n mu)`` in one direction, against the bias of the ridge.
    """
    return 2.0 * lipschitz * math.sqrt(multiplier / n)


def _plan(info):
    o, n = info.options, info.n
    if info.calibration == "paper" and info.epsilon >= 1:
        raise ValueError(f"mechanism output: calibration='paper' uses the classic Gaussian mechanism, proved for "
                         f"epsilon < 1 only (Dwork & Roth 2014, Thm A.1); got epsilon={info.epsilon:g}: use "
                         "calibration='tight'")
    solver_loss = info.loss.bounded_datafit()
    L = float(info.loss.lipschitz) * info.row_norm
    m_paper = classic_sigma(1.0, info.epsilon, info.delta)
    m = m_paper if info.calibration == "paper" else _tight_multiplier(info.epsilon, info.delta, info.zcdp)
    mu = default_mu(L, n, m) if o["mu"] is None else o["mu"]
    tol = default_tol(L, n, mu) if o["tol"] is None else o["tol"]
    sens = sensitivity(L, n, mu, tol)
    smooth = float(solver_loss.smoothness) * info.row_norm**2 + mu
    max_iter = solvers.linear_rate_iterations(smooth, mu, 2.0 * zero_loss_bound(solver_loss), tol)
    sigma = m * sens
    ledger = Ledger().gaussian(sigma, sens)
    details = {
        "release": "minimizer + gaussian noise",
        "noise std": float(sigma),
        "noise multiplier": float(m),
        "classic gaussian std": float(m_paper * sens),
        "sensitivity (L2)": float(sens),
        "exact-minimizer sensitivity": float(2.0 * L / (n * mu)),
        "solver tolerance": float(tol),
        "solver iterations (at most)": int(max_iter),
        "mu": float(mu),
        "per-sample lipschitz": float(L),
    }
    params = {"solver_loss": solver_loss, "mu": mu, "tol": tol, "sigma": sigma, "sens": sens,
              "max_iter": max_iter, "smoothness": smooth}
    return Plan(ledger=ledger, accountant_epsilon=ledger.epsilon(info.delta), accountant=ledger.accountant,
                iterations=1, details=details, params=params)


def _pass_oracle(X, y, loss, penalty, mu, tol):
    """``w -> (F(w), grad of the smooth part, gap <= tol)`` on a dask array: one pass gives ``sum_i f(z_i)``,
    ``sum_i f*(u_i)`` and ``X^T u`` at ``u = f'(X w)``, the terms of ``solvers.duality_gap`` with the ridge."""
    n = X.shape[0]

    def conjugate_at_derivative(z, yc):
        return loss.conjugate(loss.derivative(z, yc), yc)

    def oracle(w):
        grad, (value, conjugate) = gradient_sums(X, y, w, loss.derivative, (loss.value, conjugate_at_derivative))
        primal = value / n + penalty.value(w) + 0.5 * mu * float(w @ w)
        dual = -conjugate / n - solvers._ridge_conjugate_bound(-grad / n, penalty, mu)
        return primal, grad / n + mu * w, primal - dual <= tol

    return oracle


def _pass_minimizer(design, q, penalty):
    """The minimizer on a dask array, to a certified gap ``<= tol`` (module docstring): spectral proximal gradient,
    else V-FISTA for the public iteration count (one pass a step)."""
    X, p = design.X, design.p
    oracle = _pass_oracle(X, labels(X, design.y), q["solver_loss"], penalty, q["mu"], q["tol"])
    step = 1.0 / q["smoothness"]
    w, certified = spectral_gradient(oracle, penalty.prox, np.zeros(p), step, q["max_iter"])
    if not certified:
        w, _ = solvers.accelerated_proximal_gradient(lambda z: oracle(z)[1], penalty.prox, np.zeros(p), step,
                                                     q["max_iter"], strong_convexity=q["mu"],
                                                     stop=lambda z: oracle(z)[2])
    return w


def _minimizer(design, q, penalty):
    """The ridge-regularized minimizer to a certified gap ``<= tol``: in memory, or on a dask array."""
    if is_dask(design.X):
        return _pass_minimizer(design, q, penalty)
    return solvers.solve_prox(design.X, design.y, q["solver_loss"], penalty, mu=q["mu"], tol=q["tol"],
                              max_iter=q["max_iter"], smoothness=q["smoothness"]).coef


def _run(design, plan, noise, callback):
    q, info = plan.params, plan.info
    coef = _minimizer(design, q, info.penalty)
    released = noise.release(coef, "gaussian", q["sigma"], sensitivity=q["sens"], name="minimizer")
    if callback is not None:  # the released vector only: the minimizer itself is not private
        callback(0, released.copy())
    return released


MECHANISM = Mechanism(
    name="output",
    title="output perturbation of the ridge-regularized minimizer (Chaudhuri et al. 2011, Algorithm 1)",
    citation=SOURCE,
    summary="solve a ridge-regularized problem, add Gaussian noise to the solution (smooth losses)",
    options=(
        Option("mu", "float", None, "ridge strength (mu/2)||w||^2 that bounds the sensitivity", low=0.0,
               low_open=True, default_help="2 L sqrt(m / n) (default_mu)"),
        Option("tol", "float", None, "suboptimality target of the solver", low=0.0, low_open=True,
               default_help="1% of the exact-minimizer sensitivity (default_tol)"),
    ),
    calibrations=CALIBRATIONS,
    loss_needs=("smooth", "Lipschitz"),
    penalty_needs=("value", "prox", "conjugate", "dual_scaling"),
    plan=_plan, run=_run,
    zcdp_calibration=True,
    dask=True,
)


def output_perturbation(X, y, loss, penalty, feature_bounds, *, epsilon, delta, calibration="tight", noise,
                        callback=None, row_norm=None, **options):
    """Output perturbation of the ``mu``-strongly convex regularized minimizer (module docstring).

    ``fit_mechanism`` on ``BoundedDesign.from_arrays(X, y, feature_bounds, row_norm)``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,)
    loss : Datafit
        Smooth with a bound on ``|f'|`` (logistic, Huber, squared with ``clip``: the
        minimized loss is then the Huber loss with threshold ``clip``).
    penalty : Penalty with ``value``, ``prox``, ``conjugate``, ``dual_scaling``
    feature_bounds : ndarray of shape (p,)
    epsilon : float > 0
    delta : float in (0, 1)
    calibration : {"tight", "paper"}
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
        Called once, with the non-private solution (t = 0) before the noise is added.
    row_norm : float or None
        Public bound on ``||x_i||_2``; ``R = min(row_norm, ||feature_bounds||_2)``.
    **options
        ``mu`` (> 0; default ``default_mu``), ``tol`` (> 0; default ``default_tol``).

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, calibration or option; a non-smooth loss or one without a bound on
        its derivative; ``calibration="paper"`` with ``epsilon >= 1``; a penalty the solver
        cannot handle.
    """
    return call_direct(MECHANISM, X, y, loss, penalty, feature_bounds, epsilon=epsilon, delta=delta,
                       calibration=calibration, noise=noise, callback=callback, row_norm=row_norm, options=options)


def _penalty_width(penalty, p, n_samples, random_state):
    """``E[psi(w + b) - psi(w)] / sigma``-type constants: (linear coefficient, quadratic coefficient, description).

    ``E psi(w + b) - psi(w) <= A sigma + B sigma^2`` for ``b ~ N(0, sigma^2 I)``.
    """
    if callable(getattr(penalty, "strengths", None)):  # separable: elastic net, (weighted) L1
        a, cq = penalty.strengths(p)
        return math.sqrt(2.0 / math.pi) * float(a.sum()), 0.5 * float(cq.sum()), "closed form (elastic net)"
    if hasattr(penalty, "omega") and hasattr(penalty, "n_features"):
        est, (_, hi) = _norms.gaussian_width(penalty, n_samples=n_samples, random_state=random_state)
        return penalty.alpha * hi, 0.0, f"Monte Carlo Gaussian width {est:.4g} (upper 95% end {hi:.4g})"
    raise ValueError(f"no Gaussian width for penalty {type(penalty).__name__}")


def theorem1_excess_risk_bound(loss, penalty, feature_bounds, *, sigma, mu, tol=0.0, row_norm=None,
                               n_samples=10_000, random_state=0):
    """Bound on the expected excess empirical risk of output perturbation.

    Kumar & Deisenroth (2019), Lemma 1 / Theorem 1.

    For ``w_priv = w_g + b``, ``b ~ N(0, sigma^2 I)``, ``F(w_g) - F* <= tol``:

        E[F(w_priv)] - F* <= tol + c R sigma + alpha G sigma + (mu/2) p sigma^2,

    with ``c = sup|f'|``, ``R`` the row-norm bound and ``G = E[Omega(g)]``, ``g ~ N(0, I)``,
    the Gaussian width of the dual unit ball (``norms.gaussian_width``). Derivation (Kumar &
    Deisenroth, proof of Lemma 1, made explicit): ``|f(<w+b, x>) - f(<w, x>)| <= c |<b, x>|`` and
    ``E|<b, x>| <= sigma ||x||``; ``Omega(w + b) - Omega(w) <= Omega(b)`` (triangle
    inequality; the paper uses monotonicity and submodularity of ``f``) and
    ``E Omega(b) = sigma G``; the ridge adds ``(mu/2) E[||w+b||^2 - ||w||^2] = (mu/2) p sigma^2``.
    The paper's last equality drops the factor ``sigma`` in front of ``G``; it is restored
    here. For the elastic net the penalty term is in closed form
    (``sqrt(2/pi) sigma sum a_j + sigma^2 sum c_j / 2``). Its Theorem 1 then sets
    ``lambda = L R2 sqrt(n) / G`` to balance terms and adds a generalization term; that
    O(.) statement has no constants and is not evaluated here.

    Parameters
    ----------
    loss : Datafit
    penalty : ElasticNet, SubmodularNorm or GroupLasso
    feature_bounds : ndarray of shape (p,)
    sigma, mu : float
    tol : float
        Certified gap of the solver.
    row_norm : float or None
    n_samples, random_state
        Monte Carlo estimate of the Gaussian width (its upper 95% end is used).

    Returns
    -------
    dict
        ``bound`` and its terms ``tol``, ``loss``, ``penalty``, ``ridge``, and ``width``.
    """
    c = float(loss.lipschitz)
    b = np.asarray(feature_bounds, dtype=float)
    p = b.shape[0]
    R = row_norm_bound(b, row_norm, p)
    A, B, how = _penalty_width(penalty, p, n_samples, random_state)
    terms = {"tol": float(tol), "loss": c * R * sigma, "penalty": A * sigma + B * sigma**2,
             "ridge": 0.5 * mu * p * sigma**2}
    return {"bound": sum(terms.values()), **terms, "width": how}
