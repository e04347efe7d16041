"""Scripted behaviour policies for kitchen-lite: the expert, noisy sub-controllers and the random policy.

The expert is a PD controller towards the next target that cancels the local drift;
noisy sub-controllers add Gaussian action noise, may cancel only part of the local drift
(``compensation`` < 1: systematically suboptimal, so averaging the data does not recover the
expert) and may visit targets in another order or stop early ("mixed"-style data that a learner
must stitch).
"""

from __future__ import annotations

import numpy as np

from components.rl.kitchen_lite import KitchenLiteEnv

MODES = ("ordered", "partial", "shuffled")


def pd_action(
    env: KitchenLiteEnv, target: np.ndarray, kp: float = 6.0, kd: float = 2.5, compensation: float = 1.0
) -> np.ndarray:
    """Force towards ``target`` with velocity damping and drift compensation (the scripted sub-controller);
    ``compensation`` is the share of the local drift it cancels (1: the expert's; below 1 the controller settles
    short of a target that the drift pushes it away from)."""
    r = env.region(env.pos)
    a = (kp * (target - env.pos) - kd * env.vel - compensation * env.layout.drift[r]) / env.force
    return np.clip(a, -1.0, 1.0)


def expert_action(env: KitchenLiteEnv) -> np.ndarray:
    """The noiseless expert: PD towards the next target (stay put once all are done)."""
    k = env.next_target
    target = env.layout.targets[min(k, env.n_subtasks - 1)] if k < env.n_subtasks else env.pos
    return pd_action(env, target)


class NoisyScripted:
    """One episode's behaviour: a visiting plan (ordered / partial / shuffled) plus action noise.

    ``ordered`` follows A, B, C, D; ``partial`` follows the order for a random number of
    subtasks then heads to random points; ``shuffled`` visits the targets in a random order
    (only hits that happen to be in order are rewarded).
    """

    def __init__(
        self, env: KitchenLiteEnv, mode: str, noise: float, rng: np.random.Generator, compensation: float = 1.0
    ):
        if mode not in MODES:
            raise ValueError(f"mode: expected one of {MODES}, got {mode!r}")
        self.env, self.noise, self.rng, self.compensation = env, noise, rng, compensation
        n = env.n_subtasks
        if mode == "ordered":
            plan = list(range(n))
        elif mode == "partial":
            plan = list(range(int(rng.integers(0, n))))
        else:
            plan = list(rng.permutation(n))
        self.plan = [env.layout.targets[i] for i in plan] + [rng.uniform(0.05, 0.95, 2) for _ in range(3)]
        self.i = 0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        target = self.plan[min(self.i, len(self.plan) - 1)]
        if np.linalg.norm(self.env.pos - target) <= self.env.radius * 0.9 and self.i < len(self.plan) - 1:
            self.i += 1
            target = self.plan[self.i]
        a = pd_action(self.env, target, compensation=self.compensation) + self.noise * self.rng.standard_normal(2)
        return np.clip(a, -1.0, 1.0).astype(np.float32)
