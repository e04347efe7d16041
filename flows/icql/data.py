"""Stage ``data``: kitchen-lite datasets for each subtask count, their GX checks, references and contexts.

Per task ``tN`` under ``data/icql/datasets``: ``transitions.npz`` (D4RL fields),
``ctx_nearest.npy`` / ``ctx_random.npy`` (k context indices per dataset state) and
``meta.json`` (random and expert reference returns for the normalised score).
"""

from __future__ import annotations

import logging

import numpy as np

from components.io import write_json
from components.rl import dataset as D
from components.rl.behaviour import expert_action
from components.rl.checks import validate_transitions
from components.rl.evaluate import episode_returns
from components.rl.kitchen_lite import make_env
from components.rl.loaders import collect_sac, load_minari
from components.rl.retrieval import context_indices
from flows.icql.common import DATASETS, behaviour_factory, task_dir
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
    env = make_env(task, p.data.layout_seed, p.data.max_steps)
    data = D.collect(env, behaviour_factory(env, p, task), p.data.episodes, seed=p.seed * 100_000 + task * 10_000)
    folder = task_dir(out, task)
    folder.mkdir(parents=True, exist_ok=True)
    validate_transitions(data, name=f"icql/t{task}", reward_range=(0.0, 1.0),
                         obs_dim=env.observation_space.shape[0], act_dim=env.action_space.shape[0],
                         result_path=out / "_checks" / f"t{task}.json")
    D.save(data, folder / "transitions.npz")
    k, excl = p.retrieval.k, p.retrieval.exclude_self
    np.save(folder / "ctx_nearest.npy", context_indices(data.observations, k, "nearest", exclude_self=excl))
    np.save(folder / "ctx_random.npy", context_indices(data.observations, k, "random", exclude_self=excl,
                                                       seed=p.seed * 7 + task))
    ep_ret = np.array([data.rewards[a:b].sum() for a, b in data.episode_bounds()])
    meta = {"task": task, "transitions": len(data), "episodes": int(len(ep_ret)), "obs_dim": data.obs_dim,
            "act_dim": data.act_dim, "behaviour_return": float(ep_ret.mean()), "k": k,
            "references": references(env, p, task), "targets": env.layout.targets.tolist()}
    write_json(folder / "meta.json", meta)
    log.info("icql: t%d dataset %d transitions, behaviour return %.2f, refs %s", task, len(data),
             meta["behaviour_return"], meta["references"])
    return meta


def external(p, out) -> dict:
    """Paper-scale datasets of ``data.external`` (online only): loaded, validated with GX, stored."""
    metas = {}
    for src in p.data.external:
        if src.source == "minari":
            data = load_minari(src.id, online=online())
        else:
            data = collect_sac(src.id, train_steps=src.train_steps, episodes=src.episodes, seed=p.seed,
                               online=online())
        name = "ext-" + src.id.replace("/", "_")
        r = (float(np.min(data.rewards)), float(np.max(data.rewards)))
        validate_transitions(data, name=f"icql/{name}", reward_range=r, result_path=out / "_checks" / f"{name}.json")
        (out / name).mkdir(parents=True, exist_ok=True)
        D.save(data, out / name / "transitions.npz")
        metas[name] = {"transitions": len(data), "source": src.source, "id": src.id}
    return metas


def run(ctx: StageContext) -> dict:
    p = ctx.params
    out = ctx.output(DATASETS)
    out.mkdir(parents=True, exist_ok=True)
    metas = {f"t{t}": build_task(p, t, out) for t in p.data.tasks}
    write_json(out / "summary.json", metas)
    if p.data.external:
        write_json(out / "external.json", external(p, out))
    return {k: {"transitions": m["transitions"], "behaviour_return": m["behaviour_return"]} for k, m in metas.items()}
