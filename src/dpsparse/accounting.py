"""Privacy accounting: ledgers on dp-accounting, calibration by bisection, reports.

A ``Ledger`` lists the private events of one fit (Laplace mechanisms, pure epsilon-DP
steps such as a report-noisy-max) and composes them with the privacy loss distribution
(PLD) accountant of ``dp_accounting`` (pessimistic discretization, so the epsilon it
returns is an upper bound). ``calibrate`` finds by bisection the smallest noise scale
whose accounted epsilon meets a target. Mechanisms hold the math of their events; this
module holds the composition.
"""
from __future__ import annotations

import functools
import json
import math
import threading
import uuid
import weakref
from dataclasses import InitVar, asdict, dataclass, field, fields

import numpy as np

__all__ = ["ZCDP_PAPER", "check_privacy_params", "weak_delta", "weak_guarantee", "Ledger", "LoggedDraw", "calibrate",
           "compose_log", "log_ledger", "meaning", "PrivacyReport", "PrivacyBudget", "BudgetExceededError",
           "REPLACE_ONE"]

REPLACE_ONE = "replace-one (datasets at Hamming distance 1)"

# Finest width of the PLD's privacy-loss grid (the grid of ledgers with pure-DP steps; the
# others take the widest within 0.05% of the grids' limit, ``Ledger._fine_grid``), widened
# so that one step's loss reach (``_loss_span``) covers at most _PLD_POINTS grid points (large
# per-step epsilons would make the grid huge; the PMF's tails add up to 20 times that).
# Pessimistic rounding keeps the result an upper bound whatever the width.
_PLD_DISCRETIZATION = 2e-5
_PLD_POINTS = 5000
# Grid of the first, coarse stage of a calibration (``calibrate``).
_PLD_COARSE = 1e-3
_EPSILONS = {}  # Ledger.epsilons by (events, delta, coarse): public numbers only


MIN_EPSILON = 1e-6
"""The smallest epsilon a fit takes: below it every noise scale is over 10^6 times the sensitivity (nothing is
learned) and the accountants' floating-point arithmetic overflows (about 1e-160)."""


