"""Private unless declared, in Python: default bounds, loud warnings, no silent absurd fits."""
import json
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
    UnselectedLabelWarning,
    data,
    private_labels,
)
from dpsparse.cli import main
from dpsparse.noise import NoiseSource


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def test_the_default_bounds_are_bought_privately_or_refused_with_the_remedy():
    assert DPLogisticRegression().get_params()["bounds"] == "private"
    X, y, _, _ = data.load_bundled("breast_cancer")
    budget = PrivacyBudget(1.0, 1e-3)
    with pytest.raises(ValueError, match="too few to buy .* would need about .* records.*Declare public "
                                         "bounds instead.*bounds=.from-data."):
        _quiet_fit(DPLogisticRegression(classes=[0, 1], budget=budget), X, y)
    assert budget.spent == []
    rng = np.random.default_rng(0)
    Xl = rng.normal(3.0, 2.0, (20000, 4))
    yl = (Xl[:, 0] > 3.0).astype(int)
    est = _quiet_fit(DPLogisticRegression(classes=[0, 1], random_state=0), Xl, yl)
    report = est.privacy_report_
    assert report.accounting_holds and "private" in report.bounds_source and est.score(Xl, yl) > 0.8


def test_bounds_none_is_refused_with_the_three_choices():
    X, y, _, _ = data.load_bundled("breast_cancer")
    with pytest.raises(ValueError, match="declare public bounds.*'private'.*'from-data'"):
        _quiet_fit(DPLogisticRegression(bounds=None, classes=[0, 1]), X, y)


def test_reading_bounds_off_the_data_is_loud():
    X, y, _, _ = data.load_bundled("breast_cancer")
    with pytest.warns(PrivacyLeakWarning):
        est = DPLogisticRegression(bounds="from-data", classes=[0, 1]).fit(X, y)
    assert not est.privacy_report_.accounting_holds


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


def test_with_nothing_declared_the_label_set_is_selected_privately_too():
    """``DPLogisticRegression(epsilon=1).fit(X, y)``: bounds and label set bought inside the budget, no warning that
    anything was read off the data; too few records are refused with the remedy."""
    X, y, _, _ = data.load_bundled("breast_cancer")
    X, y = np.vstack([X] * 20), np.concatenate([y] * 20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    assert not [w for w in caught if issubclass(w.category, (ClassesFromDataWarning, PrivacyLeakWarning))]
    assert list(est.classes_) == [0, 1] and est.privacy_report_.noise["label set"].startswith("selected privately")
    assert est.privacy_report_.accounting_holds and est.privacy_report_.accountant_epsilon <= 1.0
    with pytest.raises(ValueError, match="too few to select the label set.*declare the classes"):
        _quiet_fit(DPLogisticRegression(epsilon=1.0, random_state=0), X[:300], y[:300])


def test_classes_read_from_the_data_warn():
    X, y, bounds, _ = data.load_bundled("breast_cancer")
    with pytest.warns(ClassesFromDataWarning):
        DPLogisticRegression(bounds=bounds, classes="from-data", random_state=0).fit(X, y)
    assert bounds.classes == [0, 1]  # the bundled bounds declare the label set: no warning without classes=
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClassesFromDataWarning)
        est = DPLogisticRegression(bounds=bounds, random_state=0).fit(X, y)
    assert "label set" not in est.privacy_report_.noise


def test_a_classifier_on_a_continuous_target_is_refused_with_the_remedy():
    """Refused on the noisy label counts (no label passes), not on the labels' values, which would tell neighbouring
    datasets apart."""
    X, y, bounds, _ = data.load_bundled("diabetes")
    with pytest.raises(ValueError, match=r"0 label\(s\) passed the threshold.*continuous target.*DPLasso"):
        _quiet_fit(DPLogisticRegression(bounds=Bounds(bounds.feature_low, bounds.feature_high)), X, y)


