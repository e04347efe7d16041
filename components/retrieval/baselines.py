"""Baseline retrievers of the card: dense flat (MiniLM), BM25 (bm25s), recency, topic grouping (k-means).

Each returns, per query, the indices of the top-k utterances in rank order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from components.errors import ParamsError


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores per row, best first (stable on ties: lower index first)."""
    k = min(k, scores.shape[-1])
    part = np.argpartition(-scores, k - 1, axis=-1)[..., :k]
    vals = np.take_along_axis(scores, part, axis=-1)
    order = np.lexsort((part, -vals), axis=-1)
    return np.take_along_axis(part, order, axis=-1)


def dense_flat(q_embs: np.ndarray, utt_embs: np.ndarray, k: int) -> np.ndarray:
    """Flat retrieval: cosine (unit-norm dot product) over every utterance."""
    return top_k(q_embs @ utt_embs.T, k)


def recency(times: np.ndarray, query_times: Sequence[float], k: int) -> np.ndarray:
    """The k most recent utterances at or before each query's time."""
    times = np.asarray(times, dtype=float)
    out = []
    for qt in query_times:
        score = np.where(times <= qt, times, -np.inf)
        out.append(top_k(score[None, :], k)[0])
    return np.array(out)


class BM25:
    """Okapi BM25 from ``bm25s`` (English stopwords, no stemming)."""

    def __init__(self, texts: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> None:
        import bm25s

        self._bm25s = bm25s
        self.n = len(texts)
        self._index = bm25s.BM25(k1=k1, b=b)
        self._index.index(bm25s.tokenize(list(texts), stopwords="en", show_progress=False), show_progress=False)

    def search(self, queries: Sequence[str], k: int) -> np.ndarray:
        toks = self._bm25s.tokenize(list(queries), stopwords="en", show_progress=False)
        docs, _ = self._index.retrieve(toks, k=min(k, self.n), show_progress=False, n_threads=1)
        return np.asarray(docs)


class TopicGrouping:
    """Topic grouping: k-means clusters of utterances; the query's nearest clusters, then cosine inside them."""

    def __init__(self, utt_embs: np.ndarray, *, n_clusters: int, seed: int, top_clusters: int = 2) -> None:
        from sklearn.cluster import KMeans

        if n_clusters < 1 or top_clusters < 1:
            raise ParamsError("topic.n_clusters and topic.top_clusters must be >= 1")
        n_clusters = min(n_clusters, len(utt_embs))
        km = KMeans(n_clusters=n_clusters, n_init=1, random_state=seed).fit(utt_embs)
        cent = km.cluster_centers_
        self.centroids = cent / np.maximum(np.linalg.norm(cent, axis=1, keepdims=True), 1e-12)
        self.labels, self.utt, self.top = km.labels_, utt_embs, top_clusters

    def search(self, q_embs: np.ndarray, k: int) -> np.ndarray:
        cos = q_embs @ self.utt.T
        near = top_k(q_embs @ self.centroids.T, self.top)
        out = []
        for i in range(len(q_embs)):
            inside = np.isin(self.labels, near[i])
            score = np.where(inside, cos[i] + 2.0, cos[i])  # grouped utterances first, then the rest by cosine
            out.append(top_k(score[None, :], k)[0])
        return np.array(out)