def check_privacy_params(epsilon, delta, smallest=MIN_EPSILON):
    """Validate a target (epsilon, delta); ``smallest``: the least epsilon taken (0 for a charge to a budget).

    Raises
    ------
    ValueError
        epsilon not a finite number > 0 or below ``smallest``, or delta outside (0, 1).
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.number)) or not (
        math.isfinite(epsilon) and epsilon > 0
    ):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if epsilon < smallest:
        raise ValueError(f"epsilon = {epsilon:g} is below {smallest:g}, the smallest this library takes: the noise "
                         "would be over a million times the signal a record can carry")
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.number)) or not 0 < delta < 1:
        raise ValueError(f"delta must be in the open interval (0, 1), got {delta!r}")


ZCDP_PAPER = ("Bun & Steinke, 'Concentrated differential privacy: simplifications, extensions, and lower bounds', "
              "TCC 2016")
"""The source of zCDP: its definition, the Gaussian mechanism in it, its composition and conversions."""

WEAK_EPSILON = 10.0
"""Above it the guarantee is weak, and the CLI and the estimators say so (``weak_epsilon``)."""


def odds(epsilon):
    """``e^epsilon`` in words (its value when it fits in a float)."""
    digits = 3 + max(0, -math.floor(math.log10(epsilon))) if epsilon > 0 else 3  # 1.000001, not 1, at 1e-6
    return f"e^{epsilon:g}" + (f" = {math.exp(epsilon):.{digits}g}" if epsilon < 700 else "")


def meaning(epsilon, delta, holds=True):
    """What an (epsilon, delta) guarantee means for a person in the data, in words; or, where it does not hold
    (``holds`` False), that nothing can be promised."""
    if not holds:
        return ("What it means for a person in the data: nothing can be promised. The guarantee does not hold "
                "(above), so this model may reveal more about any one record than the target allows; do not publish "
                "it.")
    return (f"What it means for a person in the data: take two versions of the training data that differ only in "
            f"your record (yours, or another person's in its place). Any outcome of the training is at most "
            f"{odds(epsilon)} times as likely with one as with the other, plus a probability of at most {delta:.2g}. "
            f"So any way of telling the two versions apart from this model that names yours with probability P "
            f"when it is the true one also names it with probability at least (P - {delta:.2g}) / "
            f"{math.exp(epsilon):.3g} when it is not. Smaller epsilon protects more.")


def weak_epsilon(epsilon):
    """The warning an epsilon above ``WEAK_EPSILON`` deserves, or None: the odds of any outcome may change by
    ``e^epsilon`` with one record."""
    if epsilon <= WEAK_EPSILON:
        return None
    return (f"epsilon = {epsilon:g} is above {WEAK_EPSILON:g}: the guarantee allows a change of odds by "
            f"{odds(epsilon)}, which protects little")


def weak_delta(delta, n):
    """The warning a delta above ``1 / n`` deserves, or None.

    A mechanism that publishes one record chosen at random out of ``n`` is (0, 1/n)-DP: at
    ``delta >= 1/n`` the definition allows revealing a whole record (Dwork & Roth 2014,
    section 2.3); the default is ``1 / n**2``.
    """
    if delta <= 1.0 / n:
        return None
    return (f"delta = {delta:g} is above 1/n = {1.0 / n:.3g}: a mechanism may then reveal a whole record with "
            "probability delta (the default is 1/n^2)")


def weak_guarantee(epsilon, delta, n):
    """The warnings (``weak_epsilon``, ``weak_delta``) that a fit at ``(epsilon, delta)`` on ``n`` records deserves."""
    return [w for w in (weak_epsilon(epsilon), weak_delta(delta, n)) if w]


class Ledger:
    """Events of one fit, composed by dp-accounting's accountants.

    Each event is a per-step mechanism and the number of times it runs; composition is
    adaptive (a step may depend on the outputs of the previous ones). ``epsilon`` asks
    every accountant that supports all the events (PLD, RDP) and returns the smallest
    epsilon, all of them being upper bounds; ``accountant`` names the one used.

    Sensitivities are for the replace-one relation. A non-subsampled Gaussian or Laplace
    step is the same pair of distributions whatever relation produced its sensitivity,
    so it is passed to dp-accounting as noise over sensitivity. Only Poisson-subsampled
    steps depend on the relation: they use the PLD's ``REPLACE_ONE`` relation, in which
    the noise multiplier is the noise over the bound on one record's contribution.
    """

    def __init__(self):
        self.events = []
        self.accountant = None

    def _add(self, kind, count, **params):
        self.events.append((kind, int(count), params))
        return self

    def laplace(self, scale, sensitivity, count=1):
        """``count`` Laplace mechanisms: ``Laplace(scale)`` noise on an L1-sensitivity ``sensitivity``."""
        return self._add("laplace", count, multiplier=float(scale) / float(sensitivity))

    def gaussian(self, sigma, sensitivity, count=1):
        """``count`` Gaussian mechanisms: ``N(0, sigma^2)`` noise on an L2-sensitivity ``sensitivity``."""
        return self._add("gaussian", count, multiplier=float(sigma) / float(sensitivity))

    def pure(self, epsilon, count=1):
        """``count`` mechanisms that are each ``epsilon``-DP (e.g. report-noisy-max with Laplace noise)."""
        return self._add("pure", count, epsilon=float(epsilon))

    def exponential(self, epsilon, count=1):
        """``count`` exponential mechanisms (report-noisy-max with Gumbel noise), each ``epsilon``-DP.

        An ``epsilon``-DP exponential mechanism is ``epsilon``-bounded-range, hence
        ``epsilon^2/8``-zCDP (Cesar & Rogers 2021, Lemma 3.2 with Durfee & Rogers 2019);
        the PLD accountant uses its pure ``epsilon``-DP bound instead.
        """
        return self._add("exponential", count, epsilon=float(epsilon))

    def poisson_gaussian(self, sampling_probability, sigma, contribution, count=1):
        """``count`` Poisson-subsampled Gaussian mechanisms on a sum of per-record terms.

        Each record is in the batch with probability ``sampling_probability``; its term has
        L2 norm at most ``contribution`` (replace-one sensitivity ``2 contribution``);
        ``N(0, sigma^2)`` noise is added to the sum.
        """
        return self._add("poisson_gaussian", count, q=float(sampling_probability),
                         multiplier=float(sigma) / float(contribution))

    def replacement_gaussian(self, n, batch_size, sigma, contribution, count=1):
        """``count`` Gaussian mechanisms on a sum over a batch of ``batch_size`` indices drawn
        uniformly **with replacement** from ``n`` records (per-record terms of norm <= ``contribution``).

        dp-accounting has no accountant for this sampling under replace-one, so its RDP is
        bounded here (docs/privacy.md): the replaced record appears ``K ~ Binomial(m, 1/n)``
        times, independently of the data; given ``K = k`` the step is a Gaussian mechanism
        of sensitivity ``2 k contribution``; ``E_Q[(P/Q)^alpha]`` is jointly convex, so
        ``D_alpha <= log E_k exp((alpha - 1) alpha (2 k c)^2 / (2 sigma^2)) / (alpha - 1)``.
        Composed by adding RDP, converted by dp-accounting's ``compute_epsilon``.
        """
        return self._add("replacement_gaussian", count, n=int(n), m=int(batch_size),
                         multiplier=float(sigma) / float(contribution))

    def _pld_step(self, kind, params, grid):
        from dp_accounting.pld import common
        from dp_accounting.pld import privacy_loss_distribution as pld

        if kind == "laplace":
            return pld.from_laplace_mechanism(params["multiplier"], value_discretization_interval=grid)
        if kind == "gaussian":
            return pld.from_gaussian_mechanism(params["multiplier"], value_discretization_interval=grid)
        if kind == "poisson_gaussian":
            return _poisson_gaussian_pld(params["multiplier"], params["q"], grid)
        return pld.from_privacy_parameters(common.DifferentialPrivacyParameters(params["epsilon"], 0.0),
                                           value_discretization_interval=grid)

    def _pld_epsilon(self, delta, grid=_PLD_DISCRETIZATION):
        grid = max(grid, max(_loss_span(kind, p) for kind, _, p in self.events) / _PLD_POINTS)
        total = None
        for kind, count, params in self.events:
            one = self._pld_step(kind, params, grid)
            one = one.self_compose(count) if count > 1 else one
            total = one if total is None else total.compose(one)
        return float(total.get_epsilon_for_delta(delta))

    def _fine_grid(self, delta, coarse):
        """The widest grid whose PLD epsilon is within ``FINE_ENOUGH / 2`` of the grids' limit, estimated by
        Richardson extrapolation from ``coarse`` (the coarse grid's epsilon) and the grid twice as coarse (half the
        points); ``_PLD_COARSE`` when the coarse grid is already that close, never below ``_PLD_DISCRETIZATION``.

        The connect-the-dots PLD's epsilon of Gaussian and Laplace steps approaches its limit about as the square of
        the grid's width (measured in docs/privacy.md: the fine grid gained 0.15-0.35 of the difference between the
        two coarse grids, where the square predicts 1/3). A pure-DP step's PLD (two point masses, rounded to the
        grid) follows no such law: its epsilon jumps by up to 1% as the step's epsilon crosses grid points, so a
        ledger with one keeps the finest grid. Only the choice of grid rests on the estimate: every grid's epsilon
        is an upper bound.
        """
        if not math.isfinite(coarse) or any(kind in ("pure", "exponential") for kind, _, _ in self.events):
            return _PLD_DISCRETIZATION
        gap = (self._pld_epsilon(delta, 2.0 * _PLD_COARSE) - coarse) / 3.0  # the coarse grid's distance to the limit
        if gap <= FINE_ENOUGH * coarse / 2.0:
            return _PLD_COARSE
        return max(_PLD_DISCRETIZATION, _PLD_COARSE * math.sqrt(FINE_ENOUGH * coarse / (2.0 * gap)))

    def _gaussian_epsilon(self, delta):
        """Exact epsilon of a ledger of Gaussian steps only.

        Gaussian steps with noise multipliers ``m_i`` compose, adaptively, to exactly one
        Gaussian mechanism with multiplier ``1 / sqrt(sum_i 1 / m_i^2)`` (Dong, Roth & Su,
        "Gaussian differential privacy", JRSS B 2022, Corollary 3.3), whose epsilon at
        ``delta`` is the analytic Gaussian mechanism's (Balle & Wang, ICML 2018, Theorem 8;
        dp-accounting's ``get_epsilon_gaussian``): tight, and free of the PLD's
        discretization.
        """
        from dp_accounting.gaussian_mechanism import get_epsilon_gaussian

        mu2 = sum(count / params["multiplier"] ** 2 for _, count, params in self.events)
        with np.errstate(divide="ignore"):  # its log-space difference of equal terms is -inf, by design
            return float(get_epsilon_gaussian(1.0 / math.sqrt(mu2), delta))

    def _replacement_rdp_epsilon(self, delta):
        """Epsilon of a ledger of ``replacement_gaussian`` events (RDP bound of the method) and Gaussian releases
        (RDP ``alpha / (2 m^2)`` at noise multiplier ``m``, Mironov 2017, Proposition 7), composed in RDP."""
        from dp_accounting.rdp import rdp_privacy_accountant
        from scipy.special import logsumexp
        from scipy.stats import binom

        orders = np.asarray(rdp_privacy_accountant.DEFAULT_RDP_ORDERS, dtype=float)
        total = np.zeros_like(orders)
        for kind, count, p in self.events:
            if kind == "gaussian":
                total += count * orders / (2.0 * p["multiplier"] ** 2)
                continue
            k = np.arange(p["m"] + 1)
            log_pk = binom.logpmf(k, p["m"], 1.0 / p["n"])
            sens2 = (2.0 * k / p["multiplier"]) ** 2
            exponent = (orders[:, None] - 1.0) * orders[:, None] * sens2[None, :] / 2.0
            total += count * logsumexp(exponent + log_pk[None, :], axis=1) / (orders - 1.0)
        return float(rdp_privacy_accountant.compute_epsilon(orders, total, delta)[0])

    def dp_event(self):
        """The ledger as one dp-accounting ``DpEvent`` (for the RDP accountant).

        Laplace and Gaussian steps as themselves; a pure epsilon-DP step as
        ``epsilon^2/2``-zCDP (Bun & Steinke, TCC 2016, Prop. 1.4); an exponential
        mechanism as ``epsilon^2/8``-zCDP (Cesar & Rogers 2021, Lemma 3.2).

        Raises
        ------
        ValueError
            A subsampled step (``poisson_gaussian``, ``replacement_gaussian``): the RDP
            accountant has no replace-one bound for it here.
        """
        from dp_accounting import dp_event

        events = []
        for kind, count, params in self.events:
            if kind == "laplace":
                event = dp_event.LaplaceDpEvent(params["multiplier"])
            elif kind == "gaussian":
                event = dp_event.GaussianDpEvent(params["multiplier"])
            elif kind == "pure":
                event = dp_event.ZCDpEvent(params["epsilon"] ** 2 / 2)
            elif kind == "exponential":
                event = dp_event.ZCDpEvent(params["epsilon"] ** 2 / 8)
            else:
                raise ValueError(f"a {kind} step has no replace-one RDP bound in dp-accounting")
            events.append(dp_event.SelfComposedDpEvent(event, count))
        return dp_event.ComposedDpEvent(events)

    def zcdp(self):
        """``rho`` such that the composed events are ``rho``-zCDP (Bun & Steinke, TCC 2016).

        Gaussian steps with noise multiplier ``m`` are ``1/(2 m^2)``-zCDP (Prop. 1.6);
        Laplace steps, as ``1/m``-DP, and pure epsilon-DP steps are ``epsilon^2/2``-zCDP
        (Prop. 1.4); exponential mechanisms ``epsilon^2/8`` (Cesar & Rogers 2021); zCDP
        adds up under composition (Lemma 1.7).

        Raises
        ------
        ValueError
            A subsampled step, which has no zCDP bound here.
        """
        rho = 0.0
        for kind, count, params in self.events:
            if kind in ("laplace", "gaussian"):
                rho += count / (2.0 * params["multiplier"] ** 2)
            elif kind == "pure":
                rho += count * params["epsilon"] ** 2 / 2.0
            elif kind == "exponential":
                rho += count * params["epsilon"] ** 2 / 8.0
            else:
                raise ValueError(f"a {kind} step has no zCDP bound here")
        return rho

    def _rdp_epsilon(self, delta):
        from dp_accounting.rdp import rdp_privacy_accountant

        acc = rdp_privacy_accountant.RdpAccountant()
        acc.compose(self.dp_event())
        return float(acc.get_epsilon(delta))

    def epsilons(self, delta, coarse=False):
        """Epsilon at ``delta`` from every accountant that supports all the events (computed once per ledger,
        delta and grid in a process: a calibration and the report it plans ask for the same one).

        Gaussian steps only: the exact epsilon (``_gaussian_epsilon``), alone.
        ``coarse``: a PLD grid of 1e-3 (still an upper bound, looser); otherwise the widest grid whose
        epsilon is estimated within 0.05% of the grids' limit (``_fine_grid``: often the coarse one,
        never finer than 2e-5, which ledgers with pure-DP steps keep). The finer PLD is skipped when the
        coarse one is 2% above RDP's epsilon: every value returned is an upper bound, so a skip can only
        make the minimum more conservative.
        """
        key = (tuple((kind, count, tuple(sorted(p.items()))) for kind, count, p in self.events), delta, coarse)
        if key not in _EPSILONS:
            if len(_EPSILONS) > 4096:
                _EPSILONS.clear()
            _EPSILONS[key] = self._epsilons(delta, coarse)
        return dict(_EPSILONS[key])

    def _epsilons(self, delta, coarse):
        kinds = {kind for kind, _, _ in self.events}
        if kinds == {"gaussian"}:
            return {"gaussian": self._gaussian_epsilon(delta)}
        out = self._epsilons_of_grids(delta, coarse, kinds)
        if kinds <= {"laplace", "pure", "exponential"}:  # pure DP: their sum bounds it too, where the grid cannot
            out[BASIC] = sum(count * (1.0 / p["multiplier"] if kind == "laplace" else p["epsilon"])
                             for kind, count, p in self.events)
        return out

    def _epsilons_of_grids(self, delta, coarse, kinds):
        """The PLD's epsilon (coarse, or refined: ``epsilons``) and RDP's where it has the events (of ``kinds``)."""
        if "replacement_gaussian" in kinds:
            if not kinds <= {"replacement_gaussian", "gaussian"}:
                raise ValueError("sampling with replacement composes only with events of its own kind and Gaussian "
                                 "releases")
            return {"rdp": self._replacement_rdp_epsilon(delta)}
        # exp(step loss) overflows in dp-accounting's PLD constructors past ~709; such
        # steps give no useful guarantee anyway, and RDP still bounds them.
        if not coarse:  # the coarse grid's (cached: a calibration has just asked for it), refined where it pays
            out = self.epsilons(delta, coarse=True)
            if out["pld"] <= 1.02 * out.get("rdp", np.inf):
                grid = self._fine_grid(delta, out["pld"])
                out["pld"] = out["pld"] if grid >= _PLD_COARSE else self._pld_epsilon(delta, grid)
            return out
        huge = max(1.0 / p["multiplier"] if "multiplier" in p else p["epsilon"] for _, _, p in self.events) > 500
        out = {"pld": np.inf if huge else self._pld_epsilon(delta, _PLD_COARSE)}
        if "poisson_gaussian" not in kinds:
            out["rdp"] = self._rdp_epsilon(delta)
        return out

    def epsilon(self, delta, coarse=False):
        """Smallest epsilon such that the composed events are (epsilon, delta)-DP."""
        if not self.events:
            self.accountant = None
            return 0.0
        eps = self.epsilons(delta, coarse)
        self.accountant = min(eps, key=eps.get)
        return eps[self.accountant]


@dataclass
class LoggedDraw:
    """One private event of a run as a noise source saw it (``dpsparse.audit.LedgerNoise``).

    Attributes
    ----------
    op : {"release", "select", "select_product", "perturbation"}
    name : str
    family : str
        "gaussian", "laplace" or "gumbel".
    scale : float or ndarray
        The noise scale drawn (one per coordinate or score, or one for all).
    sensitivity : float or ndarray or None
        As declared to the noise source (one per score for a selection).
    norm : str
        Of a release's sensitivity: "l1", "l2" or "linf".
    sampling : tuple or None
        ``NoiseSource.release``'s ``sampling``.
    epsilon, delta : float or None
        A perturbation's declared guarantee (a proof, not a ledger).
    """

    op: str
    name: str
    family: str
    scale: object
    sensitivity: object = None
    norm: str = "l2"
    sampling: tuple | None = None
    epsilon: float | None = None
    delta: float | None = None


def _poisson_gaussian_pld(multiplier, q, grid):
    """dp-accounting's PLD of a Poisson-subsampled Gaussian step under replace-one adjacency (what its
    ``from_gaussian_mechanism(multiplier, sampling_prob=q, neighboring_relation=REPLACE_ONE)`` builds: the
    pessimistic connect-the-dots PMF, Doroshenko et al., "Connect the dots", PoPETs 2022), with the inverse
    privacy loss at the grid's points computed in one array pass instead of one Python call a point.

    The loss, its bounds, CDFs and the PMF are dp-accounting's; only the inverse is ours, the closed form of its
    ``GaussianPrivacyLoss._inverse_privacy_loss_replace`` (``x = sigma^2 (-sign(e) asinh(alpha sinh(|e| / 2)) -
    e / 2)``, ``alpha = exp(1 / (2 sigma^2)) (1 - q) / q``) in the same log-space steps. The calibration of DP-SGD
    builds this PLD 5 times, each on 7,000-15,000 points at 10 us a Python call (0.35 s of a 0.6 s first call).
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld import privacy_loss_mechanism as plm

    loss = plm.GaussianPrivacyLoss(multiplier, sampling_prob=q, adjacency_type=plm.AdjacencyType.REPLACE)
    bounds = loss.connect_dots_bounds()
    lower, upper = math.floor(bounds.epsilon_lower / grid), math.ceil(bounds.epsilon_upper / grid)
    eps = np.arange(lower, upper + 1) * grid
    x = _replace_inverse_loss(eps, multiplier, q)
    deltas = np.clip(loss.mu_upper_cdf(x) - np.exp(eps + loss.mu_lower_log_cdf(x)), 0.0, 1.0)
    return pld.PrivacyLossDistribution(pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(
        grid, lower, upper, deltas))


