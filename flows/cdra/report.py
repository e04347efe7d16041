"""Stage ``report``: claims C1-C4, held-out accuracies per arm, PRM step accuracy, training curves."""

from __future__ import annotations

import numpy as np

from components.cdra.cdpa import METRICS
from components.io import read_json, read_jsonl
from components.reporting import Section
from components.reporting.plots import line_plot
from flows.cdra.claims import CLAIMS, claim1, claim2, claim3, claim4
from flows.cdra.params import Params
from flows.cdra.spec import RUNS
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext

ARMS = ("sft", "grpo_outcome", "prm_score_only", "cdra")


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    ev = read_jsonl(ctx.input(f"{RUNS}/eval.jsonl"))
    prm = read_jsonl(ctx.input(f"{RUNS}/prm_steps.jsonl"))
    steps = read_jsonl(ctx.input(f"{RUNS}/rl_steps.jsonl"))
    curves = read_jsonl(ctx.input(f"{RUNS}/curves.jsonl"))
    info = read_json(ctx.input(f"{RUNS}/info.json"))
    table = [
        {"arm": a, **{k: float(np.mean([r[k] for r in ev if r["arm"] == a])) for k in METRICS}}
        for a in ARMS
        if any(r["arm"] == a for r in ev)
    ]
    prm_table = [
        {"prm": k, "step accuracy": float(np.mean([r[k] == r["gold"] for r in prm])) if prm else float("nan")}
        for k in ("genprm", "score_only")
    ]
    curve_rows = [{"seed": c["seed"], "arm": c["arm"], "step": c["step"], "pf": c["pf"], "da": c["da"]} for c in curves]
    mean_curve = {}
    for a in sorted({c["arm"] for c in curves}):
        xs = sorted({c["step"] for c in curves if c["arm"] == a})
        mean_curve[a] = (
            xs,
            [float(np.mean([c["pf"] for c in curves if c["arm"] == a and c["step"] == x])) for x in xs],
        )
    fig = line_plot(mean_curve, xlabel="RL step", ylabel="held-out Acc_PF (mean over seeds)", title="Training curves")
    zero = [
        {
            "arm": a,
            "zero-spread (process)": float(np.mean([r["zero_process"] for r in steps if r["arm"] == a])),
            "zero-spread (outcome)": float(np.mean([r["zero_outcome"] for r in steps if r["arm"] == a])),
        }
        for a in sorted({r["arm"] for r in steps})
    ]
    sections = [
        Section(
            "Held-out accuracy",
            "Exact rule judge on held-out pairs, greedy responses, mean over seeds.",
            tables=[table],
        ),
        Section(
            "PRM step accuracy",
            "Score equal to the rule critic's on held-out steps (Pers-GenPRM reads its score after its own critique).",
            tables=[prm_table],
        ),
        Section(
            "Training curves",
            "Held-out Acc_PF during RL (plateau check).",
            figures=[("curves", fig, "held-out Acc_PF per RL step")],
            tables=[zero],
        ),
    ]
    metrics = {
        "heldout": {r["arm"]: {k: r[k] for k in METRICS} for r in table},
        "prm_step_accuracy": {r["prm"]: r["step accuracy"] for r in prm_table},
        "cpu_seconds_per_seed": [s["cpu_seconds"] for s in info["seeds"]],
    }
    results = [claim1(p, ev, steps), claim2(p, ev, steps), claim3(p, prm), claim4(p, steps)]
    return finish_report(
        ctx,
        CLAIMS,
        results,
        metrics=metrics,
        sections=sections,
        plots={"curves.csv": (curve_rows, ["seed", "arm", "step", "pf", "da"])},
    )
