"""What a data scientist reads: the guarantee in one sentence, the summary of a fit, the
model card (Markdown or HTML) and its figures.

``dpsparse fit`` and ``dpsparse sweep`` build their output here; matplotlib is needed for
the figures only (``pip install "dpsparse[plot]"``).
"""
from __future__ import annotations

import base64
import html
import math
from pathlib import Path

import numpy as np

__all__ = ["guarantee_sentence", "plot_coefficients", "plot_sweep", "render_card"]



def guarantee_sentence(report):
    """The privacy guarantee of a report in one plain sentence."""
    if not report.guarantee_holds:
        return ("This model has NO differential-privacy guarantee: " + "; ".join(report.warnings or
                ["the accounted epsilon exceeds the target"]) + ".")
    return (f"This model is ({report.epsilon:g}, {report.delta:.2g})-differentially private: replacing any one "
            f"training record by another changes the probability of any released model by at most a factor "
            f"{odds(report.epsilon)}, except with probability {report.delta:.2g}.")


def odds(epsilon):
    """``e^epsilon`` in words (its value when it fits in a float)."""
    return f"e^{epsilon:g}" + (f" = {math.exp(epsilon):.3g}" if epsilon < 700 else "")


def clipped_share(report, n_values):
    """(count, share) of the feature values clipped to the bounds."""
    count = int(report.clipped.get("feature values", 0))
    return count, count / max(n_values, 1)


def check_matplotlib():
    """ValueError with the install command when matplotlib is missing (before any work)."""
    _pyplot()


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError('figures need matplotlib: pip install "dpsparse[plot]"') from None
    return plt


def plot_coefficients(path, names, private, nonprivate=None):
    """Bar chart of the released coefficients (its support highlighted) beside the non-private ones.

    Parameters
    ----------
    path : str or Path
        PNG file.
    names : list of str
    private, nonprivate : ndarray of shape (p,) or (n_classes, p)
        Several classes are shown by the L2 norm of each feature's coefficients.
    """
    plt = _pyplot()

    def per_feature(c):
        c = np.asarray(c, dtype=float)
        return np.linalg.norm(c, axis=0) if c.ndim == 2 else c

    w = per_feature(private)
    order = np.argsort(-np.abs(w) - (0 if nonprivate is None else 1e-9 * np.abs(per_feature(nonprivate))))
    shown = order[:min(40, w.size)]
    x = np.arange(shown.size)
    fig, ax = plt.subplots(figsize=(max(6, 0.25 * shown.size + 2), 4))
    support = w[shown] != 0
    ax.bar(x - 0.2, w[shown], 0.4, color=np.where(support, "tab:red", "lightgray"), label="private (support in red)")
    if nonprivate is not None:
        ax.bar(x + 0.2, per_feature(nonprivate)[shown], 0.4, color="tab:blue", alpha=0.6, label="non-private")
    ax.axhline(0, color="black", lw=0.5)
    ax.set_xticks(x, [str(names[i]) if names is not None else str(i) for i in shown], rotation=90, fontsize=7)
    ax.set_ylabel("coefficient (feature on [-1, 1])" + ("\nL2 norm over classes" if np.ndim(private) == 2 else ""),
                  fontsize=8)
    ax.set_title(f"coefficients: {int(np.count_nonzero(w))} of {w.size} features in the private model's support"
                 + (f" (largest {shown.size} shown)" if shown.size < w.size else ""), fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sweep(path, rows, metric, constant, nonprivate=None, title="privacy-utility trade-off"):
    """Held-out metric against epsilon: mean and range over the repeats, with the constant and non-private lines.

    Parameters
    ----------
    rows : list of dict
        One per epsilon: ``epsilon`` and ``values`` (the metric of each repeat).
    metric : str
    constant, nonprivate : float or None
    """
    plt = _pyplot()
    eps = np.array([r["epsilon"] for r in rows])
    vals = [np.asarray(r["values"], dtype=float) for r in rows]
    mean = np.array([v.mean() for v in vals])
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.fill_between(eps, [v.min() for v in vals], [v.max() for v in vals], color="tab:red", alpha=0.2,
                    label=f"private: range over {len(vals[0])} fits")
    ax.plot(eps, mean, "o-", color="tab:red", label="private: mean")
    ax.axhline(constant, color="gray", ls="--", label="constant predictor")
    if nonprivate is not None:
        ax.axhline(nonprivate, color="tab:blue", ls=":", label="non-private")
    ax.set_xscale("log")
    ax.set_xticks(eps, [f"{e:g}" for e in eps])
    ax.minorticks_off()
    ax.set_xlabel("epsilon (privacy budget of each fit)")
    ax.set_ylabel(f"held-out {metric}")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def render_card(title, sections, figures, html_output):
    """A model card's text: Markdown (figures linked by file name, beside it) or HTML (figures inline).

    Parameters
    ----------
    title : str
    sections : list of (heading, list of str, bool)
        The heading, its lines, and whether they are preformatted (tables, the report).
    figures : list of (caption, Path)
        PNG files, already written.
    html_output : bool

    Returns
    -------
    str
    """
    if html_output:
        return _html(title, sections, figures)
    lines = [f"# {title}", ""]
    for heading, body, pre in sections:
        lines += [f"## {heading}", ""] + (["```", *body, "```"] if pre else body) + [""]
    for caption, png in figures:
        lines += [f"![{caption}]({png.name})", "", f"*{caption}*", ""]
    return "\n".join(lines)


def _html(title, sections, figures):
    out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>{html.escape(title)}</title>",
           "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}"
           "pre{background:#f4f4f4;padding:0.8em;overflow-x:auto;font-size:0.85em}"
           ".warn{color:#a00000;font-weight:bold}</style>",
           "</head><body>", f"<h1>{html.escape(title)}</h1>"]
    for heading, body, pre in sections:
        out.append(f"<h2>{html.escape(heading)}</h2>")
        if pre:
            out.append("<pre>" + html.escape("\n".join(body)) + "</pre>")
        else:
            out += [f"<p class='warn'>{html.escape(b)}</p>" if b.startswith("WARNING") else
                    f"<p>{html.escape(b)}</p>" for b in body]
    for caption, png in figures:
        data = base64.b64encode(Path(png).read_bytes()).decode()
        out.append(f"<figure><img src='data:image/png;base64,{data}' alt='{html.escape(caption)}' "
                   f"style='max-width:100%'><figcaption>{html.escape(caption)}</figcaption></figure>")
    out.append("</body></html>")
    return "\n".join(out)
