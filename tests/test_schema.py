import json
from pathlib import Path

import numpy as np
import pytest

from dpsparse import schema
from dpsparse.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "adult.schema.json"

SCHEMA = {
    "format": "dpsparse-schema/1",
    "csv": {"header": False, "missing": ["?"], "comment": "#"},
    "target": {"name": "y", "classes": {"no": ["no", "no."], "yes": ["yes", "yes."]}},
    "columns": [
        {"name": "age", "type": "numeric", "range": [0, 100]},
        {"name": "colour", "type": "categorical", "categories": ["red", "blue"]},
        {"name": "id", "type": "drop"},
        {"name": "gain", "type": "numeric", "range": [0, 999], "transform": "log1p"},
        {"name": "y"},
    ],
}
ROWS = "# a comment line\n30, red, 7, 0, no\n40, green, 8, 9, yes.\n50, ?, 9, 5000, yes\n"


def _write(tmp_path, d=SCHEMA, rows=ROWS):
    (tmp_path / "s.json").write_text(json.dumps(d))
    (tmp_path / "d.csv").write_text(rows)
    return tmp_path / "s.json", tmp_path / "d.csv"


def test_columns_are_encoded_from_the_schema_alone(tmp_path):
    s_path, d_path = _write(tmp_path)
    s = schema.load_schema(s_path)
    X, y, names = s.read(d_path)
    assert names == ["age", "colour=red", "colour=blue", "colour=other", "log1p(gain)"]  # named in its units
    # unknown ("green") and missing ("?") categories go to "other"; log1p of the capped value, a value above
    # the cap lands outside the transformed range so that the fit clips and counts it
    np.testing.assert_allclose(X[:, :4], [[30, 1, 0, 0], [40, 0, 0, 1], [50, 0, 0, 1]])
    np.testing.assert_allclose(X[:2, 4], np.log1p([0, 9]))
    assert X[2, 4] == pytest.approx(np.log1p(999) + 1)
    np.testing.assert_array_equal(y, ["no", "yes", "yes"])
    b = s.bounds()
    np.testing.assert_allclose(b.feature_low, [0, 0, 0, 0, 0])
    np.testing.assert_allclose(b.feature_high, [100, 1, 1, 1, np.log1p(999)])
    assert b.label_low is None and "public metadata" in b.source
    assert b.feature_names == names  # a warning on a feature names it
    assert b.one_hot == [[1, 2, 3]] and b.record_norm(5) == pytest.approx(np.sqrt(3))  # 1 group + 2 numeric
    np.testing.assert_array_equal(s.classes, ["no", "yes"])


@pytest.mark.parametrize("change, match", [
    ({"columns": [{"name": "age", "type": "numeric", "range": None}, {"name": "y"}]},
     "column 'age': 'range' must be"),
    ({"columns": [{"name": "age", "type": "text"}, {"name": "y"}]}, "column 'age': 'type' must be one of"),
    ({"columns": [{"name": "c", "type": "categorical", "categories": ["a", "other"]}, {"name": "y"}]},
     "not 'other'"),
    ({"target": {"name": "z", "classes": ["a", "b"]}}, "the target 'z' is not among the schema's .* 'columns'.*the "
     "target's too"),
    ({"target": {"classes": ["a", "b"]}}, "'target' must be an object whose 'name'"),
    ({"target": {"name": "y", "classes": None}}, "target 'y' declares either 'classes' .* or 'range'"),
    ({"target": {"name": "y", "classes": 3}}, "target 'y': 'classes' must be"),
    ({"format": "x"}, "dpsparse-schema/1"),
    ({"columns": [{"name": "gain", "type": "numeric", "range": [0, 9], "transfrom": "log1p"}, {"name": "y"}]},
     "column 'gain': key 'transfrom' is not one the schema reads: did you mean 'transform'"),
    ({"columns": [{"name": "age", "type": "numeric", "rnage": [0, 9]}, {"name": "y"}]}, "did you mean 'range'"),
    ({"csv": {"hedaer": True}}, "csv: key 'hedaer' .* did you mean 'header'"),
    ({"target": {"name": "y", "classes": ["a", "b"], "clases": ["a"]}}, "target 'y': key 'clases'"),
    ({"colums": []}, "key 'colums' .* did you mean 'columns'"),
])
def test_incomplete_schemas_are_refused_naming_the_column(tmp_path, change, match):
    s_path, _ = _write(tmp_path, {**SCHEMA, **change})
    with pytest.raises(ValueError, match=match):
        schema.load_schema(s_path)


