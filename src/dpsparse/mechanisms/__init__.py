"""Private algorithms, one module each. They depend on losses, norms, accounting and noise."""
from . import dp_cd, dp_gcd, dp_sgd, dual_fw, fw, objective_perturbation, one_pass_sgd, output_perturbation

MECHANISMS = {"dp-gcd": dp_gcd.dp_gcd, "dp-cd": dp_cd.dp_cd, "dp-sgd": dp_sgd.dp_sgd,
              "one-pass-sgd": one_pass_sgd.one_pass_sgd, "output": output_perturbation.output_perturbation,
              "objective": objective_perturbation.objective_perturbation, "dual-fw": dual_fw.dual_fw,
              "fw": fw.fw}

__all__ = ["dp_gcd", "dp_cd", "dp_sgd", "one_pass_sgd", "output_perturbation", "objective_perturbation",
           "dual_fw", "fw", "MECHANISMS"]
