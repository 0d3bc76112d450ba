"""Preprocessing for private pipelines: a private standard scaler and a min-max scaler on public ranges.

scikit-learn's ``StandardScaler`` learns each feature's mean and standard deviation from
the data without noise; placed before a private estimator in a ``Pipeline``, it leaks them.
``DPStandardScaler`` releases them with Gaussian noise inside its own (epsilon, delta),
charged to a shared ``PrivacyBudget``, and clips its output to a public ``[-clip, clip]``,
so the estimator after it can declare ``bounds=Bounds(-clip, clip)`` publicly.
``DPMinMaxScaler`` maps declared ranges onto ``feature_range``: it reads no statistic of the
data, so it spends nothing. The analysis is in docs/privacy.md, "A private standard scaler".
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .accounting import ZCDP_PAPER, PrivacyReport, charge, check_budget, check_privacy_params, zcdp_budget, zcdp_epsilon
from .data import Bounds, validated
from .noise import make_noise

__all__ = ["DPMinMaxScaler", "DPStandardScaler"]

VARIANCE_FLOOR = 1e-4
"""The released variance, in units of the squared half-range, is floored here (a standard deviation of at least
1 % of the half-range): noise can make the difference of two noisy moments tiny or negative."""

SOURCE = (f"Gaussian mechanism in zCDP ({ZCDP_PAPER}, Prop. 1.6) "
          "on the clipped first two moments")


def _public_ranges(bounds, p):
    """Declared feature ranges (a Bounds, a dict or a JSON path), one per feature; a clear error otherwise."""
    if bounds is None:
        raise ValueError("bounds: declare each feature's public range (a Bounds, a dict or a JSON file); a scaler "
                         "that read them off the data would leak them")
    if isinstance(bounds, dict):
        bounds = Bounds.from_dict(bounds)
    elif isinstance(bounds, str):
        bounds = Bounds.from_json(bounds)
    elif not isinstance(bounds, Bounds):
        raise ValueError(f"bounds must be a Bounds, a dict or a JSON file path, got {type(bounds).__name__}")
    full = bounds.for_features(p)
    low, high = np.asarray(full.feature_low, dtype=float), np.asarray(full.feature_high, dtype=float)
    return low, high, bounds.source


def _dense(scaler, X, reset):
    X = validated(scaler, X, accept_sparse=True, dtype=np.float64, reset=reset)
    if sp.issparse(X):
        raise ValueError(f"{type(scaler).__name__} centres the features: give a dense array")
    return X


class DPStandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardize each feature with a private mean and standard deviation.

    Each feature is clipped to its public range ``[l_j, h_j]`` and mapped onto [-1, 1]
    (``u = (x - c_j) / r_j``, ``c_j`` the midpoint, ``r_j`` the half-range); the vectors of
    means of ``u`` and of ``u^2`` are released with Gaussian noise, each at half the zCDP
    budget ``rho`` that meets (epsilon, delta). Replacing one record moves every mean of
    ``u`` by at most ``2/n`` and every mean of ``u^2`` by ``1/n``: L2 sensitivities
    ``2 sqrt(p) / n`` and ``sqrt(p) / n``, so ``sigma = sensitivity / sqrt(rho)``. The
    released mean is ``c_j + r_j m1_j`` and the scale ``r_j sqrt(max(m2_j - m1_j^2,
    VARIANCE_FLOOR))`` (post-processing). ``transform`` clips to the ranges, standardizes,
    and clips the result to ``[-clip, clip]`` (public), so the next estimator can declare
    ``bounds=Bounds(-clip, clip)``.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1) or None
        None: ``1 / n**2``.
    bounds : Bounds, dict or str (JSON file)
        The public range of every feature (label ranges are ignored).
    clip : float > 0
        The output's public range ``[-clip, clip]``, in standard deviations.
    random_state : None, int, numpy Generator or RandomState
        None: OS entropy (a fixed seed is for experiments only).
    noise : {"auto", "fast", "secure"}
        ``"auto"``: OpenDP's exact samplers (``"secure"``, Mironov 2012) unless ``random_state``
        fixes a seed (then numpy's, for experiments); docs/noise.md.
    budget : PrivacyBudget or None
        Charged (epsilon, delta) before the data is read.

    Attributes
    ----------
    mean_, scale_ : ndarray of shape (n_features,)
        The released (noisy) mean and standard deviation, in the units of X.
    output_bounds_ : Bounds
        ``[-clip, clip]`` for every feature: public bounds for the estimator after it.
    privacy_report_ : PrivacyReport
    n_features_in_ : int

    Raises
    ------
    ValueError
        Missing or invalid bounds, a sparse X, an invalid epsilon, delta or clip (before
        the data's values are read or the budget charged).
    BudgetExceededError
        The fit would overdraw ``budget``.
    """

    def __init__(self, *, epsilon=1.0, delta=None, bounds=None, clip=3.0, random_state=None, noise="auto",
                 budget=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.clip = clip
        self.random_state = random_state
        self.noise = noise
        self.budget = budget

    def fit(self, X, y=None):
        """Release the private mean and scale of each feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = _dense(self, X, reset=True)
        n, p = X.shape
        low, high, source = _public_ranges(self.bounds, p)
        if not np.all(low < high):
            raise ValueError("bounds: every feature's low must be below its high")
        if isinstance(self.clip, bool) or not isinstance(self.clip, (int, float)) or not self.clip > 0:
            raise ValueError(f"clip must be a number > 0, got {self.clip!r}")
        delta = 1.0 / n**2 if self.delta is None else self.delta
        check_privacy_params(self.epsilon, delta)
        check_budget(self.budget)
        noise = make_noise(self.random_state, self.noise, parameter="noise")
        charge(self.budget, self.epsilon, delta, "DPStandardScaler")
        rho = zcdp_budget(self.epsilon, delta)
        centre, half = (low + high) / 2.0, (high - low) / 2.0
        u = (np.clip(X, low, high) - centre) / half
        sens1, sens2 = 2.0 * math.sqrt(p) / n, math.sqrt(p) / n
        sigma1, sigma2 = sens1 / math.sqrt(rho), sens2 / math.sqrt(rho)  # each at rho / 2: sens / sqrt(2 rho / 2)
        m1 = noise.release(u.mean(axis=0), "gaussian", sigma1, sensitivity=sens1, name="scaler means")
        m2 = noise.release((u**2).mean(axis=0), "gaussian", sigma2, sensitivity=sens2, name="scaler second moments")
        self.mean_ = centre + half * m1
        self.scale_ = half * np.sqrt(np.maximum(m2 - m1**2, VARIANCE_FLOOR))
        self._low, self._high = low, high
        self.output_bounds_ = Bounds(-float(self.clip), float(self.clip),
                                     source=f"DPStandardScaler output, clipped to +-{self.clip:g} standard deviations")
        self.privacy_report_ = PrivacyReport(
            mechanism="dp-standard-scaler", method="private standard scaler (Gaussian moments)", calibration="tight",
            epsilon=float(self.epsilon), delta=float(delta), accountant_epsilon=zcdp_epsilon(rho, delta),
            accountant="rdp", iterations=None, bounds_source=source, noise_source=noise.describe(),
            noise_seeded=noise.seeded,
            noise={"zCDP budget (rho), half to each moment": rho, "noise of the means of u": sigma1,
                   "noise of the means of u^2": sigma2, "L2 sensitivities": f"{sens1:.3g}, {sens2:.3g}",
                   "variance floor (squared half-ranges)": VARIANCE_FLOOR, "source": SOURCE})
        return self

    def transform(self, X):
        """``clip((clip(X, bounds) - mean_) / scale_, -clip, clip)``, shape (n_samples, n_features)."""
        check_is_fitted(self)
        X = _dense(self, X, reset=False)
        Z = (np.clip(X, self._low, self._high) - self.mean_) / self.scale_
        return np.clip(Z, -self.clip, self.clip)

    def inverse_transform(self, X):
        """``X * scale_ + mean_``, shape (n_samples, n_features): back to the original units (post-processing of the
        released moments). Exact for values that ``transform`` did not clip."""
        check_is_fitted(self)
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.mean_.shape[0]:
            raise ValueError(f"X must have shape (n_samples, {self.mean_.shape[0]}), got {X.shape}")
        return X * self.scale_ + self.mean_


class DPMinMaxScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Map each feature's public range onto ``feature_range`` (values outside it clipped).

    It reads no statistic of the data (the ranges are declared), so it spends no privacy
    budget; a range bought from the data belongs to the estimator (``bounds="private"``).

    Parameters
    ----------
    bounds : Bounds, dict or str (JSON file)
    feature_range : tuple (low, high)

    Attributes
    ----------
    output_bounds_ : Bounds
        ``feature_range`` for every feature.
    n_features_in_ : int

    Raises
    ------
    ValueError
        Missing or invalid bounds or feature_range.
    """

    def __init__(self, *, bounds=None, feature_range=(0.0, 1.0)):
        self.bounds = bounds
        self.feature_range = feature_range

    def fit(self, X, y=None):
        """Check the declared ranges against X's width (no value of X is read)."""
        X = validated(self, X, accept_sparse="csr", dtype=np.float64, reset=True)
        a, b = self.feature_range
        if not a < b:
            raise ValueError(f"feature_range must be (low, high) with low < high, got {self.feature_range!r}")
        self._low, self._high, source = _public_ranges(self.bounds, X.shape[1])
        if not np.all(self._low < self._high):
            raise ValueError("bounds: every feature's low must be below its high")
        self.output_bounds_ = Bounds(float(a), float(b), source=f"DPMinMaxScaler output on [{a:g}, {b:g}] ({source})")
        return self

    def transform(self, X):
        """``a + (b - a) (clip(X, bounds) - low) / (high - low)``, shape (n_samples, n_features); sparse X stays
        sparse where the map sends 0 to 0 (ValueError otherwise: X would become dense)."""
        check_is_fitted(self)
        X = validated(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        a, b = self.feature_range
        def scale(values, low, high):
            return a + (b - a) * (np.clip(values, low, high) - low) / (high - low)

        if not sp.issparse(X):
            return scale(X, self._low, self._high)
        if np.any(scale(np.zeros_like(self._low), self._low, self._high) != 0):
            raise ValueError("DPMinMaxScaler on sparse X: the map sends 0 elsewhere for some feature, so X would "
                             "become dense; give the estimator bounds= instead (it maps onto them and keeps X sparse)")
        X = X.copy()
        X.data = scale(X.data, self._low[X.indices], self._high[X.indices])
        return X
