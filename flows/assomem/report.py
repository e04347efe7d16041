"""Stage ``report``: claims 1-4, recall vs memory size per method, fusion weights per type, ablations."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from components.io import read_json, read_jsonl
from components.reporting import Section
from components.reporting.plots import bar_plot, line_plot
from flows.assomem.claims import CLAIMS, all_claims, mean_weights
from flows.assomem.common import load_units
from flows.assomem.params import Params
from flows.assomem.spec import EVAL, GRAPHS, MEMORIES, RUNS
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext

COLUMNS = ("R@6", "R@10", "nDCG@10", "MRR", "S-R@6", "S-R@10", "S-nDCG@10")


def summarise(rows: list[dict], keys: tuple[str, ...]) -> list[dict]:
    """Mean of every metric over test questions, grouped by ``keys``."""
    acc = defaultdict(list)
    for r in rows:
        if r["split"] == "test":
            acc[tuple(r[k] for k in keys)].append(r)
    out = []
    for key, grp in sorted(acc.items()):
        out.append(
            {
                **dict(zip(keys, key)),
                "questions": len(grp),
                **{c: round(float(np.mean([g[c] for g in grp])), 4) for c in COLUMNS},
            }
        )
    return out


def graph_table(gstats: dict, max_rows: int = 20) -> list[dict]:
    """One row per unit, or (many real-source memories) the mean of every stat over units."""
    rows = [{"unit": k, **v} for k, v in sorted(gstats.items())]
    if len(rows) <= max_rows:
        return rows
    cols = [c for c in rows[0] if c != "unit" and all(isinstance(r[c], (int, float)) for r in rows)]
    return [
        {"unit": f"mean of {len(rows)} memories", **{c: round(float(np.mean([r[c] for r in rows])), 3) for c in cols}}
    ]


def figures(by_size: list[dict], weights: dict) -> list:
    series = defaultdict(lambda: ([], []))
    for r in by_size:
        series[r["method"]][0].append(r["size"])
        series[r["method"]][1].append(r["R@10"])
    figs = [
        (
            "recall_vs_size",
            line_plot(
                dict(series),
                xlabel="memory size (utterances)",
                ylabel="R@10 (test questions)",
                title="Recall@10 vs memory size",
                logx=True,
            ),
            "R@10 of every method at each memory size (mean over test questions and seeds)",
        )
    ]
    for qtype, w in sorted(weights.items()):
        figs.append(
            (
                f"weights_{qtype}",
                bar_plot(w, xlabel="signal", ylabel="CMI weight", title=f"{qtype} questions"),
                f"mean CMI fusion weights for {qtype} questions at the largest memory size",
            )
        )
    return figs


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = read_jsonl(ctx.input(f"{EVAL}/metrics.jsonl"))
    info = read_json(ctx.input(f"{RUNS}/weights.json"))
    gstats = read_json(ctx.input(f"{GRAPHS}/stats.json"))
    units = load_units(ctx.input(MEMORIES))
    claims = all_claims(p, rows, info, units)
    big = max(u["size"] for u in units)
    by_size = summarise(rows, ("method", "size"))
    by_type = summarise([r for r in rows if r["size"] == big], ("method", "type"))
    weights = mean_weights(info, units, big)
    weight_rows = [{"type": t, **{d: round(v, 3) for d, v in w.items()}} for t, w in sorted(weights.items())]
    ablation = [r for r in by_size if r["method"].startswith("assomem") and r["size"] == big]
    graph_rows = graph_table(gstats)
    metrics = {
        "by_size": {
            f"{r['method']}@{r['size']}": {c: r[c] for c in ("R@6", "R@10", "nDCG@10", "S-R@10")} for r in by_size
        },
        "weights": weights,
    }
    sections = [
        Section(
            "Recall vs memory size",
            "Test questions (70%), pooled over seeds. Memory units of one seed are "
            "nested: a larger memory adds whole projects of near-duplicate meetings.",
            figures=figures(by_size, weights)[:1],
            tables=[by_size],
        ),
        Section(f"Per question type at {big} utterances", "", tables=[by_type]),
        *(
            [
                Section(
                    "Per original question type",
                    "The source's own question types (mapped to the card's four above).",
                    tables=[summarise([r for r in rows if "orig_type" in r], ("method", "orig_type"))],
                )
            ]
            if any("orig_type" in r for r in rows)
            else []
        ),
        Section(
            "Fusion weights (CMI, per question type)",
            "softmax(CMI / T) fitted on the calibration split (30%), mean over seeds at the largest memory.",
            figures=figures(by_size, weights)[1:],
            tables=[weight_rows],
        ),
        Section(
            "Ablations",
            "AssoMem with CMI weights, equal weights, without importance I, without time T.",
            tables=[ablation],
        ),
        Section(
            "Clues and graphs",
            "Clue accuracy: share of sessions whose tagged keyphrase names the generator's project.",
            tables=[graph_rows],
        ),
    ]
    if ctx.tracker is not None:  # MLflow keys may not hold '@'
        ctx.tracker.log_metrics(
            {
                k.replace("@", "_at_"): {m.replace("@", "_at_"): v for m, v in d.items()}
                for k, d in metrics["by_size"].items()
            }
        )
    return finish_report(
        ctx,
        CLAIMS,
        claims,
        metrics=metrics,
        sections=sections,
        plots={"recall_vs_size.csv": (by_size, ["method", "size", "R@10", "R@6", "nDCG@10"])},
    )
