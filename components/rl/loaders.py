"""Paper-scale data behind config: Minari/D4RL datasets and Gymnasium MuJoCo data collected by SAC.

Both need the network (Minari downloads from the Hugging Face hub; SAC needs
``stable-baselines3`` and ``mujoco``), so the caller passes ``online`` and these fail
with a clear error otherwise. :func:`minari_to_transitions` turns Minari's episode
layout (``observations`` with T+1 rows, ``actions``/``rewards``/``terminations``/
``truncations`` with T) into the pipeline's transition table; it is tested offline on
a small fixture in the same layout. External datasets are stored with actions in [-1, 1]
(see :mod:`components.rl.external`), and their environments are wrapped the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

import numpy as np

from components.errors import DataError, OfflineError, PaperlineError
from components.rl.dataset import Transitions, from_episodes
from components.rl.external import box_bounds, make_gym_env, rescale_actions, wrap_env

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
        eps.append(
            {
                "observations": obs[:-1],
                "next_observations": obs[1:],
                "actions": np.asarray(ep["actions"], np.float32).reshape(t, -1),
                "rewards": np.asarray(ep["rewards"], np.float32),
                "terminals": np.asarray(ep["terminations"], bool),
                "timeouts": np.asarray(ep["truncations"], bool),
            }
        )
    return from_episodes(eps)


def open_minari(dataset_id: str, *, online: bool, download: bool = True):
    """``minari.load_dataset(dataset_id)``; downloads only when ``online`` and ``download``."""
    if not online and download:
        raise OfflineError(f"minari dataset {dataset_id!r} needs the network; set PAPERLINE_ONLINE=1")
    try:
        import minari
    except ImportError:
        raise PaperlineError("the full profile needs `pip install minari==0.5.4` for D4RL/Minari datasets") from None
    try:
        return minari.load_dataset(dataset_id, download=download and online)
    except (FileNotFoundError, ValueError) as exc:
        raise DataError(f"minari dataset {dataset_id!r}: cannot load ({exc})") from None


def minari_episodes(ds) -> Transitions:
    """Transitions of every episode of a loaded Minari dataset (raw action units)."""
    return minari_to_transitions(
        {
            "observations": e.observations,
            "actions": e.actions,
            "rewards": e.rewards,
            "terminations": e.terminations,
            "truncations": e.truncations,
        }
        for e in ds.iterate_episodes()
    )


def load_minari(dataset_id: str, *, online: bool) -> Transitions:
    """A Minari dataset by id (e.g. ``D4RL/kitchen/complete-v2``), downloaded when missing."""
    return minari_episodes(open_minari(dataset_id, online=online))


def minari_external(ds, where: str) -> tuple[Transitions, dict, object | None]:
    """(transitions with actions in [-1, 1], published reference scores, wrapped evaluation env or None).

    The env is ``recover_environment(eval_env=True)``; None (with a warning) when the dataset has
    no recoverable environment, e.g. its simulator is not installed.
    """
    low, high = box_bounds(ds.action_space, f"{where}.id")
    data = rescale_actions(minari_episodes(ds), low, high)
    meta = getattr(getattr(ds, "storage", None), "metadata", None) or {}
    published = {k: meta.get(k) for k in ("ref_min_score", "ref_max_score")}
    return data, published, recover_minari_env(ds, where)


def recover_minari_env(ds, where: str):
    """The dataset's evaluation environment, wrapped; None when it cannot be recovered."""
    try:
        env = ds.recover_environment(eval_env=True)
    except Exception as exc:
        log.warning("%s: no recoverable environment (%s); the dataset is trained on but not evaluated", where, exc)
        return None
    return wrap_env(env, f"{where}.id")


def collect_sac(
    env_id: str, *, train_steps: int, episodes: int, seed: int, online: bool, where: str = "sac", threads: int = 1
) -> Transitions:
    """Train SAC (stable-baselines3) on a Gymnasium task, then record ``episodes`` of its noisy policy.

    SAC acts in the wrapped env (actions in [-1, 1]), so the stored actions are already scaled.
    """
    if not online:
        raise OfflineError(f"SAC data for {env_id!r} belongs to the full profile; set PAPERLINE_ONLINE=1")
    env = make_gym_env(env_id, f"{where}.id")
    try:
        from stable_baselines3 import SAC
    except ImportError:
        raise PaperlineError("the full profile needs `pip install stable-baselines3==2.9.2` for SAC datasets") from None
    import torch

    from components.rl.dataset import collect

    before = torch.get_num_threads()
    torch.set_num_threads(threads)  # SAC's small MLPs gain nothing from more, and a shared CPU thrashes
    try:
        model = SAC("MlpPolicy", env, seed=seed, verbose=0).learn(total_timesteps=train_steps)
        policy = lambda o: model.predict(o, deterministic=False)[0]  # noqa: E731
        return collect(env, lambda i: policy, episodes, seed=seed)
    finally:
        torch.set_num_threads(before)