@pytest.mark.parametrize("odd", [0.5, 7, 1e9])
def test_a_label_set_selected_privately_takes_any_value_of_one_record(odd):
    """Neighbouring datasets: the labels 0, 1, and one record's label replaced by a value no other holds (not integral,
    which made the labels "continuous" and the fit a refusal; a third class; a huge one). Every one fits, and the
    label set is the same, in the same form: the odd value made the integer labels float, and ``classes_`` with them,
    before the selected values were written on their own (``private_labels.canonical``)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (4000, 3))
    y = (X[:, 0] > 0).astype(int)
    seen = []
    for labels in (y, np.r_[odd, y[1:]]):
        est = _quiet_fit(DPLogisticRegression(bounds=Bounds(-1.0, 1.0), random_state=0), X, labels)
        seen.append((est.classes_.dtype, est.classes_.tolist()))
    assert seen == [(np.dtype(int), [0, 1])] * 2


def test_an_object_label_column_with_one_label_of_another_type_fits_as_its_neighbour_does():
    """A pandas-like object column of integers and, on the neighbouring dataset, one record's label a string (or
    None): ``np.unique`` could not order them and raised after the budget was charged; the labels are now counted in
    canonical form, and both fits release the same label set."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (4000, 3))
    y = np.empty(4000, dtype=object)
    y[:] = (X[:, 0] > 0).astype(int).tolist()
    seen = []
    for odd in (None, "x", b"x"):
        labels = y.copy()
        if odd is not None:
            labels[0] = odd
        est = _quiet_fit(DPLogisticRegression(bounds=Bounds(-1.0, 1.0), random_state=0), X, labels)
        seen.append((est.classes_.dtype, est.classes_.tolist()))
    assert seen == [(np.dtype(int), [0, 1])] * 3


@pytest.mark.parametrize(("values", "expected"), [
    (np.array([-0.0, 1.0]), np.array([0, 1])), (np.array([False, True]), np.array([0, 1])),
    (np.array([0.0, 0.5]), np.array([0.0, 0.5])), (np.array(["a", "bb"], dtype="<U9"), np.array(["a", "bb"])),
    (np.array([-0.0, 0.5]), np.array([0.0, 0.5]))])
def test_the_selected_labels_take_a_form_read_off_themselves(values, expected):
    """The released values do not carry the whole label array's dtype (a text width set by a label that did not pass)
    or a zero's sign (which of the records' zeros ``np.unique`` kept)."""
    out = private_labels.canonical(values)
    assert out.dtype == expected.dtype and out.tolist() == expected.tolist()
    if out.dtype.kind == "f":
        assert not np.signbit(out).any()


