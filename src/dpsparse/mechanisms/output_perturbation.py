"""Output perturbation: the strongly convex regularized minimizer plus Gaussian noise.

Sources: Chaudhuri, Monteleoni & Sarwate, JMLR 2011, Algorithm 1 (output perturbation,
sensitivity of the minimizer of a strongly convex objective, their Corollary 8); Jain &
Thakurta, ICML 2014 (Gaussian noise); Kumar & Deisenroth (seed 001) section 4.1, Eq. 17
and Theorem 1 / Lemma 1 (excess risk with the Gaussian width of the dual ball); Balle &
Wang, ICML 2018, Theorem 8 (analytic Gaussian mechanism). SPEC section 4, item 1.
Derivation in docs/mechanisms/perturbation.md, section 1.

Algorithm. Minimize ``F(w) = (1/n) sum_i f(<w, x_i>, y_i) + psi(w) + (mu/2)||w||^2``
(``psi``: any convex penalty with a prox, e.g. ``alpha * Omega``) to a certified duality
gap ``g <= tol`` (``solvers.solve_prox``), release ``w_g + N(0, sigma^2 I)``.

Privacy (replace-one). ``F`` is ``mu``-strongly convex; neighbouring objectives differ by
``(f_i - f_i') / n``, whose gradient has norm at most ``2 L / n`` with ``L = sup|f'| R``
(``R`` the public bound on ``||x_i||_2``). Strong monotonicity of ``dF`` gives
``||w*(D) - w*(D')|| <= 2 L / (n mu)`` (Chaudhuri et al. 2011, Corollary 8, with the
penalty's subgradient in the optimality condition). The solver stops at ``w_g`` with
``F(w_g) - F* <= g <= tol`` (certified gap), and strong convexity gives
``||w_g - w*|| <= sqrt(2 tol / mu)``; hence the L2 sensitivity of the released point is

    Delta_2 = 2 L / (n mu) + 2 sqrt(2 tol / mu),

data-independent because ``tol`` is. A solver that does not certify ``g <= tol`` raises
``SolverToleranceError``: the sensitivity would not hold. ``mu <= 0`` is refused: the
minimizer of a merely convex objective has unbounded sensitivity (the Lasso with two
identical columns has a whole segment of minimizers, and one record can move the
selected one across it).

Noise:

- ``calibration="tight"`` (default): the smallest ``sigma`` such that one Gaussian
  mechanism with sensitivity ``Delta_2`` is (epsilon, delta)-DP, by bisection on the PLD
  accountant (``calibrate``); the PLD of one Gaussian is exact up to its pessimistic
  discretization, so this is the analytic Gaussian mechanism of Balle & Wang (2018,
  Theorem 8) up to the 1e-4 relative tolerance of the bisection
  (``analytic_gaussian_delta`` is their formula; the tests compare).
- ``calibration="paper"``: seed 001's Theorem 1 prints ``sigma = L R2 sqrt(log(1/delta)
  + epsilon) / (lambda epsilon)`` inside an O(.) statement, with no constant and with
  ``lambda`` the penalty weight of a penalty that is not strongly convex; it cannot be
  used as a calibration. dpsparse uses the classic Gaussian mechanism instead (Dwork &
  Roth 2014, Theorem A.1): ``sigma = Delta_2 sqrt(2 log(1.25 / delta)) / epsilon``, which
  that theorem proves only for ``epsilon < 1``: larger epsilons are refused.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.stats import norm as _normal

from .. import losses as _losses
from .. import norms as _norms
from .. import solvers
from ..accounting import Ledger, PrivacyReport, calibrate, check_privacy_params
from ..norms import require
from ._common import row_norm_bound

__all__ = ["output_perturbation", "sensitivity", "default_tol", "classic_sigma", "analytic_gaussian_delta",
           "theorem1_excess_risk_bound", "SolverToleranceError", "CALIBRATIONS"]

CALIBRATIONS = ("tight", "paper")
SOURCE = ("Chaudhuri, Monteleoni & Sarwate JMLR 2011 Alg. 1 (sensitivity 2L/(n mu), Cor. 8); seed 001 sec. 4.1 "
          "Eq. 17; inexact solve: + 2 sqrt(2 tol/mu) from strong convexity; noise: analytic Gaussian "
          "(Balle & Wang 2018, by the PLD accountant) or classic Gaussian (Dwork & Roth 2014, Thm A.1)")


class SolverToleranceError(RuntimeError):
    """The solver did not certify the duality gap the sensitivity was computed for."""


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
    """Classic Gaussian mechanism ``sigma = Delta sqrt(2 log(1.25/delta)) / epsilon`` (Dwork & Roth, Thm A.1; epsilon < 1)."""
    return sens * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def analytic_gaussian_delta(sigma, sens, epsilon):
    """Balle & Wang (2018, Theorem 8): the smallest delta for which ``N(0, sigma^2)`` on sensitivity ``sens`` is (epsilon, delta)-DP.

    ``delta(eps) = Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta)``.
    """
    a, b = sens / (2.0 * sigma), epsilon * sigma / sens
    return float(_normal.cdf(a - b) - math.exp(epsilon) * _normal.cdf(-a - b))


@functools.lru_cache(maxsize=256)
def _tight_multiplier(epsilon, delta):
    """Smallest ``sigma / Delta`` of one Gaussian mechanism meeting (epsilon, delta), by the PLD accountant."""
    return calibrate(lambda m: Ledger().gaussian(m, 1.0), epsilon, delta,
                     math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon)


def _solver_loss(loss):
    """The datafit the minimizer is computed for, and ``sup|f'|``; refuses losses without a bound or smoothness.

    ``Squared(clip=C)``: the per-sample gradient is the clipped residual, i.e. the
    objective minimized is the Huber loss with threshold C (docs/privacy.md, squared loss).
    """
    if not np.isfinite(loss.smoothness):
        raise ValueError(f"output perturbation needs a smooth loss for its certified solver; the {loss.name} "
                         "loss is not smooth")
    try:
        c = float(loss.lipschitz)
    except ValueError:
        raise ValueError("output perturbation: the squared loss has no bound on its derivative, so the minimizer "
                         "has unbounded sensitivity; set Squared(clip=C) (the fit then minimizes the Huber "
                         "loss with threshold C) or use Huber") from None
    if isinstance(loss, _losses.Squared):
        return _losses.Huber(loss.clip), c
    return loss, c


def output_perturbation(X, y, loss, penalty, feature_bounds, *, epsilon, delta, n_iter=None, calibration="tight",
                        noise, callback=None, mu, tol=None, row_norm=None):
    """Output perturbation of the ``mu``-strongly convex regularized minimizer (module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
        Records within the public bounds (``||x_i||_2 <= R``).
    y : ndarray of shape (n,)
    loss : Datafit
        Smooth with a bound on ``|f'|`` (logistic, Huber, squared with ``clip``).
    penalty : Penalty with ``value``, ``prox``, ``conjugate``, ``dual_scaling``
        ``psi`` (any strength; L1, elastic net, group Lasso, submodular norms).
    feature_bounds : ndarray of shape (p,)
        Public bounds ``b_j`` on ``|x_j|``.
    epsilon : float > 0
    delta : float in (0, 1)
    n_iter : int or None
        Maximum iterations of the solver (default 20000); not a privacy parameter.
    calibration : {"tight", "paper"}
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
        Called once, with the non-private solution (t = 0) before the noise is added.
    mu : float > 0
        Ridge strength ``(mu/2)||w||^2``, which bounds the sensitivity.
    tol : float > 0 or None
        Data-independent target of the certified duality gap; None: ``default_tol``.
    row_norm : float or None
        Public bound on ``||x_i||_2``; ``R = min(row_norm, ||feature_bounds||_2)``.

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget or calibration; ``mu <= 0`` (unbounded sensitivity); a non-smooth
        loss or one without a bound on its derivative; ``calibration="paper"`` with
        ``epsilon >= 1``; a penalty the solver cannot handle.
    SolverToleranceError
        The solver did not certify a duality gap ``<= tol``.
    """
    check_privacy_params(epsilon, delta)
    if calibration not in CALIBRATIONS:
        raise ValueError(f"unknown calibration {calibration!r}; allowed: {list(CALIBRATIONS)}")
    if isinstance(mu, bool) or not isinstance(mu, (int, float, np.number)) or not math.isfinite(mu) or mu <= 0:
        raise ValueError(f"output perturbation needs mu > 0 (a strongly convex objective), got mu={mu!r}: without "
                         "it the sensitivity of the minimizer is unbounded (e.g. the Lasso with duplicated "
                         "features has a segment of minimizers)")
    if calibration == "paper" and epsilon >= 1:
        raise ValueError(f"calibration='paper' uses the classic Gaussian mechanism, proved for epsilon < 1 only "
                         f"(Dwork & Roth 2014, Thm A.1); got epsilon={epsilon:g}: use calibration='tight'")
    require(penalty, ("value", "prox", "conjugate", "dual_scaling"), "output perturbation")
    solver_loss, c = _solver_loss(loss)
    n, p = X.shape
    R = row_norm_bound(feature_bounds, row_norm, p)
    L = c * R
    if tol is None:
        tol = default_tol(L, n, mu)
    if not (isinstance(tol, (int, float, np.number)) and math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    sens = sensitivity(L, n, mu, tol)
    max_iter = 20_000 if n_iter is None else int(n_iter)

    res = solvers.solve_prox(X, np.asarray(y, dtype=float), solver_loss, penalty, mu=float(mu), tol=float(tol),
                             max_iter=max_iter)
    if not res.gap <= tol:
        raise SolverToleranceError(
            f"output perturbation: the solver reached a certified gap {res.gap:.3g} > tol={tol:.3g} in "
            f"{max_iter} iterations; the declared sensitivity would not hold (raise n_iter or tol)")
    if callback is not None:
        callback(0, res.coef.copy())

    m_paper = classic_sigma(1.0, epsilon, delta)
    m = m_paper if calibration == "paper" else _tight_multiplier(float(epsilon), float(delta))
    sigma = m * sens
    ledger = Ledger().gaussian(sigma, sens)
    accounted = ledger.epsilon(delta)
    w = res.coef + noise.gaussian(sigma, p)

    report = PrivacyReport(
        mechanism="output-perturbation (Chaudhuri et al. JMLR 2011 Alg. 1; seed 001 sec. 4.1)",
        calibration=calibration,
        epsilon=float(epsilon),
        delta=float(delta),
        accountant_epsilon=accounted,
        accountant=ledger.accountant,
        iterations=1,
        noise={
            "release": "minimizer + gaussian noise",
            "noise std": float(sigma),
            "noise multiplier": float(m),
            "classic gaussian std": float(m_paper * sens),
            "sensitivity (L2)": float(sens),
            "exact-minimizer sensitivity": float(2.0 * L / (n * mu)),
            "solver tolerance": float(tol),
            "certified gap": float(res.gap),
            "mu": float(mu),
            "per-sample lipschitz": float(L),
            "source": SOURCE,
        },
        noise_source=noise.describe(),
    )
    return w, report


def _penalty_width(penalty, p, n_samples, random_state):
    """``E[psi(w + b) - psi(w)] / sigma``-type constants: (linear coefficient, quadratic coefficient, description).

    ``E psi(w + b) - psi(w) <= A sigma + B sigma^2`` for ``b ~ N(0, sigma^2 I)``.
    """
    if isinstance(penalty, _norms.ElasticNet):
        a, cq = penalty._strengths(p)
        return math.sqrt(2.0 / math.pi) * float(a.sum()), 0.5 * float(cq.sum()), "closed form (elastic net)"
    if hasattr(penalty, "omega") and hasattr(penalty, "n_features"):
        est, (_, hi) = _norms.gaussian_width(penalty, n_samples=n_samples, random_state=random_state)
        return penalty.alpha * hi, 0.0, f"Monte Carlo Gaussian width {est:.4g} (upper 95% end {hi:.4g})"
    raise ValueError(f"no Gaussian width for penalty {type(penalty).__name__}")


def theorem1_excess_risk_bound(loss, penalty, feature_bounds, *, sigma, mu, tol=0.0, row_norm=None,
                               n_samples=10_000, random_state=0):
    """Bound on the expected excess empirical risk of output perturbation (seed 001 Lemma 1 / Theorem 1).

    For ``w_priv = w_g + b``, ``b ~ N(0, sigma^2 I)``, ``F(w_g) - F* <= tol``:

        E[F(w_priv)] - F* <= tol + c R sigma + alpha G sigma + (mu/2) p sigma^2,

    with ``c = sup|f'|``, ``R`` the row-norm bound and ``G = E[Omega(g)]``, ``g ~ N(0, I)``,
    the Gaussian width of the dual unit ball (``norms.gaussian_width``). Derivation (seed
    001, proof of Lemma 1, made explicit): ``|f(<w+b, x>) - f(<w, x>)| <= c |<b, x>|`` and
    ``E|<b, x>| <= sigma ||x||``; ``Omega(w + b) - Omega(w) <= Omega(b)`` (triangle
    inequality; the seed uses monotonicity and submodularity of ``f``) and
    ``E Omega(b) = sigma G``; the ridge adds ``(mu/2) E[||w+b||^2 - ||w||^2] = (mu/2) p sigma^2``.
    The seed's last equality drops the factor ``sigma`` in front of ``G``; it is restored
    here. For the elastic net the penalty term is in closed form
    (``sqrt(2/pi) sigma sum a_j + sigma^2 sum c_j / 2``). The seed's Theorem 1 then sets
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
    _, c = _solver_loss(loss)
    b = np.asarray(feature_bounds, dtype=float)
    p = b.shape[0]
    R = row_norm_bound(b, row_norm, p)
    A, B, how = _penalty_width(penalty, p, n_samples, random_state)
    terms = {"tol": float(tol), "loss": c * R * sigma, "penalty": A * sigma + B * sigma**2,
             "ridge": 0.5 * mu * p * sigma**2}
    return {"bound": sum(terms.values()), **terms, "width": how}
