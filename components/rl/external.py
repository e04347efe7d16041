"""External (non-kitchen-lite) continuous-control datasets: environments, action scaling, score anchors.

Every learner here acts through ``tanh`` in [-1, 1], so an external environment is
wrapped to take actions in [-1, 1] (Gymnasium's ``RescaleAction``) and its dataset's
actions are mapped with the same affine map. Dict observations (goal-conditioned
Minari datasets) are flattened in sorted key order, as :mod:`components.rl.loaders`
flattens the stored episodes.

Normalised-score anchors (:func:`reference_scores`), per anchor: a value given in the
config wins; else Minari's published ``ref_min_score`` / ``ref_max_score`` (D4RL's
reference scores); else the anchor measured in this run: random = mean return of a
uniform-random policy in the environment, expert = mean episode return of the
dataset's behaviour policy (for ``sac``, the SAC policy that collected it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np

from components.errors import DataError, ParamsError
from components.rl.dataset import Transitions
from components.rl.evaluate import episode_returns

log = logging.getLogger(__name__)


def flat_obs(obs) -> np.ndarray:
    """One observation as a flat float32 vector (dicts: values concatenated in sorted key order)."""
    if isinstance(obs, Mapping):
        return np.concatenate([flat_obs(obs[k]) for k in sorted(obs)])
    return np.asarray(obs, dtype=np.float32).ravel()


def box_bounds(space, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Finite (low, high) of a continuous action space, or a ParamsError naming ``where``."""
    from gymnasium import spaces

    if not isinstance(space, spaces.Box):
        raise ParamsError(
            f"{where}: has a {type(space).__name__} action space; the offline learners here "
            "need continuous (Box) actions"
        )
    low, high = np.asarray(space.low, np.float64).ravel(), np.asarray(space.high, np.float64).ravel()
    if not (np.isfinite(low).all() and np.isfinite(high).all()) or (high <= low).any():
        raise ParamsError(f"{where}: action bounds must be finite with high > low, got {low} .. {high}")
    return low, high


def wrap_env(env, where: str):
    """``env`` taking actions in [-1, 1] and returning flat float32 observations."""
    import gymnasium as gym
    from gymnasium.wrappers import RescaleAction

    low, high = box_bounds(env.action_space, where)
    if not (np.allclose(low, -1) and np.allclose(high, 1)):
        one = np.ones(env.action_space.shape, np.float32)
        env = RescaleAction(env, -one, one)
    if isinstance(env.observation_space, gym.spaces.Dict):
        dim = int(sum(np.prod(s.shape) for s in _leaves(env.observation_space)))
        space = gym.spaces.Box(-np.inf, np.inf, (dim,), np.float32)
        env = gym.wrappers.TransformObservation(env, flat_obs, space)
    return env


def _leaves(space) -> list:
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return [leaf for k in sorted(space.spaces) for leaf in _leaves(space.spaces[k])]
    return [space]


def make_gym_env(env_id: str, where: str):
    """A wrapped Gymnasium environment by id; unknown ids and non-continuous actions name ``where``."""
    import gymnasium as gym

    try:
        env = gym.make(env_id)
    except gym.error.Error as exc:
        raise ParamsError(f"{where}: cannot make Gymnasium env {env_id!r} ({exc})") from None
    return wrap_env(env, f"{where} = {env_id!r}")


def rescale_actions(data: Transitions, low: np.ndarray, high: np.ndarray) -> Transitions:
    """The dataset with actions (and next actions) mapped from [low, high] to [-1, 1] (clipped)."""
    if data.act_dim != len(low):
        raise DataError(f"dataset.actions: width {data.act_dim} but the action space has {len(low)} dimensions")

    def f(a: np.ndarray) -> np.ndarray:
        return np.clip(2.0 * (a - low) / (high - low) - 1.0, -1.0, 1.0).astype(np.float32)

    return Transitions(**{**data.__dict__, "actions": f(data.actions), "next_actions": f(data.next_actions)})


def behaviour_return(data: Transitions) -> float:
    """Mean undiscounted episode return of the dataset."""
    return float(np.mean([data.rewards[a:b].sum() for a, b in data.episode_bounds()]))


def random_return(env, episodes: int, seed: int) -> float:
    """Mean return of a uniform-random policy over [-1, 1]^act_dim in the wrapped ``env``."""
    rng = np.random.default_rng(seed)
    dim = int(np.prod(env.action_space.shape))
    rets, _ = episode_returns(
        env, lambda o: rng.uniform(-1, 1, dim).astype(np.float32), [20_000_000 + seed + i for i in range(episodes)]
    )
    return float(np.mean(rets))


def reference_scores(where: str, *, config: Mapping, published: Mapping, measured_random, measured_expert) -> dict:
    """The (random, expert) anchors and where each came from: config, published (Minari/D4RL) or measured.

    ``measured_random`` / ``measured_expert`` are callables (measuring costs rollouts; only done when needed).
    """
    out: dict = {}
    for anchor, key, measure in (
        ("random", "ref_min_score", measured_random),
        ("expert", "ref_max_score", measured_expert),
    ):
        if config.get(key) is not None:
            out[anchor], out[f"{anchor}_from"] = float(config[key]), "config"
        elif published.get(key) is not None:
            out[anchor], out[f"{anchor}_from"] = float(published[key]), "published (Minari metadata)"
        else:
            out[anchor], out[f"{anchor}_from"] = float(measure()), "measured in this run"
    if not out["expert"] > out["random"]:
        raise DataError(
            f"{where}: expert reference {out['expert']:.2f} ({out['expert_from']}) does not exceed "
            f"random reference {out['random']:.2f} ({out['random_from']}), so the normalised score is "
            f"undefined; train the behaviour longer ({where}.train_steps) or set {where}.ref_max_score"
        )
    return out
