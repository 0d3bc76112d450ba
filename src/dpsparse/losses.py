"""Datafits of generalized linear models with the public constants privacy rests on.

A datafit is a per-sample loss ``f(z, y)`` of the margin ``z = <w, x>``.
For features bounded by ``|x_j| <= b_j`` the per-sample gradient ``f'(z, y) x`` has
coordinate-wise Lipschitz constants ``L_j = lipschitz * b_j`` and the objective has
coordinate smoothness ``M_j = smoothness * b_j**2``. Both come from public bounds only.

Each datafit also gives its convex conjugate and the domain of its dual variable, so that
solvers can certify a duality gap.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, xlogy

__all__ = ["Datafit", "Logistic", "Squared", "Huber", "Hinge", "make_loss", "LOSSES"]


class Datafit:
    """Base class: a per-sample convex loss of the margin.

    Subclasses define ``value``, ``derivative``, ``conjugate``, ``dual_box`` and the public
    constants ``lipschitz`` (a bound on ``|derivative|``) and ``smoothness`` (a bound on
    the second derivative).
    """

    name: str = "datafit"
    lipschitz: float
    smoothness: float

    def coordinate_lipschitz(self, feature_bounds: ArrayLike) -> np.ndarray:
        """``L_j = sup|f'| * b_j``: bound on ``|d/dw_j f(<w, x>, y)|`` for ``|x_j| <= b_j``.

        Parameters
        ----------
        feature_bounds : ndarray of shape (p,)
            Public bounds ``b_j`` on ``|x_j|``.

        Returns
        -------
        ndarray of shape (p,)
        """
        return self.lipschitz * np.asarray(feature_bounds, dtype=float)

    def coordinate_smoothness(self, feature_bounds: ArrayLike) -> np.ndarray:
        """``M_j = sup f'' * b_j**2``: coordinate smoothness of the average loss."""
        return self.smoothness * np.asarray(feature_bounds, dtype=float) ** 2

    def bounded_derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-sample derivative used by private mechanisms: ``|.| <= lipschitz`` always."""
        return self.derivative(z, y)

    def derivative_kernel(self, bounded: bool = True) -> tuple[int, float] | None:
        """How compiled loops (``dpsparse._kernels``) compute ``bounded_derivative`` (or ``derivative``):
        ``(0, 0)`` logistic, ``(1, c)`` the residual ``z - y`` clipped to ``[-c, c]``; None: no kernel."""
        return None

    #: True for a quadratic loss, whose minimizers solve linear equations.
    quadratic: bool = False

    def bounded_datafit(self) -> Datafit:
        """The datafit whose derivative is ``bounded_derivative``: what a private solve minimizes."""
        return self

    def objective(self, z: np.ndarray, y: np.ndarray) -> float:
        """Average loss ``(1/n) sum_i f(z_i, y_i)``."""
        return float(np.mean(self.value(z, y)))

    def get_params(self) -> dict[str, Any]:
        """Parameters that define the datafit, for reports."""
        return {"name": self.name}


