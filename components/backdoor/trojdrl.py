"""TrojDRL-style static reward poisoning: the privileged baseline (it reads and rewrites the victim's rewards).

With probability beta the observation the agent receives is replaced by its trigger version (channel set to 1);
the agent's next action is simulated normally, and its reward is overwritten by +1 if the action is the target
(L_adv < tau) and -1 otherwise (Kiourti et al.'s static poisoning, as the card states it: "+-1 for a+ on
triggered states"). It wraps the victim's environment, which is exactly the access Daze does without.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from components.backdoor.daze import l_adv
from components.backdoor.simulators import raw_action


class TrojDRLPoison(gym.Wrapper):
    """Victim-side poisoning wrapper; ``routine`` labels each step ("trigger" when a poisoned reward was given)."""

    def __init__(self, env: gym.Env, *, beta: float, target, tau: float, seed: int, reward_scale: float = 1.0):
        super().__init__(env)
        self.beta, self.tau, self.scale = float(beta), float(tau), float(reward_scale)
        self.target = raw_action(env.action_space, target)
        self.rng = np.random.default_rng(seed)
        self._triggered = False
        self.routine = "benign"

    def _maybe_trigger(self, obs: np.ndarray) -> np.ndarray:
        self._triggered = self.beta > 0 and bool(self.rng.random() < self.beta)
        if self._triggered:
            obs = obs.copy()
            obs[-1] = 1.0
        return obs

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.routine = "benign"
        return self._maybe_trigger(obs), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.routine = "benign"
        if self._triggered:
            hit = l_adv(self.action_space, action, self.target) < self.tau
            reward, self.routine = (self.scale if hit else -self.scale), "poisoned"
        return self._maybe_trigger(obs), reward, terminated, truncated, info
