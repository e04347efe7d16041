"""Sparse vectors as scipy CSR rows, mass-based and top-k pruning, and the inverted index.

The index is a scipy CSC matrix (documents x terms): column t *is* term t's postings list (document ids and
impacts, stored contiguously), so a query is answered term-at-a-time by summing the columns of its terms, the way
an impact-ordered inverted index is. We use scipy because bm25s stores its own index the same way but only for
its BM25 scores, and pyserini/Seismic need Java or Rust builds that are not installed. Index bytes follow the
card: postings x 6 B (a 4-byte document id and a 2-byte quantised impact).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from components.errors import DataError

POSTING_BYTES = 6


def to_csr(enc: dict[str, np.ndarray], vocab_en: int, vocab_in: int, *, echo: bool = True) -> sp.csr_matrix:
    """Rows over [English terms | source tokens]: the pivot vector, then (with echo) each token id's summed echo
    weight at column vocab_en + id (duplicates summed: the bag LexEcho's matched-token score is a dot product of)."""
    pivot = sp.csr_matrix(enc["pivot"].astype(np.float32))
    width = vocab_en + vocab_in
    pivot = sp.csr_matrix((pivot.data, pivot.indices, pivot.indptr), shape=(pivot.shape[0], width))
    if not echo or "echo" not in enc:
        return pivot
    vals, ids = enc["echo"].astype(np.float32), enc["ids"]
    rows = np.repeat(np.arange(ids.shape[0]), ids.shape[1])
    keep = vals.ravel() > 0
    src = sp.coo_matrix((vals.ravel()[keep], (rows[keep], vocab_en + ids.ravel()[keep])), shape=pivot.shape).tocsr()
    out = (pivot + src).tocsr()
    out.eliminate_zeros()
    return out


def _prune_rows(m: sp.csr_matrix, keep_count) -> sp.csr_matrix:
    m = m.tocsr().copy()
    m.sort_indices()
    data, indices, indptr = [], [], [0]
    for i in range(m.shape[0]):
        lo, hi = m.indptr[i], m.indptr[i + 1]
        v, c = m.data[lo:hi], m.indices[lo:hi]
        order = np.argsort(-v, kind="stable")
        n = keep_count(v[order])
        sel = np.sort(order[:n])
        data.append(v[sel])
        indices.append(c[sel])
        indptr.append(indptr[-1] + n)

    def cat(xs: list, dt) -> np.ndarray:
        return np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)

    return sp.csr_matrix((cat(data, np.float32), cat(indices, np.int32), np.asarray(indptr)), shape=m.shape)


def mass_count(sorted_desc: np.ndarray, fraction: float) -> int:
    """The smallest number of top terms whose weights hold at least ``fraction`` of the total weight."""
    if not 0 < fraction <= 1:
        raise DataError(f"mass pruning fraction {fraction}: must be in (0, 1]")
    total = float(sorted_desc.sum())
    if total <= 0:
        return 0
    cum = np.cumsum(sorted_desc, dtype=np.float64)
    return int(min(len(cum), np.searchsorted(cum, fraction * total * (1 - 1e-9)) + 1))


def mass_prune(m: sp.csr_matrix, fraction: float) -> sp.csr_matrix:
    """Per row, keep the smallest prefix of terms (by weight) holding ``fraction`` of the row's weight."""
    return _prune_rows(m, lambda v: mass_count(v, fraction))


def topk_prune(m: sp.csr_matrix, k: int) -> sp.csr_matrix:
    """Per row, keep the ``k`` largest weights."""
    if k < 1:
        raise DataError(f"top-k pruning k={k}: must be >= 1")
    return _prune_rows(m, lambda v: min(k, len(v)))


def active_dims(m: sp.csr_matrix) -> np.ndarray:
    return np.diff(m.tocsr().indptr)


