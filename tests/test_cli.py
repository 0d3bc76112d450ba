import dataclasses
import json
import re
import warnings

import numpy as np
import pytest

from dpsparse import UnselectedLabelWarning, data
from dpsparse.cli import main
from dpsparse.mechanisms import auto


def _keys(tree):
    """Every key of a JSON tree."""
    if isinstance(tree, dict):
        return set(tree) | {k for v in tree.values() for k in _keys(v)}
    if isinstance(tree, list):
        return {k for v in tree for k in _keys(v)}
    return set()


def test_fit_on_bundled_data_trains_on_every_record_and_releases_only_private_quantities(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["fit", "--out", str(out), "--verbose"]) == 0
    text = capsys.readouterr().out
    for needle in ["Privacy report", "differentially private", "569 training records", "private score       none",
                   "support size", "replace-one"]:
        assert needle in text
    assert "non-private" not in text and "held-out accuracy" not in text and "clipped" not in text
    model = json.loads(out.read_text())
    assert model["task"] == "classification" and len(model["coef"]) == 30
    assert model["privacy_report"]["accounting_holds"]
    assert "verbose" not in model["params"]  # the CLI's progress lines, not a parameter of the model
    assert not _keys(model) & {"metrics", "clipped", "non_private", "relative_error", "private", "constant"}


def test_a_seeded_fit_has_no_guarantee_in_the_report_the_file_and_the_card(tmp_path, capsys):
    """--seed makes the noise reproducible by anyone who knows or guesses the seed: no guarantee anywhere."""
    out, card = tmp_path / "m.json", tmp_path / "card.md"
    assert main(["fit", "--seed", "0", "--no-tune", "--out", str(out), "--report", str(card)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("This model has NO differential-privacy guarantee: the noise came from a fixed seed")
    assert printed.splitlines()[0].count("the noise came from a fixed seed") == 1  # said once, not per source
    rep = json.loads(out.read_text())["privacy_report"]
    assert rep["noise_seeded"] and not rep["guarantee_holds"] and rep["accounting_holds"]
    assert "NO privacy guarantee" in card.read_text() and "This model is (" not in card.read_text()
    assert main(["report", str(out)]) == 0
    shown = capsys.readouterr().out
    assert shown.count("WARNING            the noise came from a fixed seed") == 1
    assert shown.splitlines()[0].count("the noise came from a fixed seed") == 1


def test_a_delta_above_one_over_n_is_a_weak_guarantee_at_the_top_of_the_card(tmp_path, capsys):
    """delta = 0.5 allows revealing a record: the card says so in its title, its privacy row and first under its
    intended use, not only among its caveats; the default delta gets none of it."""
    out, card = tmp_path / "m.json", tmp_path / "card.md"
    assert main(["fit", "--delta", "0.5", "--no-tune", "--out", str(out), "--report", str(card)]) == 0
    text = card.read_text()
    assert text.startswith("# Model card: private linear classifier on breast_cancer (WEAK privacy guarantee)\n")
    assert "| (1, 0.5)-differential privacy, WEAK (see the warning under Intended use) |" in text
    use = text.split("## Intended use")[1]
    assert use.lstrip().startswith("**Warning:** Weak guarantee: delta = 0.5 is above 1/n")
    assert main(["fit", "--no-tune", "--out", str(out), "--report", str(card)]) == 0
    assert "WEAK" not in card.read_text() and "Weak guarantee" not in card.read_text()


def test_report_prints_the_privacy_report_of_a_model_file(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["fit", "--out", str(out)]) == 0
    terminal = capsys.readouterr().out
    assert "Privacy report" not in terminal and f"dpsparse report {out}" in terminal  # short by default
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("This model is (1, ") and "Privacy report" in text and "Bassily" in text
    plain = text[text.index("In plain words"):text.index("Privacy report")]  # before the technical list
    n = json.loads(out.read_text())["data"]["training records"]
    assert f"  - Protected: each of the {n} training records" in plain and "  - Feature ranges: published" in plain
    assert "the budget paid for: a noisy typical size of the records" in plain
    assert "Released with the model: the clipping threshold" in plain and "  - The model: a linear model with" in plain
    assert "x_ij" not in plain and "multiplier" not in plain  # plain words, not the report's
    assert "mechanism chosen" not in plain  # a reason, not a spend
    assert main(["fit", "--out", str(out), "--private-score"]) == 0  # the held-out records are protected too
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    release = json.loads(out.read_text())
    held, n = release["private_score"]["records"], release["data"]["training records"]
    said = " ".join(capsys.readouterr().out.split())
    assert f"Protected: each of the {n} training records and the {held} held-out records of its private score" in said
    seeded = tmp_path / "seeded.json"
    assert main(["fit", "--seed", "1", "--out", str(seeded)]) == 0
    capsys.readouterr()
    assert main(["report", str(seeded)]) == 0
    assert "  - Protected: nothing (each of the" in capsys.readouterr().out  # no guarantee, nothing protected
    assert main(["report", str(tmp_path / "missing.json")]) == 2


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
    lo, hi = model["label_range"]  # --clip auto: the declared range narrowed to the labels' private spread
    assert bounds.label_low <= lo < hi <= bounds.label_high


def test_json_output_and_csv_training(tmp_path, capsys):
    csv = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 3))
    y = (X[:, 0] > 0.5).astype(int)
    csv.write_text("a,b,c,label\n" + "\n".join(",".join(map(str, [*r, t])) for r, t in zip(X, y)) + "\n")
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"feature_low": [0, 0, 0], "feature_high": [1, 1, 1]}))
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(csv), "--target", "label", "--bounds", str(bounds), "--json", "--classes", "0,1",
                 "--out", str(out), "--epsilon", "5", "--calibration", "paper", "--rule", "gs-s"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["privacy_report"]["accounting_holds"] and res["released"]["support"]["features"] == 3
    assert res["diagnostics"] is None and "private_score" not in res["released"]