@pytest.mark.parametrize("header", [False, True])
def test_records_to_score_may_leave_the_target_out(tmp_path, header):
    d = {**SCHEMA, "csv": {**SCHEMA["csv"], "header": header}}
    comment, records = ROWS.split("\n", 1)
    text = comment + "\n" + ("age, colour, id, gain, y\n" if header else "") + records
    s_path, d_path = _write(tmp_path, d, text)
    s = schema.load_schema(s_path)
    X, y, _ = s.read(d_path)
    unlabelled = tmp_path / "u.csv"
    unlabelled.write_text("\n".join(line.rsplit(",", 1)[0] for line in text.splitlines()) + "\n")
    X2, y2, _ = s.read(unlabelled, with_target=False)
    np.testing.assert_array_equal(X2, X)
    assert y2 is None
    with pytest.raises(ValueError, match="schema's 5 (fields|columns)"):  # a fit needs its labels
        s.read(unlabelled)
    unlabelled.write_text(unlabelled.read_text() + "1, red, 2\n")
    with pytest.raises(ValueError, match=r"1 rows do not have the schema's 4 fields \(or 4, without the target 'y'\)"):
        s.read(unlabelled, with_target=False)


def test_keys_unlike_the_schemas_are_comments(tmp_path):
    commented = {**SCHEMA, "why": "x", "csv": {**SCHEMA["csv"], "note": "x"},
                 "columns": [{**c, "why": "census top-code", "source": "adult.names"} for c in SCHEMA["columns"]]}
    assert schema.load_schema(_write(tmp_path, commented)[0]) == schema.load_schema(_write(tmp_path)[0])


def test_bad_files_are_refused_naming_the_column(tmp_path):
    s_path, d_path = _write(tmp_path, rows="30, red, 7, 0, maybe\n")
    with pytest.raises(ValueError, match="outside the schema's classes"):
        schema.load_schema(s_path).read(d_path)
    s_path, d_path = _write(tmp_path, rows="?, red, 7, 0, no\n")
    with pytest.raises(ValueError, match="column 'age' has non-numeric or missing values"):
        schema.load_schema(s_path).read(d_path)
    s_path, d_path = _write(tmp_path, rows="30, red, 7, no\n")
    with pytest.raises(ValueError, match="1 rows do not have the schema's 5 fields"):
        schema.load_schema(s_path).read(d_path)


