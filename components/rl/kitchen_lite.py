"""Kitchen-lite: a procedural 2-D point mass that must reach up to 4 targets in order (A, then B, C, D).

A Gymnasium environment standing in for D4RL Kitchen at laptop scale: reward +1
per completed subtask (sparse, ordered, as in Kitchen), observation = position,
velocity and subtask flags. The arena is split into 2x2 regions with their own
drift and friction, so the local dynamics (and local Q structure) differ by region.
The layout (targets, drifts, frictions) is drawn from ``layout_seed``; start
states from the ``reset`` seed, so a seeded episode is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from components.errors import ParamsError

ENV_ID = "paperline/KitchenLite-v0"
MAX_SUBTASKS = 4


@dataclass(frozen=True)
class Layout:
    """Targets (n, 2) in visiting order, per-region drift (4, 2) and friction (4,)."""

    targets: np.ndarray
    drift: np.ndarray
    friction: np.ndarray


def make_layout(layout_seed: int, n_subtasks: int, min_sep: float = 0.35, drift: float = 0.4) -> Layout:
    """Draw well-separated targets and per-region drift directions/friction from ``layout_seed``; every region's
    drift has magnitude ``drift`` (the same draws for any magnitude)."""
    if not 1 <= n_subtasks <= MAX_SUBTASKS:
        raise ParamsError(f"n_subtasks: must be in 1..{MAX_SUBTASKS}, got {n_subtasks}")
    if not 0 <= drift <= 5:
        raise ParamsError(f"drift: must be in [0, 5], got {drift}")
    rng = np.random.default_rng(layout_seed)
    pts: list[np.ndarray] = []
    while len(pts) < MAX_SUBTASKS:  # rejection sampling; always the same 4 targets for a seed
        p = rng.uniform(0.1, 0.9, size=2)
        if all(np.linalg.norm(p - q) >= min_sep for q in pts):
            pts.append(p)
    angle = rng.uniform(0, 2 * np.pi, size=4)
    drifts = drift * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    friction = rng.uniform(0.05, 0.35, size=4)
    return Layout(np.array(pts[:n_subtasks]), drifts, friction)


class KitchenLiteEnv(gym.Env):
    """Ordered multi-target point mass; actions are 2-D forces in [-1, 1]^2."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        n_subtasks: int = 4,
        layout_seed: int = 0,
        max_steps: int = 100,
        dt: float = 0.1,
        radius: float = 0.08,
        force: float = 3.0,
        drift: float = 0.4,
    ):
        if not 0 < radius < 0.5:
            raise ParamsError(f"radius: must be in (0, 0.5), got {radius}")
        self.layout = make_layout(layout_seed, n_subtasks, drift=drift)
        self.n_subtasks, self.max_steps, self.dt, self.radius, self.force = n_subtasks, max_steps, dt, radius, force
        high = np.array([1, 1, 5, 5] + [1] * n_subtasks, dtype=np.float32)
        low = np.array([0, 0, -5, -5] + [0] * n_subtasks, dtype=np.float32)
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.pos = np.zeros(2)
        self.vel = np.zeros(2)
        self.done_flags = np.zeros(n_subtasks)
        self.t = 0

    def region(self, pos: np.ndarray) -> int:
        """Index 0-3 of the 2x2 region holding ``pos``."""
        return int(pos[0] >= 0.5) + 2 * int(pos[1] >= 0.5)

    @property
    def next_target(self) -> int:
        """Index of the next subtask to complete (n_subtasks once all are done)."""
        return int(self.done_flags.sum())

    def _obs(self) -> np.ndarray:
        obs = np.concatenate([self.pos, np.clip(self.vel, -5, 5), self.done_flags]).astype(np.float32)
        return obs

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(0.05, 0.95, size=2)
        self.vel = np.zeros(2)
        self.done_flags = np.zeros(self.n_subtasks)
        self.t = 0
        return self._obs(), {"next_target": 0}

    def step(self, action):
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(2), -1.0, 1.0)
        r = self.region(self.pos)
        self.vel = (1 - self.layout.friction[r]) * self.vel + self.dt * (self.force * a + self.layout.drift[r])
        self.pos = self.pos + self.dt * self.vel
        hit = (self.pos < 0) | (self.pos > 1)
        self.pos = np.clip(self.pos, 0.0, 1.0)
        self.vel[hit] = 0.0
        self.t += 1
        reward = 0.0
        k = self.next_target
        if k < self.n_subtasks and np.linalg.norm(self.pos - self.layout.targets[k]) <= self.radius:
            self.done_flags[k] = 1.0
            reward = 1.0
        terminated = bool(self.next_target == self.n_subtasks)
        truncated = bool(self.t >= self.max_steps and not terminated)
        return self._obs(), reward, terminated, truncated, {"next_target": self.next_target}


def register() -> None:
    """Register ``paperline/KitchenLite-v0`` with Gymnasium (idempotent)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="components.rl.kitchen_lite:KitchenLiteEnv")


def make_env(
    n_subtasks: int, layout_seed: int = 0, max_steps: int = 100, *, radius: float = 0.08, drift: float = 0.4
) -> KitchenLiteEnv:
    """The unwrapped environment (no checker wrappers: rollouts are hot loops)."""
    register()
    return gym.make(
        ENV_ID,
        n_subtasks=n_subtasks,
        layout_seed=layout_seed,
        max_steps=max_steps,
        radius=radius,
        drift=drift,
        disable_env_checker=True,
    ).unwrapped
