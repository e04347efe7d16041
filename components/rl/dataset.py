"""Offline transition datasets in D4RL's field layout: build from behaviour policies, save, load, check.

Fields (one row per transition): ``observations``, ``actions``, ``rewards``,
``next_observations``, ``next_actions`` (the behaviour's next action, for SARSA-style
in-context TD; the last action repeated at an episode's final row), ``terminals`` (true end of task), ``timeouts``
(time-limit end) and ``episode`` (episode id). Episodes are stored contiguously.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
from tqdm import tqdm

from components.errors import DataError
from components.inputs import check_array, load_npz

log = logging.getLogger(__name__)

FIELDS = ("observations", "actions", "rewards", "next_observations", "next_actions", "terminals", "timeouts", "episode")


@dataclass
class Transitions:
    """A D4RL-style transition table (numpy arrays of equal length)."""

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_observations: np.ndarray
    next_actions: np.ndarray
    terminals: np.ndarray
    timeouts: np.ndarray
    episode: np.ndarray

    def __len__(self) -> int:
        return int(self.rewards.shape[0])

    @property
    def obs_dim(self) -> int:
        return int(self.observations.shape[1])

    @property
    def act_dim(self) -> int:
        return int(self.actions.shape[1])

    def episode_bounds(self) -> list[tuple[int, int]]:
        """(start, stop) row ranges of each episode, in order."""
        change = np.flatnonzero(np.diff(self.episode)) + 1
        starts = np.concatenate([[0], change])
        stops = np.concatenate([change, [len(self)]])
        return list(zip(starts.tolist(), stops.tolist()))

    def subset_episodes(self, episode_ids: np.ndarray) -> Transitions:
        mask = np.isin(self.episode, episode_ids)
        return Transitions(**{f: getattr(self, f)[mask] for f in FIELDS})


Policy = Callable[[np.ndarray], np.ndarray]


def rollout(env, policy: Policy, seed: int) -> dict[str, list]:
    """One episode of ``policy`` in ``env`` from ``reset(seed=seed)``; returns per-step lists."""
    obs, _ = env.reset(seed=seed)
    out: dict[str, list] = {
        k: [] for k in ("observations", "actions", "rewards", "next_observations", "terminals", "timeouts")
    }
    while True:
        a = np.asarray(policy(obs), dtype=np.float32)
        nxt, r, term, trunc, _ = env.step(a)
        for k, v in zip(out, (obs, a, r, nxt, term, trunc)):
            out[k].append(v)
        obs = nxt
        if term or trunc:
            return out


def from_episodes(episodes: list[dict[str, list]]) -> Transitions:
    """Stack per-episode lists into one table, filling ``next_actions`` and ``episode``."""
    if not episodes:
        raise DataError("dataset: no episodes to stack (empty dataset)")
    cols: dict[str, list] = {f: [] for f in FIELDS}
    for i, ep in enumerate(episodes):
        n = len(ep["rewards"])
        acts = np.asarray(ep["actions"], dtype=np.float32)
        nxt_a = np.vstack([acts[1:], acts[-1:]])
        for k in ("observations", "next_observations"):
            cols[k].append(np.asarray(ep[k], dtype=np.float32))
        cols["actions"].append(acts)
        cols["next_actions"].append(nxt_a)
        cols["rewards"].append(np.asarray(ep["rewards"], dtype=np.float32))
        cols["terminals"].append(np.asarray(ep["terminals"], dtype=bool))
        cols["timeouts"].append(np.asarray(ep["timeouts"], dtype=bool))
        cols["episode"].append(np.full(n, i, dtype=np.int64))
    return Transitions(**{k: np.concatenate(v) for k, v in cols.items()})


def collect(
    env, make_policy: Callable[[int], Policy], n_episodes: int, seed: int, progress: bool = False
) -> Transitions:
    """``n_episodes`` episodes, episode i from ``make_policy(i)`` and reset seed ``seed + i``."""
    eps = [
        rollout(env, make_policy(i), seed + i)
        for i in tqdm(range(n_episodes), disable=None if progress else True, desc="episodes", leave=False)
    ]
    return from_episodes(eps)


def returns_to_go(data: Transitions, gamma: float) -> np.ndarray:
    """Discounted Monte-Carlo return G_t of every transition within its episode."""
    g = np.zeros(len(data), dtype=np.float64)
    for start, stop in data.episode_bounds():
        acc = 0.0
        for t in range(stop - 1, start - 1, -1):
            acc = data.rewards[t] + gamma * acc
            g[t] = acc
    return g


def save(data: Transitions, path: Path) -> None:
    """Write the table as one ``.npz`` (uncompressed; loads in milliseconds)."""
    with open(path, "wb") as fh:
        np.savez(fh, **{f.name: getattr(data, f.name) for f in fields(data)})


def load(path: Path) -> Transitions:
    """Read a table written by :func:`save`, checking that every field is there."""
    try:
        with load_npz(path) as z:
            missing = [f for f in FIELDS if f not in z.files]
            if missing:
                raise DataError(f"{path}: missing field(s) {missing}")
            arrays = {f: z[f] for f in FIELDS}
    except DataError as exc:  # the guarded reader names the file already
        raise DataError(f"not a readable transitions file: {exc}") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a readable transitions file ({exc})") from None
    n = len(arrays["rewards"]) if arrays["rewards"].ndim else -1
    for f, ndim in _NDIM.items():  # one row per transition, numbers only, finite
        check_array(arrays[f], path, f, ndim=ndim, rows=n, finite=True)
    for a, b in (("observations", "next_observations"), ("actions", "next_actions")):
        if arrays[a].shape != arrays[b].shape:
            raise DataError(f"{path}: array {b!r} has shape {arrays[b].shape}, {a!r} {arrays[a].shape}")
    return Transitions(**arrays)


_NDIM = {
    "rewards": 1,
    "observations": 2,
    "actions": None,  # 2-D for continuous actions; an external discrete set may store one index per row
    "next_observations": 2,
    "next_actions": None,
    "terminals": 1,
    "timeouts": 1,
    "episode": 1,
}