@pytest.mark.parametrize("args,match", [
    (["--epsilon", "0"], "epsilon must be a finite number > 0"),
    (["--delta", "2"], "delta must be in the open interval"),
    (["--data", "missing.svm"], "does not exist"),
    (["--test-size", "1.5"], "--test-size"),
    (["--data", "diabetes", "--loss", "logistic"], "continuous target, use DPLasso or DPLinearRegression"),
    (["--data", "breast_cancer", "--classes", "a,b"], "--classes a,b: not labels of this data"),
    (["--out", "/nonexistent-folder/m.json"], "does not exist"),
    (["--iterations", "1000000000"], "--iterations (--max-iter) must be an integer in [1, 1e+06]"),
    (["--mechanism", "dp-sgd", "--learning-rate", "nan"], "--learning-rate must be a finite number in (0, 1e+06]"),
    (["--repeats", "0"], "--repeats must be an integer in [1, 100]"),
    (["--report", "card.pdf"], "give a .html or .md file name"),
    (["--report", "/nonexistent-folder/card.html"], "does not exist"),
    (["--bounds-from-data"], "--bounds-from-data is for a data file"),  # the bundled set ships its bounds
    (["--epsilon", "1e-300"], "is below 1e-06, the smallest"),  # overflowed in the accountant
    (["--loss", "squared", "--classes", "0,1"], "--classes is for a classifier"),  # silently ignored before
    (["--groups", "nothere.json"], "--groups goes with --penalty group-l2 or group-linf"),
    (["--l1-ratio", "0.3"], "--l1-ratio goes with --penalty elasticnet"),
    (["--target", "foo"], "--target names a column of a CSV file"),
    (["--data", "records.txt", "--target", "y"], "or pass --format csv for a CSV file"),
    (["--mechanism", "output", "--iterations", "50"], "mechanism output takes no number of iterations"),
    (["--classes=1"], "--classes must list at least 2 distinct labels, comma-separated, got '1'"),
    (["--classes", "0,0,1"], "got '0,0,1'"),
    (["--seed", "-1"], "--seed must be an integer >= 0, got -1"),  # numpy's words, without the flag, before
    (["--zero-based"], "the bundled dataset 'breast_cancer' has its own columns"),  # it spoke of a CSV header
    (["--data", "diabetes", "--mechanism", "objective"], "the clipped squared loss is not twice differentiable"),
])
def test_errors_exit_2_and_write_nothing(tmp_path, capsys, args, match, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "m.json"
    assert main(["fit", "--out", str(out), *args]) == 2
    assert match in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_bad_bounds_and_model_files_are_clear_errors(tmp_path, capsys):
    bad = tmp_path / "list.json"
    bad.write_text("[1, 2]")
    assert main(["fit", "--bounds", str(bad), "--out", str(tmp_path / "m.json")]) == 2
    assert "a JSON object with feature_low and feature_high" in capsys.readouterr().err
    bad.write_text(json.dumps({"format": "dpsparse-model/1"}))
    assert main(["predict", "--model", str(bad), "--data", "x.csv"]) == 2
    assert "lacks task, coef, intercept, classes" in capsys.readouterr().err
    assert main(["report", str(bad)]) == 2  # a TypeError before
    assert "has no complete privacy report" in capsys.readouterr().err
    assert main(["predict", "--model", str(bad), "--data", "x.csv", "--out", "/nonexistent-folder/p.txt"]) == 2
    assert "--out '/nonexistent-folder/p.txt': the folder" in capsys.readouterr().err
    bad.write_text(json.dumps({"feature_low": -1, "feature_high": "abc"}))
    assert main(["fit", "--bounds", str(bad), "--out", str(tmp_path / "m.json")]) == 2
    assert f"bounds file {str(bad)!r}: could not convert" in capsys.readouterr().err


def test_the_data_file_may_be_the_positional_argument(tmp_path, capsys):
    path = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    path.write_text("a,y\n" + "".join(f"{v:.3f},{int(v > 0)}\n" for v in rng.uniform(-1, 1, 200)))
    out = tmp_path / "m.json"
    assert main(["fit", str(path), "--target", "y", "--classes", "0,1", "--bounds-from-data", "--out", str(out)]) == 0
    assert "200 training records" in capsys.readouterr().out
    assert main(["predict", "--model", str(out), str(path), "--target", "y", "--out", str(tmp_path / "p.csv")]) == 0
    assert len((tmp_path / "p.csv").read_text().splitlines()) == 200  # one prediction a record
    assert main(["fit", str(path), "--data", str(tmp_path / "other.csv"), "--target", "y"]) == 2
    assert "an extra argument" in capsys.readouterr().err
    assert main(["predict", "--model", str(out)]) == 2
    assert "needs the data: a file name, or --data FILE" in capsys.readouterr().err


def test_predict_notes_an_svmlight_file_that_looks_like_another_dataset(tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(["fit", "--out", str(model)]) == 0  # breast cancer: 30 features, classes 0 and 1
    capsys.readouterr()
    other = tmp_path / "other.svm"
    other.write_text("3.5 1:0.2 4:1.0\n-7 2:0.5\n")  # 4 features, labels of no class of the model
    assert main(["predict", "--model", str(model), "--data", str(other)]) == 0
    out, err = capsys.readouterr()
    assert len(out.split()) == 2  # still predicted (svmlight leaves zeros out), but the reader is told
    assert "fewer features than the model" in err and "none of the labels" in err


def test_private_score_and_diagnostics_are_kept_apart(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["fit", "--out", str(out), "--repeats", "3", "--epsilon", "2", "--private-score",
                 "--diagnostics"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("This model is (2, ") and "-differentially private: replacing any one" in text
    released, diagnostics = text.split("Diagnostics: NOT differentially private")
    assert re.search(r"private score +held-out accuracy [\d.]+, constant predictor \(the held-out part's majority "
                     r"class\) [\d.]+ \(noisy", released)
    assert "3 fits, private scores" in released
    assert "together they spend epsilon = 6, delta = 9.3e-06 (basic" in released
    line = next(x for x in diagnostics.splitlines() if x.startswith("held-out accuracy"))
    assert re.search(r"private [\d.]+ +constant 0\.\d+ \(the training part's majority class\) +non-private [\d.]+",
                     line)
    assert "3 fits: accuracy" in diagnostics and "clipped" in diagnostics
    assert "each fit charged, together epsilon = 6, delta = 9.3e-06 (basic composition)" in diagnostics
    model = json.loads(out.read_text())
    score = model["private_score"]
    assert score["metric"] == "accuracy" and score["records"] == 143 and "repeats" not in score
    assert model["run"] == {"fits": 3, "epsilon in all": 6, "delta in all": pytest.approx(3 / 569**2)}  # public
    assert main(["report", str(out)]) == 0  # the model file's report says its private score too
    assert re.search(r"private score +held-out accuracy [\d.]+, constant predictor", capsys.readouterr().out)
    # the default delta is 1/n^2 for the file's 569 records, as with --tune, not for the 426 the model trained on
    assert model["privacy_report"]["delta"] == pytest.approx(1 / 569**2)
    card = tmp_path / "card.md"
    assert main(["fit", "--seed", "0", "--out", str(out), "--repeats", "2", "--private-score", "--report",
                 str(card)]) == 0
    text = card.read_text()
    assert "fitted the same records 2 times" in text and "spends epsilon 2 and delta 6.18e-06 in all" in text
    assert score["noise_sd"] == pytest.approx(3 ** 0.5 / 143 / (2 * score["rho"]) ** 0.5)
    assert not _keys(model) & {"metrics", "clipped", "non_private", "relative_error"}


def test_repeats_need_a_held_out_metric(tmp_path, capsys):
    assert main(["fit", "--repeats", "3", "--out", str(tmp_path / "m.json")]) == 2
    assert "--private-score" in capsys.readouterr().err and not (tmp_path / "m.json").exists()


def test_useless_models_clipped_data_and_weak_budgets_are_warned(tmp_path, capsys):
    rng = np.random.default_rng(0)
    csv = tmp_path / "d.csv"
    X = rng.uniform(10, 20, (300, 2))  # every value outside the declared [0, 1]
    y = (rng.random(300) < 0.9).astype(int)  # labels independent of X: nothing beats the majority class
    csv.write_text("a,b,label\n" + "\n".join(f"{u},{v},{t}" for (u, v), t in zip(X, y)) + "\n")
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"feature_low": [0, 0], "feature_high": [1, 1]}))
    args = ["fit", "--data", str(csv), "--target", "label", "--bounds", str(bounds), "--classes", "0,1",
            "--mechanism", "dp-gcd", "--out", str(tmp_path / "m.json"), "--delta", "0.01", "--epsilon", "20",
            "--private-score", "--seed", "0"]
    assert main(args) == 0
    shown = capsys.readouterr()
    err = shown.err
    assert "data holder only, not private): 450 feature values (100%) lie outside the declared bounds" in err
    assert "epsilon = 20 is above 10" in shown.out and "delta = 0.01 is above 1/n" in shown.out  # WARNING lines
    assert "epsilon = 20" not in err  # each warning once: in the summary, on stderr only with --json
    assert "label set" not in shown.out + err  # declared by --classes
    assert main([*args, "--json"]) == 0
    assert "dpsparse: warning: epsilon = 20 is above 10" in capsys.readouterr().err  # stdout holds the JSON
    warnings = json.loads((tmp_path / "m.json").read_text())["warnings"]
    assert any("does not show the model beating the constant predictor" in w for w in warnings)
    assert not any("lie outside" in w for w in warnings)  # counted on the private data: not released


@pytest.mark.parametrize("suffix", [".html", ".md"])
def test_the_model_card_holds_the_summary_the_report_and_the_coefficients(tmp_path, capsys, suffix):
    card = tmp_path / f"card{suffix}"
    png = tmp_path / "card.coefficients.png"
    png.write_bytes(b"a file of the user's")
    assert main(["fit", "--no-tune", "--out", str(tmp_path / "m.json"), "--report", str(card)]) == 0
    replaced = "card.coefficients.png existed and was replaced by the card's figure" in capsys.readouterr().err
    assert replaced == (suffix == ".md")  # an HTML card embeds its figure: the file beside it is not touched
    text = card.read_text()
    for needle in ["This model is (1, ", "Model details", "Intended use", "Training data", "Evaluation",
                   "Quantitative analyses", "Privacy", "Caveats and recommendations", "Privacy report", "Bassily"]:
        assert needle in text
    assert any(name in text for name in data.load_bundled("breast_cancer")[3])  # the largest coefficients, named
    classes = json.loads((tmp_path / "m.json").read_text())["classes"]
    assert f"score of class {classes[1]!r} against {classes[0]!r}" in text  # which way the signs point
    assert "non-private" not in text and "feature values" not in text
    if suffix == ".html":
        assert "data:image/png;base64," in text and png.read_bytes() == b"a file of the user's"
    else:
        assert png.read_bytes()[:4] == b"\x89PNG" and "card.coefficients.png" in text


def _figure_headlines(monkeypatch):
    """The suptitle of every figure saved from now on (None: none)."""
    from matplotlib.figure import Figure

    heads, save = [], Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: (
        heads.append(fig._suptitle.get_text() if fig._suptitle else None), save(fig, *a, **k))[1])
    return heads


def test_the_card_figure_shows_the_tables_effects_in_the_labels_units(tmp_path, monkeypatch):
    """A regression's bars are the table's effects (coefficient times half the feature's range), signed, not the
    coefficients of the bounded problem."""
    from matplotlib.axes import Axes

    from dpsparse import card

    bars, barh = [], Axes.barh
    monkeypatch.setattr(Axes, "barh", lambda ax, y, width, *a, **k: (bars.append(np.asarray(width)),
                                                                      barh(ax, y, width, *a, **k))[1])
    release = {"task": "regression", "coef": [2.0, -1.0, 0.0], "feature_names": ["a", "b", "c"],
               "bounds": {"feature_low": [0.0, -10.0, 0.0], "feature_high": [4.0, 10.0, 1.0]}}
    card.plot_coefficients(tmp_path / "f.png", release)
    np.testing.assert_allclose(bars[0], [-10.0, 4.0, 0.0])  # largest effect first
    assert [round(e, 6) for _, _, e in card._effects(release)] == [-10.0, 4.0, 0.0]  # the table's: signed
    wide = {"task": "regression", "coef": [0.0] * 37 + [1.0, 0.0, -3.0], "feature_names": [f"x{j}" for j in range(40)],
            "bounds": {"feature_low": [-1.0] * 40, "feature_high": [1.0] * 40}}
    card.plot_coefficients(tmp_path / "g.png", wide)
    np.testing.assert_allclose(bars[1], [-3.0, 1.0])  # beyond 30 features: the support only, no arbitrary zeros


def test_the_model_files_top_features_are_the_cards_signed_effects(tmp_path):
    """``support.top`` in model.json holds the card's "effect over half the range": the coefficient in the data's
    units times half the feature's public range, in the label's units for a regression (not the bounded problem's
    coefficient, which is that divided by half the label range), signed."""
    from dpsparse import card

    out = tmp_path / "m.json"
    assert main(["fit", "--data", "diabetes", "--no-tune", "--epsilon", "5", "--out", str(out)]) == 0
    release = json.loads(out.read_text())
    top = {t["feature"]: t["effect over half the range"] for t in release["support"]["top"]}
    effects = {name: e for name, _, e in card._effects(release)}
    assert top and all(top[name] == pytest.approx(effects[name], rel=1e-9) for name in top)
    assert any(e < 0 for e in top.values()) and any(e > 0 for e in top.values())


