"""Noise samplers: the source of every random draw of a mechanism.

Mechanisms take a ``NoiseSource`` (explicit random state, as in optax) and draw from it
only. The default draws from numpy's PCG64 generator seeded from OS entropy; a fixed
seed makes a run reproducible and is for experiments only (it says so in the report).
"""
from __future__ import annotations

import numpy as np

__all__ = ["NoiseSource", "make_noise"]


class NoiseSource:
    """Laplace, Gumbel and Gaussian draws from a ``numpy.random.Generator``.

    Parameters
    ----------
    rng : numpy.random.Generator
    seeded : bool
        Whether the generator was seeded by the caller (reproducible, experiments only).
    """

    def __init__(self, rng, seeded):
        self.rng = rng
        self.seeded = seeded

    def laplace(self, scale, size=None):
        """Draws of Laplace(0, scale): density ``exp(-|x| / scale) / (2 scale)``."""
        return self.rng.laplace(0.0, scale, size)

    def gumbel(self, scale, size=None):
        """Draws of Gumbel(0, scale): ``argmax_j s_j + Gumbel(scale)`` samples ``j`` with probability ``~ exp(s_j / scale)``."""
        return self.rng.gumbel(0.0, scale, size)

    def gaussian(self, sigma, size=None):
        """Draws of N(0, sigma**2)."""
        return self.rng.normal(0.0, sigma, size)

    def describe(self):
        """One line for the privacy report."""
        if self.seeded:
            return "numpy PCG64 with a fixed seed: reproducible, for experiments only"
        return "numpy PCG64 seeded from OS entropy"


def make_noise(random_state=None):
    """``NoiseSource`` from None (OS entropy), an int seed, a Generator or a NoiseSource."""
    if isinstance(random_state, NoiseSource):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return NoiseSource(random_state, seeded=True)
    if random_state is None:
        return NoiseSource(np.random.default_rng(), seeded=False)
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return NoiseSource(np.random.default_rng(int(random_state)), seeded=True)
    raise ValueError(f"random_state must be None, an int, a numpy Generator or a NoiseSource, got {random_state!r}")
