"""Small helpers shared by the icql stages (their data paths are declared in ``flows.icql.spec``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from components.inputs import load_npy
from components.rl.behaviour import MODES, NoisyScripted


def task_dir(base: Path, n_subtasks: int) -> Path:
    return base / f"t{n_subtasks}"


def run_name(task: int | str, method: str, seed: int) -> str:
    return f"t{task}-{method}-s{seed}"


def grid(p) -> list[dict]:
    """Every (task, method, seed) run of the train stage, in a fixed order."""
    return [
        {"task": int(t), "method": m, "seed": s, "name": run_name(t, m, s)}
        for t, methods in sorted(p.train.runs.items())
        for m in methods
        for s in p.train.seeds
    ]


def external_name(dataset_id: str) -> str:
    """Folder and run-name prefix of an external dataset, e.g. ``ext-D4RL_kitchen_complete-v2``."""
    return "ext-" + dataset_id.replace("/", "_")


def external_grid(p) -> list[dict]:
    """Every (external dataset, method, seed) run: ``train.external_methods`` x ``train.seeds``."""
    return [
        {"dataset": external_name(src.id), "method": m, "seed": s, "name": f"{external_name(src.id)}-{m}-s{s}"}
        for src in p.data.external
        for m in p.train.external_methods
        for s in p.train.seeds
    ]


def behaviour_factory(env, p, task: int):
    """Episode i's scripted behaviour: its mode and noise drawn from (seed, task, i)."""
    modes = list(p.data.mode_probs)
    probs = np.array([p.data.mode_probs[m] for m in modes])

    def make(i: int) -> NoisyScripted:
        rng = np.random.default_rng([p.seed, task, i])
        mode = modes[int(rng.choice(len(modes), p=probs))]
        assert mode in MODES
        return NoisyScripted(env, mode, p.data.noise, rng, compensation=p.data.compensation)

    return make


def env_settings(p) -> dict:
    """The kitchen-lite settings a dataset was built with (stored in its ``meta.json`` under ``env``)."""
    d = p.data
    return {"layout_seed": d.layout_seed, "max_steps": d.max_steps, "radius": d.radius, "drift": d.drift}


def task_env(meta: dict):
    """The kitchen-lite environment of a dataset's ``meta.json`` (its task and ``env`` settings)."""
    from components.rl.kitchen_lite import make_env

    e = meta["env"]
    return make_env(
        int(meta["task"]),
        int(e["layout_seed"]),
        int(e["max_steps"]),
        radius=float(e["radius"]),
        drift=float(e["drift"]),
    )


def context_for(method: str, folder: Path) -> np.ndarray | None:
    """The precomputed context indices a method reads (None without retrieval)."""
    if method == "icql":
        return load_npy(folder / "ctx_nearest.npy")
    if method == "icql-random":
        return load_npy(folder / "ctx_random.npy")
    return None
