"""Stage ``train``: one PPO agent per (env, method, seed), a job of the kit's grid stage (``run_grid``: the task
runner fans them out; a killed stage resumes from the finished runs). Each run writes into its own job folder, which
the stage copies to ``models/<run>/``.

Writes ``data/daze/models/<run>/{policy.safetensors,config.json,curve.json,transitions.npz}`` and ``runs.json``.
``transitions.npz`` is the learner's own stream (the reward it was given, the clean reward function on the same
transition, the simulator's routine, episode ends); Great Expectations checks it before anything reads it:
clean and Daze runs must carry exactly the clean rewards (the threat model: Daze never touches a reward), and
every poisoned run's realised trigger rate must sit near beta. Each agent is an MLflow child run with its
learning curve and its actor logged with a signature.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from components.backdoor.policy import PPOConfig, save_actor, train_ppo
from components.backdoor.runs import Attack, build_env, routine_counts
from components.backdoor.victim import clean_rewards, episode_returns, task_for
from components.data import validate as V
from components.inputs import load_npz
from components.io import atomic_path, read_json, write_json
from flows.daze import champion
from flows.daze.common import attack_of, env_by_id, grid, run_name
from flows.daze.params import Params
from flows.daze.spec import MODELS
from flows.runtime.grid import publish, run_grid
from flows.runtime.stages import StageContext
from flows.runtime.tracking import Tensor, signature

log = logging.getLogger("paperline")
ROUTINE_CODES = {"benign": 0, "trigger": 1, "null": 2, "daze_start": 3, "daze": 4, "poisoned": 5}


@dataclass(frozen=True)
class TrainJob:
    """One PPO run of the grid: (env, method, seed), the attack's knobs (``Attack`` fields) and the PPO settings."""

    env: str
    method: str
    seed: int
    name: str
    attack: dict
    steps: int
    ppo: dict
    threads: int
    log_every: int


@dataclass
class TrainedRun:
    """What one run returns: its ``runs.json`` row, and ``folder``, its job folder (the stage publishes it)."""

    name: str
    env: str
    method: str
    seed: int
    steps: int
    counts: dict
    episodes: int
    final_return: float
    seconds: float
    cpu_s: float
    steps_per_s: float
    folder: str

    def row(self) -> dict:
        """The ``runs.json`` row: every field but ``folder``."""
        return {k: v for k, v in dataclasses.asdict(self).items() if k != "folder"}


def curve(returns: np.ndarray, ends: np.ndarray, steps: int, every: int) -> list[dict]:
    """Mean clean episode return of the episodes that ended in each window of ``every`` steps."""
    out = []
    for start in range(0, steps, every):
        inside = (ends > start) & (ends <= start + every)
        if inside.any():
            out.append(
                {"step": int(start + every), "return": float(returns[inside].mean()), "episodes": int(inside.sum())}
            )
    return out


def train_one(job: TrainJob, job_dir: Path) -> TrainedRun:
    """Train, save the actor and the transition log in ``job_dir``; module level so process runners can pickle it.
    The result's ``folder`` is ``job_dir`` (left out of ``runs.json``)."""
    env, _ = build_env(job.env, job.method, Attack(**job.attack), seed=job.seed + 7919)
    cfg = PPOConfig(**job.ppo)
    t0, c0 = time.perf_counter(), time.process_time()
    model = train_ppo(env, cfg, steps=job.steps, seed=job.seed, threads=job.threads)
    seconds = time.perf_counter() - t0
    rec = env.arrays()
    clean = clean_rewards(task_for(job.env), rec)
    folder = job_dir
    save_actor(model, folder, {"env": job.env, "method": job.method, "seed": job.seed, "steps": job.steps})
    returns, ends = episode_returns(clean, rec["done"])
    write_json(folder / "curve.json", curve(returns, ends, len(clean), job.log_every))
    with atomic_path(folder / "transitions.npz") as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(
            fh,
            reward=rec["reward"],
            clean_reward=clean,
            trigger=rec["obs"][:, -1],
            routine=np.array([ROUTINE_CODES[r] for r in rec["routine"]], np.int8),
            done=rec["done"],
        )
    counts = routine_counts(rec)
    return TrainedRun(
        name=job.name,
        env=job.env,
        method=job.method,
        seed=job.seed,
        steps=int(len(clean)),
        counts=counts,
        episodes=int(len(returns)),
        final_return=float(returns[-10:].mean()) if len(returns) else 0.0,
        seconds=round(seconds, 2),
        cpu_s=round(time.process_time() - c0, 2),
        steps_per_s=round(len(clean) / max(seconds, 1e-9), 1),
        folder=str(job_dir),
    )