def test_sweep_writes_a_table_json_and_the_privacy_utility_figure(tmp_path, capsys, monkeypatch):
    from dpsparse.card import HOLDER_ONLY_FIGURE

    heads = _figure_headlines(monkeypatch)
    out, plot, card = tmp_path / "s.json", tmp_path / "s.sweep.png", tmp_path / "s.html"  # no fit card's figure
    assert main(["sweep", "--epsilons", "0.5,4", "--repeats", "2", "--seed", "0", "--no-tune", "--iterations", "5",
                 "--out", str(out), "--plot", str(plot), "--report", str(card)]) == 0
    res = json.loads(out.read_text())
    assert [r["epsilon"] for r in res["rows"]] == [0.5, 4] and all(len(r["values"]) == 2 for r in res["rows"])
    assert res["epsilon_spent"] == 9 and res["constant"] == pytest.approx(0.6294, abs=1e-4)
    assert 0.9 < res["non_private"] <= 1
    assert next(iter(res)) == "NOT differentially private"  # the file's first words, for whoever opens it
    assert plot.read_bytes()[:4] == b"\x89PNG" and "data:image/png;base64," in card.read_text()
    assert res["delta_spent"] == pytest.approx(4 / 569**2)  # 4 fits, each at delta = 1 / n^2 of the file's 569 rows
    assert "epsilon spent      9 and delta 1.24e-05 in all" in capsys.readouterr().out
    assert heads == [HOLDER_ONLY_FIGURE]  # scores without noise: the figure says so on its face
    assert main(["sweep", "--epsilons", "0.5,-1", "--out", str(tmp_path / "t.json")]) == 2
    assert "epsilon must be a finite number > 0" in capsys.readouterr().err and not (tmp_path / "t.json").exists()


def test_a_private_sweep_releases_noisy_scores_and_only_it_goes_into_a_card(tmp_path, capsys, monkeypatch):
    heads = _figure_headlines(monkeypatch)
    out, plot = tmp_path / "s.json", tmp_path / "s.png"
    assert main(["sweep", "--private-score", "--epsilons", "1,4", "--repeats", "2", "--out", str(out)]) == 0
    assert heads == [None] and plot.read_bytes()[:4] == b"\x89PNG"  # without --plot, the figure beside --out
    res = json.loads(out.read_text())
    assert res["private"] and res["non_private"] is None and "holder_warnings" not in res
    assert "NOT differentially private" not in res
    assert all(len(r["values"]) == len(r["constants"]) == 2 for r in res["rows"])
    card = tmp_path / "card.md"
    assert main(["fit", "--private-score", "--sweep", str(out), "--report", str(card),
                 "--out", str(tmp_path / "m.json")]) == 0
    text = card.read_text()
    assert f"publishing it with this model spends epsilon 11 and delta {5 / 569**2:.3g} in all" in text
    assert f"together they are (11, {5 / 569**2:.3g})-differentially private" in text  # the card's headline total
    assert f"(1, {1 / 569**2:.2g})-differential privacy for the model; (11, {5 / 569**2:.3g}) for this card" in text
    said = capsys.readouterr().out  # the terminal gives the total too, and the warning above epsilon 10
    assert f"the model and the curve are (11, {5 / 569**2:.3g})-differentially private" in said
    assert "WARNING             epsilon = 11 is above 10" in said
    seeded = tmp_path / "seeded.json"  # a seeded sweep has no guarantee: its curve cannot go into a card
    assert main(["sweep", "--private-score", "--epsilons", "1", "--repeats", "1", "--seed", "0",
                 "--out", str(seeded), "--plot", str(plot)]) == 0
    capsys.readouterr()
    assert main(["fit", "--sweep", str(seeded), "--out", str(tmp_path / "sd.json")]) == 2
    assert "its fits have no privacy guarantee" in capsys.readouterr().err
    assert "card.sweep.png" in text
    other = tmp_path / "other.svm"  # a curve of other records cannot go into this card
    rng = np.random.default_rng(0)
    other.write_text("".join(f"{rng.choice([-1, 1])} 1:{rng.uniform():.3f}\n" for _ in range(50)))
    assert main(["fit", "--data", str(other), "--n-features", "1", "--bounds-from-data", "--sweep", str(out),
                 "--report", str(tmp_path / "o.md"), "--out", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert "was measured on 'breast_cancer'" in err and not (tmp_path / "o.json").exists()
    assert main(["sweep", "--data", str(other), "--n-features", "1", "--bounds-from-data", "--epsilons", "1",
                 "--repeats", "1", "--out", str(tmp_path / "os.json"), "--plot", str(plot)]) == 0
    swept = json.loads((tmp_path / "os.json").read_text())
    assert swept["data"] == "other.svm" and swept["shape"] == [50, 1]  # the file's name, not its folder
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "other.svm").write_text("".join(f"{rng.choice([-1, 1])} 1:{rng.uniform():.3f}\n"
                                                      for _ in range(80)))  # the same name, other records
    swept.update(private=True, rows=[{**r, "guarantee_holds": True} for r in swept["rows"]])
    (tmp_path / "os.json").write_text(json.dumps(swept))
    assert main(["fit", "--data", str(tmp_path / "b" / "other.svm"), "--n-features", "1", "--bounds-from-data",
                 "--sweep", str(tmp_path / "os.json"), "--out", str(tmp_path / "ob.json")]) == 2
    assert "was measured on 50 records of 1 features, this fit's data has 80 of 1" in capsys.readouterr().err
    del swept["shape"]  # an older file: the whole path of its data, no shape
    swept["data"] = str((tmp_path / "other.svm").resolve())
    (tmp_path / "os.json").write_text(json.dumps(swept))
    assert main(["fit", "--data", str(tmp_path / "b" / "other.svm"), "--n-features", "1", "--bounds-from-data",
                 "--sweep", str(tmp_path / "os.json"), "--out", str(tmp_path / "ob.json")]) == 2
    assert "was measured on" in capsys.readouterr().err
    assert not (tmp_path / "o.md").exists()
    regression = data.load_bundled("breast_cancer")[2].to_dict()  # the same records as a regression on 0/1
    regression.pop("classes")
    (tmp_path / "r.json").write_text(json.dumps({**regression, "label_low": 0, "label_high": 1}))
    assert main(["fit", "--loss", "squared", "--bounds", str(tmp_path / "r.json"), "--sweep", str(out), "--out",
                 str(tmp_path / "q.json")]) == 2
    assert "a curve of another task" in capsys.readouterr().err and not (tmp_path / "q.json").exists()
    assert main(["sweep", "--epsilons", "1", "--repeats", "1", "--out", str(tmp_path / "np.json"),
                 "--plot", str(plot)]) == 0
    capsys.readouterr()
    assert main(["fit", "--sweep", str(tmp_path / "np.json"), "--out", str(tmp_path / "n.json")]) == 2
    assert "measured without noise" in capsys.readouterr().err and not (tmp_path / "n.json").exists()


def test_a_private_sweep_summarizes_no_r2_that_is_noise(tmp_path, capsys, monkeypatch):
    """Where the private R^2's draws are noise (``unreliable``: diabetes' 111 held-out records at epsilon 0.5), the
    sweep's table gives no mean of them and its figure leaves that epsilon out, saying so; ``fit --repeats`` lists
    such a draw as not measurable."""
    out, plot = tmp_path / "s.json", tmp_path / "s.png"
    assert main(["sweep", "--data", "diabetes", "--private-score", "--epsilons", "0.5,50", "--repeats", "2",
                 "--out", str(out), "--plot", str(plot)]) == 0
    text = capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert rows[0]["unreliable"] == 2 and rows[1]["unreliable"] == 0
    assert "     0.5  not measurable: 2 of 2 private scores are noise here" in text
    assert re.search(r"\n      50   0\.\d{4}  ", text)  # a summary where the score is one
    assert plot.read_bytes()[:4] == b"\x89PNG"
    import matplotlib.axes

    from dpsparse import card as card_mod

    drawn = []
    real_plot = matplotlib.axes.Axes.plot
    monkeypatch.setattr(matplotlib.axes.Axes, "plot",
                        lambda self, *a, **k: drawn.append(list(a[0])) or real_plot(self, *a, **k))
    card_mod.plot_sweep(tmp_path / "t.png", rows, "r2", 0.0, private=True)
    assert drawn == [[50.0]]  # the curve has the measurable epsilon only
    assert main(["fit", "--data", "diabetes", "--private-score", "--repeats", "2", "--epsilon", "0.5",
                 "--out", str(tmp_path / "m.json")]) == 0
    assert "private scores not measurable, not measurable; together" in capsys.readouterr().out


def test_the_model_file_names_the_data_file_not_its_path_and_bounds_names_must_match_the_header(tmp_path, capsys):
    """The released file says which file trained it by its name only (the data holder's directories are not
    released); bounds whose feature names differ from the CSV's header are refused before any fit."""
    rng = np.random.default_rng(0)
    path = tmp_path / "records.csv"
    path.write_text("a,b,label\n" + "".join(f"{rng.uniform():.3f},{rng.uniform():.3f},{rng.integers(2)}\n"
                                             for _ in range(400)))
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"feature_low": [0, 0], "feature_high": [1, 1], "feature_names": ["a", "b"]}))
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(path), "--target", "label", "--classes", "0,1", "--bounds", str(bounds),
                 "--out", str(out)]) == 0
    assert json.loads(out.read_text())["data"]["source"] == "records.csv"
    card = tmp_path / "sweep.md"
    assert main(["sweep", "--private-score", "--data", str(path), "--target", "label", "--classes", "0,1",
                 "--bounds", str(bounds), "--epsilons", "1", "--repeats", "1", "--out", str(tmp_path / "s.json"),
                 "--plot", str(tmp_path / "s.png"), "--report", str(card)]) == 0
    assert "records.csv: " in card.read_text() and str(tmp_path) not in card.read_text()
    bounds.write_text(json.dumps({"feature_low": [0, 0], "feature_high": [1, 1], "feature_names": ["b", "a"]}))
    capsys.readouterr()
    assert main(["fit", "--data", str(path), "--target", "label", "--classes", "0,1", "--bounds", str(bounds),
                 "--out", str(tmp_path / "n.json")]) == 2
    assert "column 0 is 'a' in the data and 'b' in the bounds" in capsys.readouterr().err
    assert not (tmp_path / "n.json").exists()


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
    assert main(["fit", "--data", str(path), "--n-features", "2", "--classes=-1,1", "--out",
                 str(tmp_path / "m.json")]) == 2  # too few
    err = capsys.readouterr().err
    assert "too few to buy" in err and not (tmp_path / "m.json").exists()
    assert "--bounds FILE" in err and "--bounds-from-data" in err and "Bounds(" not in err  # the CLI's terms
    card = tmp_path / "card.md"
    assert main(["fit", "--data", str(path), "--n-features", "2", "--bounds-from-data", "--out",
                 str(tmp_path / "m.json"), "--report", str(card)]) == 0
    assert "NO differential-privacy guarantee" in capsys.readouterr().out
    text = card.read_text()  # the card promises nothing to the people in the data
    assert "NONE (the target was (1, " in text and "nothing can be promised" in text
    assert "Not for publication" in text and "times as likely" not in text and "The guarantee covers" not in text