def test_the_template_reads_the_first_line_only(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b" / "a.csv"
    b.parent.mkdir()
    a.write_text("x,y,label\n1,2,0\n3,4,1\n")
    b.write_text("x,y,label\n-9,not a number,7\n")
    assert schema.template(a) == schema.template(b)
    t = schema.template(a)
    assert [c["name"] for c in t["columns"]] == ["x", "y", "label"] and "no value of the data was read" in t["note"]
    assert [c["name"] for c in schema.template(a, header=False)["columns"]] == ["column_1", "column_2", "column_3"]
    (tmp_path / "t.json").write_text(json.dumps(t))
    with pytest.raises(ValueError, match="target 'label' declares either 'classes' .* or 'range'"):  # filled in first
        schema.load_schema(tmp_path / "t.json")
    t["target"]["range"] = [0, 1]  # a regression: its range filled in, the template's "classes": null left as it is
    for c in t["columns"][:2]:  # x and y; the target, label, is the last column
        c.update(kind="numeric", range=[0, 10])
    (tmp_path / "t.json").write_text(json.dumps(t))
    assert schema.load_schema(tmp_path / "t.json").target.range == (0.0, 1.0)


def test_the_template_names_the_target_it_was_given_or_says_it_took_the_last_column(tmp_path, capsys):
    a = tmp_path / "a.csv"
    a.write_text("label,x,y\n0,1,2\n")
    assert schema.template(a, target="label")["target"]["name"] == "label"
    last = schema.template(a)
    assert last["target"]["name"] == "y" and "The target is the last column, 'y'" in last["note"]
    with pytest.raises(ValueError, match="--target 'z' is not a column of a.csv"):
        schema.template(a, target="z")
    assert main(["schema", "--data", str(a), "--out", str(tmp_path / "t.json")]) == 0
    assert "the target is 'y' (the last column; --target names another)" in capsys.readouterr().out


def test_a_header_must_name_the_schema_columns_in_order_and_a_record_is_never_a_header(tmp_path, capsys):
    with_header = {**SCHEMA, "csv": {"header": True, "missing": ["?"]}}
    header = "age,colour,id,gain,y\n"
    s_path, d_path = _write(tmp_path, with_header, header + "30, red, 7, 0, no\n")
    assert schema.load_schema(s_path).read(d_path)[0].shape == (1, 5)
    # a swapped pair of columns would be read as each other (by position): refused, naming the schema's column
    s_path, d_path = _write(tmp_path, with_header, "age,colour,id,y,gain\n30, red, 7, no, 0\n")
    with pytest.raises(ValueError, match="column 4 is 'gain' in the schema, another name in the header"):
        schema.load_schema(s_path).read(d_path)
    # a file without a header read as if it had one: its first record would be dropped; its values never printed
    s_path, d_path = _write(tmp_path, with_header, "31, blue, 8, 12345, yes\n30, red, 7, 0, no\n")
    with pytest.raises(ValueError, match="column 1 is 'age' in the schema, another name in the header") as err:
        schema.load_schema(s_path).read(d_path)
    assert "12345" not in str(err.value) and '"header": false' in str(err.value)
    # a byte-order mark and a trailing delimiter on the header line are not names
    s_path, d_path = _write(tmp_path, with_header, "\ufeff" + header.replace("\n", ",\n") + "30, red, 7, 0, no\n")
    assert schema.load_schema(s_path).read(d_path)[0].shape == (1, 5)
    # nor does the template take a record's values for the columns' names
    s_path, d_path = _write(tmp_path, with_header, "31, blue, 8, 12345, yes\n30, red, 7, 0, no\n")
    with pytest.raises(ValueError, match="first line holds a number"):
        schema.template(d_path)
    assert main(["schema", "--data", str(d_path), "--out", str(tmp_path / "t.json")]) == 2
    assert "--no-header" in capsys.readouterr().err and not (tmp_path / "t.json").exists()


def test_cli_schema_writes_a_template_and_fit_refuses_conflicting_flags(tmp_path, capsys):
    s_path, d_path = _write(tmp_path)
    out = tmp_path / "t.json"
    assert main(["schema", "--data", str(d_path), "--no-header", "--comment", "#", "--out", str(out)]) == 0
    assert len(json.loads(out.read_text())["columns"]) == 5
    assert main(["fit", "--data", str(d_path), "--schema", str(s_path), "--target", "y",
                 "--out", str(tmp_path / "m.json")]) == 2
    assert "drop --target" in capsys.readouterr().err and not (tmp_path / "m.json").exists()
    for flags, said in ((["--n-features", "9"], "--n-features describes an svmlight file"),
                        (["--zero-based"], "--zero-based describes an svmlight file"),
                        (["--loss", "squared"], "--loss squared: the schema's target 'y' declares classes ['no', "
                                                "'yes'] (classification), which needs a classifier")):
        assert main(["fit", "--data", str(d_path), "--schema", str(s_path), *flags,
                     "--out", str(tmp_path / "m.json")]) == 2
        assert said in capsys.readouterr().err and not (tmp_path / "m.json").exists()


def test_no_command_writes_over_a_file_it_reads_nor_a_template_over_a_schema(tmp_path, capsys):
    s_path, d_path = _write(tmp_path)
    before = {p: p.read_bytes() for p in (s_path, d_path)}
    for argv, flag in [(["fit", "--data", str(d_path), "--schema", str(s_path), "--out", str(d_path)], "--data"),
                       (["fit", "--data", str(d_path), "--schema", str(s_path), "--out", str(tmp_path / "m.json"),
                         "--report", str(s_path)], "--schema"),
                       (["schema", "--data", str(d_path), "--no-header", "--comment", "#", "--out", str(d_path)],
                        "--data"),
                       (["predict", "--model", str(tmp_path / "m.json"), "--data", str(d_path), "--schema",
                         str(s_path), "--out", str(d_path)], "--data")]:
        assert main(argv) == 2
        assert f"is the file {flag} reads: writing it would replace it" in capsys.readouterr().err
    assert main(["schema", "--data", str(d_path), "--no-header", "--comment", "#", "--out", str(s_path)]) == 2
    assert "the template does not replace it" in capsys.readouterr().err
    groups, link = tmp_path / "g.json", tmp_path / "link.csv"
    groups.write_text("[[0], [1]]")
    link.symlink_to(d_path)
    figure = tmp_path / "card.coefficients.png"
    figure.write_bytes(b"records")
    for argv, match in [(["--penalty", "group-l2", "--groups", str(groups), "--out", str(groups)], "--groups reads"),
                        (["--out", str(link)], "--data reads"),  # through a link
                        (["--data", str(figure), "--format", "csv", "--report", str(tmp_path / "card.md")],
                         "--report's figure"),
                        (["--out", str(tmp_path / "x.md"), "--report", str(tmp_path / "x.md")], "both name"),
                        (["--out", "breast_cancer"], "named as the bundled dataset")]:
        common = ["fit", "--data", str(d_path), "--schema", str(s_path), "--out", str(tmp_path / "m.json")]
        assert main([*common, *argv]) == 2
        assert match in capsys.readouterr().err
    assert {p: p.read_bytes() for p in (s_path, d_path)} == before and figure.read_bytes() == b"records"
    assert main(["fit", "--data", str(d_path), "--schema", str(s_path), "--report", "."]) == 2
    assert "is a directory" in capsys.readouterr().err  # the guard leaves a bad --report to its own check


def test_raw_adult_fits_and_predicts_through_its_schema(tmp_path, capsys, shared_data):
    adult = shared_data / "adult"
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(adult / "adult.data.gz"), "--schema", str(EXAMPLE), "--mechanism", "dp-gcd",
                 "--iterations", "20", "--seed", "0", "--no-compare", "--json", "--out", str(out)]) == 0
    res = json.loads(capsys.readouterr().out)
    report = res["privacy_report"]
    assert report["accounting_holds"] and "schema" in report["bounds_source"]
    assert not any("label set" in w for w in report["warnings"])  # the classes are declared by the schema
    assert res["released"]["support"]["features"] == 112
    pred = tmp_path / "p.txt"
    assert main(["predict", "--model", str(out), "--data", str(adult / "adult.test.gz"), "--schema", str(EXAMPLE),
                 "--out", str(pred)]) == 0
    labels = schema.load_schema(EXAMPLE).read(adult / "adult.test.gz")[1]
    assert np.mean(np.array(pred.read_text().split()) == labels) > 0.78
    capsys.readouterr()  # another file without the schema (8 svmlight features, padded to 112) is refused
    assert main(["predict", "--model", str(out), "--data", str(shared_data / "libsvm" / "cadata.svm.gz")]) == 2
    assert "pass the same --schema" in capsys.readouterr().err