def check_transitions(out: Path, rows: list[dict], p: Params) -> None:
    """GX: per-step reward integrity of every unprivileged run; realised trigger rates of the poisoned runs."""
    steps, summary = [], []
    for r in rows:
        with load_npz(out / r["name"] / "transitions.npz") as z:
            gap = np.abs(z["reward"] - z["clean_reward"])
            trig = float(
                (z["routine"] == ROUTINE_CODES["trigger"]).mean()
                if r["method"] == "daze"
                else (z["trigger"] > 0).mean()
            )
        if r["method"] != "trojdrl":
            steps.append({"run": np.full(gap.size, r["name"]), "reward_gap": gap})
        beta = env_by_id(p, r["env"]).attack.beta
        summary.append(
            {
                "id": r["name"],
                "method": r["method"],
                "trigger_rate": trig,
                "trigger_ratio": trig / beta if r["method"] != "clean" and beta > 0 else 1.0,
                "clean_trigger": trig if r["method"] == "clean" else 0.0,
                "max_reward_gap": float(gap.max()),
                "steps": r["steps"],
            }
        )
    import pandas as pd

    frame = pd.DataFrame(
        {
            "run": np.concatenate([s["run"] for s in steps]),
            "reward_gap": np.concatenate([s["reward_gap"] for s in steps]),
        }
    )
    V.validate(
        frame,
        [V.not_null("run"), V.between("reward_gap", 0.0, 1e-9)],
        name="transitions",
        result_path=out / "_checks" / "transitions.json",
        id_column="run",
    )
    V.validate(
        summary,
        [
            V.unique("id"),
            V.between("trigger_ratio", 0.5, 1.6),
            V.between("clean_trigger", 0, 0),
            V.between("steps", 1, None),
        ],
        name="runs",
        result_path=out / "_checks" / "runs.json",
    )


def _track(ctx: StageContext, row: dict, folder: Path, job: TrainJob) -> str | None:
    """The run's MLflow child with its curve and its actor; returns the child's run id."""
    if ctx.tracker is None:
        return None

    cfg = read_json(folder / "config.json")
    discrete = cfg["action"]["kind"] == "discrete"
    sig = signature(
        Tensor("observation", "float32", (-1, int(cfg["obs_dim"]))),
        Tensor("action", "int64", (-1,)) if discrete else Tensor("action", "float32", (-1, -1)),
    )
    params = {
        "env": row["env"],
        "method": row["method"],
        "seed": row["seed"],
        "steps": job.steps,
        "attack": job.attack,
        "ppo": job.ppo,
    }
    with ctx.tracker.child(row["name"], params) as run_id:
        for point in read_json(folder / "curve.json"):
            ctx.tracker.log_metrics({"episode_return": point["return"]}, step=point["step"], run_id=run_id)
        ctx.tracker.log_metrics(
            {
                "steps_per_s": row["steps_per_s"],
                "final_return": row["final_return"],
                **{f"routine_{k}": v for k, v in row["counts"].items()},
            },
            run_id=run_id,
        )
        ctx.tracker.log_state_dict_model(run_id, folder, loader=champion.LOADER, signature=sig)
    return run_id


def jobs_for(p: Params) -> list[TrainJob]:
    return [
        TrainJob(
            **g,
            attack=dataclasses.asdict(attack_of(env_by_id(p, g["env"]))),
            steps=env_by_id(p, g["env"]).steps,
            ppo=p.train.ppo.model_dump(),
            threads=p.resources.threads,
            log_every=p.train.log_every,
        )
        for g in grid(p)
    ]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    out = ctx.output_dir(MODELS)
    jobs = jobs_for(p)
    log.info("daze: %d PPO runs on %d worker(s)", len(jobs), p.resources.workers)
    results = run_grid(
        ctx,
        train_one,
        jobs,
        desc="daze training runs",
        workers=p.resources.workers,
        files=True,
        progress=p.progress,
        result=TrainedRun,
    )
    for res in results:  # each run's files, copied from its job folder into the output
        publish(res.folder, out / res.name)
    rows = [res.row() for res in results]
    check_transitions(out, rows, p)
    run_ids = {row["name"]: _track(ctx, row, out / row["name"], job) for row, job in zip(rows, jobs)}
    write_json(out / "runs.json", rows)
    summary = {"runs": len(rows), "seconds": round(sum(r["seconds"] for r in rows), 1)}
    chosen = champion.choose(p)
    if chosen is not None:
        env, seed = chosen
        name = run_name(env.id, "daze", seed)
        summary["champion"] = champion.candidate(p, run_ids.get(name), name, out / name, env, seed)
    return summary