def _replace_inverse_loss(eps, multiplier, q):
    """The largest ``x`` whose privacy loss is at least ``eps`` (an array), for the Gaussian of std ``multiplier``
    and sensitivity 1 subsampled at rate ``q < 1`` under replacement: dp-accounting's closed form, vectorized."""
    if q == 1.0:
        return -eps * multiplier**2 / 2.0
    log_alpha = 0.5 / multiplier**2 + math.log1p(-q) - math.log(q)
    half = np.abs(eps) / 2.0
    with np.errstate(divide="ignore"):  # at eps = 0 the log of sinh is -inf, and the inverse 0
        log_sinh = log_alpha + half + np.log1p(-np.exp(-2.0 * half)) - math.log(2.0)
    asinh = np.logaddexp(0.5 * np.logaddexp(0.0, 2.0 * log_sinh), log_sinh)
    return multiplier**2 * (-np.sign(eps) * asinh - eps / 2.0)


def _event_of(d):
    """``(kind, params)`` of one logged draw for ``Ledger``: its privacy from the scale drawn and the
    sensitivity declared, never from the mechanism's plan."""
    scale = np.asarray(d.scale, dtype=float)
    sens = np.asarray(d.sensitivity, dtype=float)
    if d.op == "select" and d.family == "laplace":
        # report-noisy-max, scores not monotone: max_j (Delta_j + max_k Delta_k) / b_j (docs/privacy.md, DP-GCD)
        sens = np.broadcast_to(sens, np.broadcast(sens, scale).shape)
        return "pure", {"epsilon": float(np.max((sens + sens.max()) / scale))}
    if d.op in ("select", "select_product") and d.family == "gumbel":
        if scale.ndim and np.ptp(scale) > 0:
            raise ValueError(f"{d.name}: Gumbel-max with unequal scales is not an exponential mechanism")
        return "exponential", {"epsilon": float(2.0 * np.max(sens) / np.max(scale))}
    if d.op != "release":
        raise ValueError(f"{d.name}: no ledger event for a {d.family} {d.op}")
    if d.family == "gaussian" and d.norm in ("l1", "l2"):  # ||.||_2 <= ||.||_1
        return "gaussian", {"multiplier": float(np.min(scale) / float(sens))}
    if d.family == "laplace" and d.norm == "l1":
        return "laplace", {"multiplier": float(np.min(scale) / float(sens))}
    raise ValueError(f"{d.name}: a {d.family} release needs an L{'2' if d.family == 'gaussian' else '1'} "
                     f"sensitivity, declared {d.norm}")


