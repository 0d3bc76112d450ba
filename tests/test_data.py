import json
import re

import numpy as np
import pytest
import scipy.sparse as sp

from dpsparse import data, schema
from dpsparse.exceptions import PrivacyLeakWarning


def _bounds(p=3, **kw):
    return data.Bounds(np.zeros(p), np.full(p, 10.0), **kw)


def test_prepare_maps_public_ranges_onto_the_unit_box_and_counts_clipping():
    X = np.array([[0.0, 5.0, 10.0], [12.0, -1.0, 2.5]])
    d = data.prepare(X, np.array([1.0, -1.0]), _bounds(), classification=True)
    np.testing.assert_allclose(d.X[0], [-1.0, 0.0, 1.0, 1.0])  # intercept column last
    np.testing.assert_allclose(d.X[1], [1.0, -1.0, -0.5, 1.0])
    assert d.clipped_values == 2 and d.clipped_labels == 0
    np.testing.assert_array_equal(d.feature_bounds, np.ones(4))


def test_binary_labels_stay_one_byte_each_and_every_other_label_becomes_a_float():
    """The estimators encode two classes as int8 in {-1, +1} (``_encode``): the design keeps them so (a vector of n
    floats fewer at a fit's peak); regression labels, and float labels, are floats."""
    from dpsparse import DPLogisticRegression

    X = np.array([[0.0, 5.0, 10.0], [12.0, -1.0, 2.5], [3.0, 3.0, 3.0]])
    labels = np.array([1, -1, 1], dtype=np.int8)
    assert data.prepare(X, labels, _bounds(), classification=True).y.dtype == np.int8
    assert data.prepare(X, labels.astype(float), _bounds(), classification=True).y.dtype == np.float64
    regression = data.prepare(X, labels, _bounds(label_low=-2.0, label_high=2.0), classification=False)
    assert regression.y.dtype == np.float64 and regression.y.tolist() == [0.5, -0.5, 0.5]
    est = DPLogisticRegression(classes=["no", "yes"])
    assert est._encode(np.array(["yes", "no", "yes"])).tolist() == [1, -1, 1]
    assert est._encode(np.array(["yes", "no", "yes"])).dtype == np.int8


def test_regression_labels_and_coefficients_map_back_to_original_units():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, (50, 3))
    y = rng.uniform(100, 300, 50)
    d = data.prepare(X, y, _bounds(label_low=100.0, label_high=300.0), classification=False)
    assert d.y.min() >= -1 and d.y.max() <= 1
    w = rng.normal(size=4)
    coef, intercept = d.to_original(w)
    # a model in bounded coordinates predicts the same labels as its original-units version
    np.testing.assert_allclose((d.X @ w - d.label_shift) / d.label_scale, X @ coef + intercept)


def test_sparse_input_gets_the_dense_map_kept_implicit():
    X = sp.csr_matrix(np.array([[0.0, 4.0], [-8.0, 0.0]]))
    b = data.Bounds([-8.0, -2.0], [4.0, 2.0])
    d = data.prepare(X, np.array([1.0, -1.0]), b, classification=True)
    # feature 0: x' = x / 6 + 1/3 (its zero maps to 1/3); feature 1: x' = x / 2, 4 -> 2 clipped to 1
    np.testing.assert_allclose(d.X.toarray(), [[1 / 3, 1.0, 1.0], [-1.0, 0.0, 1.0]])
    np.testing.assert_allclose(d.X.c, [1 / 3, 0.0, 0.0])  # the symmetric range keeps its zeros
    assert d.X.S.nnz == 4  # X's two values and the intercept column: never densified
    assert d.clipped_values == 1
    coef, intercept = d.to_original(np.array([1.0, 2.0, 0.5]))
    np.testing.assert_allclose(X[1] @ coef + intercept, d.X[[1]] @ np.array([1.0, 2.0, 0.5]))  # row 1: unclipped


