"""Test doubles of ``dpsparse.noise.NoiseSource``, shared by the mechanism tests.

Thin subclasses: they override only the three primitive draws (``laplace``, ``gumbel``,
``gaussian``), through which ``draw``, ``release`` and ``select`` go, so they follow any
change of the rest of the ``NoiseSource`` interface.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dpsparse.noise import NoiseSource

__all__ = ["Draw", "RecordingNoise", "ZeroNoise"]


class Draw(NamedTuple):
    """One recorded draw: its family, its scale (one per value) and its values (at least 1-d)."""

    family: str
    scale: np.ndarray
    values: np.ndarray


class _RecordingRng:
    """A ``numpy.random.Generator`` that records the output of every ``integers`` call."""

    def __init__(self, gen, coords):
        self._gen, self._coords = gen, coords

    def integers(self, *args, **kwargs):
        out = self._gen.integers(*args, **kwargs)
        self._coords.append(np.atleast_1d(out).copy())
        return out

    def __getattr__(self, name):
        return getattr(self._gen, name)


class RecordingNoise(NoiseSource):
    """Records the family, scale and values of every draw (``draws``, a list of ``Draw``).

    ``coords`` lists the outputs of the generator's ``integers`` (e.g. the coordinates
    DP-CD samples). ``zero=True`` switches the noise off: every draw is 0 (of the drawn
    shape), still recorded, and nothing is drawn from the generator.
    """

    def __init__(self, seed=0, zero=False):
        self.draws, self.coords, self.zero = [], [], zero
        super().__init__(_RecordingRng(np.random.default_rng(seed), self.coords), seeded=True)

    def of(self, family):
        """The recorded draws of one family ("laplace", "gumbel" or "gaussian")."""
        return [d for d in self.draws if d.family == family]

    def _draw(self, family, scale, size, sample):
        if self.zero:
            shape = np.shape(scale) if size is None else size
            x = 0.0 if shape == () else np.zeros(shape)
        else:
            x = sample(scale, size)
        x1 = np.atleast_1d(x)
        self.draws.append(Draw(family, np.broadcast_to(scale, x1.shape).astype(float), x1.copy()))
        return x

    def laplace(self, scale, size=None):
        return self._draw("laplace", scale, size, super().laplace)

    def gumbel(self, scale, size=None):
        return self._draw("gumbel", scale, size, super().gumbel)

    def gaussian(self, sigma, size=None):
        return self._draw("gaussian", sigma, size, super().gaussian)


class ZeroNoise(RecordingNoise):
    """Every draw is 0: the private algorithm with its noise switched off."""

    def __init__(self, seed=0):
        super().__init__(seed, zero=True)