def _grouped(events):
    """A ``Ledger`` with equal events counted once each: ``(kind, params)`` in order of first appearance."""
    counts = {}
    for kind, params in events:
        key = (kind, tuple(sorted(params.items())))
        counts[key] = counts.get(key, 0) + 1
    ledger = Ledger()
    for (kind, params), count in counts.items():
        ledger._add(kind, count, **dict(params))
    return ledger


def log_ledger(log):
    """The ``Ledger`` of a run's logged draws (no sampling, no perturbation): one event per release and selection."""
    return _grouped([_event_of(d) for d in log])


def compose_log(log, delta):
    """Epsilon at ``delta`` of the draws of one run (a list of ``LoggedDraw``), composed by the accountant.

    What each draw costs comes from the scale drawn and the sensitivity declared: a
    Gaussian or Laplace release is the mechanism of noise over sensitivity; a Laplace
    report-noisy-max is ``max_j (Delta_j + max_k Delta_k) / b_j``-DP; a Gumbel one, or a
    product selection, the ``2 Delta / beta``-DP exponential mechanism. Composed
    adaptively by ``Ledger.epsilon`` (PLD and RDP, dp-accounting), except:

    - releases under ``("poisson", q)`` or ``("replacement", n, m)`` sampling: the
      subsampled Gaussian (``Ledger.poisson_gaussian``, ``replacement_gaussian``; the
      contribution of one record is half the replace-one sensitivity);
    - releases under ``("disjoint", q)``: each record is read by at most one of them and
      is used with probability at most ``q``, so they cost one Gaussian mechanism (the
      largest of them) at ``delta / q`` (one-pass SGD, docs/privacy.md);
    - a ``perturbation`` (objective perturbation: a proof for ``(epsilon_1, delta_1)``) with
      Gaussian releases under ``("chain", None)`` at a shift ``r`` from its exact minimizer:
      ``epsilon_1 + 2 epsilon_g`` with ``delta_1 e^{epsilon_g} + delta_g (1 + e^{epsilon_1 +
      epsilon_g}) <= delta`` (docs/mechanisms/perturbation.md), the largest such ``delta_g``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A draw with no ledger event (e.g. a Laplace release on an L2 sensitivity), or a mix
        of sampling kinds this function cannot compose.
    """
    if not log:
        return 0.0
    kinds = {None if d.sampling is None else d.sampling[0] for d in log if d.op != "perturbation"}
    proofs = [d for d in log if d.op == "perturbation"]
    if proofs or "chain" in kinds:
        return _chain_epsilon(proofs, [d for d in log if d.op != "perturbation"], kinds, delta)
    if kinds == {"disjoint"}:
        q = max(d.sampling[1] for d in log)
        worst = min(log, key=lambda d: _event_of(d)[1]["multiplier"])
        return log_ledger([worst]).epsilon(delta / q)
    if kinds - {None} <= {"poisson", "replacement"} and len(kinds - {None}) == 1:  # after unsampled releases
        ledger = Ledger()
        for d in log:
            contribution = float(d.sensitivity) / 2.0
            if d.sampling is None:
                kind, params = _event_of(d)
                ledger._add(kind, 1, **params)
            elif d.sampling[0] == "poisson":
                ledger.poisson_gaussian(d.sampling[1], float(np.min(d.scale)), contribution)
            else:
                ledger.replacement_gaussian(d.sampling[1], d.sampling[2], float(np.min(d.scale)), contribution)
        return _grouped([(k, p) for k, _, p in ledger.events]).epsilon(delta)
    if kinds != {None}:
        raise ValueError(f"cannot compose releases under sampling {sorted(map(str, kinds))} together")
    return log_ledger(log).epsilon(delta)


