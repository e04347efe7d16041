"""ICQL's champion: the in-context critic and policy the train stage fits on the task with the most
subtasks (C1's 4-subtask task), first seed.

The folder (``data/icql/models/champion/``: ``config.json`` + ``model.safetensors``, loaded by
``components.rl.trainer:load_agent_safetensors``) holds the whole ICQL agent: the policy, the in-context critics
(feature MLP + linear-TD transformer), their Polyak targets and V. It is re-evaluated as the evaluate stage
measures it, with the same functions: the policy's mean normalised score (``episode_returns``,
``normalised_score`` against the dataset's random/expert anchors in ``meta.json``) over the first
``EPISODES`` evaluation episodes (reset seeds ``eval.seed`` + i, shared by every method), and the critic's
Spearman correlation and mean absolute error against the discounted Monte-Carlo returns of the Q-accuracy
trajectories (``q_rows_for``, ``predict_q`` with the nearest-state contexts, ``q_accuracy``). The policy is
deterministic, the environment is seeded per episode and the critic reads precomputed contexts, so an unchanged
agent in an unchanged Gymnasium/torch gives the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "icql"
LOADER = "components.rl.trainer:load_agent_safetensors"  # the allow-listed loader its child run is logged with
METHOD = "icql"
EPISODES = 10  # at most this many of the evaluate stage's episodes: a re-evaluation takes seconds
LIBRARIES = ("gymnasium", "scipy", "safetensors")
RULES = {
    "score": Rule(higher_is_better=True, tolerance=2.0, relative=False),  # normalised-score points (claims.delta_score)
    "q_spearman": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # a correlation (claims.delta_spearman)
    "q_mae": Rule(higher_is_better=False, tolerance=0.02),  # 2% of the accepted mean |Q-hat - G|
}
FILES = ("transitions.npz", "meta.json", "ctx_nearest.npy")


def choose(p) -> tuple[int, int, str] | None:
    """(task, seed, run name) of the ICQL run on the task with the most subtasks (C1's 4-subtask task in the
    default grid), first seed; None when no task trains ICQL."""
    from flows.icql.common import grid

    rows = [g for g in grid(p) if g["method"] == METHOD]
    if not rows:
        return None
    task = max(g["task"] for g in rows)
    row = next(g for g in rows if g["task"] == task)
    return row["task"], row["seed"], row["name"]


def settings_for(p, task: int) -> dict[str, Any]:
    from flows.icql.spec import DATASETS

    return {
        "task": int(task),
        "dataset": f"{DATASETS}/t{task}",
        "method": METHOD,
        "layout_seed": p.data.layout_seed,
        "max_steps": p.data.max_steps,
        "eval_seed": p.eval.seed,
        "episodes": min(p.eval.episodes, EPISODES),
        "q_seed": p.seed,
        "q_episodes": p.eval.q_episodes,
        "gamma": p.agent.gamma,
    }


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    import numpy as np

    from components.errors import DataError
    from components.rl import dataset as D
    from components.rl.evaluate import episode_returns, normalised_score, q_accuracy
    from flows.icql.common import context_for, read_meta, task_env
    from flows.icql.qvalues import predict_q, q_rows_for

    s = settings
    folder = Path(root) / s["dataset"]
    for name in FILES:
        if not (folder / name).is_file():
            raise DataError(
                f"{folder / name}: ICQL's evaluation data not found (run `paperline run icql --stage data` "
                "or `dvc pull`)"
            )
    meta = read_meta(folder)
    refs = meta["references"]
    env = task_env(meta)
    rets, _ = episode_returns(env, model.act, [int(s["eval_seed"]) + i for i in range(int(s["episodes"]))])
    scores = normalised_score(rets, refs["random"], refs["expert"])
    data = D.load(folder / "transitions.npz")
    rows = q_rows_for(int(s["q_seed"]), int(s["q_episodes"]), data)
    q = predict_q(model, data, context_for(s["method"], folder, len(data)), rows)
    acc = q_accuracy(q, D.returns_to_go(data, float(s["gamma"]))[rows])
    return {"score": float(np.mean(scores)), "q_spearman": acc["spearman"], "q_mae": acc["mae"]}


def candidate(run_id: str | None, name: str, folder: Path, settings: dict, root: Path) -> dict | None:
    """The champion record: its metrics computed on the agent loaded back from ``folder`` by its logged loader."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings, root)
