"""The associative memory graph: clue nodes own their utterances; similar utterances are linked.

Nodes 0..C-1 are clues, C..C+N-1 utterances. Edges (undirected, weight 1):
clue - utterance ("owns"), and utterance - utterance when cos >= ``threshold``
(0.75 in the released code), keeping each utterance's ``max_neighbors`` most
similar (a cap we add so dense near-duplicate memories stay sparse). Built as a
scipy CSR matrix because PageRank runs on it for many queries at once;
:func:`to_networkx` gives the same graph for inspection.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from components.errors import DataError, ParamsError


def similarity_edges(
    embs: np.ndarray, *, threshold: float, max_neighbors: int, block: int = 1024, backend: str = "numpy"
) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of utterance pairs with cos >= threshold, at most ``max_neighbors`` per row, no self loops.

    ``backend="faiss"`` does the same exact search with faiss's flat inner-product index (about 2-3x faster
    on large memories: its top-k selection runs in C++); ``numpy`` needs no extra package.
    """
    if max_neighbors < 1:
        raise ParamsError(f"graph.max_neighbors: must be >= 1, got {max_neighbors}")
    if backend not in ("numpy", "faiss"):
        raise ParamsError(f"graph.backend: expected 'numpy' or 'faiss', got {backend!r}")
    if backend == "faiss":
        return _faiss_edges(embs, threshold, max_neighbors)
    n = len(embs)
    rows, cols = [], []
    k = min(max_neighbors, max(n - 1, 1))
    for start in range(0, n, block):
        sims = embs[start : start + block] @ embs.T
        idx = np.arange(start, min(start + block, n))
        sims[idx - start, idx] = -np.inf
        if n - 1 > k:
            top = np.argpartition(-sims, k, axis=1)[:, :k]
        else:
            top = np.tile(np.arange(n), (len(idx), 1))
        vals = np.take_along_axis(sims, top, axis=1)
        keep = vals >= threshold
        rows.append(np.repeat(idx, keep.sum(axis=1)))
        cols.append(top[keep])
    return np.concatenate(rows), np.concatenate(cols)


def _faiss_edges(embs: np.ndarray, threshold: float, max_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        import faiss
    except ImportError:
        raise ParamsError("graph.backend 'faiss' needs faiss-cpu (pip install faiss-cpu==1.15.1)") from None
    x = np.ascontiguousarray(embs, dtype=np.float32)
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    sims, idx = index.search(x, min(max_neighbors + 1, len(x)))
    rows = np.repeat(np.arange(len(x)), idx.shape[1]).reshape(idx.shape)
    keep = (sims >= threshold) & (idx != rows) & (idx >= 0)
    # drop the (k+1)-th neighbour of rows whose self match was not returned first
    keep &= np.cumsum(keep, axis=1) <= max_neighbors
    return rows[keep], idx[keep]


def build_graph(
    utt_embs: np.ndarray,
    utt_clue: np.ndarray,
    n_clues: int,
    *,
    threshold: float = 0.75,
    max_neighbors: int = 20,
    backend: str = "numpy",
) -> sp.csr_matrix:
    """Symmetric 0/1 adjacency over clues + utterances (see module docstring)."""
    n = len(utt_embs)
    if len(utt_clue) != n:
        raise DataError(f"graph: {len(utt_clue)} clue labels for {n} utterances")
    if n and (utt_clue.min() < 0 or utt_clue.max() >= n_clues):
        raise DataError(f"graph: clue ids must lie in [0, {n_clues})")
    r, c = similarity_edges(utt_embs, threshold=threshold, max_neighbors=max_neighbors, backend=backend)
    own_r, own_c = utt_clue, n_clues + np.arange(n)
    rows = np.concatenate([own_r, own_c, n_clues + r, n_clues + c])
    cols = np.concatenate([own_c, own_r, n_clues + c, n_clues + r])
    adj = sp.csr_matrix((np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(n_clues + n, n_clues + n))
    adj.data[:] = 1.0  # duplicates (i->j and j->i both kept) collapse to weight 1
    return adj


def to_networkx(adj: sp.spmatrix):
    """The graph as a networkx.Graph (for inspection and reference checks)."""
    import networkx as nx

    return nx.from_scipy_sparse_array(sp.csr_matrix(adj))
