"""DP-CD: differentially private randomized proximal coordinate descent.

Source: Mangold, Bellet, Salmon & Tommasi, "Differentially Private Coordinate Descent
for Composite Empirical Risk Minimization", ICML 2022 (PMLR 162; arXiv:2110.11688).
SPEC section 4, item 8.

**Provenance of the constants.** The stored copies of public material reachable while
this module was written hold the paper's abstract only (arXiv listing, PMLR index), not
its body, so the algorithm and the privacy theorem below could not be checked against
the printed text. They are the paper's Algorithm 1 and privacy theorem (Theorem 3.1 of
the arXiv version, numbering unverified) as recalled:

    "Assume l(.; d) is L-component-Lipschitz for all d. Let epsilon <= 1 and
    delta < 1/3. If sigma_j^2 = 12 L_j^2 T K log(1/delta) / (n^2 epsilon^2) for all j,
    then DP-CD is (epsilon, delta)-differentially private."

The formula was re-derived here from the algorithm's structure and the derivation closes
under exactly those conditions (next paragraph), and the accountant confirms it on
every test case (``tests/test_mechanisms_dp_cd.py``): the paper calibration meets its
target. A "paper" run whose accountant epsilon misses the target (possible outside
``epsilon <= 1``) says so in a ``PrivacyCalibrationWarning``.

Derivation. Each update releases ``g_j + eta`` with ``eta ~ N(0, sigma_j^2)``; replacing
one record moves ``g_j`` by at most ``Delta_j = 2 L_j / n``. The Gaussian mechanism is
``(alpha, alpha Delta_j^2 / (2 sigma_j^2))``-RDP (Mironov 2017, Prop. 7); with the
sigma above that is ``alpha epsilon^2 / (6 T K log(1/delta))`` per update and
``alpha epsilon^2 / (6 log(1/delta))`` for the ``T K`` updates (RDP composition,
Prop. 1). The conversion ``eps_RDP + log(1/delta) / (alpha - 1)`` (Prop. 3) at
``alpha = 1 + 3 log(1/delta) / epsilon`` gives ``5 epsilon / 6 + epsilon^2 / (6
log(1/delta))``, which is ``<= epsilon`` when ``epsilon <= log(1/delta)``; ``epsilon
<= 1`` and ``delta < 1/3`` (``log 3 > 1``) ensure it.

Algorithm (Algorithm 1 of the paper, as recalled; ``T`` outer iterations of ``K``
inner updates)::

    w = 0
    for t in 1..T:                              # one "epoch" (n_iter = T)
        for k in 1..K:                          # K = updates_per_epoch (default p)
            j ~ Uniform{1..p}                   # data-independent, from noise.rng
            g_j = (1/n) sum_i clip_{C_j}(f'(<w, x_i>, y_i) x_ij)
            w_j = prox_{gamma_j psi_j}(w_j - gamma_j (g_j + eta)),  eta ~ N(0, sigma_j^2)
        (average=True: w = mean of the K inner iterates, the paper's convex variant;
         default: the last iterate, its strongly convex variant)

with ``gamma_j = 1 / M_j`` (``M_j`` the public coordinate smoothness). The per-sample
coordinate-wise clipping to ``[-C_j, C_j]`` (the paper's practical form, where ``C_j``
plays the role of ``L_j``) bounds ``Delta_j = 2 C_j / n`` whatever the data; the default
``C_j = sup|f'| * b_j = L_j`` clips no record that respects the public bounds.

Privacy (replace-one). ``sigma_j = m Delta_j`` with one noise multiplier ``m`` for every
coordinate, so all ``N = T K`` updates are Gaussian mechanisms with the same ``m``,
composed adaptively (the iterate at which ``g_j`` is evaluated is a post-processing of
earlier releases; ``j`` is drawn independently of the data and treated as public, so no
amplification by the random choice is claimed): ``Ledger().gaussian(m, 1, N)``.

- ``calibration="paper"``: ``sigma_j = sqrt(12 T K log(1/delta)) C_j / (n epsilon)``,
  i.e. ``m = sqrt(3 T K log(1/delta)) / epsilon``;
- ``calibration="tight"`` (default): the smallest ``m`` (bisection, ``calibrate``) for
  which the accountants (PLD, RDP) compose the ``N`` updates to (epsilon, delta).
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import scipy.sparse as sp

from ..accounting import Ledger, PrivacyReport, calibrate, check_privacy_params
from ..exceptions import PrivacyCalibrationWarning
from ..norms import require
from ._common import check_n_iter

__all__ = ["dp_cd", "cd", "coordinate_gradient", "paper_multiplier", "noise_stds", "CALIBRATIONS"]

CALIBRATIONS = ("tight", "paper")
SOURCE = ("Mangold, Bellet, Salmon & Tommasi ICML 2022 (arXiv:2110.11688), Algorithm 1 (DP-CD) and its "
          "privacy theorem (Thm 3.1 as recalled, printed text not checked: sigma_j^2 = 12 C_j^2 T K log(1/delta) / "
          "(n^2 epsilon^2), re-derived by RDP); Gaussian mechanism composed by PLD/RDP (dp-accounting)")


def paper_multiplier(n_updates, epsilon, delta):
    """The paper's noise over sensitivity: ``sigma_j / (2 C_j / n) = sqrt(3 N log(1/delta)) / epsilon``.

    ``N = T K`` coordinate updates; from ``sigma_j^2 = 12 C_j^2 T K log(1/delta) / (n^2 epsilon^2)``.
    """
    return math.sqrt(3.0 * n_updates * math.log(1.0 / delta)) / epsilon


def noise_stds(multiplier, clip, n):
    """Per-coordinate Gaussian standard deviations ``sigma_j = multiplier * 2 C_j / n``."""
    return multiplier * 2.0 * np.asarray(clip, dtype=float) / n


@functools.lru_cache(maxsize=256)
def _tight_multiplier(n_updates, epsilon, delta):
    """Smallest noise multiplier whose ``n_updates`` Gaussian mechanisms compose to (epsilon, delta)."""
    return calibrate(lambda m: Ledger().gaussian(m, 1.0, n_updates), epsilon, delta,
                     paper_multiplier(n_updates, epsilon, delta))


def _column(X, j):
    """Row indices and values of column ``j`` (X a Fortran-ordered array or CSC)."""
    if sp.issparse(X):
        sl = slice(X.indptr[j], X.indptr[j + 1])
        return X.indices[sl], X.data[sl]
    return slice(None), X[:, j]


def coordinate_gradient(X, z, y, derivative, j, clip_j):
    """``(1/n) sum_i clip_{C_j}(f'(z_i, y_i) x_ij)``: clipped coordinate gradient, O(nnz of column j).

    Parameters
    ----------
    X : ndarray or CSC matrix of shape (n, p)
    z : ndarray of shape (n,)
        Margins ``X w``.
    y : ndarray of shape (n,)
    derivative : callable (z, y) -> f'(z, y)
    j : int
    clip_j : float > 0
        Per-sample threshold ``C_j``: every record's term lies in ``[-C_j, C_j]``, so the
        replace-one sensitivity is ``2 C_j / n``.

    Returns
    -------
    float
    """
    rows, vals = _column(X, j)
    if np.size(vals) == 0:
        return 0.0
    terms = derivative(z[rows], y[rows]) * vals
    return float(np.sum(np.clip(terms, -clip_j, clip_j))) / X.shape[0]


def cd(X, y, derivative, penalty, M, clip, n_epochs, n_inner, stds, noise, callback=None, average=False):
    """Randomized proximal coordinate descent with given noise (``stds = 0``: non-private).

    The margins ``z = X w`` are updated in O(nnz of column j) per update, so an epoch of
    ``p`` updates costs about one pass over the nonzeros of X. Coordinates (uniform) and
    the noise of an epoch are drawn from ``noise`` before it starts: both are independent
    of the data.

    Parameters
    ----------
    X : ndarray (Fortran order preferred) or CSC matrix of shape (n, p)
    y : ndarray of shape (n,)
    derivative : callable (z, y) -> ndarray
        Per-sample derivative of the loss in the margin.
    penalty : separable Penalty
    M : ndarray of shape (p,)
        Step sizes are ``1 / M_j``.
    clip : ndarray of shape (p,)
        Per-sample coordinate-wise clipping thresholds ``C_j``.
    n_epochs, n_inner : int
        ``T`` outer iterations of ``K`` coordinate updates.
    stds : ndarray of shape (p,)
        Standard deviations ``sigma_j`` of the Gaussian noise on coordinate ``j``.
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
        Called after each epoch.
    average : bool
        Replace the iterate by the average of the ``K`` inner iterates at the end of each
        epoch (the paper's convex variant); False keeps the last iterate.

    Returns
    -------
    w : ndarray of shape (p,)
    """
    n, p = X.shape
    w, z = np.zeros(p), np.zeros(n)
    steps = 1.0 / np.asarray(M, dtype=float)
    clip = np.asarray(clip, dtype=float)
    stds = np.asarray(stds, dtype=float)
    noisy = bool(np.any(stds > 0))
    v = w.copy()  # prox argument: equal to w except at the updated coordinate
    for t in range(n_epochs):
        coords = noise.rng.integers(p, size=n_inner)
        etas = noise.gaussian(stds[coords]) if noisy else np.zeros(n_inner)
        if average:  # lazy sum of the K inner iterates: coordinate j held w_j since iterate last[j]
            acc, last = np.zeros(p), np.zeros(p, dtype=int)
        for k in range(n_inner):
            j = int(coords[k])
            g = coordinate_gradient(X, z, y, derivative, j, clip[j])
            v[j] = w[j] - steps[j] * (g + etas[k])
            new = penalty.prox(v, steps)[j]
            step = new - w[j]
            if average:
                acc[j] += w[j] * (k - last[j])
                last[j] = k
            if step != 0.0:
                rows, vals = _column(X, j)
                z[rows] += step * vals
                w[j] = new
            v[j] = w[j]
        if average:
            w = (acc + w * (n_inner - last)) / n_inner
            v = w.copy()
            z = np.asarray(X @ w).ravel()
        if callback is not None:
            callback(t, w)
    return w


def _derivative_and_clip(loss, clip, b):
    """Per-sample derivative and thresholds ``C_j`` (default ``sup|f'| b_j``).

    A loss with a public bound on ``|f'|`` uses its ``bounded_derivative`` (e.g. the
    squared loss with residual clipping); one without (``Squared()``) uses its raw
    derivative and needs explicit thresholds.
    """
    try:
        lipschitz = float(loss.lipschitz)
    except ValueError:
        lipschitz = None
    p = b.shape[0]
    if clip is None:
        if lipschitz is None:
            raise ValueError(f"DP-CD: the {loss.name} loss has no bound on its derivative; set clip "
                             "(per-sample coordinate-wise thresholds C_j) or use a loss with one")
        C = lipschitz * b
    else:
        C = np.asarray(clip, dtype=float)
        C = np.full(p, float(C)) if C.ndim == 0 else C
        if C.shape != (p,) or not np.all(np.isfinite(C)) or np.any(C <= 0):
            raise ValueError(f"clip must be a finite number > 0 or {p} of them, got {clip!r}")
    derivative = loss.bounded_derivative if lipschitz is not None else loss.derivative
    return derivative, C


def dp_cd(X, y, loss, penalty, feature_bounds, *, epsilon, delta, n_iter=20, calibration="tight", noise,
          callback=None, clip=None, updates_per_epoch=None, average=False):
    """Differentially private proximal coordinate descent, DP-CD (module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
        Records; ``|X[i, j]| <= feature_bounds[j]`` (public bounds) sets the step sizes
        and the default clipping thresholds. Privacy rests on the clipping alone.
    y : ndarray of shape (n,)
    loss : Datafit
        Smooth (finite ``smoothness``): ``M_j = smoothness * b_j^2``.
    penalty : separable Penalty (L1, L2, elastic net)
    feature_bounds : ndarray of shape (p,) of floats > 0
    epsilon : float > 0
    delta : float in (0, 1)
    n_iter : int >= 1
        Number of epochs ``T`` (``PrivacyReport.iterations``); the fit makes
        ``T * updates_per_epoch`` coordinate updates.
    calibration : {"tight", "paper"}
        "paper": the paper's ``sigma_j``. "tight": the smallest noise multiplier that the
        accountants (PLD, RDP) compose to (epsilon, delta).
    noise : NoiseSource
    callback : callable (t, w) -> None, optional
        Called after each epoch.
    clip : float > 0, ndarray of shape (p,), or None
        Per-sample coordinate-wise clipping thresholds ``C_j`` (a float: the same for all
        coordinates). None: ``sup|f'| * b_j``, which clips no record within the bounds.
    updates_per_epoch : int >= 1 or None
        ``K``; None: ``p``.
    average : bool
        End each epoch at the average of its inner iterates (the paper's convex variant).

    Returns
    -------
    w : ndarray of shape (p,)
    report : PrivacyReport

    Raises
    ------
    ValueError
        Invalid budget, calibration, iteration counts, bounds or thresholds; a penalty
        that is not separable or lacks ``prox``; a non-smooth loss; a loss with no bound
        on its derivative and no ``clip``.

    Warns
    -----
    PrivacyCalibrationWarning
        With ``calibration="paper"`` when the accountant finds the paper's noise short of
        the target (possible outside the theorem's ``epsilon <= 1``, ``delta < 1/3``).
    """
    check_privacy_params(epsilon, delta)
    if calibration not in CALIBRATIONS:
        raise ValueError(f"unknown calibration {calibration!r}; allowed: {list(CALIBRATIONS)}")
    check_n_iter(n_iter)
    require(penalty, ("prox",), "DP-CD")
    if not getattr(penalty, "is_separable", False):
        raise ValueError(f"DP-CD needs a separable penalty (coordinate-wise prox); {type(penalty).__name__} is not")
    if not np.isfinite(loss.smoothness):
        raise ValueError(f"DP-CD needs a smooth loss (coordinate steps 1/M_j); the {loss.name} loss is not "
                         "smooth: use mechanism 'dp-sgd' or 'one-pass-sgd'")
    n, p = X.shape
    b = np.asarray(feature_bounds, dtype=float)
    if b.shape != (p,) or not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError(f"feature_bounds must be {p} finite numbers > 0")
    K = p if updates_per_epoch is None else updates_per_epoch
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or K < 1:
        raise ValueError(f"updates_per_epoch must be an integer >= 1 or None, got {updates_per_epoch!r}")
    derivative, C = _derivative_and_clip(loss, clip, b)
    M = loss.coordinate_smoothness(b)

    n_updates = int(n_iter) * int(K)
    m_paper = paper_multiplier(n_updates, epsilon, delta)
    m = m_paper if calibration == "paper" else _tight_multiplier(n_updates, float(epsilon), float(delta))
    ledger = Ledger().gaussian(m, 1.0, n_updates)
    accounted = ledger.epsilon(delta)
    stds = noise_stds(m, C, n)

    Xc = X.tocsc() if sp.issparse(X) else np.asfortranarray(X, dtype=float)
    w = cd(Xc, np.asarray(y, dtype=float), derivative, penalty, M, C, int(n_iter), int(K), stds, noise,
           callback, bool(average))

    report_warnings = []
    if accounted > epsilon * (1 + 1e-9):
        msg = (f"the paper's calibration gives epsilon={accounted:.4g} > target {epsilon:g} (its theorem "
               "assumes epsilon <= 1 and delta < 1/3); use calibration='tight'")
        report_warnings.append(msg)
        warnings.warn(msg, PrivacyCalibrationWarning, stacklevel=2)
    report = PrivacyReport(
        mechanism="dp-cd (randomized proximal coordinate descent, Mangold et al. ICML 2022)",
        calibration=calibration,
        epsilon=float(epsilon),
        delta=float(delta),
        accountant_epsilon=accounted,
        accountant=ledger.accountant,
        iterations=int(n_iter),
        noise={
            "update": "gaussian noise",
            "noise multiplier": float(m),
            "noise std": float(stds.max()),
            "paper noise std": float(noise_stds(m_paper, C, n).max()),
            "clipping threshold": float(C.max()),
            "coordinate updates": n_updates,
            "updates per epoch": int(K),
            "coordinate choice": "uniform, data-independent (no amplification claimed)",
            "step sizes": "1/M_j",
            "iterate": "average of each epoch" if average else "last",
            "source": SOURCE,
        },
        noise_source=noise.describe(),
        warnings=report_warnings,
    )
    return w, report
