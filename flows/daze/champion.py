"""Daze's champion: the backdoored PPO actor of the first Daze run (first environment, first seed).

Re-evaluated as the evaluate stage measures it in the clean simulator: the benign return over fixed reset
seeds and the attack success rate on triggered states drawn from those episodes. The actor is
deterministic and every seed is fixed, so an unchanged actor in an unchanged Gymnasium/MuJoCo gives the same
numbers; a physics or PPO-stack upgrade that moves them is what the recurring evaluation is there to catch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "daze"
LOADER = "components.backdoor.policy:load_actor"  # the allow-listed loader its child run is logged with
LIBRARIES = ("gymnasium", "mujoco", "stable-baselines3")
RULES = {
    "asr": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # a rate: 2 points either way
    "benign_return": Rule(higher_is_better=True, tolerance=0.02),  # 2% of the accepted return
}


def settings_for(p, env, seed: int) -> dict[str, Any]:
    return {
        "env": env.id,
        "seed": seed,
        "target": env.attack.target,
        "tau": env.attack.tau,
        "episodes": p.eval.episodes,
        "states": p.eval.states,
        "eval_seed": p.eval.seed,
    }


def choose(p) -> tuple[Any, int] | None:
    """The (env, seed) of the first Daze run, or None when no environment trains Daze."""
    env = next((e for e in p.envs if "daze" in e.methods), None)
    return (env, p.train.seeds[0]) if env is not None else None


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    import numpy as np

    from components.backdoor.metrics import rollouts, triggered_hits

    s = settings
    rets, _, visited = rollouts(model, s["env"], episodes=int(s["episodes"]), seed=int(s["eval_seed"]))
    hits = triggered_hits(
        model,
        visited,
        s["env"],
        target=s["target"],
        tau=float(s["tau"]),
        n=int(s["states"]),
        seed=int(s["eval_seed"]) + int(s["seed"]),
    )
    return {"asr": float(np.mean(hits)), "benign_return": float(np.mean(rets))}


def candidate(p, run_id: str | None, name: str, folder: Path, env, seed: int) -> dict | None:
    """The champion record: its metrics computed on the actor loaded back from ``folder`` by its logged loader."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(p, env, seed), folder)
