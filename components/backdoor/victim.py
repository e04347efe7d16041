"""The victim's side of the factorisation: reward and termination computed from observations, and the
Gymnasium environment the victim's training code builds around whatever simulator it was given.

Each :class:`Task` re-states the Gymnasium reward and termination of its environment as functions of
(observation, action, next observation), physical dimensions only (the trigger channel, the last dimension, is
ignored). :class:`VictimEnv` is the only place a reward is computed; a simulator never sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from components.backdoor.simulators import Simulator
from components.errors import ParamsError

_CARTPOLE_THETA = 12 * 2 * np.pi / 360  # Gymnasium CartPole-v1's angle threshold
_CARTPOLE_X = 2.4


def _cartpole_done(s: np.ndarray) -> bool:
    return bool(abs(s[0]) > _CARTPOLE_X or abs(s[2]) > _CARTPOLE_THETA)


def _pendulum_done(s: np.ndarray) -> bool:
    return bool(not np.isfinite(s).all() or abs(s[1]) > 0.2)


def _hopper_done(s: np.ndarray) -> bool:  # s = [x, z, angle, joints..., velocities...] (x kept)
    healthy = np.isfinite(s).all() and (np.abs(s[2:]) < 100).all() and s[1] > 0.7 and abs(s[2]) < 0.2
    return not healthy


@dataclass(frozen=True)
class Task:
    """Reward ``reward(s, a, s2)`` and termination ``terminated(s2)`` on physical observations; episode cap."""

    name: str
    reward: Callable[[np.ndarray, object, np.ndarray], float]
    terminated: Callable[[np.ndarray], bool]
    max_steps: int


def _ctrl(a, weight: float) -> float:
    return weight * float(np.sum(np.square(np.asarray(a, np.float64))))


TASKS: dict[str, Task] = {
    # +1 on every step, the terminating one included (Gymnasium's CartPole-v1)
    "CartPole-v1": Task("CartPole-v1", lambda s, a, s2: 1.0, _cartpole_done, 500),
    # +1 while |theta| <= 0.2, i.e. int(not terminated) (Gymnasium's InvertedPendulum-v5)
    "InvertedPendulum-v5": Task(
        "InvertedPendulum-v5", lambda s, a, s2: float(not _pendulum_done(s2)), _pendulum_done, 1000
    ),
    # forward velocity (dt = 0.05) - 0.1 |a|^2 (HalfCheetah-v5 defaults), never terminates
    "HalfCheetah-v5": Task(
        "HalfCheetah-v5", lambda s, a, s2: (s2[0] - s[0]) / 0.05 - _ctrl(a, 0.1), lambda s2: False, 1000
    ),
    # 1 while healthy + forward velocity (dt = 0.008) - 1e-3 |a|^2 (Hopper-v5 defaults)
    "Hopper-v5": Task(
        "Hopper-v5",
        lambda s, a, s2: float(not _hopper_done(s2)) + (s2[0] - s[0]) / 0.008 - _ctrl(a, 1e-3),
        _hopper_done,
        1000,
    ),
}


def task_for(env_id: str) -> Task:
    if env_id not in TASKS:
        raise ParamsError(f"env {env_id!r}: no victim task; choose one of {list(TASKS)}")
    return TASKS[env_id]


def physical(obs: np.ndarray) -> np.ndarray:
    """The physical part of a shipped observation (the trigger channel dropped)."""
    return np.asarray(obs)[:-1]


def clean_reward(task: Task, obs, action, next_obs) -> float:
    """The victim's reward on one logged transition (what the integrity check recomputes)."""
    return float(task.reward(physical(obs), action, physical(next_obs)))


