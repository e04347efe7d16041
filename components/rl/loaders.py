"""Paper-scale data behind config: Minari/D4RL datasets and Gymnasium MuJoCo data collected by SAC.

Both need the network (Minari downloads from the Hugging Face hub; SAC needs
``stable-baselines3`` and ``mujoco``), so the caller passes ``online`` and these fail
with a clear error otherwise. :func:`minari_to_transitions` turns Minari's episode
layout (``observations`` with T+1 rows, ``actions``/``rewards``/``terminations``/
``truncations`` with T) into the pipeline's transition table; it is tested offline on
a small fixture in the same layout.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

import numpy as np

from components.errors import DataError, OfflineError, PaperlineError
from components.rl.dataset import Transitions, from_episodes

log = logging.getLogger(__name__)


def _flat(obs) -> np.ndarray:
    """Minari goal-conditioned observations are dicts; concatenate their arrays in key order."""
    if isinstance(obs, Mapping):
        return np.concatenate([_flat(obs[k]) for k in sorted(obs)], axis=-1)
    return np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)


def minari_to_transitions(episodes: Iterable[Mapping]) -> Transitions:
    """Transitions from Minari-style episodes (T+1 observations, T of everything else)."""
    eps = []
    for i, ep in enumerate(episodes):
        obs = _flat(ep["observations"])
        t = len(ep["rewards"])
        if obs.shape[0] != t + 1:
            raise DataError(f"episode {i}: observations has {obs.shape[0]} rows, expected rewards + 1 = {t + 1}")
        eps.append({"observations": obs[:-1], "next_observations": obs[1:],
                    "actions": np.asarray(ep["actions"], np.float32).reshape(t, -1),
                    "rewards": np.asarray(ep["rewards"], np.float32),
                    "terminals": np.asarray(ep["terminations"], bool), "timeouts": np.asarray(ep["truncations"], bool)})
    return from_episodes(eps)


def load_minari(dataset_id: str, *, online: bool) -> Transitions:
    """A Minari dataset by id (e.g. ``D4RL/kitchen/complete-v2``), downloaded when missing."""
    if not online:
        raise OfflineError(f"minari dataset {dataset_id!r} needs the network; set PAPERLINE_ONLINE=1")
    try:
        import minari
    except ImportError:
        raise PaperlineError("the full profile needs `pip install minari==0.5.4` for D4RL/Minari datasets") from None
    ds = minari.load_dataset(dataset_id, download=True)
    return minari_to_transitions({"observations": e.observations, "actions": e.actions, "rewards": e.rewards,
                                  "terminations": e.terminations, "truncations": e.truncations}
                                 for e in ds.iterate_episodes())


def collect_sac(env_id: str, *, train_steps: int, episodes: int, seed: int, online: bool) -> Transitions:
    """Train SAC (stable-baselines3) on a Gymnasium MuJoCo task, then record ``episodes`` of its noisy policy."""
    if not online:
        raise OfflineError(f"SAC data for {env_id!r} belongs to the full profile; set PAPERLINE_ONLINE=1")
    try:
        import gymnasium as gym
        from stable_baselines3 import SAC
    except ImportError:
        raise PaperlineError("the full profile needs `pip install stable-baselines3 mujoco` for SAC datasets") from None
    from components.rl.dataset import collect

    env = gym.make(env_id)
    model = SAC("MlpPolicy", env, seed=seed, verbose=0).learn(total_timesteps=train_steps)
    policy = lambda o: model.predict(o, deterministic=False)[0]  # noqa: E731
    return collect(env, lambda i: policy, episodes, seed=seed)
