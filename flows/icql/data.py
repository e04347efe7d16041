"""Stage ``data``: kitchen-lite datasets for each subtask count, their GX checks, references and contexts.

Per task ``tN`` under ``data/icql/datasets``: ``transitions.npz`` (D4RL fields),
``ctx_nearest.npy`` / ``ctx_random.npy`` (k context indices per dataset state) and
``meta.json`` (random and expert reference returns for the normalised score).
Each ``data.external`` dataset gets the same files under ``ext-<id>/`` (actions in
[-1, 1]; anchors by the rule of :mod:`components.rl.external`) and ``external.json``.
"""

from __future__ import annotations

import logging

import numpy as np

from components.data import validate as V
from components.errors import DataError
from components.io import write_json
from components.rl import dataset as D
from components.rl.behaviour import expert_action
from components.rl.checks import validate_transitions
from components.rl.evaluate import episode_returns
from components.rl.external import behaviour_return, make_gym_env, random_return, reference_scores
from components.rl.loaders import collect_sac, minari_external, open_minari
from components.rl.retrieval import context_indices
from flows.icql.common import behaviour_factory, env_settings, external_name, task_dir, task_env
from flows.icql.params import Params
from flows.icql.spec import DATASETS
from flows.runtime.settings import online
from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")


def references(env, p, task: int) -> dict:
    """Mean returns of the uniform-random policy and the scripted expert (normalised-score anchors)."""
    seeds = [10_000_000 + task * 1000 + i for i in range(p.data.reference_episodes)]
    rng = np.random.default_rng([p.seed, task, 7])
    rand, _ = episode_returns(env, lambda o: rng.uniform(-1, 1, 2).astype(np.float32), seeds)
    expert, _ = episode_returns(env, lambda o: expert_action(env), seeds)
    return {"random": float(np.mean(rand)), "expert": float(np.mean(expert))}


def build_task(p, task: int, out) -> dict:
    env = task_env({"task": task, "env": env_settings(p)})
    data = D.collect(env, behaviour_factory(env, p, task), p.data.episodes, seed=p.seed * 100_000 + task * 10_000)
    folder = task_dir(out, task)
    folder.mkdir(parents=True, exist_ok=True)
    validate_transitions(
        data,
        name=f"icql/t{task}",
        reward_range=(0.0, 1.0),
        obs_dim=env.observation_space.shape[0],
        act_dim=env.action_space.shape[0],
        result_path=out / "_checks" / f"t{task}.json",
    )
    D.save(data, folder / "transitions.npz")
    contexts(data, p, folder, seed=p.seed * 7 + task)
    k = p.retrieval.k
    ep_ret = np.array([data.rewards[a:b].sum() for a, b in data.episode_bounds()])
    meta = {
        "task": task,
        "env": env_settings(p),
        "transitions": len(data),
        "episodes": int(len(ep_ret)),
        "obs_dim": data.obs_dim,
        "act_dim": data.act_dim,
        "behaviour_return": float(ep_ret.mean()),
        "k": k,
        "references": references(env, p, task),
        "targets": env.layout.targets.tolist(),
    }
    write_json(folder / "meta.json", meta)
    log.info(
        "icql: t%d dataset %d transitions, behaviour return %.2f, refs %s",
        task,
        len(data),
        meta["behaviour_return"],
        meta["references"],
    )
    return meta


def contexts(data: D.Transitions, p, folder, seed: int) -> None:
    """Nearest and random context indices of every dataset state (what ICQL / ICQL-random read)."""
    k, excl = p.retrieval.k, p.retrieval.exclude_self
    ctx = {
        "nearest": context_indices(data.observations, k, "nearest", exclude_self=excl),
        "random": context_indices(data.observations, k, "random", exclude_self=excl, seed=seed),
    }
    checks = folder.parent / "_checks" / f"{folder.name}-contexts.json"
    validate_contexts(ctx, len(data), k, name=f"icql/{folder.name}/contexts", result_path=checks)
    for name, idx in ctx.items():
        np.save(folder / f"ctx_{name}.npy", idx)


def validate_contexts(ctx: dict[str, np.ndarray], n: int, k: int, *, name: str, result_path) -> None:
    """GX: k context indices per transition in each context file, every one naming a transition of the dataset
    (referential integrity: transition ids are 0..n-1)."""
    import pandas as pd

    flat = {kind: np.asarray(idx).reshape(-1) for kind, idx in ctx.items()}
    if len({a.size for a in flat.values()}) != 1:
        raise DataError(f"{name}: context files of different sizes {[a.size for a in flat.values()]}")
    size = next(iter(flat.values())).size
    frame = pd.DataFrame({"row": np.arange(size) // max(k, 1), **flat})
    suite = [V.row_count_between(n * k, n * k)]
    for kind in flat:
        suite += [V.not_null(kind), V.between(kind, 0, n - 1)]
    V.validate(frame, suite, name=name, result_path=result_path, id_column="row")


def load_external(p, i: int, src):
    """(transitions with actions in [-1, 1], published references, wrapped env or None) of ``data.external[i]``."""
    where = f"data.external[{i}]"
    if src.source == "minari":
        return minari_external(open_minari(src.id, online=online()), where)
    data = collect_sac(
        src.id, train_steps=src.train_steps, episodes=src.episodes, seed=p.seed, online=online(), where=where
    )
    return data, {}, make_gym_env(src.id, f"{where}.id")


def build_external(p, i: int, src, out) -> dict:
    """One external dataset: loaded, GX-validated, stored with contexts and normalised-score anchors."""
    data, published, env = load_external(p, i, src)
    name = external_name(src.id)
    r = (float(np.min(data.rewards)), float(np.max(data.rewards)))
    validate_transitions(data, name=f"icql/{name}", reward_range=r, result_path=out / "_checks" / f"{name}.json")
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    D.save(data, folder / "transitions.npz")
    contexts(data, p, folder, seed=p.seed * 7 + 1000 + i)
    beh = behaviour_return(data)
    refs = None
    if env is not None:
        refs = reference_scores(
            f"data.external[{i}]",
            config=src.model_dump(),
            published=published,
            measured_random=lambda: random_return(env, p.data.reference_episodes, p.seed),
            measured_expert=lambda: beh,
        )
    meta = {
        "name": name,
        "source": src.source,
        "id": src.id,
        "transitions": len(data),
        "episodes": len(data.episode_bounds()),
        "obs_dim": data.obs_dim,
        "act_dim": data.act_dim,
        "behaviour_return": beh,
        "k": p.retrieval.k,
        "evaluable": env is not None,
        "references": refs,
    }
    write_json(folder / "meta.json", meta)
    log.info(
        "icql: %s: %d transitions, obs %d, act %d, behaviour return %.2f, refs %s",
        name,
        len(data),
        data.obs_dim,
        data.act_dim,
        beh,
        refs,
    )
    return meta


def external(p, out) -> dict:
    """Datasets of ``data.external`` (online only): loaded, validated with GX, stored with contexts and anchors."""
    return {m["name"]: m for m in (build_external(p, i, src, out) for i, src in enumerate(p.data.external))}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    out = ctx.output_dir(DATASETS)
    metas = {f"t{t}": build_task(p, t, out) for t in p.data.tasks}
    write_json(out / "summary.json", metas)
    if p.data.external:
        write_json(out / "external.json", external(p, out))
    return {k: {"transitions": m["transitions"], "behaviour_return": m["behaviour_return"]} for k, m in metas.items()}