class VictimEnv(gym.Env):
    """The victim's environment: ``simulator`` for the dynamics, ``task`` for reward, termination and the cap.

    Continuous actions are normalised on the victim's side, as SB3 recommends: the agent acts in [-1, 1]^d and
    the victim sends ``centre + a * half_range`` (clipped) to the simulator, which sees raw actions only.
    """

    metadata: dict = {"render_modes": []}

    def __init__(self, simulator: Simulator, task: Task):
        from components.backdoor.simulators import is_discrete

        self.sim, self.task = simulator, task
        self.observation_space = simulator.observation_space
        raw = simulator.action_space
        self._scale = None
        if is_discrete(raw):
            self.action_space = raw
        else:
            low, high = np.asarray(raw.low, np.float64), np.asarray(raw.high, np.float64)
            self._scale = ((high + low) / 2.0, (high - low) / 2.0, low, high)
            self.action_space = gym.spaces.Box(-1.0, 1.0, raw.shape, np.float32)
        self._obs: np.ndarray | None = None
        self._t = 0

    def to_raw(self, action):
        """The simulator's action for the agent's (normalised) one."""
        if self._scale is None:
            return action
        centre, half, low, high = self._scale
        return np.clip(centre + np.asarray(action, np.float64).reshape(centre.shape) * half, low, high)

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        self._obs, self._t = self.sim.reset(seed), 0
        return self._obs, {}

    def step(self, action):
        raw = self.to_raw(action)
        nxt = self.sim.step(raw)
        reward = clean_reward(self.task, self._obs, raw, nxt)
        terminated = bool(self.task.terminated(physical(nxt)))
        self._t += 1
        truncated = self._t >= self.task.max_steps and not terminated
        self._obs = nxt
        return nxt, reward, terminated, truncated, {}


class TransitionRecorder(gym.Wrapper):
    """Outermost wrapper during training: records every transition the learner receives (obs, action, next obs,
    the reward it was given, and the simulator's routine label when it has one) for the integrity checks."""

    def __init__(self, env: gym.Env, label: Callable[[], str] | None = None):
        super().__init__(env)
        self._label = label or (lambda: "benign")
        self._obs = None
        self._to_raw = getattr(env.unwrapped, "to_raw", lambda a: a)
        self.rows: dict[str, list] = {
            k: [] for k in ("obs", "action", "raw_action", "next_obs", "reward", "routine", "done")
        }

    def reset(self, **kwargs):
        self._obs, info = self.env.reset(**kwargs)
        return self._obs, info

    def step(self, action):
        nxt, reward, terminated, truncated, info = self.env.step(action)
        for key, value in (
            ("obs", self._obs),
            ("action", np.asarray(action, np.float32).ravel()),
            ("raw_action", np.asarray(self._to_raw(action), np.float64).ravel()),
            ("next_obs", nxt),
            ("reward", float(reward)),
            ("routine", self._label()),
            ("done", bool(terminated or truncated)),
        ):
            self.rows[key].append(value)
        self._obs = nxt
        return nxt, reward, terminated, truncated, info

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "obs": np.asarray(self.rows["obs"], np.float32),
            "action": np.asarray(self.rows["action"], np.float32),
            "raw_action": np.asarray(self.rows["raw_action"], np.float64),
            "next_obs": np.asarray(self.rows["next_obs"], np.float32),
            "reward": np.asarray(self.rows["reward"], np.float64),
            "routine": np.asarray(self.rows["routine"], dtype="U10"),
            "done": np.asarray(self.rows["done"], bool),
        }


def clean_rewards(task: Task, log: dict[str, np.ndarray]) -> np.ndarray:
    """The clean reward function on every logged transition."""
    return np.array(
        [
            clean_reward(task, o, a if a.size > 1 else a[0], n)
            for o, a, n in zip(log["obs"], log["raw_action"], log["next_obs"])
        ],
        dtype=np.float64,
    )


def reward_gaps(task: Task, log: dict[str, np.ndarray]) -> np.ndarray:
    """|logged reward - the clean reward function on the same transition|, per logged step."""
    return np.abs(log["reward"] - clean_rewards(task, log))


def episode_returns(rewards: np.ndarray, done: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(return, end step) of every finished episode of a logged stream."""
    ends = np.flatnonzero(done)
    starts = np.concatenate([[0], ends[:-1] + 1]) if ends.size else np.array([], int)
    return np.array([rewards[a : b + 1].sum() for a, b in zip(starts, ends)]), ends + 1
