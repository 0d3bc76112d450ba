"""What a data scientist reads: the guarantee in one sentence, the summary of a fit, the
model card (Markdown or HTML) and its figures.

``dpsparse fit`` and ``dpsparse sweep`` build their output here; matplotlib is needed for
the figures only (``pip install "dpsparse[plot]"``).
"""
from __future__ import annotations

import base64
import html
import re
import textwrap
from pathlib import Path

import numpy as np

from .accounting import SEEDED_NOTE, meaning, odds, weak_guarantee
from .scoring import RELIABLE, mse_gap_shown, noisy_square

__all__ = ["card_total", "guarantee_sentence", "model_card", "plain_words", "plot_coefficients", "plot_sweep",
           "render_card"]



def guarantee_sentence(report):
    """The privacy guarantee of a report (a ``PrivacyReport``) in one plain sentence."""
    return _guarantee_text(report.to_dict())


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


def plot_coefficients(path, release):
    """Bar chart of the released model's effects (``_feature_effects``: the change of its score when a feature moves
    across half its public range, as the card's table), largest first, with feature names (its support in red).

    Parameters
    ----------
    path : str or Path
        PNG file.
    release : dict
        The model file's content (coefficients in the data's units, bounds, feature names, task).
    """
    plt = _pyplot()
    names, signed = _feature_effects(release)
    several = signed.shape[0] > 1
    w = np.linalg.norm(signed, axis=0) if several else signed[0]
    nonzero = int(np.count_nonzero(w))
    # every feature where they are few (the zeros in gray); else the support's largest, never an arbitrary zero
    shown = np.argsort(-np.abs(w), kind="stable")[:w.size if w.size <= 30 else min(30, max(nonzero, 1))]
    fig, ax = plt.subplots(figsize=(7.5, max(2.5, 0.22 * shown.size + 1.2)))
    y = np.arange(shown.size)[::-1]
    ax.barh(y, w[shown], color=np.where(w[shown] != 0, "tab:red", "lightgray"))
    ax.axvline(0, color="black", lw=0.5)
    ax.set_yticks(y, [str(names[i]) for i in shown], fontsize=7)
    ax.set_xlabel(textwrap.fill(f"change of the {_score_words(release)} when the feature moves across half its "
                                "public range" + (" (L2 norm over the classes)" if several else ""), 110), fontsize=8)
    ax.set_title(f"{nonzero} of {w.size} features in the model's support"
                 + (f" (largest {shown.size} shown)" if shown.size < nonzero else ""), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


HOLDER_ONLY_FIGURE = "NOT differentially private (no noise): for the data holder only"
"""What a figure of scores measured on the private data without noise says on its face."""


def plot_sweep(path, rows, metric, constant, nonprivate=None, title="privacy-utility trade-off", private=False):
    """Held-out metric against epsilon: mean and range over the repeats, with the constant and non-private lines.

    Parameters
    ----------
    rows : list of dict
        One per epsilon: ``epsilon`` and ``values`` (the metric of each repeat); a row whose ``unreliable`` count
        is above 0 (private scores that are noise) is left out of the curve.
    metric : str
    constant, nonprivate : float or None
    private : bool
        The values are private scores (noisy, inside each fit's budget); otherwise measured without noise, and
        the figure says so (``HOLDER_ONLY_FIGURE``), since it may travel without the text beside it.
    """
    plt = _pyplot()
    shown = [r for r in rows if not r.get("unreliable")]
    eps = np.array([r["epsilon"] for r in shown])
    vals = [np.asarray(r["values"], dtype=float) for r in shown]
    fig, ax = plt.subplots(figsize=(6, 4))
    if shown:
        ax.fill_between(eps, [v.min() for v in vals], [v.max() for v in vals], color="tab:red", alpha=0.2,
                        label=f"private: range over {len(vals[0])} fits")
        ax.plot(eps, [v.mean() for v in vals], "o-", color="tab:red", label="private: mean")
    missing = ", ".join(f"{r['epsilon']:g}" for r in rows if r.get("unreliable"))
    ax.axhline(constant, color="gray", ls="--", label="constant predictor")
    if nonprivate is not None:
        ax.axhline(nonprivate, color="tab:blue", ls=":", label="non-private")
    ax.set_xscale("log")
    every = np.array([r["epsilon"] for r in rows])
    ax.set_xlim(every.min() / 1.5, every.max() * 1.5)
    ax.set_xticks(every, [f"{e:g}" for e in every])
    ax.minorticks_off()
    ax.set_xlabel("epsilon (privacy budget of each fit)" + (f"\nnot measurable at epsilon {missing}: too few "
                                                            "held-out records for the noise" if missing else ""))
    ax.set_ylabel(f"held-out {metric}" + (" (private score, noisy)" if private else " (without noise)"))
    ax.set_title(title, fontsize=10)
    if not private:
        fig.suptitle(HOLDER_ONLY_FIGURE, color="tab:red", fontsize=9, fontweight="bold")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _score_table(score):
    """The card's table of a private score: accuracy, or R^2 with the mean squared errors beside it."""
    if score["metric"] == "accuracy" and score.get("unreliable"):
        return [("p", f"Not measurable here: the noise added to the held-out accuracy has a standard deviation of "
                      f"{score['noise_sd']:.2g}, {RELIABLE:g} of which span its whole range (too few "
                      "held-out records for this epsilon); more held-out records or a larger epsilon make it a score.")]
    if score["metric"] == "accuracy":
        return [("table", ["model", "held-out accuracy (noisy)", "noise (standard deviation)"],
                 [["this model", round(score["model"], 4), round(score["noise_sd"], 4)],
                  ["constant predictor", round(score["constant"], 4), round(score["noise_sd"], 4)]])]
    if "model_mse" not in score:  # a model file written before the R^2's own spread was released
        return [("table", ["model", "held-out R^2 (noisy)"], [["this model", round(score["model"], 4)],
                                                               ["constant predictor", "0 (by definition)"]])]
    r2 = ("not measurable here" if score["unreliable"] else round(score["model"], 4),
          "-" if score["unreliable"] else round(score["model_sd"], 4))
    table = ("table", ["model", "held-out R^2 (noisy)", "its noise (sd)", "mean squared error (noisy)",
                       "its noise (sd)"],
             [["this model", *r2, noisy_square(score["model_mse"], score["mse_sd"]), f"{score['mse_sd']:.2g}"],
              ["constant predictor", "0 (by definition)", "-", noisy_square(score["constant_mse"],
                                                                             score["constant_mse_sd"]),
               f"{score['constant_mse_sd']:.2g}"]])
    if not score["unreliable"]:
        return [table]
    mse = ("the mean squared errors, in squared label units, are one: the constant predictor's is above the model's "
           "by more than twice the noise of their difference" if mse_gap_shown(score) else
           "the mean squared errors, in squared label units, are released too, but their gap is within twice its "
           "noise: they do not show the model beating the constant predictor either")
    return [table, ("p", "The R^2 divides by the held-out labels' variance, released with noise: here that variance "
                         "is not well above its noise, so the ratio is not a score (more held-out records or a larger "
                         f"epsilon make it one); {mse}.")]


def unnamed(release):
    """How unnamed features are called (0-based, as the bounds files' column indices), from the file's declared first
    index: the card and the CLI say it."""
    if release.get("data", {}).get("svmlight indices from") == 0:
        return "x0 is the first column: the file's feature 0 (its indices start at 0)"
    return "x0 is the first column: the file's feature 1 where it numbers them from 1, as LIBSVM's files do"

PENALTY_WORDS = {"l1": "an L1", "l2": "an L2", "elasticnet": "an elastic-net", "linf": "an L-infinity",
                 "group-l2": "a group-L2", "group-linf": "a group-L-infinity"}
"""The penalties' names in a sentence of the card."""


def _model_sentence(release, what):
    """The card's first words on the model: a constant predictor and what it predicts, or the linear model, its
    penalty and features."""
    params, features = release["params"], release["data"]["features"]
    if release["privacy_report"]["mechanism"] == "constant":
        intercept = np.ravel(release["intercept"])
        classes = release["classes"]
        said = (f"{float(intercept[0]):.4g}" if not classes else
                f"the class {classes[int(intercept[0] > 0) if intercept.size == 1 else int(np.argmax(intercept))]}")
        rule = release["privacy_report"]["noise"].get("mechanism chosen (mechanism='auto')", "")
        why = " (the records were too few for this budget to learn a feature)" if "too few records" in rule else ""
        return f"A constant predictor: it predicts {said} for every record, whatever its {features} features{why}"
    strength = release.get("penalty_strength", params.get("alpha"))  # older files: the parameter
    name = params.get("penalty", "l1")
    penalty = f"{PENALTY_WORDS.get(name, name)} penalty (strength {strength:g})" if strength else "no penalty"
    return f"A linear {what} with {penalty} on {features} features"


def render_card(title, sections, html_output):
    """A card's text: Markdown (figures linked by file name, beside it) or self-contained HTML (figures inline).

    Parameters
    ----------
    title : str
    sections : list of (heading, list of blocks)
        A block is ``("p", text)``, ``("warn", text)``, ``("table", header, rows)``,
        ``("figure", caption, png_path)``, ``("details", summary, text)`` (folded,
        preformatted) or ``("pre", lines)``.
    html_output : bool

    Returns
    -------
    str
    """
    if html_output:
        return _html(title, sections)
    lines = [f"# {title}", ""]
    for heading, blocks in sections:
        lines += [f"## {heading}", ""]
        for block in blocks:
            lines += _markdown_block(block) + [""]
    return "\n".join(lines)


def card_total(sweep, eps, delta):
    """``(epsilon, delta)`` of the model and a sweep's curve together, in words (basic composition)."""
    return f"({sweep['epsilon_spent'] + eps:g}, {_sweep_delta(sweep, delta)})"


def _with_curve(sweep, eps, delta):
    """The card's total with a sweep's curve, for the model details' privacy row ("" without one)."""
    if sweep is None:
        return ""
    return f" for the model; {card_total(sweep, eps, delta)} for this card with its privacy-utility curve"


def _sweep_delta(sweep, delta):
    """The delta of a sweep's fits and this model's together: their sum (a sweep written before it recorded its
    delta: ``repeats`` fits at each epsilon, each at this model's delta)."""
    spent = sweep.get("delta_spent")
    fits = sweep["repeats"] * len(sweep.get("rows", [])) if spent is None else None
    return f"{(spent if spent is not None else fits * delta) + delta:.3g}"


def _cell(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _markdown_block(block):
    kind = block[0]
    if kind == "p":
        return [block[1]]
    if kind == "warn":
        return [f"**Warning:** {block[1]}"]
    if kind == "table":
        _, header, rows = block
        return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                + ["| " + " | ".join(_cell(c).replace("|", "\\|") for c in row) + " |" for row in rows])
    if kind == "figure":
        _, caption, png = block
        return [f"![{caption}]({Path(png).name})", "", f"*{caption}*"]
    if kind == "details":
        return ["<details>", f"<summary>{block[1]}</summary>", "", "```", block[2], "```", "", "</details>"]
    return ["```", *block[1], "```"]


_STYLE = ("body{font-family:system-ui,sans-serif;max-width:62em;margin:2em auto;padding:0 1em;line-height:1.45;"
          "color:#222}h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;"
          "margin-top:1.6em}table{border-collapse:collapse;margin:.6em 0;max-width:100%}"
          "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top;"
          "overflow-wrap:break-word}td:first-child{min-width:10em}th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}"
          "pre{background:#f6f6f6;padding:.8em;white-space:pre-wrap;overflow-wrap:anywhere;font-size:.85em}"
          ".warn{color:#8a0000;font-weight:600}img{max-width:100%;height:auto}"
          "figcaption{font-size:.9em;color:#555}summary{cursor:pointer;font-weight:600}")


def _html_block(block):
    kind = block[0]
    if kind == "p":
        return f"<p>{html.escape(block[1])}</p>"
    if kind == "warn":
        return f"<p class='warn'>Warning: {html.escape(block[1])}</p>"
    if kind == "table":
        _, header, rows = block
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(
            f"<td class='num'>{html.escape(_cell(c))}</td>" if isinstance(c, (int, float)) else
            f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if kind == "figure":
        _, caption, png = block
        data = base64.b64encode(Path(png).read_bytes()).decode()
        return (f"<figure><img src='data:image/png;base64,{data}' alt='{html.escape(caption)}'>"
                f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    if kind == "details":
        return f"<details><summary>{html.escape(block[1])}</summary><pre>{html.escape(block[2])}</pre></details>"
    return "<pre>" + html.escape("\n".join(block[1])) + "</pre>"


def _html(title, sections):
    out = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
           "<meta name='viewport' content='width=device-width, initial-scale=1'>",
           f"<title>{html.escape(title)}</title>", f"<style>{_STYLE}</style>", "</head><body>",
           f"<h1>{html.escape(title)}</h1>"]
    for heading, blocks in sections:
        out.append(f"<section><h2>{html.escape(heading)}</h2>")
        out += [_html_block(b) for b in blocks]
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out)


COEFFICIENT_ROWS = 20  # the card's table lists this many of the largest coefficients


def _score_words(release):
    """What the model's score is, in words: a classifier's margin, for the class it points to (the second of the
    sorted labels when there are two, as scikit-learn's ``classes_[1]``), or a regression's prediction."""
    if release.get("task") == "classification":
        classes = release.get("classes") or []
        towards = (f" of class {classes[1]!r} against {classes[0]!r}" if len(classes) == 2 else
                   ", one a class (that class against the others)" if classes else "")
        return f"score{towards} (the log-odds of logistic regression, the margin of a linear SVM)"
    return "prediction (in the label's units)"


def half_range_effects(coef, low, high):
    """Each class's signed change of the score when a feature moves across half its public range ``[low, high]``
    (numbers or one a feature): ``coef`` in the data's units times the half-range, shape (n_classes or 1, p)."""
    coef = np.atleast_2d(np.asarray(coef, dtype=float))
    return coef * (np.asarray(high, dtype=float) - np.asarray(low, dtype=float)) / 2.0


def _released_ranges(release, p):
    """``(low, high)`` of the ``p`` features as released (arrays): the declared, privately narrowed or privately
    bought ranges the model was fitted on ([-1, 1] where the file has none)."""
    b = release["bounds"] or {}
    return tuple(np.broadcast_to(np.asarray(b.get(k, v), dtype=float), (p,))
                 for k, v in (("feature_low", -1.0), ("feature_high", 1.0)))


def _feature_effects(release):
    """The feature names (``x0``, ... when the file has none) and ``half_range_effects`` of the released model,
    shape (n_classes or 1, p): comparable across features."""
    coef = np.atleast_2d(np.asarray(release["coef"], dtype=float))
    effects = half_range_effects(coef, *_released_ranges(release, coef.shape[1]))
    return release.get("feature_names") or [f"x{j}" for j in range(coef.shape[1])], effects


def _ranges(release):
    """Each feature's name -> its released range ``[low, high]`` as text, over which the card's effects are
    measured."""
    names, _ = _feature_effects(release)
    return {name: f"[{lo:.4g}, {hi:.4g}]" for name, lo, hi in zip(names, *_released_ranges(release, len(names)))}


def _effects(release):
    """Per feature: its name, its coefficient(s) in the data's units and the change of the model's score when the
    feature moves across half its public range (comparable across features; signed for one score, the norm over
    the classes' scores for several); largest first."""
    coef = np.atleast_2d(np.asarray(release["coef"], dtype=float))
    names, signed = _feature_effects(release)
    size = np.linalg.norm(signed, axis=0)
    effect = signed[0] if signed.shape[0] == 1 else size  # one score: its sign says which way the feature pushes
    order = np.argsort(-size, kind="stable")
    return [(names[j], coef[:, j], float(effect[j])) for j in order]


def model_card(release, report_text, figure, model_path, sweep=None, curve=None):
    """The model card's sections (Mitchell et al., "Model cards for model reporting", FAT* 2019, with a privacy
    section), built from the release only: public inputs and noisy releases.

    Parameters
    ----------
    release : dict
        What ``dpsparse fit`` writes into the model file.
    report_text : str
        The privacy report, printed (folded in the card).
    figure : Path
        The coefficients figure (PNG).
    model_path : str
    sweep : dict or None
        The results of ``dpsparse sweep --private-score`` (noisy scores only), shown with ``curve``.
    curve : Path or None
        Its figure (PNG).

    Returns
    -------
    (title, sections) for ``render_card``
    """
    rep, data = release["privacy_report"], release["data"]
    classification = release["task"] == "classification"
    what = "classifier" if classification else "regression"
    holds = rep["guarantee_holds"]
    eps, delta = rep["epsilon"], rep["delta"]
    weak = weak_guarantee(eps, delta, int(data["training records"]) + int(data.get("validation records") or 0))
    title = (f"Model card: {'private ' if holds else ''}linear {what} on {Path(str(data['source'])).name}"
             + (" (NO privacy guarantee)" if not holds else " (WEAK privacy guarantee)" if weak else ""))
    how = ("trained with differential privacy, but a weak guarantee (below): not for publication as it stands"
           if holds and weak else "trained with differential privacy so that it can be published" if holds else
           "trained by a differentially private mechanism, but without the guarantee (below): not for publication")
    details = [("p", f"{_model_sentence(release, what)}, {how}. Training method: "
                     f"{rep['method'] or rep['mechanism']}."),
               ("table", ["item", "value"], [
                   ["model file", Path(model_path).name], ["task", release["task"]],
                   ["mechanism (registry name)", rep["mechanism"]],
                   ["privacy", (f"({eps:g}, {delta:.2g})-differential privacy" + _with_curve(sweep, eps, delta)
                                + (", WEAK (see the warning under Intended use)" if weak else ""))
                    if holds else f"NONE (the target was ({eps:g}, {delta:.2g})-differential privacy)"],
                   ["features in the model (support)", f"{release['support']['size']} of {data['features']}"],
                   ["software", f"dpsparse {release.get('software', '')}".strip()]])]
    use = [("warn", "Not for publication: this model has no differential-privacy guarantee (below), whatever its "
                    "target epsilon.")] if not holds else []
    if holds and weak:
        use = [("warn", f"Weak guarantee: {'; '.join(weak)}. Train again within the usual range (epsilon at most 10, "
                        "delta at most 1/n) before publishing it.")]
    check = ("check its private score (below)" if release.get("private_score") else
             "measure it (no score was released with it: `dpsparse fit --private-score` releases one)")
    use += [("p", "Predicting the label of new records described by the same features, in the same "
                 "units, for analyses where releasing a model trained on sensitive records needs a formal privacy "
                 f"guarantee. The model is linear and its noise is the price of the guarantee: {check} before "
                 "relying on it, and do not use it to make decisions about individuals without a validation on "
                 "data you are allowed to look at.")]
    labels = (", ".join(str(c) for c in release["classes"]) if classification and release["classes"] else None)
    rows = [["source", str(data["source"])], ["training records", str(data["training records"])]]
    if data.get("validation records"):
        rows.append(["validation records (they scored the private search's candidates)",
                     str(data["validation records"])])
    rows += [["features", str(data["features"])], ["feature ranges (bounds)", rep["bounds_source"]]]
    if labels:
        chosen = ("selected privately (each label's noisy count against a threshold, inside the epsilon above)"
                  if "label set" in rep["noise"] else "declared" if rep.get("classes_public", True) else
                  "read off the data (not private)")
        rows.append(["label set", f"{labels} ({chosen})"])
    if release.get("label_range"):
        rows.append(["label range", "[{:.4g}, {:.4g}]".format(*release["label_range"])])
    if release.get("schema_note") and not release["schema_note"].startswith("Template for"):  # 'dpsparse schema's
        rows.append(["the schema's note on the coding", release["schema_note"]])
    public = rep.get("bounds_public", True) and rep.get("classes_public", True)
    training = [("p", "Only public facts about the data appear here: its size, the declared or privately bought "
                      "feature ranges and the label set." if public else
                      "NOT only public facts: the feature ranges or the label set below were read off the private "
                      "data without noise, so this section discloses them."), ("table", ["item", "value"], rows)]
    score = release.get("private_score")
    if score:
        evaluation = [("p", f"Measured on {score['records']} held-out records that did not train the model, with "
                            "noise, inside the same privacy budget (the held-out records and the training records "
                            "are disjoint, so each record is used by one release only).")] + _score_table(score)
        if rep["mechanism"] == "constant" and score["metric"] == "accuracy" and not score.get("unreliable"):
            evaluation.append(("p", "This model is itself a constant predictor. The constant predictor's row is the "
                                    "best single class on the held-out records (the largest of its noisy class "
                                    "shares): where this model predicts that class, the two rows measure the same "
                                    "predictions and differ by their noise alone."))
    else:
        held = data.get("held out", data.get("held out for the score", 0))  # the latter: model files of 0.1.0
        validation = data.get("validation records", 0)
        trained = (f"{held} records were held out for the data holder's own checks (not private, not in this card)"
                   if held else f"the private search scored its candidates on {validation} records, with noise, and "
                   "released only its choice" if validation else "the model was trained on every record")
        evaluation = [("p", f"No evaluation was released: {trained}. `dpsparse fit --private-score` holds out a "
                            "share of the records and releases a noisy score inside the same privacy budget.")]
    effects = _effects(release)
    shown = [(n, c, e) for n, c, e in effects if e != 0][:COEFFICIENT_ROWS]
    ranges = _ranges(release)
    coef_rows = [[n, ranges[n], "; ".join(f"{v:.4g}" for v in c), float(f"{e:.4g}")] for n, c, e in shown]
    by_column = "" if release.get("feature_names") else (f" Features without names are called by their column: "
                                                         f"{unnamed(release)}.")
    classes = release.get("classes") or []
    sign = ("positive where the feature raises it" if shown and shown[0][1].size == 1 else
            "with a score a class, the Euclidean norm of the feature's effects on the classes' scores; the "
            f"coefficients are listed a class, in the order {', '.join(repr(c) for c in classes)}")
    quantitative = [("p", f"The coefficients of largest effect. 'Effect' is the change of the model's "
                          f"{_score_words(release)} when the feature moves across half its range as released (the "
                          "declared range, or the range narrowed or bought privately, on which the model was "
                          f"fitted), comparable across features: {sign}.{by_column}"),
                    ("table", ["feature", "its range (as released)", "coefficient (data units)",
                               "effect over half the range"], coef_rows)
                    ] if shown else [("p", "Every coefficient is 0: the model predicts the same for every record "
                                           "(above).")]
    more = sum(e != 0 for _, _, e in effects) - len(shown)
    zeros = sum(e == 0 for _, _, e in effects)
    if shown and len(shown) < len(effects):
        quantitative.append(("p", f"{more} more nonzero coefficients and {zeros} zeros are in the model file." if more
                                  else f"The other {zeros} coefficients are 0."))
    if shown:  # a constant model has no effect to draw
        quantitative.append(("figure", "The released model's effects, as in the table: the change of its "
                                       f"{_score_words(release).split(' (')[0]} when a feature moves across half its "
                                       "public range (support in red)", figure))
    if sweep is not None:
        quantitative += [
            ("p", f"Privacy-utility trade-off: {sweep['repeats']} fits at each epsilon, each scored with noise on "
                  f"held-out records inside its own epsilon. The curve spent epsilon = {sweep['epsilon_spent']:g} on "
                  f"the same records: publishing it with this model spends epsilon {sweep['epsilon_spent'] + eps:g} "
                  f"and delta {_sweep_delta(sweep, delta)} in all (basic composition: the epsilons add up, and so do "
                  "the deltas)."),
            ("figure", "Held-out score against epsilon (private scores, noisy)", curve)]
    shares = _shares(rep)
    together = ([("p", f"This card publishes the model and a privacy-utility curve measured on the same records: "
                      f"together they are {card_total(sweep, eps, delta)}-differentially private (basic "
                      "composition: the epsilons add up, and so do the deltas). The model alone:")]
                if sweep is not None and holds else [])
    privacy = [*together, ("p", _guarantee_text(rep)),
               ("p", meaning(rep["epsilon"], rep["delta"], rep["guarantee_holds"])),
               ("table", ["item", "value"], [["neighbouring datasets", rep["neighbouring"]],
                                             ["target (epsilon, delta)", f"({eps:g}, {delta:.3g})"],
                                             ["accounted epsilon", f"{rep['accountant_epsilon']:.4f} "
                                                                   f"({rep['accountant']}, dp-accounting)"],
                                             ["feature ranges from", rep["bounds_source"]],
                                             ["noise source", rep["noise_source"]], *shares]),
               ("details", "The full privacy report", report_text)]
    run = release.get("run")
    repeats = [("warn", f"This run fitted the same records {run['fits']} times (--repeats) and showed every fit's "
                        f"private score to the data holder: this card covers the written model and its score "
                        f"(epsilon {eps:g}); publishing the other scores too spends epsilon {run['epsilon in all']:g} "
                        f"and delta {run.get('delta in all', delta * run['fits']):.3g} in all (basic "
                        "composition).")] if run else []
    caveats = [("warn", w) for w in release["warnings"]] + repeats + [
        ("p", "Values outside the feature ranges were clipped to them before training; records far outside are "
              "treated as if at the edge."),
        ("p", "The guarantee covers this release. Every further model or statistic released from the same records "
              "spends more privacy; keep the total in one budget." if holds else
              "There is no guarantee to cover this release: train again with nothing read off the data (public or "
              "privately bought bounds, a declared or privately selected label set) for a model that can be "
              "published.")]
    sections = [("Model details", details), ("Intended use", use), ("Training data", training),
                ("Evaluation", evaluation), ("Quantitative analyses", quantitative), ("Privacy", privacy),
                ("Caveats and recommendations", caveats)]
    return title, sections


_RELEASED_THRESHOLDS = ("clipping norm (released)", "clipping threshold (released)")
"""The keys (their endings) of a report's clipping thresholds released with the model."""
_CLIPPING = ("clipping", "clipping norm", "clipping threshold")
"""The keys of a report's clipping setting: automatic (a private step) or set by hand (a public number)."""


def _shares(rep):
    """Rows ``[item, value]`` of a released report's budget shares and released clipping thresholds."""
    shares = [[k, _cell(v)] for k, v in rep["noise"].items()
              if any(w in k for w in ("share", "budget", "rho")) or "budget" in str(v)]
    fill = rep["noise"].get("the rule's fill")
    return shares + [[k, f"{_cell(v)}: at every step each record's gradient counts for at most this size, set from "
                         "the data with noise, its cost inside the epsilon above"]
                     for k, v in rep["noise"].items() if k.endswith(_RELEASED_THRESHOLDS)] + (
        [["the rule's fill", f"{_fill_words(fill)}; set from the data with noise, its cost inside the epsilon above"]]
        if fill is not None else [])


def _fill_words(value):
    """The released fill of a report (``"0.679, on a scale ..."``) in words."""
    return (f"the records fill {str(value).split(',')[0]} of their declared box (0 for identical records, about 0.58 "
            "for features uniform over their ranges, 1 at opposite corners), which decided how many features the "
            "model uses")


_PLAIN_STEPS = {
    "warm start": "a noisy mean of the labels, where the fit starts",
    "clipping": "a noisy typical size of the records, which sets how far one record may move the model",
    "label set": "choosing the label set from noisy counts of the labels",
    "the rule's fill: noise": "a noisy measure of how much of their declared ranges the records fill, which decided "
                              "how many features the model uses",
}
"""A released report's extra private steps (its ``noise`` keys, a search's selected model's too) in plain words."""


def _plain_spending(rep):
    """``(spent, released)``: what besides the coefficients spent the budget, and the thresholds released with the
    model, in plain words (from a released report only)."""
    spent = ["a private search: several candidate fits, scored with noise on the validation records; only its "
             "choice is released"] if rep.get("mechanism") == "dp-search" else []
    released = []
    fit = " of the fit's budget" if "the rule's fill" in rep["noise"] else " of the budget"  # the fill's share apart
    for key, value in rep["noise"].items():
        key = key.removeprefix("selected model, ")
        stage = key.startswith("stage 2: ")
        key = key.removeprefix("stage 2: ")
        share = re.search(r"([0-9.]+) of the zCDP budget", str(value))
        share = (" (within the second stage's share of the budget)" if stage and share else
                 f" ({float(share.group(1)):.0%} of the budget counted in zCDP, where the steps' shares add up: "
                 "not that share of epsilon)" if share else "")
        if key in _CLIPPING and not str(value).startswith("automatic"):
            continue  # set by hand: a public number, no spending
        step = _PLAIN_STEPS.get("clipping" if key in _CLIPPING else key)
        if step is not None:
            spent.append(step + share)
        elif key in ("bounds: share of the budget", "label range: share of the budget"):
            what = ("the label range, narrowed to the labels' noisy mean and spread" if key.startswith("label") else
                    "cuts of the declared feature ranges, chosen from the records with noise" if "bounds: joint cuts"
                    in rep["noise"] else "the feature and label ranges, read from the records with noise" if
                    "and of the label" in str(rep.get("bounds_source")) else
                    "the feature ranges, read from the records with noise")
            zcdp = "zCDP" in str(rep["noise"].get("bounds: budget", ""))
            spent.append(f"{what} ({float(value):.0%}{fit}" + (
                " counted in zCDP, where the steps' shares add up: not that share of epsilon)" if zcdp else ")"))
        elif key.endswith(_RELEASED_THRESHOLDS):
            released.append(f"the clipping threshold {float(value):.4g}: at every step one record's gradient counts "
                            "for at most this much (set from the records with noise, inside the epsilon above)")
        elif key == "the rule's fill":
            released.append(f"{_fill_words(value)} (set from the records with noise, inside the epsilon above)")
    return spent, released


def plain_words(release):
    """What a model file's privacy report says, in plain words for a reader who has not read the papers: what is
    protected, where the feature ranges came from, what besides the training spent the budget, what the model
    uses. Lines of text, from the released file only."""
    rep = release["privacy_report"]
    counts = release.get("data", {})
    n, validation = counts.get("training records"), counts.get("validation records", 0)
    held = int((release.get("private_score") or {}).get("records") or 0)  # scored with noise: protected too
    records = (f"each of the {n + validation} training and validation records" if n and validation else
               f"each of the {n} training records and the {held} held-out records of its private score"
               if n and held else f"each of the {n} training records" if n else "each training record")
    lines = [meaning(rep["epsilon"], rep["delta"], rep["guarantee_holds"]),
             f"Protected: {records} (a dataset and the same with one record replaced)." if rep["guarantee_holds"]
             else f"Protected: nothing ({records} may be revealed beyond the target; above).",
             f"Feature ranges: {rep['bounds_source']}."]
    spent, released = _plain_spending(rep)
    lines.append("Besides fitting the coefficients, the budget paid for: " + "; ".join(spent) + "." if spent else
                 "The whole budget went to fitting the coefficients.")
    lines += [f"Released with the model: {r}." for r in released]
    support = rep.get("support_size")
    if support == 0:
        lines.append("The model: the constant predictor (every coefficient 0); it reads no feature.")
    elif support is not None:
        lines.append(f"The model: a linear model with {support} nonzero coefficients.")
    return lines


def _guarantee_text(rep):
    """``guarantee_sentence`` from a released report (a dict)."""
    if not rep["guarantee_holds"]:
        seeded = rep.get("noise_seeded") and SEEDED_NOTE not in rep["warnings"]  # released reports list it
        reasons = rep["warnings"] + ([SEEDED_NOTE] if seeded else [])
        return ("This model has NO differential-privacy guarantee: "
                + "; ".join(reasons or ["the accounted epsilon exceeds the target"]) + ".")
    return (f"This model is ({rep['epsilon']:g}, {rep['delta']:.2g})-differentially private: replacing any one "
            f"training record by another multiplies the probability of any set of released models by at most "
            f"{odds(rep['epsilon'])}, plus at most {rep['delta']:.2g}.")