def test_row_norm_bound_scales_long_rows_down():
    X = np.array([[10.0, 10.0, 10.0], [5.0, 5.0, 5.0]])
    d = data.prepare(X, np.array([1.0, -1.0]), _bounds(row_norm=1.0), classification=True)
    assert d.clipped_rows == 1
    assert np.linalg.norm(d.X[0, :3]) == pytest.approx(1.0)


def test_bounds_from_data_warn_and_are_marked_private():
    with pytest.warns(PrivacyLeakWarning, match="NOT differentially private"):
        b = data.bounds_from_data(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([5.0, 6.0]), regression=True)
    assert not b.public and b.label_low == 5.0


@pytest.mark.parametrize("kw,match", [
    (dict(feature_low=[0, 1], feature_high=[1]), "feature_low has 2"),
    (dict(feature_low=[2.0], feature_high=[1.0]), "feature 0 has feature_low 2.0 > feature_high 1.0"),
    (dict(feature_low=[np.nan], feature_high=[1.0]), "finite"),
    (dict(feature_low=[0], feature_high=[1], label_low=1.0), "both label_low and label_high"),
    (dict(feature_low=[0], feature_high=[1], label_low=1.0, label_high=1.0), "label_low < label_high"),
    (dict(feature_low=[0], feature_high=[1], row_norm=-1.0), "row_norm"),
])
def test_invalid_bounds(kw, match):
    with pytest.raises(ValueError, match=match):
        data.Bounds(**kw)


def test_bounds_json_roundtrip_and_errors(tmp_path):
    b = _bounds(label_low=0.0, label_high=1.0)
    path = tmp_path / "b.json"
    path.write_text(json.dumps(b.to_dict()))
    b2 = data.Bounds.from_json(path)
    np.testing.assert_array_equal(b2.feature_high, b.feature_high)
    path.write_text(json.dumps({"feature_low": [0], "feature_high": [1], "colour": 3}))
    with pytest.raises(ValueError, match="unknown keys"):
        data.Bounds.from_json(path)
    with pytest.raises(ValueError, match="cannot be read"):
        data.Bounds.from_json(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="3 feature ranges given for 2 features"):
        data.prepare(np.zeros((2, 2)), np.ones(2), _bounds(), True)
    path.write_text(json.dumps({"feature_low": [0, 0, 0], "feature_high": [1, 1, 1]}))
    with pytest.raises(ValueError, match=r"bounds \(file b.json\): 3 feature ranges given for 2 features"):
        data.Bounds.from_json(path).for_features(2)  # the file named: a user may have several
    with pytest.raises(ValueError, match="label range"):
        data.prepare(np.zeros((2, 3)), np.ones(2), _bounds(), classification=False)
    with pytest.raises(ValueError, match=r"feature_low must be a number or a 1-d array .* shape \(3, 1\)"):
        data.Bounds(np.zeros((3, 1)), np.ones(3))


@pytest.mark.parametrize("X,y,match", [
    (np.array([[1.0, np.nan]]), None, "NaN or infinity"),
    (np.array([[1.0, np.inf]]), None, "NaN or infinity"),
    (np.zeros((0, 3)), None, "empty"),
    (np.zeros((3, 2)), np.zeros(2), "different numbers of samples"),
    (np.zeros((2, 2)), np.array([1.0, np.nan]), "y contains NaN"),
    (np.zeros(3), None, "2-d"),
])
def test_check_data_rejects_bad_input(X, y, match):
    with pytest.raises(ValueError, match=match):
        data.check_data(X, y)


