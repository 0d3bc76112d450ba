"""dpsparse: differentially private sparse learning.

Private empirical risk minimization of linear models with sparsity-inducing norms.
"""
from .accounting import BudgetExceededError, PrivacyBudget, PrivacyReport
from .data import Bounds
from .estimators import DPElasticNet, DPLasso, DPLinearRegression, DPLinearSVC, DPLogisticRegression
from .exceptions import (
    ClassesFromDataWarning,
    ClippingWarning,
    ConstantPredictorWarning,
    FixedSeedWarning,
    NoBetterThanConstantWarning,
    PrivacyCalibrationWarning,
    PrivacyLeakWarning,
    WeakGuaranteeWarning,
)
from .tuning import DPSearchCV

__version__ = "0.1.0"

__all__ = [
    "DPLogisticRegression", "DPLinearSVC", "DPLinearRegression", "DPLasso", "DPElasticNet", "DPSearchCV", "Bounds",
    "PrivacyReport",
    "PrivacyBudget", "BudgetExceededError",
    "PrivacyLeakWarning", "PrivacyCalibrationWarning", "FixedSeedWarning", "WeakGuaranteeWarning", "ClippingWarning",
    "ClassesFromDataWarning", "ConstantPredictorWarning", "NoBetterThanConstantWarning",
]
