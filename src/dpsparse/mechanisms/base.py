"""The mechanism contract: one declaration per private algorithm, one function that runs any of them.

A mechanism is a ``Mechanism``: its name, its options (``Option``: typed, with a public
default, an allowed range and help text), its calibrations, what it needs of the loss
and the penalty (capabilities, ``loss_capabilities`` / ``penalty_capabilities``), and two
functions:

- ``plan(info)`` sees only ``PublicInfo`` (n, p, the public bounds, the loss and penalty
  constants, epsilon, delta, the calibration and the options) and returns a ``Plan``:
  the noise scales, the ledger of private events and the accountant's epsilon;
- ``run(design, plan, noise, callback)`` trains on the bounded design with the noise
  source and returns the released model.

``fit_mechanism`` is the only place that validates, checks compatibility, plans, charges
a budget, runs and builds the privacy report; the estimators, the CLI and the audit all
go through it. Every noisy release of a run passes through the noise source
(``NoiseSource.release``, ``select``, ``check``) together with its declared sensitivity,
which is what ``dpsparse.audit`` replays on neighbouring datasets.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..accounting import (
    DATA_BOUNDS,
    ZCDP_PAPER,
    Ledger,
    PrivacyReport,
    charge,
    check_privacy_params,
    epsilon_of_zcdp,
    zcdp_budget,
    zcdp_epsilon,
)
from ..distributed import is_dask
from ..exceptions import PrivacyCalibrationWarning

__all__ = [
    "MAX_ITERATIONS",
    "Mechanism",
    "Option",
    "Plan",
    "PublicInfo",
    "fit_mechanism",
    "fit_one_vs_rest",
    "loss_capabilities",
    "make_plan",
    "penalty_capabilities",
    "public_info",
]

# Cap on iteration counts: keeps a typo (1e9) from hanging a fit; ample for every mechanism.
MAX_ITERATIONS = 1_000_000


@dataclass(frozen=True)
class Option:
    """One option of a mechanism.

    Parameters
    ----------
    name : str
        Keyword (``mechanism_options`` key; CLI flag ``--name-with-dashes``).
    kind : {"int", "float", "floats", "choice", "bool"}
        "floats": a number or a 1-d array of numbers, each in the range.
    default : object
        A public, data-independent default; ``None`` means "computed from public
        quantities" and ``default_help`` says how.
    help : str
    choices : tuple
        Allowed values of a "choice" option.
    low, high : float or None
        Allowed range of a number; ``low_open`` / ``high_open`` make the ends exclusive.
    default_help : str
        Shown for a ``None`` default.
    auto : bool
        The string "auto" is allowed too: the mechanism sets the value privately at run time.
    """

    name: str
    kind: str
    default: Any = None
    help: str = ""
    choices: tuple = ()
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    default_help: str = ""
    auto: bool = False

    def allowed(self):
        """The allowed values, in words."""
        if self.auto:
            return "'auto' or " + replace(self, auto=False).allowed()
        if self.kind == "choice":
            return f"one of {list(self.choices)}"
        if self.kind == "bool":
            return "true or false"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        left = "(" if self.low is None or self.low_open else "["
        right = ")" if self.high is None or self.high_open else "]"
        what = {"int": "an integer", "float": "a finite number"}.get(self.kind, "a finite number or an array of them")
        return f"{what} in {left}{lo}, {hi}{right}"

    def check(self, value, owner):
        """``value`` converted and checked; ValueError naming the option and its allowed values."""
        if value is None:
            return None
        if self.auto and isinstance(value, str) and value == "auto":
            return value
        what = owner if owner.startswith("--") else f"{owner}: option {self.name}"  # a CLI flag names itself
        bad = ValueError(f"{what} must be {self.allowed()}, got {value!r}")
        if self.kind == "choice" and value not in self.choices:
            raise ValueError(f"unknown {self.name} {value!r} for {owner}; allowed: {list(self.choices)}")
        if self.kind == "choice":
            return value
        if self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise bad
            return bool(value)
        if self.kind == "floats" and np.ndim(value) == 1:
            try:
                arr = np.asarray(value, dtype=float)
            except (TypeError, ValueError):
                raise bad from None
            for v in arr:
                Option(self.name, "float", low=self.low, high=self.high, low_open=self.low_open,
                       high_open=self.high_open).check(float(v), owner)
            return arr
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            raise bad
        if self.kind == "int":
            if float(value) != int(value):
                raise bad
            value = int(value)
        else:
            value = float(value)
        if not math.isfinite(value):
            raise bad
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            raise bad
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            raise bad
        return value


def n_iter_option(default, help_text="number of iterations T (the budget is split over them)"):
    """The iteration-count option shared by the iterative mechanisms (capped by ``MAX_ITERATIONS``)."""
    return Option("n_iter", "int", default, help_text, low=1, high=MAX_ITERATIONS)


@dataclass(frozen=True)
class PublicInfo:
    """What a plan may see: public quantities only.

    Attributes
    ----------
    n, p : int
        Number of records and of columns of the bounded design (intercept included).
    feature_bounds : ndarray of shape (p,)
        Public bounds ``b_j`` on ``|x_ij|``.
    row_norm : float
        Public bound on ``||x_i||_2`` over all ``p`` columns (intercept included).
    loss : Datafit
    penalty : Penalty
    epsilon, delta : float
    calibration : str
    options : dict
        Every declared option, defaults filled in.
    zcdp : float or None
        A zCDP target ``rho`` that replaces (epsilon, delta) in the calibration
        (``accounting.calibrate``); set by the private hyperparameter search only, for
        mechanisms with ``zcdp_calibration``. epsilon then describes ``rho`` at delta.
    """

    n: int
    p: int
    feature_bounds: np.ndarray
    row_norm: float
    loss: Any
    penalty: Any
    epsilon: float
    delta: float
    calibration: str
    options: dict
    zcdp: float | None = None


@dataclass
class Plan:
    """The public plan of a fit: noise scales, ledger, and what the report says of them.

    Attributes
    ----------
    ledger : Ledger
        The private events, composed by dp-accounting.
    accountant_epsilon : float
        Epsilon of the ledger at ``delta`` (or of the mechanism's own proof).
    accountant : str
    iterations : int or None
        Planned iterations (None: random, e.g. the one-pass SGD).
    details : dict
        Noise scales and per-step quantities, in words, for the report.
    params : dict
        What ``run`` needs (scales, step sizes, ...): public numbers only.
    warnings : list of str
    miss_reason : str
        Why a source's calibration may miss its target (for the warning).
    released : dict
        Values a run releases with noise before its steps (an automatic clipping norm), by name, one per run
        (``record``): noisy releases, so public, and shown in the report beside the plan's details.
    """

    ledger: Ledger | None
    accountant_epsilon: float
    accountant: str
    iterations: int | None
    details: dict
    params: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    info: PublicInfo | None = None
    miss_reason: str = ""
    released: dict = field(default_factory=dict)

    def record(self, name, value):
        """Keep ``value``, released with noise by a run (or post-processed from such a release), for the report."""
        self.released.setdefault(name, []).append(float(value))
        return value

    def released_details(self):
        """The report's lines of ``released``: one value, or one per run (one-vs-rest: per class)."""
        return {f"{name} (released)": values[0] if len(values) == 1 else ", ".join(f"{v:.4g}" for v in values)
                for name, values in self.released.items()}


@dataclass(frozen=True)
class Mechanism:
    """A private algorithm declared once (see the module docstring).

    Attributes
    ----------
    name : str
        Registry key (``mechanism=`` of the estimators, ``--mechanism`` of the CLI).
    title : str
        What the report calls it, with its source.
    citation : str
        Full citation of the privacy analysis.
    options : tuple of Option
    calibrations : tuple of str
        The first is the default.
    loss_needs, penalty_needs : tuple of str
        Capabilities (``loss_capabilities``, ``penalty_capabilities``) it needs.
    plan : callable PublicInfo -> Plan
    run : callable (design, plan, noise, callback) -> ndarray
    summary : str
        One line for help texts.
    zcdp_calibration : bool
        Whether its tight calibration can meet a zCDP target (``PublicInfo.zcdp``): every
        event of its ledger has a zCDP bound (no subsampling) and the ledger is its whole
        privacy analysis.
    dask : bool or callable options -> bool
        Whether it runs on a dask array chunk by chunk (``dpsparse.distributed``): it reads
        the data only through sums over rows (one pass each) or rows gathered a batch at a
        time; a callable when it depends on the options (two-stage: on its second mechanism).
    one_hot : bool
        Whether it keeps the zeros of declared one-hot groups (``data.Bounds.one_hot``) and adds noise for their
        lower bound on the records' norms: a mechanism whose noise follows that bound (DP-GD, DP-SGD). The others
        map the indicators onto [-1, 1] as any feature (DP-GCD's per-coordinate steps take the declared range as
        the curvature, which centred indicators meet).
    """

    name: str
    title: str
    citation: str
    options: tuple
    calibrations: tuple
    loss_needs: tuple
    penalty_needs: tuple
    plan: Callable
    run: Callable
    summary: str = ""
    check: Callable | None = None
    zcdp_calibration: bool = False
    dask: bool | Callable = False
    one_hot: bool = False

    def runs_on_dask(self, options):
        """Whether it runs on a dask array with these (resolved) options."""
        return bool(self.dask(options) if callable(self.dask) else self.dask)

    @property
    def option_names(self):
        return [o.name for o in self.options]

    def option(self, name):
        return next(o for o in self.options if o.name == name)

    def resolve_options(self, options):
        """Declared options with defaults filled in; ValueError for an unknown key or a bad value."""
        options = dict(options or {})
        unknown = sorted(set(options) - set(self.option_names))
        if unknown:
            raise ValueError(f"unknown mechanism_options {unknown} for {self.name}; allowed: {self.option_names}")
        return {o.name: o.check(options.get(o.name, o.default), f"mechanism {self.name}") for o in self.options}

    def resolve_calibration(self, calibration):
        if calibration is None:
            return self.calibrations[0]
        if calibration not in self.calibrations:
            raise ValueError(f"unknown calibration {calibration!r} for mechanism {self.name}; allowed: "
                             f"{list(self.calibrations)}")
        return calibration

    def check_compatible(self, loss, penalty, options=None):
        """ValueError naming what the loss or the penalty lacks, or, for a mechanism with a ``second`` stage named in
        ``options`` (two-stage), what that stage needs of the loss: refused before the fit charges anything."""
        second = (options or {}).get("second") if "second" in self.option_names else None
        if second is not None:
            from . import REGISTRY  # the registry imports this module

            try:
                REGISTRY[second].check_compatible(loss, None)
            except ValueError as exc:
                raise ValueError(f"mechanism {self.name} with second={second!r}: {exc}") from None
        missing = [c for c in self.loss_needs if c not in loss_capabilities(loss)]
        if missing:
            name = getattr(loss, "description", getattr(loss, "name", type(loss).__name__))
            raise ValueError(f"mechanism {self.name} needs a {' and '.join(missing)} loss: the {name} loss is not "
                             f"{missing[0]} ({_LOSS_CAPABILITIES[missing[0]]})")
        missing = [c for c in self.penalty_needs if c not in penalty_capabilities(penalty)]
        if missing and penalty is not None:
            from . import REGISTRY  # the registry imports this module

            others = [m.name for m in REGISTRY.values()
                      if m.penalty_needs and set(m.penalty_needs) <= penalty_capabilities(penalty)]
            what = ("a penalty separable by coordinates (l1, l2, elasticnet)" if "separable" in missing else
                    "a norm ball to optimise over (l1, linf, the group norms, a submodular norm; not L2 or "
                    "elastic net)" if missing == ["ball"] else f"a penalty with the operations {', '.join(missing)}")
            raise ValueError(f"mechanism {self.name} needs {what}; the {getattr(penalty, 'name', 'given')} penalty "
                             f"is not one" + (f": mechanisms that take it: {', '.join(others)}" if others else "")
                             + " (docs/norms.md)")


_LOSS_CAPABILITIES = {
    "smooth": "no finite bound on f''; use dp-sgd, one-pass-sgd or fw",
    "Lipschitz": "no public bound on |f'|, a bounded gradient: the squared loss needs clip=C",
    "twice differentiable": "the hinge loss is not differentiable; the Huber loss and the clipped squared loss "
                            "have a second derivative that jumps at the threshold: use logistic",
    "least-squares": "adassp perturbs the sufficient statistics of least squares: use the squared loss, "
                     "DPLasso, DPElasticNet or DPLinearRegression with loss='squared', --loss squared in the CLI",
}


def loss_capabilities(loss):
    """What a datafit offers, asked of its public attributes.

    - ``smooth``: finite ``smoothness`` (a bound on ``f''``);
    - ``Lipschitz``: a finite ``lipschitz`` (a bound on ``|f'|``);
    - ``twice differentiable``: a ``second_derivative`` method (objective perturbation);
    - ``least-squares``: the squared loss (AdaSSP perturbs its sufficient statistics).
    """
    caps = set()
    if np.isfinite(getattr(loss, "smoothness", np.inf)):
        caps.add("smooth")
    try:
        if np.isfinite(float(loss.lipschitz)):
            caps.add("Lipschitz")
    except ValueError:
        pass
    if callable(getattr(loss, "second_derivative", None)):
        caps.add("twice differentiable")
    if getattr(loss, "name", "") == "squared":
        caps.add("least-squares")
    return caps


_PENALTY_METHODS = ("prox", "prox_1d", "value", "conjugate", "dual_scaling", "lmo_ball", "lmo_dual_ball", "dual_norm",
                    "coordinate_values", "subdiff_distance")


def penalty_capabilities(penalty):
    """What a penalty offers: its public methods, ``separable``, ``l1 ball`` (a weighted L1 norm) and ``ball`` (a
    ball private Frank-Wolfe can optimise over: the L1 ball, or a structured norm's ``lmo_ball``)."""
    if penalty is None:
        return set()
    caps = {m for m in _PENALTY_METHODS if callable(getattr(penalty, m, None))}
    if getattr(penalty, "is_separable", False):
        caps.add("separable")
        if getattr(penalty, "l1_ratio", None) == 1.0:
            caps.add("l1 ball")
    if "l1 ball" in caps or "lmo_ball" in caps:
        caps.add("ball")
    if getattr(penalty, "alpha", 0) > 0:
        caps.add("positive strength")
    return caps


def _report(mechanism, plan, info, design, noise):
    clipped = {"feature values": design.clipped_values, "labels": design.clipped_labels,
               "row norms": design.clipped_rows}
    report = PrivacyReport(
        mechanism=mechanism.name, method=mechanism.title, calibration=info.calibration, epsilon=info.epsilon,
        delta=info.delta,
        accountant_epsilon=float(plan.accountant_epsilon), accountant=plan.accountant,
        iterations=plan.iterations, noise={**plan.details, **plan.released_details(), "source": mechanism.citation},
        bounds_source=design.bounds_source, bounds_public=design.bounds_public, clipped=clipped,
        noise_source=noise.describe(), noise_seeded=noise.seeded, warnings=list(plan.warnings),
    )
    if not design.bounds_public:
        report.warnings.append(DATA_BOUNDS)
    return report


def public_info(mechanism, design, loss, penalty, epsilon, delta, calibration=None, options=None, zcdp=None):
    """Validate everything public and return the ``PublicInfo`` of a fit (no data is read)."""
    check_privacy_params(epsilon, delta)
    if zcdp is not None and not mechanism.zcdp_calibration:  # before its calibrations: the search sets "tight"
        from . import REGISTRY

        able = sorted(name for name, m in REGISTRY.items() if m.zcdp_calibration)
        raise ValueError(f"mechanism {mechanism.name} cannot be calibrated to a zCDP target (needed by the private "
                         f"hyperparameter search and a private label set); use one of {', '.join(able)}")
    calibration = mechanism.resolve_calibration(calibration)
    if zcdp is not None and calibration != "tight":
        raise ValueError(f"mechanism {mechanism.name} meets a zCDP target with calibration='tight' only, got "
                         f"{calibration!r}")
    options = mechanism.resolve_options(options)
    mechanism.check_compatible(loss, penalty, options)
    info = PublicInfo(n=int(design.n), p=int(design.p), feature_bounds=np.asarray(design.feature_bounds, dtype=float),
                      row_norm=float(design.row_norm), loss=loss, penalty=penalty, epsilon=float(epsilon),
                      delta=float(delta), calibration=calibration, options=options,
                      zcdp=None if zcdp is None else float(zcdp))
    if mechanism.check is not None:
        mechanism.check(info)
    return info


def make_plan(mechanism, design, loss, penalty, epsilon, delta, calibration=None, options=None, zcdp=None):
    """``mechanism.plan`` on the public information of a fit (``public_info``), with ``plan.info`` set.

    With ``zcdp``, the plan's ledger is checked to be ``zcdp``-zCDP (``Ledger.zcdp``).
    """
    info = public_info(mechanism, design, loss, penalty, epsilon, delta, calibration, options, zcdp)
    plan = mechanism.plan(info)
    plan.info = info
    if zcdp is not None and not plan.ledger.zcdp() <= zcdp * (1 + 1e-9):
        raise RuntimeError(f"mechanism {mechanism.name}: plan misses its zCDP target {zcdp:g} "
                           f"({plan.ledger.zcdp():g})")
    return plan


def fit_mechanism(mechanism, design, loss, penalty, *, epsilon, delta, calibration=None, options=None, noise,
                  callback=None, budget=None, label=None, zcdp=None):
    """Run a registered mechanism on a bounded design: the one place that validates, plans,
    charges, runs and reports.

    Parameters
    ----------
    mechanism : Mechanism
    design : data.BoundedDesign or private_bounds.PendingDesign
        The records mapped onto public bounds, with the bounds' provenance; or records
        whose bounds are bought with a share of (epsilon, delta) after the charge.
    loss : Datafit
    penalty : Penalty
    epsilon : float > 0
    delta : float in (0, 1)
    calibration : str or None
        None: the mechanism's default (its first calibration).
    options : dict or None
        Declared options; missing ones take their public defaults.
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
        Receives the iterate after each iteration.
    budget : PrivacyBudget or None
        Charged with the accountant's epsilon (and ``delta``) after every check on the
        inputs has passed and before the data is used; refused if it would overdraw.
    label : str or None
        Label of the budget entry.
    zcdp : float or None
        A zCDP budget ``rho`` the whole fit must meet (private bounds included), for a fit that composes
        with other zCDP releases (a mechanism with a tight zCDP calibration only); None: the largest ``rho``
        meeting (epsilon, delta) where a split needs one.

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, calibration, options, or a loss / penalty the mechanism cannot use.
    BudgetExceededError
        The fit would overdraw ``budget`` (nothing is charged).

    Warns
    -----
    PrivacyCalibrationWarning
        A source paper's calibration gives an accountant epsilon above the target.
    """
    _check_data_access(mechanism, design, options)
    split = _Split(mechanism, calibration, design, epsilon, delta, rho=zcdp)
    plan = make_plan(mechanism, design, loss, penalty, split.epsilon, split.delta, calibration, options, split.zcdp)
    total = split.total(plan)
    split.charge(budget, total, label or mechanism.name)
    design = split.release(design, noise)
    w = mechanism.run(design, plan, noise, callback)
    return np.asarray(w, dtype=float), split.report(_report(mechanism, plan, plan.info, design, noise), total)


def _check_data_access(mechanism, design, options):
    """A dask design only for the mechanisms that read it through sums over rows (before any data is read)."""
    if is_dask(design.X) and not mechanism.runs_on_dask(mechanism.resolve_options(options)):
        names = sorted(m.name for m in _registry().values() if m.dask is True)
        raise ValueError(f"mechanism {mechanism.name} needs the data in memory with these options; on a dask array "
                         f"use {', '.join(names)}, or two-stage with one of them as its second stage (docs/scale.md)")


def _registry():
    from . import REGISTRY

    return REGISTRY


def _warn_miss(mechanism, plan, target):
    """Warn (and tell the report) when a source's calibration gives more than ``target`` by the accountant."""
    if plan.accountant_epsilon > target * (1 + 1e-9):
        msg = (f"the {plan.info.calibration} calibration of {mechanism.name} gives epsilon="
               f"{plan.accountant_epsilon:.4g} > target {target:g} by the accountant{plan.miss_reason}; use "
               "calibration='tight'")
        plan.warnings.append(msg)
        warnings.warn(msg, PrivacyCalibrationWarning, stacklevel=4)


ZCDP_SOURCE = f"{ZCDP_PAPER}, Lemma 1.7 (zCDP adds up)"
BASIC_SOURCE = "Dwork & Roth, 'The algorithmic foundations of differential privacy', 2014, Theorem 3.16"


def fit_one_vs_rest(mechanism, design, labels, n_classes, loss, penalty, *, epsilon, delta, calibration=None,
                    options=None, noise, callback=None, budget=None, label=None, zcdp=None):
    """One-vs-rest: ``n_classes`` binary fits of a mechanism that together meet (epsilon, delta).

    Each record is in every binary problem (class k against the rest), so the fits compose.
    Mechanisms with a zCDP calibration split ``rho`` (the largest meeting the target by
    dp-accounting's RDP accountant) evenly over the classes, and zCDP adds up (Bun & Steinke
    2016, Lemma 1.7); the others get ``epsilon / K`` and ``delta / K`` each (basic composition,
    Dwork & Roth 2014, Theorem 3.16). Every class has the same public plan (n, p, bounds and
    options are the same), so one plan serves all.

    Parameters
    ----------
    mechanism, loss, penalty, epsilon, delta, calibration, options, noise, callback, budget, label, zcdp
        As in ``fit_mechanism``.
    design : data.BoundedDesign
        The records mapped onto public bounds; its labels are not used.
    labels : ndarray of int of shape (n,)
        Class index in ``range(n_classes)`` of each record.
    n_classes : int >= 3

    Returns
    -------
    W : ndarray of shape (n_classes, p)
        Row k separates class k (+1) from the rest (-1).
    report : PrivacyReport
        Of the whole fit: the target, and the accountant's epsilon of the K fits composed.
    """
    check_privacy_params(epsilon, delta)
    k = int(n_classes)
    _check_data_access(mechanism, design, options)
    split = _Split(mechanism, calibration, design, epsilon, delta, parts=k, rho=zcdp)
    plan = make_plan(mechanism, design, loss, penalty, split.epsilon, split.delta, calibration, options, split.zcdp)
    total = split.total(plan)
    split.charge(budget, total, label or mechanism.name)
    design = split.release(design, noise)
    W = np.empty((k, design.p))
    for c in range(k):
        binary = replace(design, y=np.where(labels == c, 1.0, -1.0))
        W[c] = mechanism.run(binary, plan, noise, callback)
    report = split.report(_report(mechanism, plan, plan.info, design, noise), total)
    report.method = f"{mechanism.title}, one-vs-rest over {k} classes"
    report.noise = {"one-vs-rest budget split": split.describe(), **report.noise}
    return W, report


class _Split:
    """The budget of each of ``parts`` fits, once private bounds (a ``PendingDesign``) took their share.

    Several parts, or private bounds, compose: in zCDP for a mechanism calibrated in zCDP
    (``rho``, the largest meeting (epsilon, delta) by dp-accounting's RDP accountant, split
    into the bounds' share and ``parts`` equal fits; zCDP adds up, Bun & Steinke 2016,
    Lemma 1.7), by basic composition otherwise (the bounds' share of epsilon, pure DP, then
    ``epsilon / parts`` and ``delta / parts`` per fit; Dwork & Roth 2014, Theorem 3.16). One
    fit on public bounds keeps the whole target (no split).
    """

    def __init__(self, mechanism, calibration, design, epsilon, delta, parts=1, rho=None):
        from ..private_bounds import PendingDesign

        self.mechanism, self.parts = mechanism, int(parts)
        self.pending = design if isinstance(design, PendingDesign) else None
        self.target, self.zcdp = float(epsilon), None
        self.tight = mechanism.zcdp_calibration and mechanism.resolve_calibration(calibration) == "tight"
        if rho is not None and not self.tight:
            raise ValueError(f"mechanism {mechanism.name}: a zCDP target needs a tight zCDP calibration")
        if self.pending is None and self.parts == 1 and rho is None:
            self.epsilon, self.delta = float(epsilon), float(delta)
        elif self.tight:
            rho = zcdp_budget(epsilon, delta) if rho is None else float(rho)
            self.bounds_cost = self.pending.plan_zcdp(self.pending.share * rho).ledger.zcdp() if self.pending else 0.0
            self.zcdp = (rho - self.bounds_cost) / self.parts
            self.epsilon, self.delta = epsilon_of_zcdp(self.zcdp, delta), float(delta)
        else:
            self.bounds_cost = self.pending.share * epsilon if self.pending else 0.0
            if self.pending:
                self.pending.plan_pure(self.bounds_cost)
            self.epsilon, self.delta = (epsilon - self.bounds_cost) / self.parts, delta / self.parts
        self.full_delta = float(delta)

    def total(self, plan):
        """The accountant's epsilon of the whole (warned when a paper's calibration overshoots its part)."""
        if self.zcdp is not None:
            return zcdp_epsilon(self.bounds_cost + self.parts * self.zcdp, self.full_delta)
        _warn_miss(self.mechanism, plan, self.epsilon)
        if self.pending is None and self.parts == 1:
            return plan.accountant_epsilon
        return self.bounds_cost + self.parts * plan.accountant_epsilon

    def charge(self, budget, total, label):
        """Charge the target, or the accountant's total when a paper's calibration overshoots it."""
        charge(budget, max(self.target, total), self.full_delta, label)

    def release(self, design, noise):
        """The bounded design: private bounds are bought here, after the charge."""
        return design if self.pending is None else self.pending.release(noise)

    def describe(self):
        if self.zcdp is not None:
            return (f"zCDP rho={self.zcdp:.4g} per fit, {self.parts * self.zcdp:.4g} for the {self.parts} fits "
                    f"({ZCDP_SOURCE})")
        return f"epsilon/{self.parts} and delta/{self.parts} per fit ({BASIC_SOURCE})"

    def _bounds_cost(self):
        """The private preprocessing's part of a zCDP budget, and what it costs in epsilon: the whole's epsilon less
        the fit's alone at the same delta (public numbers)."""
        whole = self.bounds_cost + self.parts * self.zcdp
        alone = zcdp_epsilon(self.parts * self.zcdp, self.full_delta)
        parts = "the bounds and the label range" if self.pending.buys_label_range else "the bounds"
        return (f"zCDP rho={self.bounds_cost:.4g} of {whole:.4g} (the budget of the fit and of what was bought before "
                f"it), {self.bounds_cost / whole:.3g} of it for {parts}; the fit alone would be epsilon {alone:.4g} "
                f"at the same delta, so {parts} cost {zcdp_epsilon(whole, self.full_delta) - alone:.2g} of epsilon")

    def report(self, report, total):
        """``report`` of the whole: the target, the accountant's total and the bounds' release."""
        report.epsilon, report.delta, report.accountant_epsilon = self.target, self.full_delta, float(total)
        if self.zcdp is not None:
            report.accountant = ("rdp (zCDP of the fits added)" if self.parts > 1 else
                                 "rdp (zCDP of the fit and the releases before it added)")
        elif self.pending is not None or self.parts > 1:
            report.accountant = f"{report.accountant}, fits added"
        if self.pending is not None:
            cost = self._bounds_cost() if self.zcdp is not None else (
                f"epsilon={self.bounds_cost:.4g} (pure DP) of {self.target:g}, basic composition")
            report.noise = {**report.noise, **self.pending.details(), "bounds: budget": cost}
        return report
