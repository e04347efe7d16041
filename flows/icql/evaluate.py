"""Stage ``evaluate``: roll out every trained policy (no retrieval at deployment) and score its Q-values.

Writes ``data/icql/eval/episodes.jsonl`` (one row per run and evaluation episode: return,
completed subtasks, normalised score; every method sees the same reset seeds, so rows
pair across methods) and ``q_t<N>.npz`` (Q-hat of each critic on the Q-accuracy
trajectories, with their Monte-Carlo returns G and episode ids), plus ``runs.jsonl``; runs on
external datasets go to ``external_episodes.jsonl`` / ``external_runs.jsonl`` (see
:mod:`flows.icql.evaluate_external`).
"""

from __future__ import annotations

import logging

import numpy as np

from components.data import validate as V
from components.io import write_json, write_jsonl
from components.rl import dataset as D
from components.rl.evaluate import episode_returns, normalised_score, q_accuracy
from components.rl.trainer import load_agent
from flows.icql.common import context_for, read_meta, read_runs, task_dir, task_env
from flows.icql.evaluate_external import evaluate_external
from flows.icql.params import Params
from flows.icql.qvalues import predict_q, q_rows
from flows.icql.spec import DATASETS, EVAL, MODELS
from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")

SUITE = [
    V.columns_present(["run", "method", "task", "seed", "episode", "return", "score"]),
    V.finite("return"),
    V.finite("score"),
    V.between("subtasks", min_value=0, max_value=4),
    V.row_count_between(min_value=1),
]


def evaluate_task(p, task: int, runs: list[dict], models, datasets, out) -> tuple[list[dict], list[dict]]:
    folder = task_dir(datasets, task)
    meta = read_meta(folder)
    refs = meta["references"]
    env = task_env(meta)
    data = D.load(folder / "transitions.npz")
    rows = q_rows(p, data)
    g = D.returns_to_go(data, p.agent.gamma)[rows]
    q_store = {"rows": rows, "G": g, "episode": data.episode[rows]}
    seeds = [p.eval.seed + i for i in range(p.eval.episodes)]
    episodes, summary = [], []
    for r in runs:
        agent = load_agent(models / r["name"])
        rets, done = episode_returns(env, agent.act, seeds)
        scores = normalised_score(rets, refs["random"], refs["expert"])
        episodes += [
            {
                "run": r["name"],
                "method": r["method"],
                "task": task,
                "seed": r["seed"],
                "episode": i,
                "return": ret,
                "subtasks": d,
                "score": float(s),
            }
            for i, (ret, d, s) in enumerate(zip(rets, done, scores))
        ]
        row = {
            "run": r["name"],
            "method": r["method"],
            "task": task,
            "seed": r["seed"],
            "mean_score": float(np.mean(scores)),
            "mean_return": float(np.mean(rets)),
            "mean_subtasks": float(np.mean(done)),
        }
        if r["method"] != "bc":
            q = predict_q(agent, data, context_for(r["method"], folder, len(data)), rows)
            q_store[r["name"]] = q
            row.update({f"q_{k}": v for k, v in q_accuracy(q, g).items()})
        summary.append(row)
    np.savez(out / f"q_t{task}.npz", **q_store)
    return episodes, summary


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    models, datasets = ctx.input(MODELS), ctx.input(DATASETS)
    out = ctx.output_dir(EVAL)
    runs = read_runs(models)
    episodes, summary = [], []
    for task in sorted({r["task"] for r in runs}):
        e, s = evaluate_task(p, task, [r for r in runs if r["task"] == task], models, datasets, out)
        episodes += e
        summary += s
    if runs:  # a run may train on external datasets only
        V.validate(
            episodes, SUITE, name="icql/episodes", result_path=out / "_checks" / "episodes.json", id_column="run"
        )
    write_jsonl(out / "episodes.jsonl", episodes)
    write_jsonl(out / "runs.jsonl", summary)
    write_json(
        out / "references.json",
        {f"t{t}": read_meta(task_dir(datasets, t))["references"] for t in p.data.tasks},
    )
    ext_episodes, ext_summary = evaluate_external(p, models, datasets, out)
    if ext_summary:
        write_jsonl(out / "external_episodes.jsonl", ext_episodes)
        write_jsonl(out / "external_runs.jsonl", ext_summary)
    return {r["run"]: round(r["mean_score"], 1) for r in summary + ext_summary}
