"""Checks of a transition dataset before any learner sees it.

Structure first (plain numpy, because a table whose columns disagree in length
cannot even be framed): every field present, same number of rows, 2-D
observations with matching next-observation width. Then the Great Expectations
suite through ``components.data.validate``: finite rewards in range, boolean
terminal flags, every episode ending in a terminal or timeout and no other row
doing so, and ``next_observations[t] == observations[t+1]`` inside an episode (no
transition across an episode boundary).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from components.data import validate as V
from components.errors import DataError
from components.rl.dataset import FIELDS, Transitions


def check_structure(data: Transitions, obs_dim: int | None = None, act_dim: int | None = None) -> None:
    """Raise DataError naming the field when the table is empty or its shapes disagree."""
    n = len(data)
    if n == 0:
        raise DataError("dataset: empty (0 transitions)")
    for f in FIELDS:
        arr = getattr(data, f)
        if arr.shape[0] != n:
            raise DataError(f"dataset.{f}: {arr.shape[0]} rows but rewards has {n}")
    for f in ("observations", "next_observations", "actions", "next_actions"):
        if getattr(data, f).ndim != 2:
            raise DataError(f"dataset.{f}: expected a 2-D array, got shape {getattr(data, f).shape}")
    if data.next_observations.shape[1] != data.obs_dim:
        raise DataError(
            f"dataset.next_observations: width {data.next_observations.shape[1]} but observations has {data.obs_dim}"
        )
    if data.next_actions.shape[1] != data.act_dim:
        raise DataError(f"dataset.next_actions: width {data.next_actions.shape[1]} but actions has {data.act_dim}")
    if obs_dim is not None and data.obs_dim != obs_dim:
        raise DataError(f"dataset.observations: width {data.obs_dim} but the environment has {obs_dim}")
    if act_dim is not None and data.act_dim != act_dim:
        raise DataError(f"dataset.actions: width {data.act_dim} but the environment has {act_dim}")
    if data.rewards.ndim != 1:
        raise DataError(f"dataset.rewards: expected a 1-D array, got shape {data.rewards.shape}")


def to_frame(data: Transitions) -> pd.DataFrame:
    """One row per transition with the derived columns the GX suite checks."""
    ep = data.episode
    last = np.r_[ep[1:] != ep[:-1], True]
    cont = np.ones(len(data), dtype=bool)
    same = ~last[:-1]
    cont[:-1][same] = np.all(
        np.isclose(data.next_observations[:-1][same], data.observations[1:][same], atol=1e-6), axis=1
    )
    ended = data.terminals.astype(bool) | data.timeouts.astype(bool)
    return pd.DataFrame(
        {
            "episode": ep.astype(np.int64),
            "reward": data.rewards.astype(np.float64),
            "terminal": data.terminals,
            "timeout": data.timeouts,
            "obs_finite": np.isfinite(data.observations).all(1) & np.isfinite(data.next_observations).all(1),
            "action_finite": np.isfinite(data.actions).all(1),
            "continues": cont,
            "end_flag_ok": ended == last,
        }
    )


def suite(reward_min: float, reward_max: float) -> list:
    """The GX expectations of a transitions table."""
    return [
        V.columns_present(["episode", "reward", "terminal", "timeout"]),
        V.row_count_between(min_value=1),
        V.finite("reward"),
        V.between("reward", min_value=reward_min, max_value=reward_max),
        V.in_set("terminal", [True, False]),
        V.in_set("timeout", [True, False]),
        V.in_set("obs_finite", [True]),
        V.in_set("action_finite", [True]),
        V.in_set("continues", [True]),
        V.in_set("end_flag_ok", [True]),
    ]


def validate_transitions(
    data: Transitions,
    *,
    name: str,
    reward_range: tuple[float, float] = (0.0, 1.0),
    obs_dim: int | None = None,
    act_dim: int | None = None,
    result_path: Path | None = None,
) -> None:
    """Structure checks, then the GX suite; raises DataError / ValidationFailed naming the problem."""
    check_structure(data, obs_dim, act_dim)
    V.validate(to_frame(data), suite(*reward_range), name=name, result_path=result_path)