def _chain_epsilon(proofs, releases, kinds, delta):
    if len(proofs) != 1 or kinds != {"chain"}:
        raise ValueError("a perturbation composes with chained Gaussian releases only, one proof per run")
    eps_1, delta_1 = proofs[0].epsilon, proofs[0].delta
    gaussian = log_ledger(releases)

    def slack(delta_g):
        eps_g = gaussian.epsilon(delta_g)
        return eps_g, (delta - delta_1 * math.exp(eps_g)) / (1.0 + math.exp(eps_1 + eps_g))

    delta_g = delta / (1.0 + math.exp(eps_1))
    for _ in range(100):  # decreasing to the largest feasible delta_g
        eps_g, nxt = slack(delta_g)
        if nxt <= 0:
            break
        if nxt >= delta_g:  # delta_1 e^{eps_g} + delta_g (1 + e^{eps_1 + eps_g}) <= delta
            return eps_1 + 2.0 * eps_g
        delta_g = nxt if nxt < delta_g * (1 - 1e-9) else nxt * (1 - 1e-6)
    return math.inf


def _loss_span(kind, params):
    """About how far one step's privacy loss reaches, for its PLD's grid: ``1 / m`` for a Laplace step of noise
    multiplier ``m`` (its loss lies in ``[-1/m, 1/m]``), ``epsilon`` for a pure-DP step, and ``1 / m + 1 / (2 m^2)``
    for a Gaussian step, subsampled or not: its loss at ``y`` is ``(2 y - 1) / (2 m^2)``, and the PLD covers both
    neighbours' draws, whose means lie ``1 / m`` standard deviations apart. With ``1 / m`` alone a step of
    multiplier 0.0026 (epsilon 1000) spanned 10^6 grid points: 40 s to build, 40 s to compose."""
    if "multiplier" not in params:
        return params["epsilon"]
    m = params["multiplier"]
    return 1.0 / m if kind == "laplace" else 1.0 / m + 0.5 / m**2


def epsilon_of_zcdp(rho, delta):
    """``rho + 2 sqrt(rho log(1/delta))``: a ``rho``-zCDP mechanism is (this, delta)-DP (Bun &
    Steinke, "Concentrated differential privacy: simplifications, extensions, and lower bounds", TCC 2016,
    Prop. 1.3)."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_epsilon(rho, delta):
    """Epsilon at ``delta`` of a ``rho``-zCDP mechanism: the smaller of dp-accounting's RDP conversion (tighter where
    its orders reach the best one) and ``epsilon_of_zcdp`` (both upper bounds). For a small ``rho`` the best order
    lies past dp-accounting's largest, and its epsilon levels off (0.0116 at delta 2.5e-9 for any rho below 1e-6),
    where ``epsilon_of_zcdp`` keeps falling: without it, a fit at epsilon 0.01 got a zCDP budget of 6e-18."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    acc = rdp_privacy_accountant.RdpAccountant()
    acc.compose(dp_event.ZCDpEvent(float(rho)))
    return min(float(acc.get_epsilon(delta)), epsilon_of_zcdp(rho, delta))


def largest_zcdp(epsilon_of_rho, epsilon, rtol=1e-4):
    """Largest ``rho`` (to ``rtol``) with ``epsilon_of_rho(rho) <= epsilon`` (increasing in ``rho``):
    bisection on ``1 / rho``, public inputs only."""
    @functools.lru_cache(None)
    def eps_of_scale(s):
        return epsilon_of_rho(1.0 / s)

    lo, hi = _bisect(eps_of_scale, epsilon, *_bracket(eps_of_scale, epsilon, 1.0 / epsilon**2, 2.0), rtol)
    return 1.0 / hi


@functools.lru_cache(maxsize=256)
def zcdp_budget(epsilon, delta, rtol=1e-4):
    """Largest ``rho`` such that ``rho``-zCDP is (epsilon, delta)-DP by ``zcdp_epsilon`` (a function of public
    numbers only, cached: repeated fits and audits ask for the same budget)."""
    return largest_zcdp(lambda rho: zcdp_epsilon(rho, delta), epsilon, rtol)


