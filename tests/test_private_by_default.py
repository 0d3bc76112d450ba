"""Private unless declared, in Python: default bounds, loud warnings, no silent absurd fits."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes

from dpsparse import (
    Bounds,
    ClassesFromDataWarning,
    ClippingWarning,
    DPLasso,
    DPLogisticRegression,
    PrivacyBudget,
    PrivacyLeakWarning,
    data,
)
from dpsparse.cli import main


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def test_the_default_bounds_are_bought_privately_or_refused_with_the_remedy():
    assert DPLogisticRegression().get_params()["bounds"] == "private"
    X, y, _, _ = data.load_bundled("breast_cancer")
    budget = PrivacyBudget(1.0, 1e-3)
    with pytest.raises(ValueError, match="too few to buy .*declare public bounds.*bounds='from-data'"):
        _quiet_fit(DPLogisticRegression(classes=[0, 1], budget=budget), X, y)
    assert budget.spent == []
    rng = np.random.default_rng(0)
    Xl = rng.normal(3.0, 2.0, (20000, 4))
    yl = (Xl[:, 0] > 3.0).astype(int)
    est = _quiet_fit(DPLogisticRegression(classes=[0, 1], random_state=0), Xl, yl)
    report = est.privacy_report_
    assert report.guarantee_holds and "private" in report.bounds_source and est.score(Xl, yl) > 0.8


def test_bounds_none_is_refused_with_the_three_choices():
    X, y, _, _ = data.load_bundled("breast_cancer")
    with pytest.raises(ValueError, match="declare public bounds.*'private'.*'from-data'"):
        _quiet_fit(DPLogisticRegression(bounds=None, classes=[0, 1]), X, y)


def test_reading_bounds_off_the_data_is_loud():
    X, y, _, _ = data.load_bundled("breast_cancer")
    with pytest.warns(PrivacyLeakWarning):
        est = DPLogisticRegression(bounds="from-data", classes=[0, 1]).fit(X, y)
    assert not est.privacy_report_.guarantee_holds


def test_clipped_features_and_labels_warn_in_python():
    X, y = load_diabetes(return_X_y=True, scaled=True)  # scaled features against raw-unit bounds
    _, _, bounds, _ = data.load_bundled("diabetes")
    with pytest.warns(ClippingWarning, match=r"feature values \(9\d%\) lie outside"):
        DPLasso(bounds=bounds, random_state=0).fit(X, y)
    Xr, yr = load_diabetes(return_X_y=True, scaled=False)
    narrow = Bounds(bounds.feature_low, bounds.feature_high, 0.0, 100.0, source="a label range too narrow")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPLasso(bounds=narrow, clip=0.5, random_state=0).fit(Xr, yr)
    messages = [str(w.message) for w in caught if issubclass(w.category, ClippingWarning)]
    assert len(messages) == 1 and "labels" in messages[0]
    with warnings.catch_warnings(record=True) as caught:  # the default narrows the label range privately
        warnings.simplefilter("always")
        DPLasso(bounds=bounds, random_state=0).fit(Xr, yr)
    assert not [w for w in caught if issubclass(w.category, ClippingWarning)]


def test_classes_read_from_the_data_warn():
    X, y, bounds, _ = data.load_bundled("breast_cancer")
    with pytest.warns(ClassesFromDataWarning):
        DPLogisticRegression(bounds=bounds, random_state=0).fit(X, y)


def test_a_classifier_on_a_continuous_target_is_refused_with_the_remedy():
    X, y, bounds, _ = data.load_bundled("diabetes")
    with pytest.raises(ValueError, match="214 distinct values.*DPLasso"):
        _quiet_fit(DPLogisticRegression(bounds=Bounds(bounds.feature_low, bounds.feature_high)), X, y)


def test_a_declared_label_set_fits_whatever_values_the_data_holds(tmp_path, capsys):
    X, _, bounds, _ = data.load_bundled("breast_cancer")
    ones = np.ones(X.shape[0], dtype=int)
    est = _quiet_fit(DPLogisticRegression(bounds=bounds, classes=[0, 1], random_state=0), X, ones)
    assert list(est.classes_) == [0, 1]
    csv = tmp_path / "one.csv"
    csv.write_text("a,b,label\n" + "\n".join(f"{u:.3f},{u / 2:.3f},1" for u in np.linspace(0, 1, 400)))
    bfile = tmp_path / "b.json"
    bfile.write_text('{"feature_low": [0, 0], "feature_high": [1, 1]}')
    assert main(["fit", "--data", str(csv), "--target", "label", "--classes", "0,1", "--bounds", str(bfile),
                 "--seed", "0", "--no-compare", "--out", str(tmp_path / "m.json")]) == 0
