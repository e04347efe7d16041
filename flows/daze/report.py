"""Stage ``report``: claims 1-4, ASR and benign return per method and env, ASR under perturbation, attack cost
and learning curves."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from components.backdoor.metrics import attack_cost
from components.inputs import load_npz
from components.io import read_json, read_jsonl
from components.reporting import Section
from components.reporting.plots import bar_plot, errorbar_plot, line_plot
from flows.daze.claims import CLAIMS, claim1, claim2, claim3, claim4
from flows.daze.params import Params
from flows.daze.spec import EVAL, MODELS
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext


def _mean(rows: list[dict], key: str) -> float | None:
    return float(np.mean([r[key] for r in rows])) if rows else None


def summary_rows(p: Params, states: list[dict], episodes: list[dict], runs: list[dict]) -> list[dict]:
    out = []
    for e in p.envs:
        clean_br = _mean(
            [x for x in episodes if x["env"] == e.id and x["method"] == "clean" and x["condition"] == "clean"], "return"
        )
        for m in e.methods:

            def sel(rows: list[dict], env: str = e.id, method: str = m) -> list[dict]:
                return [r for r in rows if r["env"] == env and r["method"] == method]

            br = _mean([x for x in sel(episodes) if x["condition"] == "clean"], "return")
            costs = [attack_cost(r["counts"]) for r in sel(runs)]
            out.append(
                {
                    "env": e.id,
                    "method": m,
                    "seeds": len(sel(runs)),
                    "asr": _mean([s for s in sel(states) if s["condition"] == "clean"], "hit"),
                    "asr_perturbed": _mean([s for s in sel(states) if s["condition"] != "clean"], "hit"),
                    "benign_return": br,
                    "br_ratio": br / clean_br if br is not None and clean_br else None,
                    "extra_sim_share": float(np.mean([c["extra_sim_share"] for c in costs])),
                    "trigger_share": float(np.mean([c["trigger_share"] for c in costs])),
                    "null_share": float(np.mean([c["null_share"] for c in costs])),
                }
            )
    return out


def perturbed_rows(p: Params, states: list[dict]) -> list[dict]:
    conds = list(dict.fromkeys(s["condition"] for s in states))
    return [
        {
            "env": e.id,
            "method": m,
            "condition": c,
            "asr": _mean([s for s in states if s["env"] == e.id and s["method"] == m and s["condition"] == c], "hit"),
        }
        for e in p.envs
        for m in e.methods
        for c in conds
    ]


def curves(models: Path, runs: list[dict]) -> dict:
    out: dict = {}
    for r in runs:
        pts = read_json(models / r["name"] / "curve.json")
        out.setdefault((r["env"], r["method"]), []).extend((q["step"], q["return"]) for q in pts)
    return out


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    models = Path(ctx.input(MODELS))
    runs = read_json(models / "runs.json")
    states = read_jsonl(ctx.input(f"{EVAL}/states.jsonl"))
    episodes = read_jsonl(ctx.input(f"{EVAL}/episodes.jsonl"))
    integrity = {}
    for r in runs:
        if r["method"] == "daze":
            with load_npz(models / r["name"] / "transitions.npz") as z:
                integrity[r["name"]] = {
                    "max_gap": float(np.abs(z["reward"] - z["clean_reward"]).max()),
                    "steps": int(z["reward"].size),
                }
    results = [
        claim1(p, states, episodes, integrity),
        claim2(p, episodes),
        claim3(p, states, episodes),
        claim4(p, states, episodes),
    ]
    table = summary_rows(p, states, episodes, runs)
    pert = perturbed_rows(p, states)
    labels = [f"{r['env']} / {r['method']}" for r in table]
    fig_asr = bar_plot(
        {lab: r["asr"] or 0.0 for lab, r in zip(labels, table)},
        ylabel="ASR (triggered states)",
        title="Attack success rate per method and env",
    )
    fig_br = errorbar_plot(
        labels,
        [r["br_ratio"] for r in table],
        [r["br_ratio"] for r in table],
        [r["br_ratio"] for r in table],
        xlabel="BR / clean BR",
        reference=1.0,
        title="Benign return relative to the clean agent",
    )
    fig_pert = line_plot(
        {
            f"{e.id} / {m}": (
                list(range(len([r for r in pert if r["env"] == e.id and r["method"] == m]))),
                [r["asr"] for r in pert if r["env"] == e.id and r["method"] == m],
            )
            for e in p.envs
            for m in e.methods
        },
        xlabel="condition: " + ", ".join(dict.fromkeys(r["condition"] for r in pert)),
        ylabel="ASR",
        title="ASR under mass/length perturbation (transfer proxy)",
    )
    fig_curve = line_plot(
        {f"{k[0]} / {k[1]}": tuple(zip(*sorted(v))) for k, v in curves(models, runs).items()},
        xlabel="environment steps",
        ylabel="clean episode return",
        title="Learning curves (all seeds)",
    )
    sections = [
        Section(
            "Attack success and stealth",
            "ASR: deterministic policy on states of its own benign episodes, trigger channel on. "
            "BR: benign return in the clean simulator. Attack cost: random-action (daze) simulation steps as "
            "a share of all training steps.",
            figures=[
                ("asr", fig_asr, "ASR per method and env"),
                ("br", fig_br, "BR ratio to clean per method and env"),
            ],
            tables=[table],
        ),
        Section(
            "Transfer proxy",
            "ASR with masses or lengths scaled; a proxy for hardware transfer, not hardware.",
            figures=[("asr_perturbed", fig_pert, "ASR per perturbation")],
            tables=[pert],
        ),
        Section(
            "Learning curves",
            "Clean-reward episode return during training: the clean agents plateau at the "
            "task's maximum before an attack result is read.",
            figures=[("curves", fig_curve, "episode return vs steps")],
        ),
    ]
    metrics = {
        "summary": {
            f"{r['env']}/{r['method']}": {k: v for k, v in r.items() if k not in ("env", "method")} for r in table
        }
    }
    return finish_report(
        ctx,
        CLAIMS,
        results,
        metrics=metrics,
        sections=sections,
        plots={
            "asr.csv": ([{"method": lab, "asr": r["asr"]} for lab, r in zip(labels, table)], ["method", "asr"]),
            "asr_perturbed.csv": (
                [{**r, "condition": f"{r['env']}/{r['method']}/{r['condition']}"} for r in pert],
                ["condition", "asr"],
            ),
        },
    )
