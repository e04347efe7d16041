"""The Q-accuracy trajectories and batched Q-hat, shared by the kitchen-lite and the external evaluations."""

from __future__ import annotations

import numpy as np
import torch

from components.rl import dataset as D
from components.rl.trainer import TensorData


def q_rows(p, data: D.Transitions) -> np.ndarray:
    """Row indices of the Q-accuracy trajectories: ``eval.q_episodes`` dataset episodes drawn from the seed."""
    return q_rows_for(p.seed, p.eval.q_episodes, data)


def q_rows_for(seed: int, q_episodes: int, data: D.Transitions) -> np.ndarray:
    """:func:`q_rows` from plain settings (the champion's re-evaluation has no Params)."""
    rng = np.random.default_rng([seed, 41])
    ids = np.unique(data.episode)
    eps = np.sort(rng.choice(ids, size=min(q_episodes, len(ids)), replace=False))
    return np.flatnonzero(np.isin(data.episode, eps))


def predict_q(agent, data: D.Transitions, ctx_idx, rows: np.ndarray, chunk: int = 1024) -> np.ndarray:
    tdata = TensorData(data, ctx_idx)
    out = []
    with torch.no_grad():
        for i in range(0, len(rows), chunk):
            out.append(agent.q_values(tdata.batch(torch.as_tensor(rows[i : i + chunk]))).numpy())
    return np.concatenate(out)