class Logistic(Datafit):
    """Logistic loss ``f(z, y) = log(1 + exp(-y z))`` for labels ``y`` in {-1, +1}.

    ``|f'| <= 1`` and ``f'' <= 1/4``.
    """

    name = "logistic"
    lipschitz = 1.0
    smoothness = 0.25

    def value(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.logaddexp(0.0, -y * z)

    def derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``-y sigma(-y z)``, in one new array (a fit's largest temporaries are its n-vectors): the same
        floating-point operations as ``-y * expit(-y * z)``, negation being exact."""
        out = np.asarray(np.multiply(y, z), dtype=float)
        np.negative(out, out=out)
        expit(out, out=out)
        np.multiply(out, y, out=out)
        return np.negative(out, out=out)

    def derivative_kernel(self, bounded: bool = True) -> tuple[int, float]:
        return 0, 0.0

    def second_derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``f''(z, y) = sigma(y z) sigma(-y z) <= 1/4``."""
        return expit(y * z) * expit(-y * z)

    def conjugate(self, u: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``f*(u) = a log a + (1-a) log(1-a)`` with ``a = -y u`` in [0, 1]."""
        a = np.clip(-y * u, 0.0, 1.0)
        return xlogy(a, a) + xlogy(1.0 - a, 1.0 - a)

    def dual_box(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Domain of the conjugate: ``u_i`` in ``[lo_i, hi_i]`` (contains 0)."""
        return np.minimum(-y, 0.0), np.maximum(-y, 0.0)


class Huber(Datafit):
    """Huber loss of the residual ``r = z - y`` with threshold ``tau``.

    ``f = r**2/2`` for ``|r| <= tau``, ``tau |r| - tau**2/2`` otherwise; ``|f'| <= tau``,
    ``f'' <= 1``.

    Parameters
    ----------
    tau : float > 0
    """

    name = "huber"
    smoothness = 1.0

    def __init__(self, tau: float = 1.0):
        if not np.isfinite(tau) or tau <= 0:
            raise ValueError(f"Huber threshold tau must be a finite number > 0, got {tau!r}")
        self.tau = float(tau)
        self.lipschitz = self.tau

    def value(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        r = np.abs(z - y)
        return np.where(r <= self.tau, 0.5 * r**2, self.tau * r - 0.5 * self.tau**2)

    def derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.clip(z - y, -self.tau, self.tau)

    def derivative_kernel(self, bounded: bool = True) -> tuple[int, float]:
        return 1, self.tau

    def conjugate(self, u: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 0.5 * u**2 + u * y

    def dual_box(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.full_like(y, -self.tau, dtype=float), np.full_like(y, self.tau, dtype=float)

    def get_params(self) -> dict[str, Any]:
        return {"name": self.name, "tau": self.tau}


class Squared(Datafit):
    """Squared loss ``f(z, y) = (z - y)**2 / 2`` (least squares, the Lasso datafit).

    Its derivative ``z - y`` is unbounded, so private mechanisms need per-sample gradient
    clipping: with ``clip=C`` the derivative used by mechanisms is ``clip(z - y, -C, C)``,
    which bounds ``|f'| <= C`` for every record. The clipped derivative is
    the derivative of the Huber loss with threshold ``C``: a private fit with clipping
    minimizes that objective, while ``value`` stays the squared loss.

    Parameters
    ----------
    clip : float > 0 or None
        Per-sample clipping threshold of the residual. None: no clipping, no Lipschitz
        constant (non-private solvers only).
    """

    name = "squared"
    smoothness = 1.0
    quadratic = True

    @property
    def description(self) -> str:
        """The loss in words: the squared loss, or with its residual clipped (what a private fit minimizes)."""
        return "squared" if self.clip is None else "clipped squared"

    def __init__(self, clip: float | None = None):
        if clip is not None and (not np.isfinite(clip) or clip <= 0):
            raise ValueError(f"clipping threshold clip must be a finite number > 0 or None, got {clip!r}")
        self.clip = None if clip is None else float(clip)

    @property
    def lipschitz(self) -> float:
        if self.clip is None:
            raise ValueError(
                "the squared loss has no Lipschitz constant without clipping: "
                "set clip (a public bound on the per-sample residual)"
            )
        return self.clip

    def value(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 0.5 * (z - y) ** 2

    def derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return z - y

    def bounded_derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Clipped residual ``clip(z - y, -clip, clip)`` (per-sample gradient clipping)."""
        return np.clip(z - y, -self.lipschitz, self.lipschitz)

    def derivative_kernel(self, bounded: bool = True) -> tuple[int, float]:
        return 1, (self.lipschitz if bounded else math.inf)

    def bounded_datafit(self) -> Datafit:
        """The Huber loss with threshold ``clip``, whose derivative is the clipped residual."""
        return Huber(self.lipschitz)

    def conjugate(self, u: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 0.5 * u**2 + u * y

    def dual_box(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.full_like(y, -np.inf, dtype=float), np.full_like(y, np.inf, dtype=float)

    def get_params(self) -> dict[str, Any]:
        return {"name": self.name, "clip": self.clip}


class Hinge(Datafit):
    """Hinge loss ``f(z, y) = max(0, 1 - y z)`` for labels in {-1, +1} (linear SVM).

    ``|f'| <= 1``; not smooth (``smoothness = inf``): only mechanisms for non-smooth
    losses accept it: the one-pass noisy SGD of Arora, Marinov & Ullah, "Private Stochastic
    Convex Optimization: Efficient Algorithms for Non-smooth Objectives", arXiv 2020,
    Algorithm 1.
    """

    name = "hinge"
    lipschitz = 1.0
    smoothness = np.inf

    def value(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, 1.0 - y * z)

    def derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """A subgradient: ``-y`` where ``y z < 1``, else 0."""
        return np.where(y * z < 1.0, -y, 0.0)

    def conjugate(self, u: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``f*(u) = -a`` with ``a = -y u`` in [0, 1]."""
        return -np.clip(-y * u, 0.0, 1.0)

    def dual_box(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.minimum(-y, 0.0), np.maximum(-y, 0.0)


LOSSES = {"logistic": Logistic, "squared": Squared, "huber": Huber, "hinge": Hinge}


def make_loss(name: str, **params: Any) -> Datafit:
    """Datafit by name: one of ``logistic``, ``squared``, ``huber``, ``hinge``.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    try:
        cls = LOSSES[name]
    except KeyError:
        raise ValueError(f"unknown loss {name!r}; allowed: {sorted(LOSSES)}") from None
    return cls(**params)
