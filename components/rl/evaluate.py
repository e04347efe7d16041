"""Evaluation of offline RL policies: rollouts, D4RL-style normalised score, Q accuracy."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.stats import spearmanr

from components.errors import DataError


def episode_returns(
    env, policy: Callable[[np.ndarray], np.ndarray], seeds: Sequence[int]
) -> tuple[list[float], list[int]]:
    """Undiscounted return and completed subtasks of one episode per reset seed."""
    returns, done = [], []
    for s in seeds:
        obs, _ = env.reset(seed=int(s))
        total = 0.0
        while True:
            obs, r, term, trunc, info = env.step(policy(obs))
            total += float(r)
            if term or trunc:
                break
        returns.append(total)
        done.append(int(info.get("next_target", 0)))
    return returns, done


def normalised_score(returns: Sequence[float] | np.ndarray, r_random: float, r_expert: float) -> np.ndarray:
    """100 (R - R_random) / (R_expert - R_random), per return (D4RL's normalisation)."""
    if not np.isfinite(r_random) or not np.isfinite(r_expert) or r_expert <= r_random:
        raise DataError(f"normalised score: expert reference {r_expert} must exceed random reference {r_random}")
    return 100.0 * (np.asarray(returns, dtype=float) - r_random) / (r_expert - r_random)


def q_accuracy(q_pred: np.ndarray, returns: np.ndarray) -> dict:
    """Spearman correlation and mean |Q-hat - G| of predicted Q against Monte-Carlo returns."""
    q_pred, returns = np.asarray(q_pred, float), np.asarray(returns, float)
    if q_pred.shape != returns.shape or q_pred.size < 3:
        raise DataError(f"q_accuracy: need matching arrays of >= 3 values, got {q_pred.shape} and {returns.shape}")
    rho = spearmanr(q_pred, returns).statistic
    return {"spearman": float(rho) if np.isfinite(rho) else 0.0, "mae": float(np.mean(np.abs(q_pred - returns)))}
