"""Private algorithms, one module each. They depend on losses, norms, accounting and noise."""
from . import dp_gcd

MECHANISMS = {"dp-gcd": dp_gcd.dp_gcd}

__all__ = ["dp_gcd", "MECHANISMS"]
