"""Stage ``report``: claims 1-4, rates per model and condition, layer sweeps, the shared-final-token breakdown,
QA flips and the control models' training curves."""

from __future__ import annotations

import math

import numpy as np

from components.implicit_planning.couplets import CoupletLanguage
from components.io import read_json, read_jsonl
from components.reporting import Section
from components.reporting.plots import errorbar_plot, line_plot
from flows.implicit_planning.claims import claim1, claim2, claim3, claim4, declared
from flows.implicit_planning.params import Params
from flows.implicit_planning.spec import CONTROLS, REAL, STEER
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext

CONDITIONS = ("unsteered", "steered", "random")


def _mean(vals) -> float | None:
    vals = [v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return float(np.mean(vals)) if vals else None


def rate_table(rows: list[dict], article_of=None) -> list[dict]:
    out = []
    for model in sorted({r["model"] for r in rows}):
        for cond in CONDITIONS:
            rs = [r for r in rows if r["model"] == model and r["condition"] == cond]
            if not rs:
                continue
            row = {
                "model": model,
                "condition": cond,
                "n": len(rs),
                "rf2_rate": _mean(r["rf2_hit"] for r in rs),
                "rf1_rate": _mean(r["rf1_hit"] for r in rs),
                "regen_rf2": _mean(r["regen_rf2"] for r in rs),
                "kl_share": _mean(r["kl_share"] for r in rs),
                "first_div": _mean(r["first_div"] for r in rs),
                "kl_pos": _mean(r.get("kl_pos", float("nan")) for r in rs),
            }
            if article_of is not None and model.startswith("control"):
                row["rf2_article"] = _mean(
                    None if r["article"] is None else int(r["article"] == article_of(r["rf2"])) for r in rs
                )
            out.append(row)
    return out


def token_breakdown(rows: list[dict]) -> list[dict]:
    """RF2 rate by whether the final word is one token or several (the shared-suffix tokenisation confound)."""
    out = []
    for cond in CONDITIONS:
        for multi in (False, True):
            rs = [r for r in rows if r["condition"] == cond and r["final_word"] and (r["final_tokens"] > 1) == multi]
            out.append(
                {
                    "condition": cond,
                    "final word": "several tokens" if multi else "one token",
                    "n": len(rs),
                    "rf2_rate": _mean(r["rf2_hit"] for r in rs),
                    "rf1_rate": _mean(r["rf1_hit"] for r in rs),
                }
            )
    return out


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    lang = CoupletLanguage(words_per_family=p.control.words_per_family, n_families=p.control.n_families)
    rows = read_jsonl(ctx.input(f"{STEER}/generations.jsonl"))
    ctl_layers = read_jsonl(ctx.input(f"{STEER}/layers.jsonl"))
    skipped = read_json(ctx.input(f"{REAL}/timing.json")).get("skipped", False)
    real_rows, real_layers, qa_rows = (
        ([], [], [])
        if skipped
        else [read_jsonl(ctx.input(f"{REAL}/{n}.jsonl")) for n in ("generations", "layers", "qa")]
    )
    models = read_jsonl(ctx.input(f"{CONTROLS}/models.jsonl"))
    curves = read_jsonl(ctx.input(f"{CONTROLS}/curves.jsonl"))
    results = [
        claim1(p, rows, lang.article_of_family),
        claim2(p, real_rows),
        claim3(p, rows, real_rows),
        claim4(p, qa_rows),
    ]

    rates = rate_table(rows + real_rows, lang.article_of_family)
    sections = []
    names = [f"{r['model']} / {r['condition']}" for r in rates]
    fig = errorbar_plot(
        names,
        [r["rf2_rate"] for r in rates],
        [None] * len(rates),
        [None] * len(rates),
        xlabel="share of line-2 endings in RF2",
        title="RF2 rate per model and condition",
        reference=None,
    )
    sections.append(
        Section(
            "Rates",
            "Per model and condition: RF2 / RF1 rates of the line-2 ending, regeneration into RF2 with the "
            "final word dropped, share of pre-rhyme positions with KL > 1 and the normalised first top-1 divergence "
            "(NaN for unsteered), and for the controls the share of lines with RF2's article.",
            figures=[("rates", fig, "RF2 rate per model and condition")],
            tables=[rates],
        )
    )
    layer_rows = ctl_layers + real_layers
    if layer_rows:
        sections.append(
            Section(
                "Layer choice",
                "The card's logit metric on training prompts (log mass of RF2 minus "
                "RF1 at the final word, steered minus unsteered; QA: article margin) per layer; "
                "`chosen` marks the layer used on test prompts.",
                tables=[layer_rows],
            )
        )
    if real_rows:
        sections.append(
            Section(
                "Shared final token",
                "SmolLM2: RF2 and RF1 rates split by whether the final word is "
                "one token or several (the reviewers' tokenisation confound).",
                tables=[token_breakdown(real_rows)],
            )
        )
    if qa_rows:
        qa_table = [
            {
                "condition": c,
                "n": sum(r["condition"] == c for r in qa_rows),
                "flip_rate": _mean(r["flip"] for r in qa_rows if r["condition"] == c),
                "no_article": _mean(int(r["article"] is None) for r in qa_rows if r["condition"] == c),
            }
            for c in CONDITIONS
        ]
        sections.append(Section("QA", "Share of answers starting with the other noun's article.", tables=[qa_table]))
    series = {
        m["model"]: (
            [c["step"] for c in curves if c["model"] == m["model"]],
            [c["loss"] for c in curves if c["model"] == m["model"]],
        )
        for m in models
    }
    fig = line_plot(series, xlabel="step", ylabel="training loss (line 2)", title="Control models")
    sections.append(
        Section(
            "Control models",
            "Loss curves and the plateau check (relative change of the mean loss "
            "over the last tenth of the steps against the tenth before).",
            figures=[("curves", fig, "training loss")],
            tables=[models],
        )
    )
    metrics = {"rates": {f"{r['model']}/{r['condition']}": r["rf2_rate"] for r in rates}}
    plot_rows = [{"condition": f"{r['model']}/{r['condition']}", "rf2_rate": r["rf2_rate"]} for r in rates]
    return finish_report(
        ctx,
        declared(not skipped),
        results,
        metrics=metrics,
        sections=sections,
        plots={"rates.csv": (plot_rows, ["condition", "rf2_rate"])},
    )
