"""Gaussian width of the dual unit ball of a norm (Kumar & Deisenroth, "Differentially Private
Empirical Risk Minimization with Sparsity-Inducing Norms", arXiv 2019, section 2).

``G = E_b[sup_{s : Omega*(s) <= 1} <b, s>] = E_b[Omega(b)]``, ``b ~ N(0, I_p)`` on the
penalized coordinates; for a submodular norm the dual ball is ``|P|(F)`` and G enters the
excess-risk bounds of private Frank-Wolfe and objective perturbation. Closed forms:
``F(A) = |A|`` (L1): ``G = p sqrt(2/pi)``; ``F(A) = min(|A|, 1)`` (L_inf):
``G = E max_j |b_j|``, about ``sqrt(2 ln p)``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .group import GroupLasso
    from .submodular import SubmodularNorm

__all__ = ["gaussian_width"]

_Z95 = 1.959963984540054


def gaussian_width(norm: SubmodularNorm | GroupLasso, n_samples: int = 10_000,
                   random_state: int | np.random.Generator | None = None,
                   batch: int = 4096) -> tuple[float, tuple[float, float]]:
    """Monte Carlo estimate of ``E[Omega(b)]``, ``b ~ N(0, I)``, with a 95% confidence interval.

    Parameters
    ----------
    norm : SubmodularNorm or GroupLasso
        Any object with ``n_features`` and a vectorized ``omega`` (alpha is ignored;
        unpenalized coordinates do not count).
    n_samples : int >= 2
    random_state : int, numpy Generator or None
        Experiments only: this is not a privacy-relevant draw.
    batch : int
        Samples per vectorized block (memory: ``batch * n_features`` floats).

    Returns
    -------
    estimate : float
    ci : tuple of two floats
        Normal-approximation 95% interval ``estimate -+ 1.96 sd / sqrt(n_samples)``.
    """
    if n_samples < 2:
        raise ValueError(f"n_samples must be >= 2, got {n_samples!r}")
    rng = np.random.default_rng(random_state)
    values = np.concatenate([
        norm.omega(rng.standard_normal((min(batch, n_samples - start), norm.n_features)))
        for start in range(0, n_samples, batch)
    ])
    est = float(values.mean())
    half = _Z95 * float(values.std(ddof=1)) / np.sqrt(n_samples)
    return est, (est - half, est + half)
