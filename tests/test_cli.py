import json
import re

import numpy as np
import pytest

from dpsparse import data
from dpsparse.cli import main


def test_fit_on_bundled_data_prints_the_report_and_writes_a_model(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["fit", "--seed", "0", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    for needle in ["Privacy report", "differentially private", "held-out accuracy", "relative error",
                   "support size", "replace-one"]:
        assert needle in text
    model = json.loads(out.read_text())
    assert model["task"] == "classification" and len(model["coef"]) == 30
    assert model["privacy_report"]["guarantee_holds"]


def test_predict_reproduces_the_estimator(tmp_path, capsys):
    out = tmp_path / "m.json"
    main(["fit", "--data", "diabetes", "--seed", "1", "--out", str(out), "--iterations", "20"])
    capsys.readouterr()
    X, y, _, names = data.load_bundled("diabetes")
    csv = tmp_path / "d.csv"
    rows = ["target," + ",".join(names)] + [",".join(map(str, [t, *r])) for t, r in zip(y, X)]
    csv.write_text("\n".join(rows) + "\n")
    pred_file = tmp_path / "p.txt"
    assert main(["predict", "--model", str(out), "--data", str(csv), "--target", "target",
                 "--out", str(pred_file)]) == 0
    pred = np.loadtxt(pred_file)
    model = json.loads(out.read_text())
    np.testing.assert_allclose(pred, np.clip(X @ np.array(model["coef"]) + model["intercept"], *model["label_range"]))
    bounds = data.load_bundled("diabetes")[2]
    assert model["label_range"] == pytest.approx([bounds.label_low, bounds.label_high])


def test_json_output_and_csv_training(tmp_path, capsys):
    csv = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 3))
    y = (X[:, 0] > 0.5).astype(int)
    csv.write_text("a,b,c,label\n" + "\n".join(",".join(map(str, [*r, t])) for r, t in zip(X, y)) + "\n")
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"feature_low": [0, 0, 0], "feature_high": [1, 1, 1]}))
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(csv), "--target", "label", "--bounds", str(bounds), "--json",
                 "--out", str(out), "--epsilon", "5", "--calibration", "paper", "--rule", "gs-s"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["privacy_report"]["guarantee_holds"] and res["n_features"] == 3
    assert 0 <= res["private"]["accuracy"] <= 1


@pytest.mark.parametrize("args,match", [
    (["--epsilon", "0"], "epsilon must be a finite number > 0"),
    (["--delta", "2"], "delta must be in the open interval"),
    (["--data", "missing.svm"], "does not exist"),
    (["--test-size", "1.5"], "--test-size"),
    (["--data", "diabetes", "--loss", "logistic"], "more than the 50 classes"),
    (["--data", "breast_cancer", "--classes", "a,b"], "--classes a,b: not labels of this data"),
    (["--out", "/nonexistent-folder/m.json"], "does not exist"),
])
def test_errors_exit_2_and_write_nothing(tmp_path, capsys, args, match):
    out = tmp_path / "m.json"
    assert main(["fit", "--out", str(out), *args]) == 2
    assert match in capsys.readouterr().err
    assert not out.exists()


def test_unknown_options_are_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["fit", "--penalty", "l9"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_fit_without_bounds_says_the_guarantee_does_not_hold(tmp_path, capsys):
    path = tmp_path / "d.svm"
    rng = np.random.default_rng(0)
    lines = [f"{rng.choice([-1, 1])} 1:{rng.uniform():.3f} 2:{rng.uniform():.3f}" for _ in range(100)]
    path.write_text("\n".join(lines) + "\n")
    assert main(["fit", "--data", str(path), "--out", str(tmp_path / "m.json")]) == 0
    assert "NO differential-privacy guarantee" in capsys.readouterr().out


def test_group_penalty_with_dp_sgd_on_real_data(tmp_path, capsys, shared_data):
    groups = tmp_path / "g.json"
    groups.write_text(json.dumps([[5 * i + k for k in range(5)] for i in range(20)]))
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"feature_low": [-1.0] * 100, "feature_high": [1.0] * 100,
                                  "label_low": -2.0, "label_high": 2.0, "source": "a-priori (test)"}))
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(shared_data / "regression" / "bardet.svm.gz"), "--penalty", "group-l2",
                 "--mechanism", "dp-sgd", "--groups", str(groups), "--bounds", str(bounds), "--epsilon", "5",
                 "--seed", "0", "--out", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["privacy_report"]["guarantee_holds"] and res["privacy_report"]["mechanism"].startswith("dp-sgd")
    assert res["reference_gap"] < 1e-6 and res["relative_error"] < 1.0


