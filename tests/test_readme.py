"""README's quick start runs as written, and what it saves is what it says: public inputs and noisy values."""
import pickle
import re
import warnings
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_quick_start_python_runs_and_its_saved_model_holds_no_clipped_count(tmp_path, monkeypatch):
    block = re.search(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL).group(1)
    assert "joblib.dump(clf" in block
    monkeypatch.chdir(tmp_path)
    scope = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 - the README's own example
    clf = scope["clf"]
    assert (tmp_path / "model.joblib").exists() and clf.score(scope["X"], scope["y"]) > 0.6
    clf.privacy_report_.clipped["features"] = 3  # counted on the records: for the data holder, in this process
    saved = pickle.loads(pickle.dumps(clf))
    assert saved.privacy_report_.clipped == {} and saved.privacy_report_.guarantee_holds
