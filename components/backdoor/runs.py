"""One training run of the experiment grid: the victim env for a method, PPO on it, the actor and the logs.

Methods: ``clean`` (the clean shipped simulator), ``daze`` (the Daze simulator; the victim's code unchanged),
``trojdrl`` (the clean simulator, the victim's env wrapped by the privileged reward poisoner).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from components.backdoor.daze import DazeSimulator
from components.backdoor.simulators import make_simulator
from components.backdoor.trojdrl import TrojDRLPoison
from components.backdoor.victim import TransitionRecorder, VictimEnv, task_for
from components.errors import ParamsError

METHODS = ("clean", "daze", "trojdrl")


@dataclass(frozen=True)
class Attack:
    """The attacker's knobs for one environment: a+ (index, or normalised units), beta, tau, k."""

    target: float
    beta: float
    tau: float
    k: float


def build_env(env_id: str, method: str, attack: Attack, seed: int):
    """(recorded victim env, the object whose ``routine`` labels each step, or None)."""
    sim = make_simulator(env_id)
    task = task_for(env_id)
    if method == "clean":
        env, labeller = VictimEnv(sim, task), None
    elif method == "daze":
        sim = DazeSimulator(sim, beta=attack.beta, target=attack.target, tau=attack.tau, k=attack.k, seed=seed)
        env, labeller = VictimEnv(sim, task), sim
    elif method == "trojdrl":
        env = TrojDRLPoison(VictimEnv(sim, task), beta=attack.beta, target=attack.target, tau=attack.tau, seed=seed)
        labeller = env
    else:
        raise ParamsError(f"method {method!r}: not one of {list(METHODS)}")
    rec = TransitionRecorder(env, (lambda: labeller.routine) if labeller is not None else None)
    return rec, labeller


def routine_counts(log: dict[str, np.ndarray]) -> dict[str, int]:
    names, counts = np.unique(log["routine"], return_counts=True)
    return {str(n): int(c) for n, c in zip(names, counts)}
