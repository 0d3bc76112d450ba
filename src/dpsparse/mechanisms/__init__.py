"""Private algorithms, one module each. They depend on losses, norms, accounting and noise."""
from . import dp_cd, dp_gcd, dp_sgd, one_pass_sgd

MECHANISMS = {"dp-gcd": dp_gcd.dp_gcd, "dp-cd": dp_cd.dp_cd, "dp-sgd": dp_sgd.dp_sgd,
              "one-pass-sgd": one_pass_sgd.one_pass_sgd}

__all__ = ["dp_gcd", "dp_cd", "dp_sgd", "one_pass_sgd", "MECHANISMS"]
