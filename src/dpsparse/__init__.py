"""dpsparse: differentially private sparse learning.

Private empirical risk minimization of linear models with sparsity-inducing norms.

The public names below are imported on first use (PEP 562): ``import dpsparse`` and the command line's parser
do not pay for scikit-learn and scipy's optimizers until an estimator or a fit needs them.
"""
import importlib
import importlib.util

__version__ = "0.1.0"

_HOMES = {  # public name -> the module that defines it
    "DPLogisticRegression": "estimators", "DPLinearSVC": "estimators", "DPLinearRegression": "estimators",
    "DPLasso": "estimators", "DPElasticNet": "estimators", "DPSearchCV": "tuning", "Bounds": "data",
    "PrivacyReport": "accounting", "PrivacyBudget": "accounting", "BudgetExceededError": "accounting",
    **dict.fromkeys(["InputError", "PrivacyLeakWarning", "PrivacyCalibrationWarning", "FixedSeedWarning",
                     "WeakGuaranteeWarning", "ClippingWarning", "AbsentClassWarning", "UnselectedLabelWarning",
                     "ClassesFromDataWarning", "ConstantPredictorWarning", "NoBetterThanConstantWarning"],
                    "exceptions"),
}

__all__ = list(_HOMES)


def __getattr__(name):
    """A public name (``_HOMES``) or a submodule (``dpsparse.estimators``), imported now."""
    if name in _HOMES:
        value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    elif not name.startswith("_") and importlib.util.find_spec(f".{name}", __name__) is not None:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_HOMES})
