"""The peer beside our estimators: IBM's diffprivlib, given the same public bounds as ours.

Holohan, Braghin, Mac Aonghusa & Levacher, "Diffprivlib: the IBM differential privacy
library", 2019: ``LogisticRegression`` (objective perturbation, Chaudhuri, Monteleoni &
Sarwate, JMLR 2011; rows clipped to ``data_norm``) and ``LinearRegression`` (the functional
mechanism, Zhang et al., VLDB 2012; features and labels clipped to ``bounds_X``, ``bounds_y``).
Both are called as their documentation asks for a private fit, on what our estimators see:
the features (and a regression's labels) mapped onto [-1, 1] by their declared ranges and
clipped to them (a public map; raw units of very different sizes would make its noise
swamp the model), ``data_norm = sqrt(p)``, ``bounds_X = [-1, 1]^p``, ``bounds_y = [-1, 1]``
and epsilon: nothing read off the data. Predictions are mapped back to the labels' units.

diffprivlib 0.6.6 does not import beside scikit-learn 1.8 and later (its forests import
names that ``sklearn.tree`` no longer has, and its ``LogisticRegression`` passes
``multi_class``). Where it does not import here, it runs in an interpreter of its own:

    python -m venv .peer && .peer/bin/pip install diffprivlib==0.6.6 scikit-learn==1.6.1

(``.peer/`` at the repository root, ignored by git, or any interpreter named by the
environment variable ``DPSPARSE_PEER_PYTHON``). Each fit is then one process: the split goes
there in a temporary ``.npz`` file, the held-out metric comes back on its standard output.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = REPO_ROOT / ".peer" / "bin" / "python"
TIMEOUT = 900  # seconds a peer process may take (one split, every epsilon) before the benchmark stops

_FIT = """
import sys, warnings
import numpy as np
warnings.simplefilter("ignore")
import diffprivlib.models as dpl
from sklearn.metrics import r2_score

def onto_unit(values, low, high):  # the public map of our estimators: each range onto [-1, 1], clipped to it
    return np.clip((2.0 * values - (low + high)) / (high - low), -1.0, 1.0)

def fit_score(Xtr, ytr, Xte, yte, low, high, label_low, label_high, classification, epsilon, seed):
    width = high > low  # a feature of one public value carries nothing: 0 after the map
    low, high = np.where(width, low, low - 1.0), np.where(width, high, high + 1.0)
    Xtr, Xte = onto_unit(Xtr, low, high), onto_unit(Xte, low, high)
    p = Xtr.shape[1]
    if classification:
        model = dpl.LogisticRegression(epsilon=epsilon, data_norm=float(np.sqrt(p)), random_state=seed)
        model.fit(Xtr, ytr)
        return float(model.score(Xte, yte))
    u = onto_unit(ytr, label_low, label_high)
    model = dpl.LinearRegression(epsilon=epsilon, bounds_X=(-np.ones(p), np.ones(p)), bounds_y=(-1.0, 1.0),
                                 random_state=seed).fit(Xtr, u)
    prediction = (model.predict(Xte) * (label_high - label_low) + (label_high + label_low)) / 2.0
    return float(r2_score(yte, prediction))

if __name__ == "__main__":
    a = np.load(sys.argv[1])
    for epsilon in a["epsilons"]:
        print(fit_score(*(a[k] for k in ("Xtr", "ytr", "Xte", "yte", "low", "high")), float(a["label_low"]),
                        float(a["label_high"]), bool(a["classification"]), float(epsilon), int(a["seed"])))
"""


def _interpreter():
    """The Python that imports diffprivlib: this one, ``DPSPARSE_PEER_PYTHON`` or ``.peer/``; and why not, if
    none."""
    try:
        import diffprivlib.models  # noqa: F401
        return sys.executable, ""
    except Exception as exc:  # any import failure: look for the interpreter of its own
        here = f"{type(exc).__name__}: {exc}"
    other = os.environ.get("DPSPARSE_PEER_PYTHON") or (str(VENV_PYTHON) if VENV_PYTHON.exists() else None)
    if other is None:
        return None, f"{here} (and no .peer/ interpreter: see benchmarks/peer.py)"
    try:
        probe = subprocess.run([other, "-c", "import diffprivlib.models"], capture_output=True, text=True,
                               timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{here}; {other}: {type(exc).__name__}: {exc}"
    if probe.returncode != 0:
        return None, f"{here}; {other}: " + (probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[-1]
    return other, ""


def diffprivlib_peer():
    """A function that fits diffprivlib on one split at each epsilon and returns the held-out metrics, and its
    version string; or ``(None, why)`` when no interpreter imports it.

    The function: ``fit(Xtr, ytr, Xte, yte, bounds, classification, epsilons, seed) -> list of float``
    (accuracy, or R^2, one per epsilon: the split is handed over once), ``bounds`` a ``dpsparse.data.Bounds``
    for ``Xtr.shape[1]`` features (with the label range for a regression).
    """
    python, why = _interpreter()
    if python is None:
        return None, why
    version = subprocess.run([python, "-c", "import diffprivlib, sklearn; print(diffprivlib.__version__, "
                              "'with scikit-learn', sklearn.__version__)"], capture_output=True, text=True,
                             check=True).stdout.strip()

    def fit(Xtr, ytr, Xte, yte, bounds, classification, epsilons, seed):
        b = bounds.for_features(Xtr.shape[1])
        if not classification and b.label_low is None:
            raise ValueError("the peer's regression needs the public label range of the bounds")
        if classification:  # the classes as their indices: labels of any type cross as numbers
            classes = np.unique(np.concatenate([np.asarray(ytr), np.asarray(yte)]))
            ytr, yte = np.searchsorted(classes, ytr), np.searchsorted(classes, yte)
        arrays = dict(Xtr=_dense(Xtr), ytr=ytr, Xte=_dense(Xte), yte=yte, low=b.feature_low, high=b.feature_high,
                      label_low=np.nan if b.label_low is None else b.label_low,
                      label_high=np.nan if b.label_high is None else b.label_high,
                      classification=classification, epsilons=np.asarray(epsilons, dtype=float),
                      seed=seed)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "split.npz"
            np.savez(path, **arrays)
            out = subprocess.run([python, "-c", _FIT, str(path)], capture_output=True, text=True, timeout=TIMEOUT)
        if out.returncode != 0:
            raise RuntimeError(f"diffprivlib ({python}) failed: {out.stderr.strip()[-500:]}")
        return [float(v) for v in out.stdout.split()]

    where = Path(python).absolute()
    where = where.relative_to(REPO_ROOT) if where.is_relative_to(REPO_ROOT) else where
    return fit, f"diffprivlib {version}" + ("" if python == sys.executable else f" ({where})")


def _dense(X):
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=float)
