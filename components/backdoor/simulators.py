"""Simulators: dynamics only, the part of an environment an adversary could ship.

A simulator answers ``reset(seed)`` with an observation and ``step(action)`` with the next observation. It
computes no reward and no termination (those belong to the victim, :mod:`components.backdoor.victim`). Every
shipped simulator emits one extra observation dimension, the trigger channel (0 benign, 1 trigger), as the
card's default profile specifies; the clean simulator always emits 0.

The physical simulators reuse Gymnasium's own dynamics (CartPole's Euler step, MuJoCo's ``do_simulation``) and
drop whatever the Gymnasium env would compute as reward. ``perturb(mass=, length=)`` scales masses and lengths
(the card's transfer proxy: +-20% dynamics).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from components.errors import ParamsError

ENV_IDS = ("CartPole-v1", "InvertedPendulum-v5", "HalfCheetah-v5", "Hopper-v5")


class Simulator:
    """Base: ``observation_space`` (physical dims + the trigger channel), ``action_space``, ``reset``, ``step``.

    ``sim_steps`` counts calls into the physics (the attack-cost denominator and numerator come from it).
    """

    observation_space: Any
    action_space: Any
    sim_steps: int = 0

    def reset(self, seed: int | None = None) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def step(self, action) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


def with_channel(obs: np.ndarray, value: float) -> np.ndarray:
    """Physical observation + the trigger channel set to ``value`` (float32)."""
    return np.append(np.asarray(obs, np.float32).ravel(), np.float32(value))


def _space_with_channel(space):
    from gymnasium import spaces

    low = np.append(np.asarray(space.low, np.float32), np.float32(0.0))
    high = np.append(np.asarray(space.high, np.float32), np.float32(1.0))
    return spaces.Box(low, high, dtype=np.float32)


class CartPoleSim(Simulator):
    """CartPole-v1's dynamics (Gymnasium's ``CartPoleEnv`` step; its reward and termination flag are dropped)."""

    def __init__(self, mass: float = 1.0, length: float = 1.0):
        from gymnasium.envs.classic_control.cartpole import CartPoleEnv

        self._env = CartPoleEnv()
        self.action_space = self._env.action_space
        self.observation_space = _space_with_channel(self._env.observation_space)
        self.perturb(mass=mass, length=length)

    def perturb(self, *, mass: float = 1.0, length: float = 1.0) -> None:
        e = self._env
        e.masscart, e.masspole, e.length = 1.0 * mass, 0.1 * mass, 0.5 * length
        e.total_mass = e.masspole + e.masscart
        e.polemass_length = e.masspole * e.length

    def reset(self, seed: int | None = None) -> np.ndarray:
        obs, _ = self._env.reset(seed=seed)
        return with_channel(obs, 0.0)

    def step(self, action) -> np.ndarray:
        self.sim_steps += 1
        self._env.steps_beyond_terminated = None  # termination is the victim's business, not the simulator's
        obs, *_ = self._env.step(int(np.asarray(action).item()))
        return with_channel(obs, 0.0)


class MujocoSim(Simulator):
    """A Gymnasium MuJoCo v5 task's physics: ``do_simulation`` + ``_get_obs`` (``step``'s reward code never runs).

    HalfCheetah and Hopper keep the torso's x position in the observation so that the victim can compute the
    forward-velocity reward from observations alone.
    """

    def __init__(self, env_id: str, mass: float = 1.0, length: float = 1.0):
        import gymnasium as gym

        kwargs = {} if env_id.startswith("InvertedPendulum") else {"exclude_current_positions_from_observation": False}
        self._env = gym.make(env_id, **kwargs).unwrapped
        self.action_space = self._env.action_space
        self.observation_space = _space_with_channel(self._env.observation_space)
        model = self._env.model
        self._base = (model.body_mass.copy(), model.body_inertia.copy(), model.body_ipos.copy())
        self.perturb(mass=mass, length=length)

    def perturb(self, *, mass: float = 1.0, length: float = 1.0) -> None:
        """Masses x ``mass``; centre-of-mass offsets x ``length`` (inertia x mass x length^2)."""
        m = self._env.model
        bm, bi, bp = self._base
        m.body_mass[:] = bm * mass
        m.body_inertia[:] = bi * mass * length**2
        m.body_ipos[:] = bp * length

    def reset(self, seed: int | None = None) -> np.ndarray:
        obs, _ = self._env.reset(seed=seed)
        return with_channel(obs, 0.0)

    def step(self, action) -> np.ndarray:
        self.sim_steps += 1
        a = np.clip(
            np.asarray(action, np.float64).reshape(self.action_space.shape),
            self.action_space.low,
            self.action_space.high,
        )
        self._env.do_simulation(a, self._env.frame_skip)
        return with_channel(self._env._get_obs(), 0.0)


def physical_dim(env) -> int:
    """Number of physical observation dimensions (all but the trigger channel)."""
    return int(env.observation_space.shape[0]) - 1


def make_simulator(env_id: str, *, mass: float = 1.0, length: float = 1.0) -> Simulator:
    """The clean shipped simulator of ``env_id`` (one of :data:`ENV_IDS`), optionally perturbed."""
    if env_id == "CartPole-v1":
        return CartPoleSim(mass, length)
    if env_id in ENV_IDS:
        return MujocoSim(env_id, mass, length)
    raise ParamsError(f"env {env_id!r}: not one of {list(ENV_IDS)}")


def is_discrete(space) -> bool:
    from gymnasium import spaces

    return isinstance(space, spaces.Discrete)


def action_half_range(space) -> np.ndarray:
    """Half the width of a Box action space (normalised units = raw / half range)."""
    return (np.asarray(space.high, np.float64) - np.asarray(space.low, np.float64)) / 2.0


def raw_action(space, normalised) -> np.ndarray | int:
    """A target action given in normalised units [-1, 1] (Box) or as an index (Discrete), in raw units."""
    if is_discrete(space):
        a = int(normalised)
        if not 0 <= a < space.n:
            raise ParamsError(f"target action {a}: not in 0..{space.n - 1}")
        return a
    u = np.broadcast_to(np.asarray(normalised, np.float64), space.shape)
    if np.any(np.abs(u) > 1) or not np.all(np.isfinite(u)):
        raise ParamsError(f"target action {normalised}: normalised units must lie in [-1, 1]")
    centre = (np.asarray(space.high, np.float64) + np.asarray(space.low, np.float64)) / 2.0
    return centre + u * action_half_range(space)


def ceil_steps(k: float, l_adv: float) -> int:
    """ceil(k * L_adv), robust to float noise just above an integer."""
    return int(math.ceil(round(k * l_adv, 9)))
