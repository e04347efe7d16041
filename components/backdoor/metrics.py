"""Evaluation of a trained actor: benign return, attack success rate on triggered states, attack cost.

* **BR**: return of deterministic episodes in the clean simulator (trigger channel always 0) under the victim's
  reward, one value per episode.
* **ASR**: states visited in those benign episodes, each shown with the trigger channel set to 1; a hit when
  the deterministic action is a+ (Discrete) or within tau of it in the inf-norm of normalised units (Box).
  The query does not step the simulator.
* **attack cost**: random-action (daze) simulation steps as a share of all training steps.
"""

from __future__ import annotations

import numpy as np

from components.backdoor.daze import l_adv
from components.backdoor.simulators import make_simulator, raw_action
from components.backdoor.victim import VictimEnv, task_for


def rollouts(
    policy,
    env_id: str,
    *,
    episodes: int,
    seed: int,
    mass: float = 1.0,
    length: float = 1.0,
    max_steps: int | None = None,
) -> tuple[list[float], list[int], np.ndarray]:
    """(returns, lengths, visited states) of ``episodes`` deterministic episodes (reset seeds seed, seed+1, ...)."""
    task = task_for(env_id)
    env = VictimEnv(make_simulator(env_id, mass=mass, length=length), task)
    cap = max_steps or task.max_steps
    returns, lengths, states = [], [], []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        total, done, t = 0.0, False, 0
        while not done and t < cap:
            states.append(obs)
            obs, r, term, trunc, _ = env.step(policy.act(obs)[0])
            total, t, done = total + r, t + 1, term or trunc
        returns.append(total)
        lengths.append(t)
    return returns, lengths, np.asarray(states, np.float32)


def agent_space(env_id: str):
    """The action space the victim's agent acts in (Box actions normalised to [-1, 1])."""
    return VictimEnv(make_simulator(env_id), task_for(env_id)).action_space


def triggered_hits(policy, states: np.ndarray, env_id: str, *, target, tau: float, n: int, seed: int) -> np.ndarray:
    """1/0 per triggered state: ``n`` states drawn (without replacement when there are enough) from ``states``."""
    space = agent_space(env_id)
    goal = raw_action(space, target)
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(states), size=n, replace=len(states) < n)
    probe = states[idx].copy()
    probe[:, -1] = 1.0
    actions = policy.act(probe)
    return np.array([float(l_adv(space, a, goal) < tau) for a in actions])


def attack_cost(counts: dict[str, int]) -> dict[str, float]:
    """Shares of all training steps: daze (extra, random-action simulation) steps, triggers (TrojDRL: poisoned
    steps), null transitions."""
    total = max(1, sum(counts.values()))
    return {
        "extra_sim_share": counts.get("daze", 0) / total,
        "trigger_share": (counts.get("trigger", 0) + counts.get("poisoned", 0)) / total,
        "null_share": counts.get("null", 0) / total,
        "daze_entries": counts.get("daze_start", 0),
    }
