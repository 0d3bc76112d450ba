"""End-to-end replay of ``dpsparse fit``: on two neighbouring files, with every release of the second run forced to
the first run's output (``audit.ReplayNoise``), each release moves by at most its declared sensitivity, and the
model file and the card come out identical: everything they hold is a release or a public input."""
import numpy as np
import pytest

from dpsparse import audit
from dpsparse.cli import main


def _files(tmp_path, n=5000, seed=0):
    """Two neighbouring CSV files (row 0 replaced by an extreme record), in folders a/ and b/ under one name."""
    rng = np.random.default_rng(seed)
    X = rng.normal(0.0, 1.0, (n, 3)) * [1.0, 5.0, 0.2] + [0.0, 20.0, 1.0]
    y = (X @ [1.0, 0.2, -2.0] + rng.normal(0, 1, n) > 2.0).astype(int)
    folders = []
    for name, row, label in (("a", X[0], y[0]), ("b", np.array([40.0, -300.0, 9.0]), 1 - y[0])):
        Xb, yb = X.copy(), y.copy()
        Xb[0], yb[0] = row, label
        folder = tmp_path / name
        folder.mkdir()
        (folder / "d.csv").write_text("u,v,w,label\n" + "\n".join(
            f"{a:.6g},{b:.6g},{c:.6g},{t}" for (a, b, c), t in zip(Xb, yb)) + "\n")
        folders.append(folder)
    return folders


@pytest.mark.parametrize("extra", [["--classes", "0,1"], ["--loss", "logistic"], ["--loss", "squared"],
                                   ["--classes", "0,1", "--tune"]],
                         ids=["classifier", "private-labels", "regression", "search"])
def test_a_default_fit_releases_nothing_but_its_releases(tmp_path, monkeypatch, capsys, extra):
    args = ["fit", "--data", "d.csv", "--target", "label", "--seed", "0", "--epsilon", "2", "--private-score",
            "--out", "model.json",
            "--report", "card.html", *extra]
    runs = []
    for folder in _files(tmp_path):
        noise = audit.ReplayNoise(0, recorded=runs[0][0].log if runs else None)
        for module in ("dpsparse.estimators", "dpsparse.cli", "dpsparse.tuning"):
            monkeypatch.setattr(f"{module}.make_noise", lambda *a, _noise=noise, **k: _noise)
        monkeypatch.chdir(folder)
        assert main(args) == 0, capsys.readouterr().err
        runs.append((noise, (folder / "model.json").read_text(), (folder / "card.html").read_text()))
    (first, model_a, card_a), (second, model_b, card_b) = runs
    names = [name for name, *_ in first.log]
    assert "private score" in names and any("quantile" in n or "bound" in n for n in names)  # bounds bought
    assert len(second.log) == len(first.log) and [name for name, *_ in second.log] == names
    worst = max(ratio for _, ratio in second.ratios)
    assert 0 < worst <= 1 + 1e-9
    assert model_a == model_b
    assert card_a == card_b
