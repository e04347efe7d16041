"""Stage ``report``: claims 1-4, per-task accuracy per method, reward curves and image grids (prompt, chain,
picture) per method."""

from __future__ import annotations

import numpy as np

from components.io import read_json, read_jsonl
from components.reporting import Section
from components.reporting.plots import errorbar_plot, line_plot, new_figure
from flows.got_r1.claims import CLAIMS, claim1, claim2, claim3, claim4
from flows.got_r1.params import Params
from flows.got_r1.spec import RUNS, SFT
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext

RGB = ["#ffffff", "#d62728", "#2ca02c", "#1f77b4", "#e6c619", "#9467bd", "#ff7f0e"]  # background + COLOURS
METRICS = ("overall", "colour_binding", "shape_binding", "spatial", "iou", "chain_valid")


def method_table(rows: list[dict]) -> list[dict]:
    out = []
    for m in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == m]
        tags = sorted({r["tag"] for r in mine})
        row = {"method": m, **{t: float(np.mean([r["correct"] for r in mine if r["tag"] == t])) for t in tags}}
        row["overall"] = float(np.mean([row[t] for t in tags]))
        for k in METRICS[1:]:
            vals = [r[k] for r in mine if r.get(k) is not None]
            row[k] = float(np.mean(vals)) if vals else None
        out.append(row)
    return out


def image_grid(rows: list[dict], methods: list[str], n: int = 6):
    """One row per method, one column per test prompt: the picture, the prompt and the chain."""
    from matplotlib.colors import ListedColormap

    ids = list(dict.fromkeys(r["id"] for r in rows if r["method"] == methods[0]))[:: max(1, len(rows) // 60)][:n]
    fig = new_figure(2.2 * len(ids), 2.4 * len(methods))
    axes = fig.subplots(len(methods), len(ids), squeeze=False)
    for i, m in enumerate(methods):
        for j, pid in enumerate(ids):
            r = next(x for x in rows if x["method"] == m and x["id"] == pid and x["seed"] in (-1, 0, min_seed(rows, m)))
            ax = axes[i][j]
            ax.imshow(np.asarray(r["image"]), cmap=ListedColormap(RGB), vmin=0, vmax=6, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"{m}\n{r['prompt'][11:]}", fontsize=6)
            ax.set_xlabel((r.get("chain") or "(no chain)")[:60], fontsize=5)
    return fig


PAPER = {"paper: Janus-Pro-7B-GoT": 0.64, "paper: GoT-R1-7B": 0.75}  # GenEval overall (card, secondary)


def overall_by_seed(rows: list[dict], method: str) -> list[float]:
    """GenEval-style overall (mean of the per-task accuracies) of each seed of ``method``."""
    out = []
    for s in sorted({r["seed"] for r in rows if r["method"] == method}):
        mine = [r for r in rows if r["method"] == method and r["seed"] == s]
        tags = sorted({r["tag"] for r in mine})
        out.append(float(np.mean([np.mean([r["correct"] for r in mine if r["tag"] == t]) for t in tags])))
    return out


def figures(rows: list[dict], methods: list[str], results) -> list:
    per = {m: overall_by_seed(rows, m) for m in methods}
    names = [*methods, *PAPER]
    vals = [float(np.mean(per[m])) for m in methods] + list(PAPER.values())
    lo = [min(per[m]) for m in methods] + [None] * len(PAPER)
    hi = [max(per[m]) for m in methods] + [None] * len(PAPER)
    acc = errorbar_plot(
        names,
        vals,
        lo,
        hi,
        xlabel="GenEval-style overall (bars: range over seeds)",
        title="Overall accuracy, ours beside the paper's (7B, GenEval)",
        reference=None,
    )
    eff = errorbar_plot(
        [f"{c.id}: {c.method} - {c.baseline}" for c in results],
        [c.effect for c in results],
        [c.ci_low for c in results],
        [c.ci_high for c in results],
        xlabel="effect (95% CI)",
        title="Claims: effects with their intervals",
    )
    return [
        ("overall", acc, "overall accuracy per method with the paper's numbers"),
        ("claims", eff, "each claim's effect and 95% CI"),
    ]


def min_seed(rows, m) -> int:
    return min(r["seed"] for r in rows if r["method"] == m)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    seeds = list(p.rl.seeds)
    rows = read_jsonl(ctx.input(f"{SFT}/eval.jsonl")) + read_jsonl(ctx.input(f"{RUNS}/eval.jsonl"))
    curves = read_jsonl(ctx.input(f"{RUNS}/curves.jsonl"))
    sft = read_json(ctx.input(f"{SFT}/sft.json"))
    table = method_table(rows)
    results = [claim1(p, rows, seeds), claim2(p, rows, seeds), claim3(p, rows, seeds), claim4(p, rows, seeds)]
    methods = [t["method"] for t in table]
    acc_rows = [
        {"task": k, "method": t["method"], "accuracy": t[k]}
        for t in table
        for k in t
        if k not in ("method", *METRICS[1:]) and t[k] is not None
    ]
    steps = sorted({c["step"] for c in curves})
    reward_rows = [
        {
            "step": s,
            "method": m,
            "reward": float(np.mean([c["reward"] for c in curves if c["step"] == s and c["method"] == m])),
        }
        for m in dict.fromkeys(c["method"] for c in curves)
        for s in steps
    ]
    fig = line_plot(
        {
            m: (steps, [r["reward"] for r in reward_rows if r["method"] == m])
            for m in dict.fromkeys(r["method"] for r in reward_rows)
        },
        xlabel="GRPO step",
        ylabel="mean reward (own kind)",
        title="GRPO reward (mean over seeds)",
    )
    sft_losses = ", ".join(
        f"{k} {v['final_loss']:.3f}" for k, v in sft.items() if isinstance(v, dict) and "final_loss" in v
    )
    sections = [
        Section(
            "Accuracy",
            "GenEval-style per-task accuracy on held-out prompts (greedy decoding), T2I-CompBench-"
            "style bindings and 2D-spatial, chain-image IoU and chain validity; GRPO arms averaged over seeds.",
            figures=figures(rows, methods, results),
            tables=[table],
        ),
        Section("Training", f"SFT final loss: {sft_losses}.", figures=[("reward", fig, "GRPO reward per step")]),
        Section(
            "Image grids",
            "Prompt, chain and picture per method (GRPO arms: their first seed).",
            figures=[("grid", image_grid(rows, methods), "test prompts per method")],
        ),
    ]
    metrics = {"methods": {t["method"]: {k: v for k, v in t.items() if k != "method"} for t in table}}
    return finish_report(
        ctx,
        CLAIMS,
        results,
        metrics=metrics,
        sections=sections,
        plots={
            "accuracy.csv": (acc_rows, ["task", "method", "accuracy"]),
            "reward.csv": (reward_rows, ["step", "method", "reward"]),
        },
    )