def test_hinge_loss_uses_the_one_pass_mechanism(tmp_path, capsys):
    assert main(["fit", "--loss", "hinge", "--no-tune", "--seed", "0", "--epsilon", "5",
                 "--out", str(tmp_path / "m.json")]) == 0
    text = capsys.readouterr().out
    assert "one-pass-sgd" in text and "no exact solver for a non-smooth loss" in text


@pytest.mark.parametrize("args,match", [
    (["--batch-size", "10"], "--batch-size is an option of dp-sgd, not of dp-gcd"),
    (["--clipping-norm", "1", "--mechanism", "one-pass-sgd"], "--clipping-norm is an option of dp-cd and dp-sgd"),
    (["--penalty", "group-linf"], "needs --groups"),
    (["--penalty", "linf", "--mechanism", "dp-gcd"], "separable"),
])
def test_mechanism_and_penalty_mismatches_are_refused(tmp_path, capsys, args, match):
    out = tmp_path / "m.json"
    assert main(["fit", "--out", str(out), *args]) == 2
    assert match in capsys.readouterr().err
    assert not out.exists()


def test_secure_noise_from_the_command_line(tmp_path, capsys):
    pytest.importorskip("opendp")
    assert main(["fit", "--noise", "secure", "--seed", "0", "--out", str(tmp_path / "m.json")]) == 0
    assert "OpenDP" in capsys.readouterr().out


def test_audit_prints_the_replay_of_every_pair_and_catches_the_mutant(capsys):
    assert main(["audit", "--mechanism", "output", "--runs", "2000"]) == 0
    out = capsys.readouterr().out
    replay = re.findall(r"^  (.+?) +minimizer ([0-9.]+)$", out, flags=re.M)
    assert [name for name, _ in replay] == ["label flip", "feature extremes", "row norm with intercept",
                                            "isolated label flip"]
    assert all(0.0 < float(r) <= 1.0 for _, r in replay)
    declared, mutant = re.findall(r"epsilon >= ([0-9.]+) .*: (within|above) the claim", out)
    assert float(declared[0]) <= 1.0 and declared[1] == "within"
    assert float(mutant[0]) > 1.0 and mutant[1] == "above"


@pytest.mark.parametrize("args,match", [(["--runs", "-1"], "--runs must be"), (["--mutation", "0"], "--mutation")])
def test_audit_refuses_bad_settings(capsys, args, match):
    assert main(["audit", "--mechanism", "dp-gcd", *args]) == 2
    assert match in capsys.readouterr().err


def test_the_default_fit_is_a_private_search_within_the_one_epsilon(tmp_path, capsys):
    assert main(["fit", "--seed", "0", "--json", "--out", str(tmp_path / "m.json")]) == 0
    rep = json.loads(capsys.readouterr().out)["privacy_report"]
    assert rep["mechanism"] == "dp-search" and rep["guarantee_holds"]
    assert rep["epsilon"] == 1.0 and rep["accountant_epsilon"] <= 1.0
    assert "constant predictor" in rep["noise"]["what was searched"]


@pytest.mark.parametrize("args,match", [(["--tune", "--iterations", "5"], "drop --iterations"),
                                        (["--tune", "--rule", "gs-s"], "drop --rule")])
def test_tune_with_fixed_hyperparameters_is_refused(tmp_path, capsys, args, match):
    assert main(["fit", "--out", str(tmp_path / "m.json"), *args]) == 2
    assert match in capsys.readouterr().err


def test_no_compare_skips_the_non_private_reference(tmp_path, capsys):
    assert main(["fit", "--no-tune", "--no-compare", "--seed", "0", "--out", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out
    assert "non-private comparison skipped" in out and "non-private " not in out.split("data ")[1].split("\n")[1]


def test_an_output_folder_is_refused_and_integer_labels_are_classes_or_a_regression_target(tmp_path, capsys):
    assert main(["fit", "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    rng = np.random.default_rng(0)
    csv = tmp_path / "d.csv"
    for n_classes, task in [(5, "classification"), (200, "regression")]:
        labels = rng.integers(n_classes, size=400)
        csv.write_text("a,b,label\n" + "\n".join(f"{u:.3f},{v:.3f},{k}" for u, v, k in
                                                zip(rng.random(400), rng.random(400), labels)) + "\n")
        out = tmp_path / f"m{n_classes}.json"
        assert main(["fit", "--data", str(csv), "--target", "label", "--out", str(out), "--no-tune"]) == 0
        model = json.loads(out.read_text())
        assert model["task"] == task
        if task == "classification":  # one-vs-rest, a row per class
            assert np.shape(model["coef"]) == (5, 2) and len(model["classes"]) == 5
            pred = tmp_path / "pred.txt"
            assert main(["predict", "--model", str(out), "--data", str(csv), "--target", "label",
                         "--out", str(pred)]) == 0
            assert set(pred.read_text().split()) <= {str(float(k)) for k in range(5)}
