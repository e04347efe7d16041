"""AnthroBench's aggregate statistics of a label tensor ``L[dialogue, turn, behaviour]`` (0/1, turns in order).

- message prevalence: flagged target messages / all target messages;
- dialogue prevalence at T: share of dialogues with >= 1 occurrence within the first T turns;
- late-onset share: share of a behaviour's first occurrences that fall in turns 2..n (NaN without occurrences);
- snowball: P(b_{t+1} | b_t) - P(b_{t+1} | not b_t), pooled over dialogues and turns (NaN if a side is empty).

:func:`two_stage_indices` draws the bootstrap's dialogue indices: seeds with replacement, then dialogues with
replacement within each drawn seed (the standard rule's two-stage resampling).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from components.errors import DataError


def _check(labels: np.ndarray) -> np.ndarray:
    x = np.asarray(labels)
    if x.ndim != 3 or x.shape[0] < 1 or x.shape[1] < 1:
        raise DataError(f"labels: expected dialogues x turns x behaviours, got shape {x.shape}")
    return x.astype(bool)


def message_prevalence(labels: np.ndarray) -> np.ndarray:
    return _check(labels).mean(axis=(0, 1))


def dialogue_prevalence(labels: np.ndarray, T: int) -> np.ndarray:
    x = _check(labels)
    if not 1 <= T <= x.shape[1]:
        raise DataError(f"T: must be in 1..{x.shape[1]}, got {T}")
    return x[:, :T].any(axis=1).mean(axis=0)


def first_turns(labels: np.ndarray) -> np.ndarray:
    """1-based turn of each (dialogue, behaviour)'s first occurrence; 0 where it never occurs."""
    x = _check(labels)
    return np.where(x.any(axis=1), x.argmax(axis=1) + 1, 0)


def late_onset_share(labels: np.ndarray) -> np.ndarray:
    first = first_turns(labels)
    occurred = (first > 0).sum(axis=0)
    late = (first > 1).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(occurred > 0, late / np.maximum(occurred, 1), np.nan)


def late_onset_count(labels: np.ndarray, share: float = 0.5) -> int:
    """Behaviours whose late-onset share is >= ``share`` (a behaviour that never occurs does not count)."""
    s = late_onset_share(labels)
    return int(np.sum(np.nan_to_num(s, nan=-1.0) >= share))


def snowball(labels: np.ndarray) -> np.ndarray:
    x = _check(labels)
    prev, nxt = x[:, :-1], x[:, 1:]
    n_on, n_off = prev.sum(axis=(0, 1)), (~prev).sum(axis=(0, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_on = np.where(n_on > 0, (prev & nxt).sum(axis=(0, 1)) / np.maximum(n_on, 1), np.nan)
        p_off = np.where(n_off > 0, (~prev & nxt).sum(axis=(0, 1)) / np.maximum(n_off, 1), np.nan)
    return p_on - p_off


def turn_profile(labels: np.ndarray) -> np.ndarray:
    """Prevalence at each turn: turns x behaviours."""
    return _check(labels).mean(axis=0)


def two_stage_indices(clusters: Sequence, n_resamples: int, seed: int) -> list[np.ndarray]:
    """Index arrays of ``n_resamples`` two-stage resamples of the units labelled by ``clusters``."""
    c = np.asarray(clusters)
    groups = [np.flatnonzero(c == k) for k in np.unique(c)]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_resamples):
        drawn = rng.integers(len(groups), size=len(groups)) if len(groups) > 1 else [0]
        out.append(np.concatenate([groups[g][rng.integers(groups[g].size, size=groups[g].size)] for g in drawn]))
    return out


def flat_late_share(prevalence: np.ndarray, n_turns: int) -> np.ndarray:
    """The late-onset share a behaviour would have with a flat hazard equal to its message prevalence:
    1 - h / (1 - (1 - h)^n). Rare behaviours are 'late' even without any rise over turns (h=0.2: 0.70), so the
    card's late-onset share is read against this null."""
    h = np.asarray(prevalence, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(h > 0, 1.0 - h / (1.0 - (1.0 - h) ** n_turns), np.nan)


def plant_late(labels: np.ndarray, behaviours: Sequence[int], share: float, rng: np.random.Generator) -> np.ndarray:
    """``labels`` with a late-onset share of at least ``share`` planted in each of ``behaviours``: every dialogue
    whose first occurrence of b is at turn 1 has b's labels moved one turn later (the last turn's dropped) with
    the probability that brings b's expected late-onset share to ``share`` (none where it is there already).
    Message prevalence barely moves, so the planted behaviours keep the run's rarity."""
    x = _check(labels).copy()
    first = first_turns(x)
    for b in behaviours:
        occurred = first[:, b] > 0
        if not occurred.any():
            continue
        s0 = float(np.mean(first[occurred, b] > 1))
        if s0 >= share:
            continue
        q = (share - s0) / (1.0 - s0)
        move = (first[:, b] == 1) & (rng.random(x.shape[0]) < q)
        x[move, 1:, b] = x[move, :-1, b]
        x[move, 0, b] = False
    return x


def plant_prevalence(labels: np.ndarray, behaviours: Sequence[int], level: float, rng: np.random.Generator):
    """``labels`` with the message prevalence of each of ``behaviours`` raised to ``level`` (unflagged messages
    flagged at random; none removed)."""
    x = _check(labels).copy()
    for b in behaviours:
        p0 = float(x[..., b].mean())
        if p0 >= level:
            continue
        q = (level - p0) / (1.0 - p0)
        x[..., b] |= rng.random(x.shape[:2]) < q
    return x


def probability_power(
    labels: np.ndarray,
    seeds: Sequence,
    plant,
    holds,
    *,
    n_sim: int,
    n_resamples: int,
    seed: int,
    p_hi: float = 0.95,
    p_lo: float = 0.05,
) -> dict:
    """Power of a probability rule on this run's design: ``n_sim`` runs simulated by a two-stage resample of the
    run's dialogues (seeds, then dialogues), ``plant(run, rng)`` putting the claimed effect in, each decided by the
    rule (share of ``n_resamples`` two-stage resamples where ``holds``: >= p_hi reproduced, <= p_lo not)."""
    x, s = _check(labels), np.asarray(seeds)
    rng = np.random.default_rng(seed)
    verdicts = []
    for i in two_stage_indices(s, n_sim, seed):
        run = plant(x[i], rng)
        share = np.mean([holds(run[j]) for j in two_stage_indices(s[i], n_resamples, int(rng.integers(1 << 31)))])
        verdicts.append("reproduced" if share >= p_hi else "not reproduced" if share <= p_lo else "inconclusive")
    v = np.array(verdicts)
    return {"n_sim": n_sim, "reproduced": float(np.mean(v == "reproduced")),
            "not_reproduced": float(np.mean(v == "not reproduced")),
            "inconclusive": float(np.mean(v == "inconclusive"))}  # fmt: skip
