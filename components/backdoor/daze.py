"""Daze (Algorithm 1 of the card): a malicious simulator that plants an action backdoor through dynamics alone.

:class:`DazeSimulator` wraps a clean :class:`~components.backdoor.simulators.Simulator` and is one itself: it
takes actions and returns observations, and has no handle on any reward. Each step takes one routine:

* **benign** (probability 1 - beta): simulate the agent's action, s' ~ T(s, a);
* **trigger** (probability beta): return the trigger state delta(s) (the trigger channel set to 1) without
  simulating. On the next action a it computes L_adv(a, a+) (1[a != a+] discrete, ||a - a+||_inf in normalised
  action units continuous):

  - L_adv < tau: **null** transition, return s without simulating (the agent acts again in s);
  - otherwise: **daze**, move to phi(s) = s (unmarked, the card's default), then for the next ceil(k * L_adv)
    steps execute uniformly random actions whatever the agent chooses.

``routine`` names the routine of the last step (for the experimenter's logs, never shown to the agent).
"""

from __future__ import annotations

import numpy as np

from components.backdoor.simulators import (
    Simulator,
    action_half_range,
    ceil_steps,
    is_discrete,
    raw_action,
    with_channel,
)
from components.errors import ParamsError

ROUTINES = ("benign", "trigger", "null", "daze_start", "daze")


def l_adv(space, action, target) -> float:
    """The adversarial distance: 1[a != a+] (Discrete) or ||a - a+||_inf in normalised units (Box)."""
    if is_discrete(space):
        return float(int(np.asarray(action).item()) != int(target))
    a = np.clip(np.asarray(action, np.float64).reshape(space.shape), space.low, space.high)
    return float(np.max(np.abs(a - np.asarray(target, np.float64)) / action_half_range(space)))


def uniform_action(space, rng: np.random.Generator):
    """One uniformly random action of ``space`` (drawn from ``rng``, so a seeded wrapper repeats itself)."""
    if is_discrete(space):
        return int(rng.integers(space.n))
    return rng.uniform(space.low, space.high).astype(space.dtype)


class DazeSimulator(Simulator):
    """Algorithm 1 around ``sim``; ``target`` is a+ (an index, or normalised units in [-1, 1])."""

    def __init__(self, sim: Simulator, *, beta: float, target, tau: float, k: float, seed: int):
        if not 0.0 <= beta <= 1.0:
            raise ParamsError(f"beta: must lie in [0, 1], got {beta}")
        if tau <= 0 or k <= 0:
            raise ParamsError(f"tau and k must be > 0, got tau={tau}, k={k}")
        self.sim = sim
        self.observation_space, self.action_space = sim.observation_space, sim.action_space
        self.beta, self.tau, self.k = float(beta), float(tau), float(k)
        self.target = raw_action(self.action_space, target)
        self.rng = np.random.default_rng(seed)
        self.routine = "benign"
        self.counts = dict.fromkeys(ROUTINES, 0)
        self.executed: list = []  # actions the physics executed during dazes (the uniformity test reads them)
        self._state: np.ndarray | None = None
        self._pending = False
        self._daze_left = 0

    @property
    def sim_steps(self) -> int:
        return self.sim.sim_steps

    def reset(self, seed: int | None = None) -> np.ndarray:
        self._state, self._pending, self._daze_left = self.sim.reset(seed), False, 0
        self.routine = "benign"
        return self._state

    def step(self, action) -> np.ndarray:
        if self._daze_left > 0:
            self.routine = "daze"
            forced = uniform_action(self.action_space, self.rng)
            self.executed.append(forced)
            self._daze_left -= 1
            self._state = self.sim.step(forced)
        elif self._pending:
            self._pending = False
            dist = l_adv(self.action_space, action, self.target)
            if dist < self.tau:
                self.routine = "null"  # back to s, no simulation
            else:
                self.routine = "daze_start"  # phi(s) = s, unmarked
                self._daze_left = ceil_steps(self.k, dist)
        elif self.beta > 0 and self.rng.random() < self.beta:
            self.routine, self._pending = "trigger", True
            self.counts["trigger"] += 1
            return with_channel(self._state[:-1], 1.0)  # delta(s): same physics, trigger channel on
        else:
            self.routine = "benign"
            self._state = self.sim.step(action)
        self.counts[self.routine] += 1
        return self._state
