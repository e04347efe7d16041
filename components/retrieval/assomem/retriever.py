"""AssoMem retrieval: candidates from the query's top clues, signals R, I, T, fused score.

``AssoMem.signals`` computes, per query, the candidate set and the signals;
``rank`` orders candidates by a weighted sum. Two settings, both kept:

- ``fusion="raw"`` (default, as the released code's ``RITRanker``): the score sums
  the raw cosine R, the raw PageRank probability I and the raw recency T; the
  candidates are the utterances of the top-10 clues, nothing added.
- ``fusion="minmax"`` (our earlier reading, a variant): each signal is min-max
  scaled over the query's candidates before the sum (PageRank's hub gets 1.0);
  with it went top-1 clue plus the direct top-50 (``top_clues=1, union_direct=True``).

Fitting the CMI weights lives in :mod:`fusion`, so the same signals serve the CMI,
equal weight and ablation variants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from components.errors import DataError, ParamsError
from components.retrieval.assomem import fusion, importance, temporal

SIGNALS = ("R", "I", "T")
FUSIONS = ("raw", "minmax")


@dataclass(frozen=True)
class AssoMemConfig:
    top_clues: int = 10  # released code: top_k_clues 10
    direct_top: int = 50
    union_direct: bool = False  # released code: no direct top-N; True was our earlier variant
    fusion: str = "raw"  # "raw" (released code) or "minmax" (per-query min-max before the sum; variant)
    damping: float = 0.85
    taus: tuple[float, ...] = (3.0, 90.0, 365.0)
    temporal_mode: str = "code"
    temporal_scale: float = 3.0
    n_bins: int = 3
    query_block: int = 128

    def __post_init__(self) -> None:
        if self.fusion not in FUSIONS:
            raise ParamsError(f"assomem.fusion: expected one of {FUSIONS}, got {self.fusion!r}")


@dataclass
class QuerySignals:
    """One query's candidates (utterance indices), raw signals, the values the score sums (``fused``: raw or
    min-max scaled, by ``AssoMemConfig.fusion``) and their per-query quantile bins (the ``per-query`` binning)."""

    candidates: np.ndarray
    raw: dict[str, np.ndarray] = field(default_factory=dict)
    fused: dict[str, np.ndarray] = field(default_factory=dict)
    bins: dict[str, np.ndarray] = field(default_factory=dict)


class AssoMem:
    """Index over one memory: utterance/clue embeddings, times, clue of each utterance, and the graph."""

    def __init__(
        self,
        utt_embs: np.ndarray,
        times: np.ndarray,
        utt_clue: np.ndarray,
        clue_embs: np.ndarray,
        adj: sp.spmatrix,
        config: AssoMemConfig = AssoMemConfig(),
    ) -> None:
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

    def signals(
        self, q_embs: np.ndarray, query_times: Sequence[float], queries: Sequence[str] | None = None
    ) -> list[QuerySignals]:
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
                t_sig = temporal.temporal_signal(
                    self.times[cand],
                    float(query_times[qi]),
                    queries[qi],
                    mode=self.cfg.temporal_mode,
                    taus=self.cfg.taus,
                    scale=self.cfg.temporal_scale,
                )
                raw = {"R": cos[qi, cand], "I": ppr[cand, j], "T": t_sig}
                scaled = {d: fusion.minmax(v) for d, v in raw.items()}
                fused = scaled if self.cfg.fusion == "minmax" else raw
                out.append(
                    QuerySignals(
                        cand, raw, fused, {d: fusion.quantile_bins(v, self.cfg.n_bins) for d, v in scaled.items()}
                    )
                )
        return out


def rank(sig: QuerySignals, weights: Mapping[str, float], k: int) -> np.ndarray:
    """Top-k candidate utterance indices by the fused score (ties broken by relevance R)."""
    score = fusion.fuse(sig.fused, weights)
    order = np.lexsort((-sig.raw["R"], -score))
    return sig.candidates[order[:k]]
