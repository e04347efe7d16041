"""Stage ``train``: every (task, method, seed) run of ``train.runs`` x ``train.seeds``; one MLflow child run each.

Writes ``data/icql/models/<run>/{config.json,model.pt,history.json}`` and ``runs.json``
(the list of runs with their wall time); runs on ``data.external`` datasets
(``train.external_methods``) are listed in ``external_runs.json``. ICQL reads the nearest-state contexts of its
dataset, ``icql-random`` the random ones; the other methods use no retrieval. The champion, the ICQL run on the task
with the most subtasks (C1's), first seed, is also saved as ``champion/`` (config.json + model.safetensors) and
logged as the MLflow model of its own child run (``flows/icql/champion.py``). The runs are jobs of the kit's
grid stage (``flows.runtime.grid.run_grid``: a killed stage resumes from the runs that finished), each written
to its job folder and copied into ``models/``.
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from components.io import read_json, write_json
from components.rl import dataset as D
from components.rl.evaluate import episode_returns, normalised_score
from components.rl.trainer import (
    TensorData,
    build_agent,
    load_agent,
    method_config,
    save_agent,
    save_agent_safetensors,
    train_agent,
)
from components.training.threads import set_threads
from flows.icql import champion
from flows.icql.common import context_for, external_grid, grid, read_meta, task_dir, task_env
from flows.icql.params import Params
from flows.icql.spec import DATASETS, MODELS
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext
from flows.runtime.tracking import Tensor

log = logging.getLogger("paperline")


@dataclass(frozen=True)
class TrainJob:
    """One grid job: a (task or external dataset, method, seed) training run and its settings (its cache key)."""

    method: str
    seed: int
    name: str
    cfg: dict  # the method's agent config (components.rl.trainer.method_config)
    folder: str  # the dataset's folder
    steps: int
    batch_size: int
    threads: int
    progress: bool
    base_seed: int
    datasets: str
    curve_points: int
    dev_episodes: int
    dev_seed: int
    task: int | None = None  # a kitchen-lite task (subtask count) ...
    dataset: str | None = None  # ... or an external dataset's folder name


@dataclass
class TrainedRun:
    """What one job returns: its ``runs.json`` row and the job folder holding the saved run."""

    row: dict
    job_dir: str


def train_one(job: TrainJob, job_dir: Path) -> TrainedRun:
    """Train one run and save it under ``job_dir``; picklable for the process pool."""

    set_threads(job.threads)
    folder = Path(job.folder)
    data = D.load(folder / "transitions.npz")
    tdata = TensorData(data, context_for(job.method, folder, len(data)))
    seed = job.base_seed * 1000 + job.seed
    agent = build_agent(job.method, data.obs_dim, data.act_dim, job.cfg, seed)
    t0 = time.perf_counter()
    hist = train_agent(
        agent,
        tdata,
        steps=job.steps,
        batch_size=job.batch_size,
        seed=seed,
        log_every=max(1, job.steps // job.curve_points),
        progress=job.progress,
        evaluate=dev_evaluator(job, folder),
    )
    seconds = time.perf_counter() - t0
    out = Path(job_dir) / job.name
    save_agent(agent, out, job.method, data.obs_dim, data.act_dim, job.cfg, seed)
    write_json(out / "history.json", hist)
    where = {"task": job.task} if job.task is not None else {"dataset": job.dataset}
    row = {
        "name": job.name,
        **where,
        "method": job.method,
        "seed": job.seed,
        "seconds": round(seconds, 2),
        "steps_per_s": round(job.steps / max(seconds, 1e-9), 1),
        "final": hist[-1] if hist else {},
    }
    return TrainedRun(row, str(job_dir))


def dev_evaluator(job: TrainJob, folder: Path):
    """The learning curve's probe on a kitchen-lite task: mean normalised score of ``train.dev_episodes``
    rollouts from the dev reset seeds (``train.dev_seed`` + i, disjoint from the evaluate stage's test seeds);
    None for external datasets (their environment may be absent offline) or ``dev_episodes`` 0."""
    if job.task is None or job.dev_episodes == 0:
        return None
    meta = read_meta(folder)
    refs = meta["references"]
    env = task_env(meta)
    seeds = [job.dev_seed + i for i in range(job.dev_episodes)]

    def evaluate(agent) -> dict:
        rets, _ = episode_returns(env, agent.act, seeds)
        return {"dev_score": float(np.mean(normalised_score(rets, refs["random"], refs["expert"])))}

    return evaluate


def _track(ctx: StageContext, row: dict, job: TrainJob, folder: Path) -> None:
    if ctx.tracker is None:
        return
    hist = read_json(folder / "history.json")
    task = row.get("task", row.get("dataset"))
    with ctx.tracker.child(
        row["name"], {**job.cfg, "method": row["method"], "task": task, "seed": row["seed"], "steps": job.steps}
    ) as run_id:
        for h in hist:
            ctx.tracker.log_metrics({k: v for k, v in h.items() if k != "step"}, step=int(h["step"]), run_id=run_id)
        ctx.tracker.log_metrics({"steps_per_s": row["steps_per_s"]}, run_id=run_id)
        ctx.tracker.log_artifact(folder, artifact_path="model", run_id=run_id)


def jobs_for(p, datasets: Path) -> list[TrainJob]:
    """Kitchen-lite jobs of ``train.runs``, then the external-dataset jobs of ``train.external_methods``."""
    agent_params = p.agent.model_dump()
    common = {
        "steps": p.train.steps,
        "batch_size": p.train.batch_size,
        "threads": p.resources.threads,
        "progress": p.progress,
        "base_seed": p.seed,
        "datasets": str(datasets),
        "curve_points": p.train.curve_points,
        "dev_episodes": p.train.dev_episodes,
        "dev_seed": p.train.dev_seed,
    }
    kitchen = [
        TrainJob(**g, cfg=method_config(g["method"], agent_params), **common, folder=str(task_dir(datasets, g["task"])))
        for g in grid(p)
    ]
    ext = [
        TrainJob(**g, cfg=method_config(g["method"], agent_params), **common, folder=str(datasets / g["dataset"]))
        for g in external_grid(p)
    ]
    return kitchen + ext


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    datasets = ctx.input(DATASETS)
    out = ctx.output_dir(MODELS)
    jobs = jobs_for(p, datasets)
    log.info("icql: %d training runs on %d worker(s)", len(jobs), p.resources.workers)
    results = run_grid(
        ctx, train_one, jobs, desc="icql training runs", workers=p.resources.workers, files=True, result=TrainedRun
    )
    rows = [r.row for r in results]
    for r in results:
        shutil.copytree(Path(r.job_dir) / r.row["name"], out / r.row["name"], dirs_exist_ok=True)
    for row, job in zip(rows, jobs):
        _track(ctx, row, job, out / row["name"])
    write_json(out / "runs.json", [r for r in rows if "task" in r])
    ext_rows = [r for r in rows if "dataset" in r]
    if ext_rows:
        write_json(out / "external_runs.json", ext_rows)
    summary = {"runs": len(rows), "seconds": round(sum(r["seconds"] for r in rows), 1)}
    chosen = champion.choose(p)
    if chosen is not None:
        import torch

        task, _, name = chosen
        with torch.random.fork_rng(devices=[]):  # load_agent seeds torch; leave the stage's generator as it was
            agent = load_agent(out / name)
        folder = save_agent_safetensors(agent, out / "champion", **read_json(out / name / "config.json"))
        summary["champion"] = champion.candidate(
            _log_champion(ctx, name, folder), name, folder, champion.settings_for(p, task), ctx.paths.root
        )
    return summary


def _log_champion(ctx: StageContext, name: str, folder: Path) -> str | None:
    """The champion's MLflow child run with its model (the allow-listed safetensors agent loader); its run id."""
    meta = read_json(folder / "config.json")
    return ctx.log_model(
        f"champion-{name}",
        {"method": meta["method"], "seed": meta["seed"]},
        folder,
        loader=champion.LOADER,
        inputs=Tensor("observation", "float32", (-1, int(meta["obs_dim"]))),
        outputs=Tensor("action", "float32", (-1, int(meta["act_dim"]))),
    )