def test_group_penalty_with_dp_sgd_on_real_data(tmp_path, capsys, shared_data):
    groups = tmp_path / "g.json"
    groups.write_text(json.dumps([[5 * i + k for k in range(5)] for i in range(20)]))
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"feature_low": [-1.0] * 100, "feature_high": [1.0] * 100,
                                  "label_low": -2.0, "label_high": 2.0, "source": "a-priori (test)"}))
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(shared_data / "regression" / "bardet.svm.gz"), "--penalty", "group-l2",
                 "--mechanism", "dp-sgd", "--groups", str(groups), "--bounds", str(bounds), "--epsilon", "5",
                 "--seed", "0", "--out", str(out), "--json", "--diagnostics"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["privacy_report"]["accounting_holds"] and res["privacy_report"]["mechanism"].startswith("dp-sgd")
    assert res["diagnostics"]["reference_gap"] < 1e-6 and res["diagnostics"]["relative_error"] < 1.0


def test_hinge_loss_uses_dp_gd_on_subgradients(tmp_path, capsys):
    assert main(["fit", "--loss", "hinge", "--no-tune", "--seed", "0", "--epsilon", "5", "--diagnostics", "--verbose",
                 "--out", str(tmp_path / "m.json")]) == 0
    text = capsys.readouterr().out
    assert "hinge loss: DP-GD on its subgradients" in text and "no exact solver for a non-smooth loss" in text


def test_a_clipping_norm_for_the_hinge_loss_goes_to_its_rules_dp_gd(tmp_path, capsys):
    """A mechanism option without ``--mechanism`` picks the mechanism it is meant for; for the hinge loss, DP-GD."""
    out = tmp_path / "m.json"
    assert main(["fit", "--loss", "hinge", "--no-tune", "--seed", "0", "--clipping-norm", "2", "--out", str(out)]) == 0
    report = json.loads(out.read_text())["privacy_report"]
    assert report["mechanism"] == "dp-gd" and report["noise"]["clipping norm"] == 2.0


