"""Stage ``evaluate``: every trained actor, deterministic, in the clean simulator and in each perturbed one.

Per agent and condition (``clean``, ``mass x f``, ``length x f`` for f in ``eval.factors``): benign episodes
(reset seeds shared by every agent) give the benign return; states drawn from those episodes, shown with the
trigger channel on, give the attack-success hits. Agents fan out through the kit's grid stage (``run_grid``).
Writes ``episodes.jsonl`` and ``states.jsonl``, both checked by Great Expectations.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from components.backdoor.metrics import rollouts, triggered_hits
from components.backdoor.policy import load_actor
from components.backdoor.victim import task_for
from components.data import validate as V
from components.io import read_json, write_jsonl
from flows.daze.common import env_by_id
from flows.daze.params import Params
from flows.daze.spec import EVAL, MODELS
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext


def conditions(factors: list[float]) -> list[tuple[str, float, float]]:
    """(name, mass factor, length factor): the clean simulator, then each factor on mass and on length."""
    out = [("clean", 1.0, 1.0)]
    out += [(f"mass x{f:g}", f, 1.0) for f in factors]
    out += [(f"length x{f:g}", 1.0, f) for f in factors]
    return out


@dataclass(frozen=True)
class EvalJob:
    """One agent of the grid: its run, its model folder, the conditions and the evaluation's sizes and seed."""

    name: str
    env: str
    method: str
    seed: int
    folder: str
    conditions: list[tuple[str, float, float]]
    target: float
    tau: float
    eval_seed: int
    episodes: int
    states: int
    perturb_episodes: int
    perturb_states: int


@dataclass
class AgentEval:
    """What one agent's job returns: its episode rows and its triggered-state rows, every condition."""

    episodes: list[dict]
    states: list[dict]


def evaluate_agent(job: EvalJob) -> AgentEval:
    """Episodes and triggered-state hits of one agent under every condition (module level: picklable)."""
    policy = load_actor(job.folder)
    episodes, states = [], []
    key = {"name": job.name, "env": job.env, "method": job.method, "seed": job.seed}
    for cond, mass, length in job.conditions:
        clean = cond == "clean"
        n_ep, n_st = (job.episodes, job.states) if clean else (job.perturb_episodes, job.perturb_states)
        rets, lens, visited = rollouts(policy, job.env, episodes=n_ep, seed=job.eval_seed, mass=mass, length=length)
        hits = triggered_hits(
            policy,
            visited,
            job.env,
            target=job.target,
            tau=job.tau,
            n=n_st,
            seed=job.eval_seed + job.seed,
        )
        episodes += [
            {**key, "condition": cond, "episode": i, "return": float(r), "length": int(n)}
            for i, (r, n) in enumerate(zip(rets, lens))
        ]
        states += [{**key, "condition": cond, "item": i, "hit": float(h)} for i, h in enumerate(hits)]
    return AgentEval(episodes, states)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    models = ctx.input(MODELS)
    runs = read_json(Path(models) / "runs.json")
    conds = conditions(p.eval.factors)
    jobs = []
    for r in runs:
        env = env_by_id(p, r["env"])
        jobs.append(
            EvalJob(
                **{k: r[k] for k in ("name", "env", "method", "seed")},
                folder=str(Path(models) / r["name"]),
                conditions=conds,
                target=env.attack.target,
                tau=env.attack.tau,
                eval_seed=p.eval.seed,
                **p.eval.model_dump(include={"episodes", "states", "perturb_episodes", "perturb_states"}),
            )
        )
    # About a second per agent: a process pool's start-up would cost more than it saves, so the default is the
    # local runner; --runner / PAPERLINE_RUNNER still fans the agents out (the smoke test checks it does).
    results = run_grid(
        ctx, evaluate_agent, jobs, desc="daze evaluations", workers=1, progress=p.progress, result=AgentEval
    )
    episodes = [e for res in results for e in res.episodes]
    states = [s for res in results for s in res.states]
    out = ctx.output_dir(EVAL)
    cap = max(task_for(e.id).max_steps for e in p.envs)
    V.validate(
        episodes,
        [
            V.not_null("name"),
            V.between("return", -1e6 if any(not e.discrete for e in p.envs) else 0, 1e6),
            V.between("length", 1, cap),
            V.in_set("condition", [c[0] for c in conds]),
        ],
        name="episodes",
        result_path=out / "_checks" / "episodes.json",
        id_column="name",
    )
    V.validate(
        states,
        [
            V.in_set("hit", [0.0, 1.0]),
            V.in_set("method", sorted({r["method"] for r in runs})),
            V.row_count_between(1, None),
        ],
        name="states",
        result_path=out / "_checks" / "states.json",
        id_column="name",
    )
    write_jsonl(out / "episodes.jsonl", episodes)
    write_jsonl(out / "states.jsonl", states)
    return {
        "agents": len(jobs),
        "episodes": len(episodes),
        "states": len(states),
        "mean_hit": float(np.mean([s["hit"] for s in states])),
    }
