"""Stage ``report``: claims 1-4 with verdicts; metrics vs m per method, the gamma sweep, side effects; metrics.json."""

from __future__ import annotations

import numpy as np

from components.io import read_json, read_jsonl
from components.reporting import Section
from components.reporting.plots import line_plot
from flows.neuraldb.claims import CLAIMS, all_claims
from flows.neuraldb.params import Params
from flows.neuraldb.spec import EDITS
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext

KEYS = ("efficacy", "generalisation", "specificity", "zsre_acc")
METHODS = ("memit", "alphaedit", "neuraldb")


def table(rows: list[dict]) -> list[dict]:
    """Mean over seeds of each metric per (m, method), with the unedited model as a reference row."""
    out = []
    keyset = sorted({(r["m"], r["method"]) for r in rows}, key=lambda k: (k[0], k[1] != "unedited", k[1]))
    for m, meth in keyset:
        sel = [r for r in rows if r["m"] == m and r["method"] == meth]
        base = [b for b in rows if b["method"] == "unedited"]
        row = {"m": m, "method": meth}
        for k in KEYS:
            row[k] = float(np.mean([np.nanmean(r[k]) for r in sel]))
        row["ppl"] = float(np.mean([np.exp(np.mean(r["ppl_nll"])) for r in sel]))
        row["ppl_rise"] = row["ppl"] - float(np.mean([np.exp(np.mean(b["ppl_nll"])) for b in base]))
        row["fluency"] = float(np.mean([np.mean(r["fluency"]) for r in sel]))
        out.append(row)
    return out


def _figures(tab: list[dict], gamma: dict) -> list:
    figs = []
    for k, label in (("efficacy", "efficacy"), ("generalisation", "paraphrase efficacy"),
                     ("specificity", "specificity"), ("ppl_rise", "held-out perplexity rise"),
                     ("fluency", "fluency (n-gram entropy)")):
        series = {m: ([r["m"] for r in tab if r["method"] == m], [r[k] for r in tab if r["method"] == m])
                  for m in METHODS}
        figs.append((f"{k}_vs_m", line_plot(series, xlabel="number of edits m", ylabel=label, logx=True,
                                            title=f"{label} vs m"), f"{label} vs number of edits (mean over seeds)"))
    for split in ("dev", "test_seed0"):
        pts = gamma.get(split) or []
        if pts:
            series = {k: ([r["gamma"] for r in pts], [r[k] for r in pts])
                      for k in ("efficacy", "generalisation", "specificity")}
            figs.append((f"gamma_{split}", line_plot(series, xlabel="gate threshold gamma (cosine)", ylabel="rate",
                                                     title=f"NeuralDB gate sweep ({split})"),
                         f"NeuralDB's gate threshold sweep on the {split} split; chosen gamma = {gamma['gamma']:.2f}"))
    return figs


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    edits = ctx.input(EDITS)
    rows = read_jsonl(edits / "runs.jsonl")
    gamma, trace = read_json(edits / "gamma.json"), read_json(edits / "trace.json")
    claims = all_claims(p, rows, gamma)
    tab = table(rows)
    big = max(p.editing.m)
    metrics = {"gamma": gamma["gamma"], "mom2_weight": gamma.get("mom2_weight"),
               "at_max_m": {r["method"]: {k: r[k] for k in (*KEYS, "ppl", "ppl_rise", "fluency")}
                            for r in tab if r["m"] == big}}
    sections = [
        Section("Editing metrics vs number of edits",
                f"Mean over seeds {p.editing.seeds}; edited layer {trace['layer']}; AlphaEdit's null space has "
                f"{trace['null_space_dim']} of {trace['key_dim']} key dimensions.", figures=_figures(tab, gamma),
                tables=[tab]),
        Section("Gate threshold sweep", f"Chosen gamma = {gamma['gamma']:.2f} "
                f"({'tuned on the dev split' if gamma['tuned'] else 'fixed in params'}).",
                tables=[gamma["dev"], gamma.get("test_seed0") or []]),
        Section("MEMIT lambda", f"lambda = {gamma.get('mom2_weight', 'n/a')} "
                f"({'tuned on the dev split by the same rule as gamma' if gamma.get('mom2_tuned') else 'fixed in params'}).",
                tables=[gamma.get("mom2_dev") or []]),
        Section("Light causal trace", "Mean drop in log P(true object) when one layer's MLP output at the subject's "
                "last token is zeroed.", tables=[trace["trace"]]),
    ]
    smol = edits / "smollm2.jsonl"
    if smol.is_file():
        srows = [dict(r, seed=0) for r in read_jsonl(smol)]
        if srows:
            sections.append(Section("Extended: SmolLM2-135M on real facts", "", tables=[table(srows)]))
    return finish_report(ctx, CLAIMS, claims, metrics=metrics, sections=sections,
                         plots={"metrics_vs_m.csv": (tab, ["m", "method", *KEYS, "ppl", "ppl_rise", "fluency"]),
                                "gamma_sweep.csv": (gamma["dev"],
                                                    ["gamma", "efficacy", "generalisation", "specificity", "score"])})