def _bisect(epsilon_of_scale, target, lo, hi, rtol, enough=0.0):
    """Shrink ``[lo, hi]`` (``eps(lo) > target >= eps(hi)``) until ``hi / lo <= 1 + rtol``, or until ``eps(hi)`` is
    within ``enough`` (a share of the target) below the target: less noise would buy less than that of it.

    Each round guesses the root by inverse interpolation through the (up to three) evaluated scales
    closest to the target in (log scale, log epsilon) coordinates (an accountant's epsilon is smooth
    and close to a power of the noise scale there); near the end it evaluates the two points
    ``rtol / 3`` either side of the guess, which close the bracket when they straddle the target. A
    guess outside the bracket (or an epsilon of 0) falls back to the geometric midpoint, as plain
    bisection. The result is the same kind of bracket as bisection's: only the number of evaluations
    (each a PLD composition, the cost of calibrating) changes.
    """
    seen = {lo: epsilon_of_scale(lo), hi: epsilon_of_scale(hi)}  # every later guess is a new scale
    def done():
        return hi / lo <= 1.0 + rtol or (enough > 0 and seen[hi] >= (1.0 - enough) * target)

    while not done():
        for s in _guesses(seen, target * (1.0 - enough / 2.0), lo, hi, rtol):  # aimed inside [1 - enough, 1]
            seen[s] = epsilon_of_scale(s)
            if seen[s] <= target:
                hi = min(hi, s)
            else:
                lo = max(lo, s)
            if done():
                break
    return lo, hi


def _guesses(seen, target, lo, hi, rtol):
    """The next scales to evaluate: the root of the inverse interpolation through the two or three evaluated scales
    closest to the target (two points around it once it is close), or the midpoint."""
    usable = [s for s, e in seen.items() if e > 0 and math.isfinite(e)]
    closest = sorted(usable, key=lambda s: abs(math.log(seen[s] / target)))[:3]
    if len(closest) >= 2 and len({seen[s] for s in closest}) == len(closest):
        s1 = closest[0]
        # log scale as the polynomial in log epsilon through the closest points (Lagrange), at the target
        x = [math.log(seen[s] / target) for s in closest]
        log_guess = sum(math.log(s) * math.prod(-x[j] / (x[i] - x[j]) for j in range(len(x)) if j != i)
                        for i, s in enumerate(closest))
        guess = math.exp(log_guess) if abs(log_guess) < 700 else math.inf
        if lo < guess < hi:
            if abs(math.log(guess / s1)) > 3.0 * rtol and hi / lo > (1.0 + rtol) ** 4:
                return [guess]
            return [g for g in (guess / (1.0 + rtol / 3.0), guess * (1.0 + rtol / 3.0)) if lo < g < hi] or [guess]
    return [math.sqrt(lo * hi)]


def _bracket(epsilon_of_scale, target, scale, factor):
    """``(lo, hi)`` around ``scale`` with ``eps(lo) > target >= eps(hi)``, widening by ``_step`` (at most
    ``factor``)."""
    lo = hi = float(scale)
    while (e := _growing(epsilon_of_scale, hi, target)) > target:
        lo, hi = hi, hi * _step(e / target, factor)
    if lo == hi:
        while (e := epsilon_of_scale(lo)) <= target and lo > 1e-300:
            hi, lo = lo, lo / _step(target / e if e > 0 else math.inf, factor)
    return lo, hi


_NO_SCALE = 1e100
"""A noise scale (a multiplier, a normalized scale, ``1 / rho``) past any that meets a target: ``_bracket`` gives up
beyond it."""


def _growing(epsilon_of_scale, scale, target):
    """``epsilon_of_scale(scale)`` as ``_bracket`` widens the scale; a ValueError where no scale meets the target:
    epsilon still above it at a scale past ``_NO_SCALE`` (or dp-accounting overflowing there), as when releases whose
    noise does not scale (made before the steps) spend the target on their own."""
    try:
        e = epsilon_of_scale(scale)
    except OverflowError:
        if scale < _NO_SCALE:
            raise
        e = math.inf
    if e > target and scale > _NO_SCALE:
        raise ValueError(f"no noise scale meets the privacy target {target:.4g}: the releases still spend more at "
                         f"scale {scale:.3g}, so those whose noise is fixed (made before the steps) already spend it")
    return e


def _step(ratio, factor):
    """How far ``_bracket`` moves the scale when its epsilon is ``ratio`` times (or ``1 / ratio`` of) the target:
    an accountant's epsilon falls about as ``1 / scale``, so the ratio and 2% more (one step to the other side,
    usually close to it), between 2% and ``factor``."""
    return min(factor, max(1.02, 1.02 * ratio))


def calibrate(make_ledger, epsilon, delta, scale0, rtol=1e-4, rho=None):
    """Smallest noise scale ``s`` whose ledger ``make_ledger(s)`` is (epsilon, delta)-DP,
    or ``rho``-zCDP when ``rho`` is given.

    The accounted epsilon must decrease in ``s``. The search (``_bisect``) runs on the coarse
    PLD grid (an upper bound, looser than the fine one), to the smallest scale it certifies
    within a factor ``1 + rtol``, or to a scale whose epsilon is within ``CLOSE_ENOUGH`` (0.02%)
    below the target (each evaluation is a PLD composition: stopping there saves the last ones); one
    evaluation on the fine grid (``Ledger.epsilon``: the widest grid estimated within 0.05% of the
    grids' limit, often the coarse one itself) then certifies
    it. When the fine grid's epsilon there is above the target, or more than ``FINE_ENOUGH``
    (0.1%) of it below (the grids' roundings add up over many composed steps: 1% of epsilon for
    200 Laplace steps), a second search runs on the fine grid. The returned scale always meets
    the target on the fine grid, within 0.1% of epsilon of it or within ``1 + rtol`` of the
    smallest scale that does (ledgers of Gaussian steps have an exact epsilon and no grid).

    Parameters
    ----------
    make_ledger : callable float -> Ledger
    epsilon : float
        Target.
    delta : float
    scale0 : float > 0
        A starting guess (e.g. the source paper's scale).
    rho : float > 0 or None
        A zCDP target instead of (epsilon, delta) (``Ledger.zcdp``): how the private
        hyperparameter search (``dpsparse.tuning``) gives every candidate the same cost.
    """
    if rho is not None:
        @functools.lru_cache(None)
        def zcdp(s):
            return make_ledger(s).zcdp()

        return _bisect(zcdp, rho, *_bracket(zcdp, rho, scale0, 2.0), rtol)[1]

    @functools.lru_cache(None)
    def coarse(s):
        return make_ledger(s).epsilon(delta, coarse=True)

    @functools.lru_cache(None)
    def fine(s):
        return make_ledger(s).epsilon(delta)

    hi = _bisect(coarse, epsilon, *_bracket(coarse, epsilon, scale0, 2.0), rtol, CLOSE_ENOUGH)[1]
    if (1.0 - FINE_ENOUGH) * epsilon <= fine(hi) <= epsilon:
        return hi
    return _bisect(fine, epsilon, *_bracket(fine, epsilon, hi, 1.02), rtol, CLOSE_ENOUGH)[1]


