"""Helpers shared by the daze stages: the run grid and run names."""

from __future__ import annotations

from components.backdoor.runs import Attack


def run_name(env_id: str, method: str, seed: int) -> str:
    return f"{env_id}-{method}-s{seed}"


def grid(p) -> list[dict]:
    """Every (env, method, seed) training run, in a fixed order."""
    return [
        {"env": e.id, "method": m, "seed": s, "name": run_name(e.id, m, s)}
        for e in p.envs
        for m in e.methods
        for s in p.train.seeds
    ]


def attack_of(env) -> Attack:
    a = env.attack
    return Attack(target=a.target, beta=a.beta, tau=a.tau, k=a.k)


def env_by_id(p, env_id: str):
    return next(e for e in p.envs if e.id == env_id)
