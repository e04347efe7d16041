"""Clues: one keyphrase per session, chosen by embedding similarity, then merged when near-identical.

The paper tags each session with an LLM; the offline stand-in (card) picks the
nearest keyphrase from a candidate list. ``pooling`` says how a session is
compared with a keyphrase: ``max`` (the best-matching utterance, as a reader who
sees the one line naming the project) or ``mean`` (the session's centroid).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from components.errors import DataError, ParamsError


def extract_clues(
    utt_embs: np.ndarray, sessions: list[str], phrase_embs: np.ndarray, *, pooling: str = "max"
) -> dict[str, int]:
    """Session id -> index of its nearest candidate keyphrase (embeddings are unit-norm rows)."""
    if pooling not in ("max", "mean"):
        raise ParamsError(f"clues.pooling: expected 'max' or 'mean', got {pooling!r}")
    if len(sessions) != len(utt_embs):
        raise DataError(f"clues: {len(sessions)} session labels for {len(utt_embs)} utterance embeddings")
    if len(phrase_embs) == 0:
        raise ParamsError("clues: the candidate keyphrase list is empty")
    sims = utt_embs @ phrase_embs.T
    order: dict[str, list[int]] = {}
    for i, s in enumerate(sessions):
        order.setdefault(s, []).append(i)
    out = {}
    for s, idx in order.items():
        block = sims[idx]
        score = block.max(axis=0) if pooling == "max" else block.mean(axis=0)
        out[s] = int(np.argmax(score))
    return out


def merge_clues(phrase_embs: np.ndarray, delta: float) -> np.ndarray:
    """Canonical clue index per keyphrase: keyphrases linked by cosine > delta share one clue (transitively)."""
    if not -1.0 <= delta <= 1.0:
        raise ParamsError(f"clues.merge_delta: must be in [-1, 1], got {delta}")
    sims = phrase_embs @ phrase_embs.T
    adj = csr_matrix(sims > delta)
    _, labels = connected_components(adj, directed=False)
    return labels.astype(np.int64)


def utterance_clues(sessions: list[str], session_clue: dict[str, int], canonical: np.ndarray) -> np.ndarray:
    """Clue id (after merging) of every utterance, through its session."""
    return np.array([int(canonical[session_clue[s]]) for s in sessions], dtype=np.int64)