def test_predict_refuses_a_schema_that_encodes_other_columns_than_the_fit(tmp_path, capsys):
    """Categories in another order or another transform: read by position, each column would meet another's
    coefficient."""
    s_path, d_path = _write(tmp_path)
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(d_path), "--schema", str(s_path), "--seed", "0", "--out", str(out),
                 "--mechanism", "dp-gd", "--bounds-share", "0.1"]) == 0
    assert main(["predict", "--model", str(out), "--data", str(d_path), "--schema", str(s_path)]) == 0
    for k, change in [(1, {"categories": ["blue", "red"]}), (3, {"transform": None})]:
        other = json.loads(json.dumps(SCHEMA))
        other["columns"][k].update(change)
        other_path = tmp_path / "other.json"
        other_path.write_text(json.dumps(other))
        capsys.readouterr()
        assert main(["predict", "--model", str(out), "--data", str(d_path), "--schema", str(other_path)]) == 2
        err = capsys.readouterr().err
        assert "is not the schema model file" in err and ("'colour=blue'" in err or "'gain'" in err)


def test_a_delimiter_is_one_character_or_the_name_of_a_tab(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("x\ty\tlabel\n1\t2\t0\n")
    assert schema.template(path, delimiter="tab") == schema.template(path, delimiter="\\t")
    assert schema.template(path, delimiter="tab")["csv"]["delimiter"] == "\t"
    with pytest.raises(ValueError, match=r"delimiter must be one character \(or 'tab'\), got ';;'"):
        schema.template(path, delimiter=";;")
    (tmp_path / "s.json").write_text(json.dumps({**SCHEMA, "csv": {"delimiter": ""}}))
    with pytest.raises(ValueError, match="s.json': csv delimiter must be one character"):
        schema.load_schema(tmp_path / "s.json")


@pytest.mark.parametrize("rows, match", [
    ("{1}#{2}", "comment line .* after the first line of the data may be a record"),
    ("{1}{2}#x, red, 7, 0, no\n", "comment line .* after the first line of the data may be a record"),
    ("#x, red, 7, 0, no\n{1}{2}", "comment line .* with the schema's number of fields may be a record"),
    ("{1}\n{2}", "a blank or comment line after record 1, between records"),
])
def test_a_line_that_may_be_a_record_is_never_skipped(tmp_path, rows, match):
    """A record whose first value starts with the comment string (a categorical value read as 'other') is a record:
    dropped, it would change the released number of records."""
    first, second = ROWS.splitlines(keepends=True)[1:3]
    s_path, d_path = _write(tmp_path, rows="# a note before the records\n" + first + second + "\n\n")
    assert schema.load_schema(s_path).read(d_path)[0].shape[0] == 2
    s_path, d_path = _write(tmp_path, rows=rows.format(None, first, second))
    with pytest.raises(ValueError, match=match):
        schema.load_schema(s_path).read(d_path)