def test_csv_loader(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,label,b\n1,0,2\n3,1,4\n")
    X, y, names = data.load(path, target="label")
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(y, [0, 1])
    assert names == ["a", "b"]
    with pytest.raises(ValueError, match="target column 'c' is not among the 3 names of .*csv' \\("):
        data.load(path, target="c")  # no near miss: no name shown
    with pytest.raises(ValueError, match="target column 'Lable' .* did you mean 'label'\\?"):
        data.load(path, target="Lable")
    with pytest.raises(ValueError, match="needs the name of its label column"):
        data.load(path)
    path.write_text("a,label\n1,x\n")
    with pytest.raises(ValueError, match="the target column 'label' has text labels: .* read through a schema"):
        data.load(path, target="label")
    path.write_text("a,b,label\nz,1,0\n2,,1\n")
    with pytest.raises(ValueError, match=r"column 1 \(of 3\) has non-numeric values"):
        data.load(path, target="label")
    path.write_text("a,b,label\n3,1,0\n2,,1\n")
    with pytest.raises(ValueError, match=r"column 2 \(of 3\) has missing values \(empty fields\): drop those"):
        data.load(path, target="label")
    path.write_text("a,b,label\n3,1,0\n2,NaN,1\n")  # a NaN is read as a number: named by its column too
    with pytest.raises(ValueError, match=r"column 2 \(of 3\) has missing or infinite values .*drop those"):
        data.load(path, target="label")
    with pytest.raises(ValueError, match="does not exist or is not a file$"):
        data.load(tmp_path / "nope.csv", target="a")
    with pytest.raises(ValueError, match=r"'iris' does not exist .*\(the bundled datasets: breast_cancer, diabetes\)"):
        data.load("iris")


@pytest.mark.parametrize("name, kind", [("d.csv.gz", "csv"), ("d.svm.gz", "svmlight"), ("d.data.gz", "schema")])
def test_a_damaged_or_uncompressed_gz_file_is_named_without_quoting_it(tmp_path, name, kind):
    import gzip

    from dpsparse.schema import load_schema

    text = "a,b\n" + "".join(f"{i},{i % 2}\n" for i in range(2000)) if kind != "svmlight" else \
        "".join(f"{i % 2} 1:{i}\n" for i in range(2000))
    path = tmp_path / name
    whole = gzip.compress(text.encode())
    schema = None
    if kind == "schema":
        (tmp_path / "s.json").write_text(json.dumps(
            {"format": "dpsparse-schema/1", "header": True, "target": {"name": "b", "classes": ["0", "1"]},
             "columns": [{"name": "a", "type": "numeric", "range": [0, 2000]}, {"name": "b"}]}))
        schema = load_schema(tmp_path / "s.json")

    def read():
        return schema.read(path) if schema else data.load(path, target="b" if kind == "csv" else None)

    for content, match in [(whole[: len(whole) // 2], "is a damaged or incomplete gzip file"),
                           (text.encode(), "ends in .gz but is not gzip-compressed")]:
        path.write_bytes(content)
        with pytest.raises(ValueError, match=match) as err:
            read()
        assert "1999" not in str(err.value) and "a,b" not in str(err.value) and "b'" not in str(err.value)


def test_svmlight_loader(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("1 1:0.5 3:2\n-1 2:1\n")
    X, y, names = data.load(path)
    assert sp.issparse(X) and X.shape == (2, 3) and names is None
    path.write_text("39, State-gov, 77516\n")  # a CSV record: the parser's message quotes it, ours never does
    with pytest.raises(ValueError, match="cannot be read as svmlight") as err:
        data.load(path)
    assert "State-gov" not in str(err.value) and "77516" not in str(err.value)
    with pytest.raises(ValueError, match="unknown data format"):
        data.load(path, format="parquet")


@pytest.mark.parametrize("name", sorted(data.BUNDLED))
def test_bundled_datasets_lie_within_their_public_bounds(name):
    X, y, b, names = data.load_bundled(name)
    assert b.public and len(names) == X.shape[1] == b.n_features
    # published summary statistics are rounded to 3-4 digits: allow rounding, nothing more
    width = b.feature_high - b.feature_low
    assert np.all(X >= b.feature_low - 0.01 * width) and np.all(X <= b.feature_high + 0.01 * width)
    if b.label_low is not None:
        assert b.label_low <= y.min() and y.max() <= b.label_high


def test_one_range_for_every_feature_with_exceptions_maps_like_the_full_list():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, (50, 6))
    X[:, 2] = rng.uniform(-1, 1, 50)
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    wide = data.Bounds.from_dict({"feature_low": 0, "feature_high": 10, "exceptions": {"2": [-1, 1]}})
    full = data.Bounds([0, 0, -1, 0, 0, 0], [10, 10, 1, 10, 10, 10])
    a, b = data.prepare(X, y, wide, True), data.prepare(X, y, full, True)
    np.testing.assert_array_equal(a.X, b.X)
    assert wide.n_features is None and data.Bounds.from_dict(wide.to_dict()).exceptions == {2: (-1.0, 1.0)}


@pytest.mark.parametrize("d,match", [
    ({"feature_low": [0, 0], "feature_high": [1, 1], "exceptions": {"0": [0, 2]}}, "one range for every feature"),
    ({"feature_low": 0, "feature_high": 1, "exceptions": {"a": [0, 2]}}, "column index"),
    ({"feature_low": 0, "feature_high": 1, "exceptions": {"1": [3, 2]}}, "low <= high"),
])
def test_bad_exceptions_are_refused(d, match):
    with pytest.raises(ValueError, match=match):
        data.Bounds.from_dict(d)


def test_an_exception_beyond_the_data_is_refused():
    wide = data.Bounds.from_dict({"feature_low": 0, "feature_high": 1, "exceptions": {"9": [0, 2]}})
    with pytest.raises(ValueError, match="column 9, but the data has 3 features"):
        data.prepare(np.zeros((4, 3)), np.array([1.0, -1, 1, -1]), wide, True)


@pytest.mark.parametrize("sparse", [False, True])
def test_values_outside_the_bounds_are_counted_and_clipped_block_by_block(sparse):
    rng = np.random.default_rng(3)
    X = rng.uniform(-3.0, 3.0, (101, 7)) * (rng.random((101, 7)) < 0.6)
    low, high = -rng.uniform(0.5, 2.0, 7), rng.uniform(0.5, 2.0, 7)  # zeros lie inside: stored or not, the same
    expected = int(np.count_nonzero((X < low) | (X > high)))
    S = sp.csr_matrix(X)
    for blocks in (1, 4, 32, 1000):
        counted = (data._count_outside(S.data, S.indices, low, high, blocks) if sparse
                   else data._count_outside(X, None, low, high, blocks))
        assert counted == expected
    values = X.copy()
    assert data._clip(values, blocks=5) == int(np.count_nonzero(np.abs(X) > 1.0))
    np.testing.assert_array_equal(values, np.clip(X, -1.0, 1.0))


def test_bounds_compare_by_value_and_a_budget_shows_what_is_left():
    from dpsparse import PrivacyBudget

    a, b = data.Bounds([-1.0, 0.0], [1.0, 2.0]), data.Bounds(np.array([-1.0, 0.0]), np.array([1.0, 2.0]))
    assert a == b and a != data.Bounds([-1.0, 0.0], [1.0, 3.0]) and a != "bounds"  # raised on arrays before
    budget = PrivacyBudget(1.0, 1e-5)
    budget.spend(0.25, 1e-6)
    assert repr(budget) == "PrivacyBudget(epsilon=1, delta=1e-05; 1 charge(s), epsilon 0.75 and delta 9e-06 left)"


def test_bounds_declare_the_number_of_features():
    b = data.Bounds(0.0, 1.0, n_features=5, exceptions={"4": (0.0, 2.0)})
    assert b.n_features == 5 and b.to_dict()["n_features"] == 5 and data.Bounds.from_dict(b.to_dict()) == b
    assert b.for_features(5).feature_high.tolist() == [1.0, 1.0, 1.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="5 features declared"):
        b.for_features(6)
    assert data.Bounds([0.0, 0.0], [1.0, 1.0]).n_features == 2  # per-feature ranges: their number
    assert data.Bounds(0.0, 1.0, feature_names=["a", "b", "c"]).n_features == 3
    assert data.Bounds(0.0, 1.0).n_features is None
    for kwargs, match in [({"n_features": 0}, "whole number >= 1"), ({"n_features": 2.5}, "whole number >= 1"),
                          ({"n_features": "3"}, "whole number >= 1"),
                          ({"n_features": 3, "exceptions": {"3": (0, 1)}}, "beyond n_features = 3"),
                          ({"n_features": 2, "feature_names": ["a", "b", "c"]}, "names 3 features")]:
        with pytest.raises(ValueError, match=match):
            data.Bounds(0.0, 1.0, **kwargs)
    with pytest.raises(ValueError, match="2 feature ranges are given"):
        data.Bounds([0.0, 0.0], [1.0, 1.0], n_features=3)


def test_svmlight_indices_start_where_declared(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("1 0:0.5 2:2\n-1 1:1\n")
    with pytest.raises(ValueError, match="index 0"):
        data.load_svmlight(path)
    X, _ = data.load_svmlight(path, n_features=4, zero_based=True)
    assert X.shape == (2, 4) and X[0, 0] == 0.5 and X[0, 2] == 2.0
    path.write_text("1 1:0.5 3:2\n")  # one-based: column 1 is the first
    X, _ = data.load_svmlight(path, n_features=3)
    assert X.toarray().tolist() == [[0.5, 0.0, 2.0]]


@pytest.mark.parametrize("delimiter, named", [(";", "';'"), ("\t", "tab"), ("|", "'|'")])
def test_a_csv_file_with_another_delimiter_is_refused_with_the_schema_that_reads_it(tmp_path, delimiter, named):
    path = tmp_path / "d.csv"
    path.write_text(delimiter.join(["a", "b", "label"]) + "\n" + delimiter.join(["1", "2", "0"]) + "\n")
    named_re = re.escape(named)
    with pytest.raises(ValueError, match=f"no comma but a {named_re} delimiter.*--delimiter {named_re}"):
        data.load(path, target="label")
    names = schema.template(path, delimiter=named.strip("'"))["columns"]
    assert [c["name"] for c in names] == ["a", "b", "label"]


@pytest.mark.parametrize("name, header, records, gap, tail", [
    ("d.csv", "a,label\n", ["1,0\n", "2,1\n"], "\n", "\n\n"),
    ("d.svm", "# written by hand\n", ["0 1:1\n", "1 2:1 # a trailing comment\n"], "# a comment line\n", "\n"),
    ("d.svm", "", ["0 1:1\n", "1 2:1\n"], "   \n", "\n"),
])
def test_a_line_skipped_between_records_is_refused_and_n_never_shrinks_silently(tmp_path, name, header, records,
                                                                                 gap, tail):
    path = tmp_path / name
    read = (lambda: data.load(path, target="label")) if name.endswith(".csv") else (
        lambda: data.load_svmlight(path, n_features=2))
    path.write_text(header + "".join(records) + tail)  # skipped lines before the first record and after the last
    assert read()[0].shape[0] == 2
    path.write_text(header + records[0] + gap + records[1])
    with pytest.raises(ValueError, match="a blank or comment line after record 1, between records"):
        read()


def test_the_svmlight_scan_splits_lines_as_scikit_learn_does(tmp_path):
    """Bytes split at newlines only, compressed files by their suffix: what scikit-learn reads, the scan reads."""
    import bz2

    (tmp_path / "d.svm.bz2").write_bytes(bz2.compress(b"0 1:1\n1 2:1 # caf\xe9\n"))
    (tmp_path / "cr.svm").write_bytes(b"0 1:1\r\r\n1 2:1\n")  # a lone carriage return: no line of its own
    for name in ("d.svm.bz2", "cr.svm"):
        assert data.load_svmlight(tmp_path / name, n_features=2)[0].shape == (2, 2)


def test_a_dict_of_ranges_is_refused_by_name():
    with pytest.raises(ValueError, match="bounds: feature_low must be a number or one value per feature.*got a dict"):
        data.Bounds(feature_low={"a": 0.0}, feature_high={"a": 1.0})


def _one_hot_bounds(**kw):
    """Two categorical answers (3 and 2 levels, columns 0-2 and 3-4) and a numeric one on [10, 20]."""
    return data.Bounds([0, 0, 0, 0, 0, 10.0], [1, 1, 1, 1, 1, 20.0], one_hot=[[0, 1, 2], [3, 4]], **kw)


def test_one_hot_groups_keep_their_zeros_and_bound_a_record_by_one_per_group():
    """The indicators are mapped by scaling only (0 and 1 stay), the numeric column onto [-1, 1]; a record's norm is
    at most sqrt(groups + other features) = sqrt(3), the design's with the intercept sqrt(4); a record with two ones
    in a group (outside the declaration) is scaled down to the bound and counted."""
    b = _one_hot_bounds()
    assert b.record_norm(6) == pytest.approx(np.sqrt(3)) and b.row_norm is None
    X = np.array([[1, 0, 0, 0, 1, 20.0], [0, 0, 1, 1, 0, 10.0], [1, 1, 1, 1, 0, 20.0]])
    d = data.prepare(X, np.array([1.0, -1.0, 1.0]), b, classification=True)
    np.testing.assert_array_equal(d.X[:2], [[1, 0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 0, -1, 1]])
    assert d.row_norm == pytest.approx(2.0) and d.clipped_rows == 1
    assert np.linalg.norm(d.X[2, :6]) == pytest.approx(np.sqrt(3))
    assert np.all(np.linalg.norm(d.X, axis=1) <= d.row_norm + 1e-12)
    coef, intercept = d.to_original(np.array([1.0, 2, 3, 4, 5, 0.5, 0.25]))
    np.testing.assert_allclose(coef, [1, 2, 3, 4, 5, 0.1])  # the numeric column's map: x / 5 - 3
    assert intercept == pytest.approx(0.25 - 1.5)
    sparse = data.prepare(sp.csr_matrix(X), np.array([1.0, -1.0, 1.0]), b, classification=True)
    np.testing.assert_allclose(sparse.X.toarray(), d.X)  # the same map, the indicators' zeros stored as zeros
    assert sparse.clipped_rows == 1


def test_one_hot_groups_with_a_declared_row_norm_take_the_smaller_bound_and_survive_json():
    b = _one_hot_bounds(row_norm=1.5)
    assert b.record_norm(6) == 1.5
    again = data.Bounds.from_dict(json.loads(json.dumps(b.to_dict())))
    assert again == b and again.one_hot == [[0, 1, 2], [3, 4]]
    wide = data.Bounds(0.0, 1.0, one_hot=[[0, 1]], exceptions={2: (-1, 3)})  # one range for every feature
    assert wide.for_features(3).record_norm(3) == pytest.approx(np.sqrt(2))


@pytest.mark.parametrize("one_hot,message", [
    ([[0, 1], [1, 2]], "disjoint"), ([[0, 0]], "names column 0 twice"), ([[]], "non-empty list"), ([[-1]], ">= 0"),
    ("x", "list of groups"),
    ([[0.5]], "integer column indices"), ([[0, 6]], "there are 6 features"),
    ([[0, 5]], r"column 5 must be declared on \[0, 1\]"),
])
def test_one_hot_groups_are_checked_by_name(one_hot, message):
    with pytest.raises(ValueError, match=message):
        data.Bounds([0, 0, 0, 0, 0, 10.0], [1, 1, 1, 1, 1, 20.0], one_hot=one_hot)
