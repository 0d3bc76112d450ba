"""Private algorithms, one file each. They depend on losses, norms, accounting and noise."""
from .dp_gcd import dp_gcd

MECHANISMS = {"dp-gcd": dp_gcd}

__all__ = ["dp_gcd", "MECHANISMS"]