@pytest.mark.parametrize("args,match", [
    (["--batch-size", "10"], "--batch-size is an option of dp-sgd: name one (--mechanism dp-sgd); without "
     "--mechanism a mechanism option sets aside the automatic choice and goes to dp-gcd"),
    (["--clipping-norm", "1", "--mechanism", "one-pass-sgd"],
     "--clipping-norm is an option of dp-gcd, dp-cd, dp-sgd and dp-gd"),
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
    assert main(["fit", "--noise", "secure", "--verbose", "--out", str(tmp_path / "m.json")]) == 0
    assert "OpenDP" in capsys.readouterr().out
    # OpenDP takes no seed: refused, not dropped (the split and the noise would silently not follow it)
    assert main(["fit", "--noise", "secure", "--seed", "0", "--out", str(tmp_path / "s.json")]) == 2
    assert "--seed with --noise secure" in capsys.readouterr().err and not (tmp_path / "s.json").exists()


def test_audit_prints_the_replay_of_every_pair_and_catches_the_mutant(capsys):
    assert main(["audit", "--mechanism", "output", "--runs", "2000"]) == 0
    out = capsys.readouterr().out
    replay = re.findall(r"^  (.+?) +minimizer ([0-9.]+)$", out, flags=re.M)
    assert [name for name, _ in replay] == ["label flip", "feature extremes", "row norm with intercept",
                                            "isolated label flip", "origin to corner"]
    assert all(0.0 < float(r) <= 1.0 for _, r in replay)
    declared, mutant = re.findall(r"epsilon >= ([0-9.]+) .*: (within|above) the claim", out)
    assert float(declared[0]) <= 1.0 and declared[1] == "within"
    assert float(mutant[0]) > 1.0 and mutant[1] == "above"
    composed, claimed = re.findall(r"ledger replay .*: epsilon ([0-9.]+) for a claimed ([0-9.]+): within the claim",
                                   out)[0]
    assert float(composed) == pytest.approx(float(claimed), rel=1e-6) and 0.99 < float(claimed) <= 1.0
    assert out.rstrip().splitlines()[-1].startswith("PASS: no check exceeded the claim") and "was caught" in out


def test_the_audit_replays_dplinearsvcs_setting_the_hinge_loss(capsys):
    """``--loss hinge`` audits what DPLinearSVC runs (DP-GD on hinge subgradients), labels +-1; a mechanism that
    needs a smooth loss refuses it in one line."""
    assert main(["audit", "--mechanism", "dp-gd", "--loss", "hinge", "--runs", "0"]) == 0
    out = capsys.readouterr().out
    assert "setting: hinge loss" in out and "clipped gradient sum 1.000" in out and out.rstrip().endswith(
        "not of a model file)")
    assert main(["audit", "--mechanism", "dp-gcd", "--loss", "hinge", "--runs", "0"]) == 2
    assert "needs a smooth loss" in capsys.readouterr().err


def test_an_audit_that_finds_a_leak_says_fail_and_exits_1(monkeypatch, capsys):
    """A replayed sensitivity above its declaration (a mutated replay) ends the audit with FAIL and exit status 1,
    and so does a one-run lower bound above the claim, in text and in --json (with ``passed`` false)."""
    from dpsparse import audit as audit_mod

    real = audit_mod.sensitivity_replay
    monkeypatch.setattr(audit_mod, "sensitivity_replay",
                        lambda *a, **k: {key: 2.0 * v for key, v in real(*a, **k).items()})
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--mechanism", "output", "--runs", "0"])
    assert exc.value.code == 1 and "FAIL: the sensitivity of minimizer (label flip)" in capsys.readouterr().out
    from dpsparse import losses

    found = audit_mod.one_run_audit("dp-gd", losses.Logistic(), epsilon=1.0, delta=1e-6, canaries=200, seed=0)
    monkeypatch.setattr(audit_mod, "one_run_audit", lambda *a, **k: dataclasses.replace(found, lower_bound=5.0))
    for extra in ([], ["--json"]):
        with pytest.raises(SystemExit) as exc:
            main(["audit", "--one-run", "--mechanism", "dp-gd", "--canaries", "200", *extra])
        out = capsys.readouterr().out
        assert exc.value.code == 1 and ('"passed": false' in out if extra else "FAIL: the one-run lower bound" in out)


def test_the_audit_verdict_names_what_failed():
    from dpsparse.cli import _audit_verdict

    said = _audit_verdict(["the ledger replay", "the sensitivity of minimizer (label flip)"], True, 0.25)
    assert said.startswith("FAIL: the ledger replay, the sensitivity of minimizer (label flip) exceeded the claim")
    assert "was not caught: more --runs" in _audit_verdict([], False, 0.25)
    assert "was not caught: more --canaries" in _audit_verdict([], False, 0.25, "--canaries")
    assert _audit_verdict([], None, 0.25).endswith("not of a model file)")


@pytest.mark.parametrize("args,match", [
    (["--mechanism", "dp-gcd", "--runs", "-1"], "--runs must be"),
    (["--mechanism", "dp-gcd", "--mutation", "0"], "--mutation"), ([], "--mechanism is required"),
    (["--mechanism", "dp-gd", "--canaries", "500"], "--canaries goes with --one-run"),
    (["--one-run", "--pipeline", "--mechanism", "dp-gd"], "drop --mechanism"),
    (["--one-run", "--mechanism", "dp-gd", "--private-bounds"], "--private-bounds goes with"),
    (["--pipeline", "--private-bounds"], "--private-bounds goes with"),
    (["--pipeline", "--delta", "1e-6"], "--delta is not used by --pipeline's replay"),
    (["--pipeline", "--runs", "100"], "--runs is not used by --pipeline's replay"),
    (["--one-run", "--mechanism", "dp-gd", "--canaries", "5"], "--canaries must be"),
    (["--mechanism", "output", "--epsilon", "0"], "epsilon must be"), (["--mechanism", "output", "--delta", "2"],
                                                                       "delta must be"),
    (["--mechanism", "adassp", "--loss", "logistic"], "needs a least-squares loss"),
    (["--mechanism", "dp-gcd", "--json"], "--json goes with --one-run"),
    (["--one-run", "--pipeline", "--canaries", "200"], "at least 360 records (delta 1/n^2); give --canaries 360")])
def test_audit_refuses_bad_settings(capsys, args, match):
    assert main(["audit", *args]) == 2
    out, err = capsys.readouterr()
    assert match in err and out == ""  # refused before any line of the audit


def test_one_run_audit_of_dp_gcd_finds_the_fit_within_its_claim_and_the_mutant_above(capsys):
    assert main(["audit", "--one-run", "--mechanism", "dp-gcd", "--mutation", "0.1", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["mechanism"] == "dp-gcd" and res["claim_epsilon"] == 1.0 and res["canaries"] == 1000
    assert res["lower_bound"] <= 1.0 < res["mutant_lower_bound"]
    assert main(["audit", "--one-run", "--mechanism", "dp-gcd", "--mutation", "0.1"]) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith("PASS: no check exceeded the claim")


def test_the_default_fit_is_the_rules_single_fit_and_tune_searches_around_it(tmp_path, capsys):
    card = tmp_path / "card.html"
    assert main(["fit", "--seed", "0", "--json", "--out", str(tmp_path / "m.json"), "--report", str(card)]) == 0
    printed = capsys.readouterr().out
    rep = json.loads(printed)["privacy_report"]
    assert "base runs" not in printed and "repetition" not in printed  # nor in the terminal
    assert rep["mechanism"] == "dp-gd" and rep["accounting_holds"] and rep["accountant_epsilon"] <= 1.0
    for artefact in (tmp_path / "m.json", card):  # a default fit writes no count of search runs
        assert "base runs" not in artefact.read_text() and "repetition" not in artefact.read_text()
    with warnings.catch_warnings(record=True) as shown:  # the command's own epsilon and delta are the search's
        warnings.simplefilter("always")
        assert main(["fit", "--seed", "0", "--json", "--tune", "--epsilon", "2", "--out", str(tmp_path / "t.json")
                     ]) == 0
    assert not [w for w in shown if "DPSearchCV ignores" in str(w.message)]
    rep = json.loads(capsys.readouterr().out)["privacy_report"]
    assert rep["mechanism"] == "dp-search" and rep["accounting_holds"] and rep["epsilon"] == 2.0
    assert main(["fit", "--seed", "0", "--json", "--tune", "--out", str(tmp_path / "t.json")]) == 0
    rep = json.loads(capsys.readouterr().out)["privacy_report"]
    assert rep["mechanism"] == "dp-search" and rep["accounting_holds"]
    assert rep["epsilon"] == 1.0 and rep["accountant_epsilon"] <= 1.0
    assert "constant predictor" in rep["noise"]["what was searched"]
    assert rep["noise"]["base runs"] == "each of the 2 settings once (composed in zCDP)"
    assert "RepeatAndSelect" not in rep["noise"]["source"] and "run once" in rep["noise"]["source"]
    counts = json.loads((tmp_path / "t.json").read_text())["data"]  # the search trains on a part only
    assert counts["validation records"] == rep["noise"]["validation records"] > 0
    assert counts["training records"] + counts["validation records"] == 569


@pytest.mark.parametrize("args,match", [(["--tune", "--iterations", "5"], "drop --iterations"),
                                        (["--tune", "--rule", "gs-s"], "drop --rule")])
def test_tune_with_fixed_hyperparameters_is_refused(tmp_path, capsys, args, match):
    assert main(["fit", "--out", str(tmp_path / "m.json"), *args]) == 2
    assert match in capsys.readouterr().err


def test_no_compare_skips_the_non_private_reference(tmp_path, capsys):
    assert main(["fit", "--no-tune", "--no-compare", "--diagnostics", "--seed", "0",
                 "--out", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("held-out accuracy"))
    assert "non-private comparison skipped" in out and "non-private" not in line


@pytest.mark.parametrize(("command", "flag"), [(["fit", "--out", "", "--report", "c.html"], "--out"),
                                               (["fit", "--report", "", "--out", "m.json"], "--report"),
                                               (["sweep", "--out", ""], "--out")])
def test_an_empty_output_name_is_refused_before_anything_is_fitted_or_written(command, flag, tmp_path, capsys,
                                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    assert f"{flag} is empty: give it a file name" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_an_svmlight_file_without_records_is_refused_by_name(tmp_path, capsys):
    empty = tmp_path / "e.svm"
    empty.write_text("")
    assert main(["fit", "--data", str(empty), "--n-features", "5", "--classes", "0,1"]) == 2
    assert f"data file {str(empty)!r} has no records" in capsys.readouterr().err


def test_an_output_folder_is_refused_and_integer_labels_are_classes_or_a_regression_target(tmp_path, capsys):
    assert main(["fit", "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    # the file name suggested is one the flag accepts
    assert main(["fit", "--report", str(tmp_path)]) == 2
    suggested = re.search(r"e\.g\. (\S+)", capsys.readouterr().err).group(1)
    assert suggested.endswith(".html") and suggested.startswith(str(tmp_path))
    rng = np.random.default_rng(0)
    csv = tmp_path / "d.csv"
    for n_classes, task in [(5, "classification"), (200, "regression")]:
        labels = rng.integers(n_classes, size=400)
        csv.write_text("a,b,label\n" + "\n".join(f"{u:.3f},{v:.3f},{k}" for u, v, k in
                                                zip(rng.random(400), rng.random(400), labels)) + "\n")
        out = tmp_path / f"m{n_classes}.json"
        assert main(["fit", "--data", str(csv), "--target", "label", "--out", str(out), "--no-tune",
                     "--bounds-from-data"]) == 0
        model = json.loads(out.read_text())
        assert model["task"] == task
        summary = capsys.readouterr().out
        if task == "classification":  # one-vs-rest, a row per class
            assert np.shape(model["coef"]) == (5, 2) and len(model["classes"]) == 5
            assert "one-vs-rest: 5 linear models, one a class against the others, each with 1/5" in summary
            pred = tmp_path / "pred.txt"
            assert main(["predict", "--model", str(out), "--data", str(csv), "--target", "label",
                         "--out", str(pred)]) == 0
            predicted = set(pred.read_text().split())  # the labels as the file writes them: 2, not 2.0
            assert predicted and predicted <= {str(k) for k in range(5)}
            assert model["classes"] == list(range(5))


def test_labels_read_as_floats_become_integers_only_where_exact():
    from dpsparse.cli import _integral

    assert _integral(np.array([0.0, 2.0])).dtype == np.int64
    for y in ([0.0, 1e19], [0.5, 1.0], [0.0, np.nan]):  # beyond an exact integer, fractional, missing: unchanged
        assert _integral(np.array(y)).dtype == float


def test_the_bounds_name_the_features_of_a_file_without_a_header(tmp_path, capsys):
    rng = np.random.default_rng(0)
    svm, bounds = tmp_path / "d.svm", tmp_path / "b.json"
    svm.write_text("".join(f"{rng.choice([-1, 1])} 1:{rng.uniform():.3f} 2:{rng.uniform():.3f}\n" for _ in range(200)))
    bounds.write_text(json.dumps({"feature_low": 0, "feature_high": 1, "feature_names": ["height", "weight"]}))
    assert main(["fit", "--data", str(svm), "--bounds", str(bounds), "--classes=-1,1", "--out",
                 str(tmp_path / "m.json")]) == 0
    assert json.loads((tmp_path / "m.json").read_text())["feature_names"] == ["height", "weight"]
    bounds.write_text(json.dumps({"feature_low": 0, "feature_high": 1, "feature_names": ["height"]}))
    assert main(["fit", "--data", str(svm), "--bounds", str(bounds), "--classes=-1,1", "--out",
                 str(tmp_path / "m2.json")]) == 2
    assert "it has features beyond the 1 declared" in capsys.readouterr().err  # the names give the width


def test_the_summary_and_the_plain_words_follow_the_release(tmp_path, capsys):
    """One-vs-rest is named from the released label set (the private selection drops a rare label), and a clipping
    norm set by hand is no spending (the declared ranges' joint cuts are)."""
    rng = np.random.default_rng(0)
    csv, bounds = tmp_path / "d.csv", tmp_path / "b.json"
    labels = np.r_[rng.integers(2, size=3000), [2, 2, 2]]
    csv.write_text("a,b,label\n" + "\n".join(f"{u:.3f},{v:.3f},{k}" for u, v, k in
                                            zip(rng.random(3003), rng.random(3003), labels)) + "\n")
    bounds.write_text(json.dumps({"feature_low": 0, "feature_high": 1}))
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(csv), "--target", "label", "--bounds", str(bounds), "--loss", "logistic",
                 "--out", str(out)]) == 0
    assert json.loads(out.read_text())["classes"] == [0, 1] and "one-vs-rest" not in capsys.readouterr().out
    assert main(["fit", "--mechanism", "dp-gd", "--clipping-norm", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    said = " ".join(capsys.readouterr().out.split())  # the bundled breast cancer, its published ranges cut
    assert "a noisy typical size of the records" not in said  # the clipping norm set by hand
    assert ("the budget paid for: cuts of the declared feature ranges, chosen from the records with noise (5% of the "
            "budget counted in zCDP") in said
    assert main(["fit", "--mechanism", "dp-cd", "--no-tune", "--out", str(out)]) == 0  # its automatic threshold
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    assert "the budget paid for: a noisy typical size of the records" in capsys.readouterr().out


def test_tune_refuses_an_undeclared_label_set_without_counting_the_labels(tmp_path, capsys):
    rng = np.random.default_rng(0)
    csv, bounds = tmp_path / "d.csv", tmp_path / "b.json"
    csv.write_text("a,b,label\n" + "\n".join(f"{u:.3f},{v:.3f},{k}" for u, v, k in
                                            zip(rng.random(300), rng.random(300), rng.integers(3, size=300))) + "\n")
    bounds.write_text(json.dumps({"feature_low": 0, "feature_high": 1}))
    common = ["fit", "--data", str(csv), "--target", "label", "--bounds", str(bounds), "--tune", "--out",
              str(tmp_path / "m.json")]
    assert main([*common, "--loss", "logistic"]) == 2
    err = capsys.readouterr().err
    assert "--tune needs the label set declared" in err and "3" not in err  # the private labels' count unsaid
    assert main([*common, "--classes", "0,1,2"]) == 2
    assert "the search supports two classes, 3 are declared" in capsys.readouterr().err
    assert main([*common[:5], *common[7:], "--bounds-from-data", "--loss", "logistic"]) == 2
    assert "the search supports two classes, the labels hold more" in capsys.readouterr().err


@pytest.mark.slow
def test_news20_runs_one_vs_rest_with_its_20_classes_and_one_range_for_all_features(tmp_path, capsys, shared_data):
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"feature_low": 0, "feature_high": 10, "n_features": 62061,
                                  "source": "word counts, a-priori cap 10"}))
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(shared_data / "libsvm" / "news20.multiclass.svm.gz"), "--bounds", str(bounds),
                 "--classes", ",".join(str(k) for k in range(1, 21)), "--iterations", "10", "--seed", "0",
                 "--out", str(out), "--private-score", "--diagnostics"]) == 0
    model = json.loads(out.read_text())
    report, score = model["privacy_report"], model["private_score"]
    assert np.shape(model["coef"]) == (20, 62061) and len(model["classes"]) == 20
    assert report["accounting_holds"] and "one-vs-rest over 20 classes" in report["method"]
    assert "no non-private comparison for more than two classes" in capsys.readouterr().out
    if score["model"] <= score["constant"]:  # below it, the warning must say so (above, it may: a noisy gap)
        assert any("does not show the model beating" in w for w in model["warnings"])


def test_an_older_seeded_model_file_and_sweep_get_no_guarantee(tmp_path, capsys):
    """Files written before ``noise_seeded`` existed: a model whose noise source says a fixed seed is reported without
    guarantee, and a sweep that cannot say is refused for a card."""
    out = tmp_path / "m.json"
    assert main(["fit", "--seed", "0", "--no-tune", "--out", str(out)]) == 0
    model = json.loads(out.read_text())
    del model["privacy_report"]["noise_seeded"]
    model["privacy_report"]["guarantee_holds"] = True  # as the older code wrote it
    out.write_text(json.dumps(model))
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    assert capsys.readouterr().out.startswith("This model has NO differential-privacy guarantee")
    sweep_file = tmp_path / "s.json"
    assert main(["sweep", "--private-score", "--epsilons", "1", "--repeats", "1", "--out", str(sweep_file),
                 "--plot", str(tmp_path / "s.png")]) == 0
    sweep = json.loads(sweep_file.read_text())
    assert sweep["noise_seeded"] is False
    del sweep["noise_seeded"]
    sweep_file.write_text(json.dumps(sweep))
    capsys.readouterr()
    assert main(["fit", "--sweep", str(sweep_file), "--out", str(tmp_path / "n.json")]) == 2
    assert "written by an older dpsparse" in capsys.readouterr().err


def test_classes_starting_with_a_minus_sign_need_no_equals_sign(tmp_path):
    csv, bounds = tmp_path / "d.csv", tmp_path / "b.json"
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 2))
    csv.write_text("a,b,label\n" + "".join(f"{a},{b},{1 if a > 0 else -1}\n" for a, b in X))
    bounds.write_text(json.dumps({"feature_low": [-1, -1], "feature_high": [1, 1]}))
    assert main(["fit", "--data", str(csv), "--target", "label", "--bounds", str(bounds), "--classes", "-1,1",
                 "--out", str(tmp_path / "m.json")]) == 0
    assert json.loads((tmp_path / "m.json").read_text())["classes"] == [-1, 1]


def test_the_card_of_a_constant_predictor_says_what_it_predicts_and_carries_the_schemas_note(tmp_path, capsys,
                                                                                             shared_data):
    schema_path = "examples/birthwt.schema.json"
    card = tmp_path / "bw.md"
    assert main(["fit", "--data", str(shared_data / "regression" / "birthwt.csv"), "--schema", schema_path,
                 "--out", str(tmp_path / "bw.json"), "--report", str(card)]) == 0
    model, text = json.loads((tmp_path / "bw.json").read_text()), card.read_text()
    assert model["privacy_report"]["mechanism"] == "constant"  # 189 records on 16 features: below the floor
    assert f"it predicts {model['intercept']:.4g} for every record" in text and "penalty" not in text.split("##")[1]
    assert "Every coefficient is 0" in text and "more nonzero coefficients" not in text
    assert "support in red" not in text and not (tmp_path / "bw.coefficients.png").exists()  # no chart, no file
    assert "check its private score (below)" not in text  # none was released
    note = json.loads(open(schema_path).read())["note"]
    assert model["schema_note"] == note and note in text  # "the coding itself is not private": the reader sees it


def test_a_card_on_bounds_read_off_the_data_does_not_claim_public_facts_only(tmp_path, capsys, shared_data):
    card = tmp_path / "fd.md"
    assert main(["fit", "--data", str(shared_data / "libsvm" / "cpusmall.svm.gz"), "--n-features", "12", "--loss",
                 "squared", "--bounds-from-data", "--out", str(tmp_path / "fd.json"), "--report", str(card)]) == 0
    text = card.read_text()
    assert "Only public facts" not in text and "NOT only public facts" in text


def test_a_csv_file_without_a_header_line_is_never_echoed_in_an_error(tmp_path, capsys):
    path = tmp_path / "raw.csv"
    path.write_text("39,State-gov,77516,<=50K\n50,Private,83311,>50K\n")
    assert main(["fit", "--data", str(path), "--target", "income", "--classes", "<=50K,>50K"]) == 2
    err = capsys.readouterr().err
    assert "may be a record" in err and "State-gov" not in err and "77516" not in err
    path.write_text("Private,Bachelors,<=50K\nState-gov,Masters,>50K\n")  # all text: refused without a field shown
    assert main(["fit", "--data", str(path), "--target", "income", "--classes", "<=50K,>50K"]) == 2
    err = capsys.readouterr().err
    assert "not among the 3 names" in err and "Private" not in err and "Bachelors" not in err
    assert main(["fit", "--data", str(path), "--target", "<=50K", "--classes", "<=50K,>50K"]) == 2
    err = capsys.readouterr().err
    assert "column 1 (of 3) has non-numeric values" in err and "Private" not in err


def test_version_is_printed_without_a_command(capsys):
    from dpsparse import __version__

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"dpsparse {__version__}"


def test_a_penalty_a_mechanism_cannot_take_is_refused_in_words_with_the_mechanisms_that_can(tmp_path, capsys):
    groups = tmp_path / "g.json"
    groups.write_text(json.dumps({"groups": [[3 * k, 3 * k + 1, 3 * k + 2] for k in range(10)]}))
    assert main(["fit", "--penalty", "group-l2", "--groups", str(groups), "--mechanism", "dp-gcd",
                 "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "needs a penalty separable by coordinates (l1, l2, elasticnet)" in err and "prox_1d" not in err
    assert "mechanisms that take it: " in err and "dp-gd" in err.split("mechanisms that take it: ")[1]
    assert not (tmp_path / "m.json").exists()


def test_a_test_size_that_leaves_no_training_record_is_refused_by_its_flag(tmp_path, capsys):
    assert main(["fit", "--private-score", "--test-size", "0.999", "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "--test-size 0.999 holds out 569 of the 569 records and leaves 0 to train on" in err
    assert not (tmp_path / "m.json").exists()


def test_a_regression_loss_with_bounds_that_declare_classes_names_the_clash(tmp_path, capsys):
    csv, bounds = tmp_path / "d.csv", tmp_path / "b.json"
    csv.write_text("a,label\n" + "".join(f"{k / 10},{k % 2}\n" for k in range(10)))
    bounds.write_text(json.dumps({"feature_low": [0], "feature_high": [1], "classes": [0, 1]}))
    assert main(["fit", str(csv), "--target", "label", "--bounds", str(bounds), "--loss", "squared", "--out",
                 str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "--loss squared is a regression, but the bounds declare a classifier's label set (classes 0, 1)" in err
    assert not (tmp_path / "m.json").exists()


def test_format_with_a_bundled_dataset_is_refused_not_ignored(tmp_path, capsys):
    assert main(["fit", "--data", "breast_cancer", "--format", "csv", "--out", str(tmp_path / "m.json")]) == 2
    assert "is a bundled dataset, read as it is: drop --format" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_integer_classes_of_a_csv_stay_integers_in_the_model_and_its_predictions(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = "".join(f"{a:.3f},{b:.3f},{int(a > b)}\n" for a, b in rng.uniform(-1, 1, (300, 2)))
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n" + rows)
    model = tmp_path / "m.json"
    assert main(["fit", "--data", str(path), "--target", "label", "--classes", "0,1", "--bounds-from-data",
                 "--out", str(model)]) == 0
    assert json.loads(model.read_text())["classes"] == [0, 1]
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--data", str(path), "--target", "label"]) == 0
    assert set(capsys.readouterr().out.split()) <= {"0", "1"}


def test_written_files_take_the_umasks_permissions_and_a_failed_write_leaves_nothing(tmp_path, monkeypatch):
    """A model file and a card are for others to read: their mode is 0666 under the umask (a temporary file's 0600
    was kept before); a write that fails leaves neither the file nor its temporary."""
    import os

    from dpsparse import cli

    old = os.umask(0o022)
    try:
        cli._write_atomic(tmp_path / "model.json", "{}")
        os.umask(0o077)
        cli._write_atomic(tmp_path / "private.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "model.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "private.json").stat().st_mode & 0o777 == 0o600

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(cli.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        cli._write_atomic(tmp_path / "card.md", "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json", "private.json"]


def test_the_parser_answers_without_the_heavy_libraries():
    """``dpsparse --help`` and a mistaken flag need only the parser: scikit-learn, scipy's optimizers and statistics
    and the compiled kernels are imported by the command that uses them (about 1 s to answer instead of 3)."""
    import subprocess
    import sys

    code = ("import sys, dpsparse.cli as c; c._parser().parse_args(['fit', '--epsilon', '2']);"
            "print(sorted(m for m in ('sklearn', 'scipy.optimize', 'scipy.stats', 'numba', 'dask', 'matplotlib') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    err = subprocess.run([sys.executable, "-m", "dpsparse.cli", "fit", "--epsilon", "x"], capture_output=True,
                         text=True)
    assert err.returncode == 2 and "--epsilon: invalid float value: 'x'" in err.stderr


def test_a_reader_that_stops_early_ends_the_command_without_a_traceback(tmp_path, monkeypatch, capsys):
    """``dpsparse report m.json | head -3``: the pipe closes while the report is printed."""
    out = tmp_path / "m.json"
    assert main(["fit", "--out", str(out), "--seed", "0"]) == 0
    capsys.readouterr()

    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

    monkeypatch.setattr("sys.stdout", ClosedPipe())
    assert main(["report", str(out)]) == 1


def test_classes_that_differ_from_the_bounds_classes_are_refused(capsys):
    """breast_cancer's bundled bounds declare 0, 1: a third class would get a one-vs-rest model of its own."""
    assert main(["fit", "--classes", "0,1,2", "--out", "unused.json"]) == 2
    assert "differs from the classes the bounds declare (0, 1)" in capsys.readouterr().err


def test_label_sets_compare_as_numbers():
    from dpsparse.cli import _label_set

    assert _label_set(np.array([1.0, 0.0])) == _label_set([0, 1]) != _label_set([0, 1, 2])
    assert _label_set(["no", "yes"]) == _label_set(np.array(["yes", "no"]))


def test_an_svmlight_files_width_is_declared_never_read_off_its_records(tmp_path, capsys):
    """The file lists only the indices its records hold: read off it, one record with a rare high index would widen
    the released model. Without --n-features or bounds that give it, the fit is refused before any data is read."""
    rng = np.random.default_rng(0)
    records = [f"{rng.choice([-1, 1])} 1:{rng.uniform():.3f} 2:{rng.uniform():.3f}\n" for _ in range(400)]
    base, neighbour = tmp_path / "a.svm", tmp_path / "b.svm"
    base.write_text("".join(records))
    neighbour.write_text("".join(records[:-1]) + "1 1:0.5 5:1\n")  # one record replaced: a high index
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"feature_low": 0, "feature_high": 1, "source": "a-priori (test)"}))
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(base), "--bounds", str(bounds), "--classes=-1,1", "--out", str(out)]) == 2
    assert "--n-features" in capsys.readouterr().err and not out.exists()
    widths = []
    for path in (base, neighbour):
        assert main(["fit", "--data", str(path), "--bounds", str(bounds), "--n-features", "6", "--classes=-1,1",
                     "--out", str(out)]) == 0
        widths.append(len(json.loads(out.read_text())["coef"]))
    assert widths == [6, 6]
    bounds.write_text(json.dumps({"feature_low": 0, "feature_high": 1, "n_features": 4, "source": "a-priori"}))
    capsys.readouterr()
    assert main(["fit", "--data", str(neighbour), "--bounds", str(bounds), "--classes=-1,1", "--out",
                 str(tmp_path / "n.json")]) == 2
    assert "features beyond the 4 declared" in capsys.readouterr().err and not (tmp_path / "n.json").exists()
    assert main(["fit", "--data", str(base), "--bounds", str(bounds), "--n-features", "6", "--classes=-1,1",
                 "--out", str(tmp_path / "n.json")]) == 2
    assert "disagree" in capsys.readouterr().err


def test_an_svmlight_files_first_index_is_declared_not_guessed(tmp_path, capsys):
    """scikit-learn's guess (zero-based where some index is 0) would let one record move every column: LIBSVM's
    one-based indices unless --zero-based, which the model file records for predict."""
    rng = np.random.default_rng(1)
    path = tmp_path / "z.svm"
    path.write_text("".join(f"{rng.choice([-1, 1])} 0:{rng.uniform():.3f} 1:{rng.uniform():.3f}\n"
                            for _ in range(400)))
    args = ["fit", "--data", str(path), "--n-features", "2", "--bounds-from-data", "--classes=-1,1"]
    assert main([*args, "--out", str(tmp_path / "m.json")]) == 2
    assert "--zero-based" in capsys.readouterr().err and not (tmp_path / "m.json").exists()
    assert main([*args, "--zero-based", "--out", str(tmp_path / "m.json"), "--report", str(tmp_path / "c.md")]) == 0
    assert "the file's feature 0 (its indices start at 0)" in (tmp_path / "c.md").read_text()
    model = json.loads((tmp_path / "m.json").read_text())
    assert model["data"]["svmlight indices from"] == 0 and len(model["coef"]) == 2
    capsys.readouterr()
    assert main(["predict", "--model", str(tmp_path / "m.json"), "--data", str(path)]) == 0
    assert len(capsys.readouterr().out.split()) == 400
    assert main(["fit", "--n-features", "3", "--out", str(tmp_path / "c.json")]) == 2  # the bundled data: no svmlight
    assert "describe an svmlight file" in capsys.readouterr().err


def test_the_summary_names_a_privately_selected_label_set(tmp_path, capsys):
    """A label held by too few records does not pass the private selection: the summary names the set that did."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    y = y.astype(int)
    y[:10] = 2  # a third label on 10 records: too few to pass at epsilon 1
    path, bounds = tmp_path / "bc.csv", tmp_path / "b.json"
    names = [f"f{j}" for j in range(X.shape[1])]
    path.write_text(",".join([*names, "label"]) + "\n" + "".join(",".join([*map(str, row), str(t)]) + "\n"
                                                                 for row, t in zip(X, y)))
    bounds.write_text(json.dumps({"feature_low": X.min(axis=0).tolist(), "feature_high": X.max(axis=0).tolist(),
                                  "feature_names": names, "source": "test"}))
    assert main(["fit", "--data", str(path), "--target", "label", "--bounds", str(bounds), "--loss", "logistic",
                 "--out", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out
    assert "classes             0, 1: selected privately inside the budget" in out


def test_a_noisy_mean_squared_error_clipped_at_zero_says_so():
    """The private score's noisy mean squared errors are clipped at 0 (post-processing): the terminal must not read
    as a perfect model there."""
    from dpsparse.cli import _score_line

    score = {"metric": "r2", "records": 125, "unreliable": True, "model": -3.0, "model_sd": 9.0, "model_mse": 0.0,
             "mse_sd": 91.0, "constant_mse": 24.74, "constant_mse_sd": 94.0}
    line = _score_line(score)
    assert "mean squared error 0 (the noise took it below 0: clipped)" in line
    assert "within twice its noise: they do not show the model beating the constant predictor either" in line
    assert "constant predictor's 25 (sd 94)" in line  # to the digits its noise leaves
    line = _score_line({**score, "model_mse": 0.2392, "mse_sd": 2.0, "constant_mse": 3.917, "constant_mse_sd": 0.04})
    assert "mean squared error 0.2 (sd 2)" in line and "constant predictor's 3.917 (sd 0.04)" in line
    reliable = {**score, "unreliable": False, "model": 1.0, "model_sd": 0.23}  # R^2 = 1 - 0 / variance: the cap
    line = _score_line(reliable)
    assert "held-out R^2 near 1, not exactly 1" in line and "R^2 1.000;" in line and "sd 0.23" in line
    assert "held-out R^2 1.000 (" not in line
    from dpsparse.card import _score_table

    cells = _score_table(score)[0][2]  # the card's table: the clipped value says so there too
    assert cells[0][3] == "0 (the noise took it below 0: clipped)"
    assert cells[1][3] == "25"  # sd 94: the digits its noise leaves
    from dpsparse.scoring import noisy_square

    assert noisy_square(4.24e9, 2.6e8) == "4.24e+09" and noisy_square(123456.0, 5e4) == "123000"  # large: exponent
    shown = {**score, "model_mse": 1.0, "constant_mse": 500.0, "mse_sd": 50.0, "constant_mse_sd": 60.0}
    assert "they show the model beating the constant predictor" in _score_line(shown)  # 499 against 2 x 78
    assert "are one: the constant predictor's is above the model's" in _score_table(shown)[1][1]
    assert "do not show the model beating" in _score_table(score)[1][1]


@pytest.mark.parametrize("option,value,message", [("--delta", "-1e-5", "delta must be in the open interval (0, 1)"),
                                                   ("--epsilon", "-2E-1", "epsilon must be a finite number > 0")])
def test_a_negative_value_in_scientific_notation_gets_the_options_range(option, value, message, capsys):
    """argparse reads '-1e-5' as a flag ("expected one argument"); the value reaches the option's own check."""
    assert main(["fit", option, value]) == 2
    assert message in capsys.readouterr().err


def test_a_mistyped_option_is_answered_in_one_line(capsys):
    """argparse prints the whole usage before its error (40 lines for fit): one line names the option instead."""
    with pytest.raises(SystemExit) as exc:
        main(["fit", "--epsilon", "one"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert "argument --epsilon: invalid float value: 'one'" in err and "'dpsparse fit --help'" in err
    with pytest.raises(SystemExit):
        main(["fit", "--classes", "0", "1", "d.csv"])  # "1" is taken for the data file, "d.csv" left over
    err = capsys.readouterr().err
    assert "unrecognized arguments: d.csv; a list is one argument, its items joined by commas" in err
    with pytest.raises(SystemExit):
        main(["predict", "--model", "m.json", "--zero-based"])  # an option predict lacks: no hint about lists
    err = capsys.readouterr().err
    assert "unrecognized arguments: --zero-based (" in err and "a list" not in err
    with pytest.raises(SystemExit):
        main(["fit", "--epsilion", "1"])  # named by the command that lacks it, with the option it resembles
    err = capsys.readouterr().err
    assert err.startswith("dpsparse fit: error: unrecognized arguments: --epsilion; did you mean --epsilon? (")
    with pytest.raises(SystemExit):
        main(["fit", "--dleta=0.1", "--foo"])
    assert "did you mean --delta? ('dpsparse fit --help'" in capsys.readouterr().err  # --foo resembles none


def test_a_full_support_under_the_default_penalty_says_why_and_how_to_get_fewer(tmp_path, capsys):
    assert main(["fit", "--out", str(tmp_path / "m.json")]) == 0  # breast cancer: DP-GD on its 30 features
    lines = capsys.readouterr().out.splitlines()
    line = next(x for x in lines if x.startswith("features used"))
    assert line.startswith("features used       30 of 30") and "alpha = 1e-4" in line and "--alpha" in line
    bounds = next(x for x in lines if x.startswith("bounds  "))  # declared ranges narrowed: said where it is read
    assert "published summary statistics" in bounds and "joint cuts" in bounds  # cut, or kept where the cuts crossed
    assert main(["fit", "--out", str(tmp_path / "m.json"), "--alpha", "0.05"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("features used"))
    assert "alpha = 1e-4" not in line  # a strength the user set: nothing to explain


def test_a_test_size_without_a_held_out_use_is_refused_before_reading(tmp_path, capsys):
    """``--test-size`` without ``--private-score`` or ``--diagnostics`` would be ignored (every record trains the
    model): refused by name, before the file is read."""
    out = tmp_path / "m.json"
    assert main(["fit", "--data", str(tmp_path / "missing.csv"), "--test-size", "0.5", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--test-size sets the share held out for --private-score or --diagnostics" in err
    assert "missing.csv" not in err and not out.exists()


def test_the_card_of_a_sparse_model_names_its_zeros_without_a_count_of_zero_more(tmp_path):
    rng = np.random.default_rng(0)
    X = np.clip(rng.standard_normal((560, 40)), -1.0, 1.0)
    y = X[:, :4] @ np.ones(4) + 0.3 * rng.standard_normal(560)
    (tmp_path / "d.csv").write_text(",".join(f"x{j}" for j in range(40)) + ",y\n" + "".join(
        ",".join(f"{v:.4f}" for v in row) + f",{t:.4f}\n" for row, t in zip(X, y)))
    (tmp_path / "b.json").write_text(json.dumps({"feature_low": -1, "feature_high": 1, "label_low": -10,
                                                 "label_high": 10}))
    card = tmp_path / "card.md"
    assert main(["fit", "--data", str(tmp_path / "d.csv"), "--target", "y", "--loss", "squared", "--bounds",
                 str(tmp_path / "b.json"), "--out", str(tmp_path / "m.json"), "--report", str(card)]) == 0
    support = json.loads((tmp_path / "m.json").read_text())["privacy_report"]["support_size"]
    text = card.read_text()
    assert 0 < support < 40 and f"The other {40 - support} coefficients are 0." in text
    assert "0 more nonzero" not in text and "support in red" in text


def test_a_constant_model_says_when_the_held_out_records_took_the_count_below_the_floor(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = np.clip(rng.standard_normal((460, 40)), -1.0, 1.0)  # n epsilon / log p = 125: above the floor (110)
    y = X[:, :4] @ np.ones(4) + 0.3 * rng.standard_normal(460)
    (tmp_path / "d.csv").write_text(",".join(f"x{j}" for j in range(40)) + ",y\n" + "".join(
        ",".join(f"{v:.4f}" for v in row) + f",{t:.4f}\n" for row, t in zip(X, y)))
    (tmp_path / "b.json").write_text(json.dumps({"feature_low": -1, "feature_high": 1, "label_low": -10,
                                                 "label_high": 10}))
    args = ["fit", "--data", str(tmp_path / "d.csv"), "--target", "y", "--loss", "squared", "--bounds",
            str(tmp_path / "b.json"), "--out", str(tmp_path / "m.json")]
    assert main(args + ["--private-score"]) == 0  # 345 training records: 93 log p, below it
    out = capsys.readouterr().out
    said = " ".join(out.split())
    assert "the constant predictor" in said and ("with all 460 records it would learn from them: the 115 held out "
                                                 "for the private score took the count below its floor" in said)
    assert main(args) == 0
    assert "took the count below" not in capsys.readouterr().out
    assert main(args + ["--private-score", "--epsilon", "0.05"]) == 0  # the constant with every record too
    out = capsys.readouterr().out
    assert "the constant predictor" in out and "took the count below" not in out


def test_a_constant_model_from_the_fill_says_the_declared_ranges_are_too_wide(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = np.clip(0.03 * rng.standard_normal((1200, 40)), -1.0, 1.0)  # a fill near 0.02, its noise's sd 0.05
    y = X[:, :4] @ np.ones(4) + 0.01 * rng.standard_normal(1200)
    (tmp_path / "d.csv").write_text(",".join(f"x{j}" for j in range(40)) + ",y\n" + "".join(
        ",".join(f"{v:.4f}" for v in row) + f",{t:.4f}\n" for row, t in zip(X, y)))
    (tmp_path / "b.json").write_text(json.dumps({"feature_low": -1, "feature_high": 1, "label_low": -1,
                                                 "label_high": 1}))
    assert main(["fit", "--data", str(tmp_path / "d.csv"), "--target", "y", "--loss", "squared", "--bounds",
                 str(tmp_path / "b.json"), "--out", str(tmp_path / "m.json"), "--seed", "0", "--report",
                 str(tmp_path / "card.md")]) == 0  # 325
    said = " ".join(capsys.readouterr().out.split())
    assert "the constant predictor" in said and "narrower public ranges would let it learn" in said
    assert "too few records" not in said
    fill = json.loads((tmp_path / "m.json").read_text())["privacy_report"]["noise"]["the rule's fill"].split(",")[0]
    assert float(fill) < auto.FILL_FLOOR
    words = f"the records fill {fill} of their declared box (0 for identical records, about 0.58 for features uniform"
    assert words in " ".join((tmp_path / "card.md").read_text().split())  # the card's table and plain words
    assert main(["report", str(tmp_path / "m.json")]) == 0
    assert "Released with the model: " + words in " ".join(capsys.readouterr().out.split())


def test_card_of_a_constant_model_says_its_two_scores_may_measure_one_predictor(tmp_path):
    """A constant classifier's private score has two rows, the model's and the constant predictor's (the best single
    class on the held-out records): the card says they differ by their noise alone where the model predicts that
    class. Not where the score is not measurable (no rows), nor for a learned model."""
    card, out = tmp_path / "card.md", tmp_path / "m.json"
    said = "This model is itself a constant predictor. The constant predictor's row is the best single class"
    runs = [(("--mechanism", "constant", "--epsilon", "5"), True, True), (("--epsilon", "0.01"), True, False),
            ((), False, True)]  # options, a constant model, a measurable score
    for options, constant, reliable in runs:
        assert main(["fit", *options, "--private-score", "--out", str(out), "--report", str(card)]) == 0
        release, text = json.loads(out.read_text()), " ".join(card.read_text().split())
        assert (release["privacy_report"]["mechanism"] == "constant") == constant
        assert bool(release["private_score"].get("unreliable")) != reliable
        assert ("held-out accuracy (noisy)" in text) == reliable  # the table of two rows
        assert (said in text) == (constant and reliable)


def test_fast_noise_without_a_seed_is_named_among_the_warnings(tmp_path, capsys):
    """``--noise fast`` from OS entropy: a WARNING line names the floating-point samplers (Mironov 2012) and the
    choice to make instead; with ``--seed`` the seed's own warning says more (no guarantee at all)."""
    out = tmp_path / "m.json"
    assert main(["fit", "--noise", "fast", "--out", str(out)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "WARNING --noise fast draws the privacy noise with numpy's textbook floating-point samplers" in said
    assert "use --noise auto (OpenDP's exact samplers" in said
    assert main(["fit", "--noise", "fast", "--seed", "0", "--out", str(out)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "floating-point samplers" not in said and "--seed fixes the privacy noise" in said


def test_the_card_lists_a_small_coefficient_to_four_significant_figures(tmp_path, capsys):
    """A feature on a range of 10^6 has a coefficient near 10^-5: the card shows it as the model file holds it, to
    four significant figures (rounded to six decimals it read 1e-05, and below 5e-7 it read 0)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0.0, 1e6, 4000)
    csv = tmp_path / "d.csv"
    csv.write_text("x,y\n" + "\n".join(f"{a:.1f},{a * 1.234e-5 + rng.normal(0, 0.5):.4f}" for a in x))
    bounds = tmp_path / "b.json"
    bounds.write_text('{"feature_low": [0], "feature_high": [1e6], "label_low": -5, "label_high": 20}')
    out, card = tmp_path / "m.json", tmp_path / "card.md"
    assert main(["fit", "--data", str(csv), "--target", "y", "--bounds", str(bounds), "--seed", "0",
                 "--out", str(out), "--report", str(card)]) == 0
    coef = json.loads(out.read_text())["coef"][0]
    assert 1e-5 < coef < 1.5e-5 and f"| {coef:.4g} |" in card.read_text()


def test_labels_outside_a_private_label_set_are_a_data_holder_note_in_the_cli(tmp_path, capsys):
    """The fit's counts on the private data (here, labels too rare to pass the private selection) come out as the
    CLI's notes for the data holder, not as a raw Python warning."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (3000, 2))
    y = (X[:, 0] > 0).astype(int)
    y[:3] = 7
    csv, bounds = tmp_path / "d.csv", tmp_path / "b.json"
    csv.write_text("a,b,label\n" + "\n".join(f"{a:.3f},{b:.3f},{c}" for (a, b), c in zip(X, y)))
    bounds.write_text('{"feature_low": [-1, -1], "feature_high": [1, 1]}')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["fit", "--data", str(csv), "--target", "label", "--loss", "logistic", "--bounds", str(bounds),
                     "--out", str(tmp_path / "m.json")]) == 0
    assert not [w for w in caught if w.category is UnselectedLabelWarning]
    assert ("dpsparse: warning (data holder only, not private): 3 training label(s) lie outside the label set "
            "selected privately [0, 1]") in capsys.readouterr().err


def test_a_calibration_the_rules_mechanism_lacks_is_refused_naming_the_rule_and_the_mechanisms_that_have_it(
        tmp_path, capsys):
    assert main(["fit", "--calibration", "paper", "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "--calibration paper: the default rule chose dp-gd here" in err and "(--mechanism: dp-cd, dp-gcd" in err
    assert not (tmp_path / "m.json").exists()


def test_predict_reads_a_bundled_dataset_as_fit_does(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["fit", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["predict", "--model", str(out), "--data", "breast_cancer"]) == 0
    predictions = capsys.readouterr().out.split()
    assert len(predictions) == 569 and set(predictions) == {"0", "1"}