def _fixed_or_small(value):
    """Four decimals, or three significant digits below 1e-3 (where four decimals read 0.0000)."""
    return f"{value:.4f}" if value >= 1e-3 or value == 0 else f"{value:.3g}"


BASIC = "basic composition of pure DP (Dwork & Roth 2014, Theorem 3.16)"
"""The accountant name of a ledger of pure-DP steps whose epsilons' sum is below what the grids give (a step's epsilon
below the PLD's grid: an epsilon of 1e-5 rounds up to 3.9e-5)."""

FINE_ENOUGH = 1e-3
"""``calibrate`` keeps the coarse grid's scale when the fine grid gives it an epsilon within this share below the
target (less noise would buy less than 0.1% of epsilon); otherwise it searches on the fine grid."""
CLOSE_ENOUGH = 2e-4
"""``calibrate``'s searches stop at a scale whose epsilon is within this share below the target."""


class BudgetExceededError(ValueError):
    """A fit would exceed the total budget of a ``PrivacyBudget``."""


_BUDGETS = weakref.WeakValueDictionary()  # this process's budgets, by id: what unpickling finds again


class PrivacyBudget:
    """A total (epsilon, delta) shared by several fits on the same data.

    Each fit asks for its (epsilon, delta) before it touches the data; a request that
    would take the spent total past the budget is refused. Fits compose by basic
    composition (the epsilons add up and so do the deltas; Dwork & Roth 2014, Thm 3.16),
    which holds whatever the mechanisms are.

    A budget is shared, never copied: ``copy.copy``, ``copy.deepcopy`` and therefore
    ``sklearn.base.clone`` return the budget itself, and unpickling in the process that
    pickled it finds the same object, so ``cross_val_score``, ``cross_validate`` and
    ``GridSearchCV`` charge every fit to it (and are refused past it); charging is
    thread-safe. Unpickled in another process (scikit-learn's ``n_jobs > 1`` with
    processes), it is a detached copy that refuses to be charged, since charging it would
    not charge the original: run those tools with ``n_jobs=1`` or joblib's threading
    back-end.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)

    Raises
    ------
    ValueError
        Invalid budget.
    """

    def __init__(self, epsilon, delta):
        check_privacy_params(epsilon, delta)
        self.epsilon, self.delta = float(epsilon), float(delta)
        self.spent = []
        self._id, self._detached, self._lock = uuid.uuid4().hex, False, threading.Lock()
        _BUDGETS[self._id] = self

    def __repr__(self):
        eps_left, delta_left = self.remaining
        if self._detached:
            return (f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:.3g}; {len(self.spent)} charge(s); a "
                    "detached copy: it refuses new charges)")
        return (f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:.3g}; {len(self.spent)} charge(s), "
                f"epsilon {eps_left:g} and delta {delta_left:.3g} left)")

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return _shared_budget, (self._id, self.epsilon, self.delta, list(self.spent))

    @property
    def remaining(self):
        """``(epsilon, delta)`` still available."""
        return (self.epsilon - sum(e for e, _, _ in self.spent), self.delta - sum(d for _, d, _ in self.spent))

    def spend(self, epsilon, delta, label="fit"):
        """Charge a fit's (epsilon, delta).

        Raises
        ------
        BudgetExceededError
            If the fit does not fit in what remains, or the budget is a copy unpickled in
            another process; nothing is charged then.
        """
        check_privacy_params(epsilon, delta, smallest=0.0)
        if self._detached:
            raise BudgetExceededError(
                f"{label}: this PrivacyBudget is a copy unpickled in another process (a saved estimator loaded "
                "again, or n_jobs > 1 with processes), where charging it would not charge the original: refit in the "
                "process that holds the budget (or give the loaded estimator a new budget with set_params(budget=...)),"
                " or use n_jobs=1 or joblib's threading back-end")
        with self._lock:
            eps_left, delta_left = self.remaining
            over = [name for name, asked, left in (("epsilon", epsilon, eps_left), ("delta", delta, delta_left))
                    if asked > left * (1 + 1e-12)]
            if over:
                hint = (" (each fit's delta defaults to 1/n^2: give the fits a smaller delta= to share the budget's "
                        "delta among more of them)" if "delta" in over else "")
                raise BudgetExceededError(
                    f"{label} asks for (epsilon={epsilon:g}, delta={delta:.3g}) but the budget has "
                    f"(epsilon={eps_left:g}, delta={delta_left:.3g}) left of ({self.epsilon:g}, {self.delta:.3g}): "
                    f"{' and '.join(over)} exceeded{hint}"
                )
            self.spent.append((float(epsilon), float(delta), label))


def check_budget(budget):
    """``budget`` if it is a ``PrivacyBudget`` or None; a ValueError naming the parameter otherwise."""
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise ValueError(f"budget must be a PrivacyBudget or None, got {type(budget).__name__}")
    return budget


def charge(budget, epsilon, delta, label):
    """Charge (epsilon, delta) to ``budget`` (nothing when it is None); ``BudgetExceededError`` past it."""
    if check_budget(budget) is not None:
        budget.spend(epsilon, delta, label=label)


def _shared_budget(budget_id, epsilon, delta, spent):
    """Unpickling: the budget itself in the process that made it, else a detached copy that refuses charges."""
    found = _BUDGETS.get(budget_id)
    if found is not None:
        return found
    copy = PrivacyBudget(epsilon, delta)
    copy.spent, copy._detached = list(spent), True
    return copy


SEEDED_NOTE = ("the noise came from a fixed seed (random_state, --seed): anyone who knows or guesses the seed "
               "regenerates the noise and subtracts it, so no privacy guarantee holds; for experiments only, never "
               "for a model you release")
"""The report's warning on seeded noise."""


DATA_BOUNDS = "bounds were computed from the private data: no privacy guarantee"
"""The report's warning on bounds read off the data (``Bounds.public`` false)."""


