"""Evaluation of the runs on ``data.external`` datasets (part of stage ``evaluate``).

Each policy is rolled out in its dataset's environment (``sac``: the Gymnasium env id;
``minari``: the recovered evaluation env), wrapped to act in [-1, 1] as in training, from
the reset seeds ``eval.seed ..``; returns are normalised with the anchors stored by the
data stage. Datasets without a recoverable environment are trained on but not evaluated.
Writes ``external_episodes.jsonl`` and ``external_runs.jsonl`` (with Q-hat vs Monte-Carlo
returns on up to ``eval.q_episodes`` dataset trajectories).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from components.data import validate as V
from components.io import read_json
from components.rl import dataset as D
from components.rl.evaluate import episode_returns, normalised_score, q_accuracy
from components.rl.external import make_gym_env
from components.rl.loaders import open_minari, recover_minari_env
from components.rl.trainer import load_agent
from flows.icql.common import context_for
from flows.icql.qvalues import predict_q, q_rows
from flows.runtime.settings import online

log = logging.getLogger("paperline")

SUITE = [
    V.columns_present(["run", "method", "dataset", "seed", "episode", "return", "score"]),
    V.finite("return"),
    V.finite("score"),
    V.row_count_between(min_value=1),
]


def external_env(meta: dict):
    """The wrapped evaluation environment of an external dataset (see the data stage's meta.json)."""
    where = f"external dataset {meta['name']}"
    if meta["source"] == "sac":
        return make_gym_env(meta["id"], where)
    return recover_minari_env(open_minari(meta["id"], online=online(), download=False), where)


def evaluate_dataset(p, name: str, runs: list[dict], models: Path, datasets: Path) -> tuple[list, list]:
    """Episodes and per-run summaries of every run trained on external dataset ``name``."""
    folder = datasets / name
    meta = read_json(folder / "meta.json")
    env = external_env(meta) if meta["evaluable"] else None
    if env is None:
        log.warning("icql: %s has no evaluation environment; its %d run(s) are not evaluated", name, len(runs))
        return [], []
    refs = meta["references"]
    data = D.load(folder / "transitions.npz")
    rows = q_rows(p, data)
    g = D.returns_to_go(data, p.agent.gamma)[rows]
    seeds = [p.eval.seed + i for i in range(p.eval.episodes)]
    episodes, summary = [], []
    for r in runs:
        agent = load_agent(models / r["name"])
        rets, _ = episode_returns(env, agent.act, seeds)
        scores = normalised_score(rets, refs["random"], refs["expert"])
        episodes += [
            {
                "run": r["name"],
                "method": r["method"],
                "dataset": name,
                "seed": r["seed"],
                "episode": i,
                "return": ret,
                "score": float(s),
            }
            for i, (ret, s) in enumerate(zip(rets, scores))
        ]
        row = {
            "run": r["name"],
            "method": r["method"],
            "dataset": name,
            "seed": r["seed"],
            "mean_score": float(np.mean(scores)),
            "mean_return": float(np.mean(rets)),
        }
        if r["method"] != "bc":
            q = predict_q(agent, data, context_for(r["method"], folder, len(data)), rows)
            row.update({f"q_{k}": v for k, v in q_accuracy(q, g).items()})
        summary.append(row)
    return episodes, summary


def evaluate_external(p, models: Path, datasets: Path, out: Path) -> tuple[list[dict], list[dict]]:
    """All external runs (``models/external_runs.json``), GX-validated; ([], []) when there are none."""
    path = models / "external_runs.json"
    if not path.exists():
        return [], []
    runs = read_json(path)
    episodes, summary = [], []
    for name in sorted({r["dataset"] for r in runs}):
        e, s = evaluate_dataset(p, name, [r for r in runs if r["dataset"] == name], models, datasets)
        episodes += e
        summary += s
    if episodes:
        V.validate(
            episodes,
            SUITE,
            name="icql/external_episodes",
            result_path=out / "_checks" / "external_episodes.json",
            id_column="run",
        )
    return episodes, summary
