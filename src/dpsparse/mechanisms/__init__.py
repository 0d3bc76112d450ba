"""Private algorithms, one module each, declared through one contract (``base.Mechanism``).

They depend on losses, norms, accounting and noise. ``REGISTRY`` maps each name to its
declaration; the estimators, the CLI and the audit read it and run a mechanism through
``fit_mechanism``, the one function that validates, plans, charges, runs and reports.
Adding a mechanism is one module with a ``MECHANISM``, its tests and its docs.
"""
from . import (
    adassp,
    constant,
    dp_cd,
    dp_gcd,
    dp_gd,
    dp_iht,
    dp_sgd,
    dual_fw,
    fw,
    objective_perturbation,
    one_pass_sgd,
    output_perturbation,
    two_stage,
)
from .base import (
    Mechanism,
    Option,
    Plan,
    PublicInfo,
    fit_mechanism,
    fit_one_vs_rest,
    make_plan,
    public_info,
)

REGISTRY = {m.MECHANISM.name: m.MECHANISM for m in (dp_gcd, dp_cd, dp_sgd, dp_gd, one_pass_sgd, output_perturbation,
                                                    objective_perturbation, dual_fw, fw, dp_iht, two_stage, adassp,
                                                    constant)}


def get(name):
    """The registered mechanism ``name``; ValueError listing the names otherwise."""
    if name not in REGISTRY:
        raise ValueError(f"unknown mechanism {name!r}; allowed: {sorted(REGISTRY)}")
    return REGISTRY[name]


__all__ = [
    "REGISTRY",
    "Mechanism",
    "Option",
    "Plan",
    "PublicInfo",
    "dp_cd",
    "dp_gcd",
    "dp_gd",
    "dp_iht",
    "dp_sgd",
    "dual_fw",
    "fit_mechanism",
    "fit_one_vs_rest",
    "fw",
    "get",
    "make_plan",
    "objective_perturbation",
    "one_pass_sgd",
    "output_perturbation",
    "public_info",
    "two_stage",
]