@dataclass
class PrivacyReport:
    """What a private fit guarantees and how: printable (``str``) and as JSON (``to_json``).

    Attributes
    ----------
    mechanism, calibration : str
        The registry name of the mechanism and its calibration.
    method : str
        The mechanism in words, with its source.
    epsilon, delta : float
        The target budget.
    accountant_epsilon : float
        Epsilon at ``delta`` of the noise actually drawn, by the accountant named in
        ``accountant`` (``pld`` or ``rdp``, dp-accounting).
    neighbouring : str
        The neighbouring relation of the guarantee.
    iterations : int
    noise : dict
        Noise scales and per-step quantities, with their source.
    bounds_source : str
    bounds_public : bool
    classes_public : bool
        False when the label set was read from the private data (``classes="from-data"``): it sets the number
        of fits, their share of the budget and the shape of the model, so no guarantee holds.
    clipped : dict
        Counts of clipped feature values, labels and rows: counted on the private data without
        noise, for the data holder only: an attribute, not a dataclass field, so neither ``str``, ``repr``,
        ``to_dict`` (the released forms) nor ``dataclasses.asdict`` shows them, and a pickled or copied report (a
        pickled or deep-copied estimator) leaves them behind (``dataclasses.replace`` keeps them: a report made
        from this one, in this process).
    noise_source : str
    noise_seeded : bool
        True when the noise came from a fixed seed (``random_state``, ``--seed``): anyone who knows or guesses the
        seed regenerates the noise and subtracts it, so no guarantee holds (for experiments only).
    chosen_without_noise : bool
        True when the fit ran inside a scikit-learn search (``GridSearchCV`` and its kind), which chooses its
        settings by held-out scores computed without noise on the same records: the model it picks and refits
        depends on the data beyond this fit's budget, so no guarantee holds (``DPSearchCV`` chooses privately); also
        inside a tool that learns without noise from this fit's predictions (``CalibratedClassifierCV``, stacking).
    inputs_private : bool
        False when a step before this fit in a scikit-learn pipeline learned from the same records without noise
        (``StandardScaler`` and its kind): every record's features then depend on the others, beyond the
        sensitivity this fit assumes, and the pipeline carries those statistics, so no guarantee holds.
    warnings : list of str
    support_size : int or None
        Nonzero coefficients of the released model (the intercept excluded), set by the
        estimators.
    """

    mechanism: str
    calibration: str
    epsilon: float
    delta: float
    accountant_epsilon: float
    iterations: int
    noise: dict
    method: str = ""
    neighbouring: str = REPLACE_ONE
    accountant: str = "pld"
    bounds_source: str = "declared by the user"
    bounds_public: bool = True
    classes_public: bool = True
    clipped: InitVar[dict | None] = None  # an attribute, not a field: dataclasses.asdict leaves it out too
    noise_source: str = ""
    noise_seeded: bool = False
    chosen_without_noise: bool = False
    inputs_private: bool = True
    warnings: list = field(default_factory=list)
    support_size: int | None = None

    def __post_init__(self, clipped):
        self.clipped = dict(clipped or {})

    def __getstate__(self):
        """The state of a pickle or a copy: every field but ``clipped`` (for the data holder, in this process)."""
        return {**self.__dict__, "clipped": {}}

    @property
    def accounting_holds(self):
        """True when the bounds and the label set are public and the accounted epsilon meets the target: the
        guarantee of the mechanism run with secret noise (what a seeded experiment measures)."""
        return self.bounds_public and self.classes_public and self.accountant_epsilon <= self.epsilon * (1 + 1e-9)

    @property
    def guarantee_holds(self):
        """True when ``accounting_holds``, the noise is not from a fixed seed (``noise_seeded``), no search chose
        the fit's settings by scores without noise (``chosen_without_noise``) and no pipeline step before it learned
        from the records without noise (``inputs_private``)."""
        return (self.accounting_holds and not self.noise_seeded and not self.chosen_without_noise
                and self.inputs_private)

    @classmethod
    def from_dict(cls, d):
        """The report of a released dict (a model file's ``privacy_report``). A file written before
        ``noise_seeded`` existed says a fixed seed in its ``noise_source`` only: it is read from there, so such a
        model has no guarantee either."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw.setdefault("noise_seeded", "fixed seed" in str(d.get("noise_source", "")))
        return cls(**kw)

    def to_dict(self):
        """The released form: every field but ``clipped`` (counted on the private data, for the data holder)."""
        d = asdict(self)
        d["guarantee_holds"], d["accounting_holds"] = self.guarantee_holds, self.accounting_holds
        d["warnings"] = self._all_warnings()
        return d

    def _all_warnings(self):
        """The warnings, the fixed seed's among them when the noise came from one (as the text report lists them)."""
        return self.warnings + ([SEEDED_NOTE] if self.noise_seeded and SEEDED_NOTE not in self.warnings else [])

    def to_json(self, **kw):
        return json.dumps(self.to_dict(), default=jsonable, **kw)

    def __str__(self):
        if self.guarantee_holds:
            verdict = f"({self.epsilon:g}, {self.delta:.3g})-differentially private"
        else:
            verdict = "NO differential-privacy guarantee (see warnings)"
        lines = [
            "Privacy report",
            f"  guarantee          {verdict}",
            f"  meaning            {meaning(self.epsilon, self.delta, self.guarantee_holds)}",
            f"  mechanism          {self.mechanism}: {self.method}" if self.method else
            f"  mechanism          {self.mechanism}",
            f"  calibration        {self.calibration}",
            f"  target             epsilon={self.epsilon:g}, delta={self.delta:.3g}",
            f"  accountant         epsilon={_fixed_or_small(self.accountant_epsilon)} at delta={self.delta:.3g} "
            f"({self.accountant}{'' if self.accountant == BASIC else ', dp-accounting'})",
            f"  neighbouring       {self.neighbouring}",
        ]
        if self.iterations is not None:
            lines.append(f"  iterations         {self.iterations}")
        if self.support_size is not None:
            lines.append(f"  support size       {self.support_size} nonzero coefficients (intercept excluded)")
        lines += [f"  {k:<18} {_fmt(v)}" for k, v in self.noise.items()]
        lines += [
            f"  bounds             {self.bounds_source}",
            f"  noise source       {self.noise_source}",
        ]
        lines += [f"  terms              {words}" for term, words in TERMS.items()
                  if any(term in k for k in self.noise)]
        lines += [f"  WARNING            {w}" for w in self._all_warnings()]
        return "\n".join(lines)


MULTIPLIER_WORDS = ("noise multiplier: the Gaussian noise's standard deviation in units of the sensitivity it is "
                    "calibrated to (the most one record can move the noised value); the guarantee follows from it, "
                    "and larger means more noise")
SHARE_WORDS = ("share of the budget: of the zCDP budget rho where the fit is calibrated in zCDP (a 'budget' line "
               "then gives rho; shares of rho add up, and a share of rho costs less than that share of epsilon), "
               "of epsilon otherwise")
TERMS = {"noise multiplier": MULTIPLIER_WORDS, "share of the budget": SHARE_WORDS}
"""The report's gloss of each term its lines use without saying what it is, given where a line uses it."""


def _fmt(v):
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def jsonable(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