def calibrate_mass(m: sp.csr_matrix, target_avg: float, iters: int = 30) -> float:
    """The mass fraction whose pruned rows keep ``target_avg`` active terms on average (bisection; label-free).

    Vectorised form of :func:`mass_count` over all rows: each row's weights sorted descending, cumulated and divided
    by the row total; a fraction f keeps (entries below f) + 1 terms, at most the row's length."""
    m = m.tocsr()
    if active_dims(m).mean() <= target_avg:
        return 1.0
    lengths = np.diff(m.indptr)
    rows = np.repeat(np.arange(m.shape[0]), lengths)
    order = np.lexsort((-m.data, rows))
    vals = m.data[order].astype(np.float64)
    cum = np.cumsum(vals)
    starts = m.indptr[:-1]
    offset = np.repeat(np.concatenate([[0.0], cum])[starts], lengths)
    totals = np.repeat(np.add.reduceat(vals, starts[lengths > 0]) if len(vals) else vals, lengths[lengths > 0])
    share = (cum - offset) / np.where(totals > 0, totals, 1)
    nonempty = lengths > 0

    def avg(f: float) -> float:
        below = np.bincount(rows[share < f * (1 - 1e-9)], minlength=m.shape[0])  # per row: entries below f
        return float(np.where(nonempty, np.minimum(below + 1, lengths), 0).mean())

    lo, hi = 1e-4, 1.0
    for _ in range(iters):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if avg(mid) < target_avg else (lo, mid)
    return hi


class InvertedIndex:
    """Documents' sparse rows as term postings (CSC columns); ``search`` returns the top-k ids and scores."""

    def __init__(self, docs: sp.csr_matrix) -> None:
        self.postings = sp.csc_matrix(docs, dtype=np.float32)
        self.postings.sort_indices()
        self.n_docs = docs.shape[0]

    @property
    def n_postings(self) -> int:
        return int(self.postings.nnz)

    @property
    def index_bytes(self) -> int:
        return self.n_postings * POSTING_BYTES

    @property
    def memory_bytes(self) -> int:
        p = self.postings
        return int(p.data.nbytes + p.indices.nbytes + p.indptr.nbytes)

    def scores(self, q: sp.csr_matrix) -> np.ndarray:
        """(n_docs,) score of one query row: the sum over its terms of weight x that term's postings."""
        terms, weights = q.indices, q.data
        if len(terms) == 0:
            return np.zeros(self.n_docs, np.float32)
        return np.asarray(self.postings[:, terms] @ weights).ravel()

    def search(self, q: sp.csr_matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
        s = self.scores(q)
        k = min(k, self.n_docs)
        top = np.argpartition(-s, k - 1)[:k]
        top = top[np.lexsort((top, -s[top]))]
        return top, s[top]

    def search_all(
        self, queries: sp.csr_matrix, k: int, latency_sample: int = 200, chunk: int = 256
    ) -> tuple[list[np.ndarray], float]:
        """Top-k per query and the median single-thread latency in milliseconds.

        Rankings come from the same postings in query batches (one sparse product per batch: the same scores as
        :meth:`search`, far faster for dense-ish rows); the latency is that of :meth:`search`, one query at a time,
        on the first ``latency_sample`` queries."""
        queries = queries.tocsr()
        times = []
        for i in range(min(latency_sample, queries.shape[0])):
            t = time.perf_counter()
            self.search(queries[i], k)
            times.append(time.perf_counter() - t)
        k = min(k, self.n_docs)
        rows = self.postings.tocsr()
        dense = rows.nnz > 0.01 * rows.shape[0] * rows.shape[1] and rows.shape[0] * rows.shape[1] <= 1e8
        rows = rows.toarray().T if dense else rows.T  # dense-ish postings: one BLAS product (same scores)
        out = []
        for s in range(0, queries.shape[0], chunk):
            q = queries[s : s + chunk]
            scores = np.asarray(q.toarray() @ rows if dense else (q @ rows).todense(), np.float32)
            for row in scores:
                top = np.argpartition(-row, k - 1)[:k]
                out.append(top[np.lexsort((top, -row[top]))])
        return out, float(np.median(times) * 1000) if times else 0.0
