"""Small helpers shared by the icql stages (their data paths are declared in ``flows.icql.spec``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from components.errors import DataError
from components.inputs import check_array, load_npy
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


def context_for(method: str, folder: Path, rows: int | None = None) -> np.ndarray | None:
    """The precomputed context indices a method reads (None without retrieval): an integer array with one row
    per transition (``rows``, when given) whose entries index transitions."""
    names = {"icql": "ctx_nearest.npy", "icql-random": "ctx_random.npy"}
    if method not in names:
        return None
    path = folder / names[method]
    ctx = check_array(load_npy(path), path, ndim=2, rows=rows)
    if ctx.dtype.kind not in "iu":
        raise DataError(f"{path}: dtype {ctx.dtype}, expected transition indices (integers)")
    if rows is not None and ctx.size and (ctx.min() < 0 or ctx.max() >= rows):
        raise DataError(f"{path}: indices outside the {rows} transitions")
    return ctx


# a kitchen-lite dataset's meta.json, as the train, evaluate and champion code read it
META_FIELDS = {"task": int, "env": dict, "references": dict}
ENV_FIELDS = {"layout_seed": int, "max_steps": int, "radius": float, "drift": float}
# an entry of models/runs.json (the train stage's list of kitchen-lite runs)
RUN_FIELDS = {"name": str, "task": int, "method": str, "seed": int}


def read_meta(folder: Path) -> dict:
    """A dataset folder's ``meta.json`` with its fields, env settings and finite random/expert references."""
    from components.io import check_fields, read_json

    path = folder / "meta.json"
    meta = read_json(path, META_FIELDS)
    check_fields(meta["env"], ENV_FIELDS, f"{path}: env")
    check_fields(meta["references"], {"random": float, "expert": float}, f"{path}: references")
    return meta


def read_runs(models: Path) -> list[dict]:
    """``models/runs.json``: a list of runs with typed fields and unique names, each a model folder in ``models``
    (a name is a plain folder name: no path separators, never ``..``)."""
    from components.io import read_json_records

    path = models / "runs.json"
    runs = read_json_records(path, RUN_FIELDS, unique="name")
    for i, r in enumerate(runs, 1):
        name = r["name"]
        if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
            raise DataError(f"{path}: record {i}: name {name[:40]!r} is not a plain folder name")
        if not (models / name).is_dir():
            raise DataError(f"{path}: record {i}: no model folder {name[:40]!r} beside it")
    return runs