@pytest.mark.parametrize("rare", [[2], [2, 3]])
def test_labels_outside_a_label_set_selected_privately_warn_the_data_holder(rare):
    """A label too rare to pass the selection counts as the first class of two (none of three or more): the data
    holder is told how many, with an ``UnselectedLabelWarning`` (holder-only); the selection and the fit as before."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1.0, 1.0, (5100, 2))
    y = (X[:, 0] > 0).astype(int)
    y[:100] = np.resize(rare, 100)
    with pytest.warns(UnselectedLabelWarning, match=r"^100 training label\(s\) lie outside .* \[0, 1\].* class 0;"):
        est = DPLogisticRegression(bounds=Bounds(-1.0, 1.0), random_state=0).fit(X, y)
    assert est.classes_.tolist() == [0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnselectedLabelWarning)
        DPLogisticRegression(bounds=Bounds(-1.0, 1.0), random_state=0).fit(X[100:], y[100:])  # every label selected


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


def test_the_cli_releases_the_same_label_set_whatever_value_one_record_holds(tmp_path, capsys):
    """The CLI reads no label before the private selection: one record's label 0.5 (which made the labels continuous
    and the fit a refusal) changes neither the outcome nor how the model file lists the classes."""
    rng = np.random.default_rng(0)
    u = rng.uniform(0.0, 1.0, (2000, 2))
    bfile = tmp_path / "b.json"
    bfile.write_text('{"feature_low": [0, 0], "feature_high": [1, 1]}')
    listed = []
    for first in ("1", "0.5"):
        labels = [first] + [str(int(a > 0.5)) for a in u[1:, 0]]
        csv = tmp_path / "d.csv"
        csv.write_text("a,b,label\n" + "\n".join(f"{a:.3f},{b:.3f},{t}" for (a, b), t in zip(u, labels)))
        out = tmp_path / f"m{first}.json"
        assert main(["fit", "--data", str(csv), "--target", "label", "--loss", "logistic", "--bounds", str(bfile),
                     "--no-compare", "--out", str(out)]) == 0
        listed.append(json.loads(out.read_text())["classes"])
    assert listed == [[0, 1], [0, 1]]


class _Counts(NoiseSource):
    """Zero noise; records the released counts and the claimed scale and sensitivity."""

    def __init__(self):
        super().__init__(np.random.default_rng(0), seeded=True)
        self.released = []

    def release(self, value, kind, scale, *, sensitivity, name, norm="l2", sampling=None):
        self.released.append((np.array(value, dtype=float), float(scale), float(sensitivity), name))
        return value


def test_a_private_label_set_is_charged_once_and_composed_within_the_target():
    X, y, bounds, _ = data.load_bundled("breast_cancer")
    budget = PrivacyBudget(1.0, 1e-3)
    est = _quiet_fit(DPLogisticRegression(bounds=bounds, classes="private", delta=1e-6, budget=budget,
                                          random_state=0), X, y)
    report = est.privacy_report_
    assert list(est.classes_) == [0, 1] and budget.spent == [(1.0, 1e-6, "DPLogisticRegression (dp-gd)")]
    assert report.delta == 1e-6 and report.accountant_epsilon <= 1.0 + 1e-9 and "label set" in report.noise
    from dpsparse import private_labels
    from dpsparse.accounting import zcdp_epsilon

    rho_labels, delta_labels = map(float, report.noise["label set: zCDP rho, delta"].split(", "))
    assert delta_labels == pytest.approx(private_labels.DELTA_SHARE * 1e-6, rel=1e-2)  # its failure probability
    rho = rho_labels / 0.2  # breast cancer at epsilon 1 takes the largest share (docs/privacy.md)
    assert zcdp_epsilon(rho, 1e-6 - delta_labels) == pytest.approx(1.0, rel=1e-3)  # the rest of delta converts
    assert report.accountant_epsilon == pytest.approx(private_labels.whole_epsilon(rho, 1e-6), rel=1e-3)
    with pytest.raises(ValueError, match="200 records are too few to select the label set.*declare the classes"):
        _quiet_fit(DPLogisticRegression(bounds=bounds, classes="private", epsilon=0.05, budget=budget,
                                        random_state=0), X[:200], y[:200])  # refused before the data is read
    with pytest.raises(ValueError, match="mechanism dp-sgd does not calibrate to"):
        _quiet_fit(DPLogisticRegression(bounds=bounds, classes="private", mechanism="dp-sgd", budget=budget), X, y)
    assert len(budget.spent) == 1
    # a structured norm on 30 features: the rule's DP-GD, calibrated in zCDP, composes with the label set (on more
    # than 100, where the rule takes DP-SGD, which has no zCDP calibration, a label set bought turns it to DP-GD)
    groups = [list(range(i, i + 5)) for i in range(0, 30, 5)]
    fitted = _quiet_fit(DPLogisticRegression(bounds=bounds, classes="private", penalty="group-l2", groups=groups,
                                             random_state=0), X, y)
    report = fitted.privacy_report_
    assert report.mechanism == "dp-gd" and "label set" in report.noise and report.accountant_epsilon <= 1.0 + 1e-9
    assert "structured norm on 30 features" in report.noise["mechanism chosen (mechanism='auto')"]
    assert fitted.score(X, y) > 0.8


def test_the_label_counts_move_by_at_most_their_sensitivity_and_a_lone_label_rarely_passes():
    from dpsparse import private_labels

    rng = np.random.default_rng(0)
    y = rng.integers(3, size=500)
    base = _Counts()
    private_labels.select_labels(y, 0.01, 1e-6, base)
    counts, scale, sensitivity, name = base.released[0]
    assert name == "label counts" and sensitivity == pytest.approx(np.sqrt(2)) and scale == pytest.approx(10.0)
    for i, new in [(0, (y[0] + 1) % 3), (1, (y[1] + 2) % 3)]:
        other, moved = y.copy(), _Counts()
        other[i] = new
        private_labels.select_labels(other, 0.01, 1e-6, moved)
        assert np.linalg.norm(moved.released[0][0] - counts) <= sensitivity + 1e-12
    lone = np.concatenate([np.zeros(300), [7]])  # label 7 held by one record: passes with probability delta_L
    passed = sum(7 in private_labels.select_labels(lone, 0.01, 0.05, NoiseSource(np.random.default_rng(s),
                                                                                 seeded=True))[0]
                 for s in range(2000))
    assert passed / 2000 <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 2000)  # error rate of the test: about 1e-3


def test_the_cli_selects_undeclared_classes_privately(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (3000, 2))
    y = (X[:, 0] > 0.5).astype(int)
    csv = tmp_path / "d.csv"
    csv.write_text("a,b,label\n" + "\n".join(f"{u:.4f},{v:.4f},{t}" for (u, v), t in zip(X, y)) + "\n")
    bfile = tmp_path / "b.json"
    bfile.write_text('{"feature_low": [0, 0], "feature_high": [1, 1]}')
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(csv), "--target", "label", "--bounds", str(bfile), "--out", str(out)]) == 2
    assert "say what the labels are" in capsys.readouterr().err  # the task is the user's to say
    assert main(["fit", "--data", str(csv), "--target", "label", "--loss", "logistic", "--bounds", str(bfile),
                 "--out", str(out)]) == 0
    model = json.loads(out.read_text())
    assert model["classes"] == [0, 1] and "label set" in model["privacy_report"]["noise"]
    assert not any("read from the private data" in w for w in model["warnings"])
    capsys.readouterr()
    small = tmp_path / "s.csv"
    small.write_text("a,b,label\n" + "\n".join(f"{u:.4f},{v:.4f},{t}" for (u, v), t in zip(X[:100], y[:100])))
    assert main(["fit", "--data", str(small), "--target", "label", "--bounds", str(bfile), "--loss", "logistic",
                 "--out", str(tmp_path / "s.json")]) == 2
    assert "--classes in the CLI" in capsys.readouterr().err


def test_a_bounds_file_declares_the_label_set_for_the_cli(tmp_path, capsys):
    """The bounds' ``classes`` make a classifier with a public label set: nothing selected, nothing read."""
    csv = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    rows = rng.uniform(0, 1, (400, 2))
    csv.write_text("a,b,label\n" + "\n".join(f"{u:.3f},{v:.3f},{int(u > 0.5)}" for u, v in rows))
    bfile = tmp_path / "b.json"
    bfile.write_text('{"feature_low": [0, 0], "feature_high": [1, 1], "classes": [0, 1]}')
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(csv), "--target", "label", "--bounds", str(bfile), "--seed", "0",
                 "--out", str(out)]) == 0
    model = json.loads(out.read_text())
    assert model["classes"] == [0, 1] and "label set" not in json.dumps(model["privacy_report"])


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-6), (0.1, 0.01), (8.0, 0.2)])
def test_the_label_selections_failure_probability_adds_to_epsilon_and_the_budget_leaves_room_for_it(epsilon, delta):
    from dpsparse import private_labels
    from dpsparse.accounting import zcdp_epsilon

    rho, delta_labels = private_labels.budget(epsilon, delta)
    excess = -np.log1p(-delta_labels)  # conditioning on no failure: log(1 / (1 - delta_L)) (docs/privacy.md)
    whole = private_labels.whole_epsilon(rho, delta)
    assert whole == pytest.approx(zcdp_epsilon(rho, delta - delta_labels) + excess, rel=1e-12)
    assert epsilon * (1 - 1e-3) <= whole <= epsilon  # the largest budget that fits, to the bisection's tolerance


def test_a_delta_whose_label_failure_costs_all_of_epsilon_is_refused_not_searched_for_ever():
    from dpsparse import private_labels

    with pytest.raises(ValueError, match="delta=0.5: the label selection .* declare the classes"):
        private_labels.budget(0.05, 0.5)  # log(1 / (1 - 0.05)) = 0.051 > 0.05
