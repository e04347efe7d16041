"""AssoMem retrieval: candidates from the query's top clues (plus direct top-N), signals R, I, T, fused score.

``AssoMem.signals`` computes, per query, the candidate set and the min-max
normalised signals; ``rank`` orders candidates by a weighted sum. Fitting the
CMI weights lives in :mod:`fusion`, so the same signals serve the CMI, equal
weight and ablation variants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from components.errors import DataError
from components.retrieval.assomem import fusion, importance, temporal

SIGNALS = ("R", "I", "T")


@dataclass(frozen=True)
class AssoMemConfig:
    top_clues: int = 1
    direct_top: int = 50
    union_direct: bool = True  # unverified in the paper: also add the direct top-N utterances
    damping: float = 0.85
    taus: tuple[float, ...] = (3.0, 90.0, 365.0)
    temporal_mode: str = "code"
    temporal_scale: float = 3.0
    n_bins: int = 3
    query_block: int = 128


@dataclass
class QuerySignals:
    """One query's candidates (utterance indices) with raw and normalised signals and their bins."""

    candidates: np.ndarray
    raw: dict[str, np.ndarray] = field(default_factory=dict)
    norm: dict[str, np.ndarray] = field(default_factory=dict)
    bins: dict[str, np.ndarray] = field(default_factory=dict)


class AssoMem:
    """Index over one memory: utterance/clue embeddings, times, clue of each utterance, and the graph."""

    def __init__(self, utt_embs: np.ndarray, times: np.ndarray, utt_clue: np.ndarray, clue_embs: np.ndarray,
                 adj: sp.spmatrix, config: AssoMemConfig = AssoMemConfig()) -> None:
        n, c = len(utt_embs), len(clue_embs)
        if adj.shape != (n + c, n + c):
            raise DataError(f"assomem: graph has shape {adj.shape}, expected {(n + c, n + c)}")
        self.utt, self.times, self.clue_of, self.clues = utt_embs, np.asarray(times, float), utt_clue, clue_embs
        self.adj, self.cfg = adj, config
        self.members = [np.flatnonzero(utt_clue == k) for k in range(c)]

    def _candidates(self, cos_q: np.ndarray, clue_cos: np.ndarray) -> np.ndarray:
        top = np.argsort(-clue_cos, kind="stable")[: self.cfg.top_clues]
        parts = [self.members[k] for k in top]
        if self.cfg.union_direct or not any(len(p) for p in parts):
            k = min(self.cfg.direct_top, len(cos_q))
            parts.append(np.argpartition(-cos_q, k - 1)[:k])
        return np.unique(np.concatenate(parts))

    def signals(self, q_embs: np.ndarray, query_times: Sequence[float], queries: Sequence[str] | None = None) -> list[QuerySignals]:
        """Candidates and signals for every query (PageRank in blocks of ``query_block`` queries)."""
        queries = list(queries) if queries is not None else [""] * len(q_embs)
        cos = q_embs @ self.utt.T
        clue_cos = q_embs @ self.clues.T
        out: list[QuerySignals] = []
        nc = len(self.clues)
        for start in range(0, len(q_embs), self.cfg.query_block):
            blk = slice(start, start + self.cfg.query_block)
            tele = importance.teleport_vectors(cos[blk], nc)
            ppr = importance.personalized_pagerank(self.adj, tele, damping=self.cfg.damping)[nc:]
            for j, qi in enumerate(range(start, min(start + self.cfg.query_block, len(q_embs)))):
                cand = self._candidates(cos[qi], clue_cos[qi])
                t_sig = temporal.temporal_signal(self.times[cand], float(query_times[qi]), queries[qi],
                                                 mode=self.cfg.temporal_mode, taus=self.cfg.taus,
                                                 scale=self.cfg.temporal_scale)
                raw = {"R": cos[qi, cand], "I": ppr[cand, j], "T": t_sig}
                norm = {d: fusion.minmax(v) for d, v in raw.items()}
                out.append(QuerySignals(cand, raw, norm, {d: fusion.quantile_bins(v, self.cfg.n_bins) for d, v in norm.items()}))
        return out


def rank(sig: QuerySignals, weights: Mapping[str, float], k: int) -> np.ndarray:
    """Top-k candidate utterance indices by the fused score (ties broken by relevance R)."""
    score = fusion.fuse(sig.norm, weights)
    order = np.lexsort((-sig.raw["R"], -score))
    return sig.candidates[order[:k]]
