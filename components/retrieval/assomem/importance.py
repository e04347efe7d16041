"""Importance: personalised PageRank on the memory graph, for many queries at once.

Same fixed point as ``networkx.pagerank(G, alpha, personalization=t)`` (a unit
test checks it): r = alpha * P^T r + (1 - alpha) * t, with dangling mass sent
back to t. Hand-written with scipy sparse products because networkx runs one
query at a time on a Python graph, and AssoMem needs one PageRank per question
over 10k-node graphs; here a block of queries is one sparse-dense product per
iteration.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from components.errors import DataError, ParamsError


def teleport_vectors(cos: np.ndarray, n_clues: int) -> np.ndarray:
    """(n_nodes, Q) teleport: max(cos(q, u), 0) on utterances, 0 on clues, each column summing to one.

    ``cos`` is (Q, N). A query with no positive similarity teleports uniformly over utterances.
    """
    q, n = cos.shape
    t = np.zeros((n_clues + n, q))
    t[n_clues:] = np.maximum(cos, 0.0).T
    sums = t.sum(axis=0)
    empty = sums <= 0
    t[n_clues:, empty] = 1.0
    sums = t.sum(axis=0)
    return t / sums


def personalized_pagerank(
    adj: sp.spmatrix, teleport: np.ndarray, *, damping: float = 0.85, tol: float = 1e-8, max_iter: int = 200
) -> np.ndarray:
    """Scores (n_nodes, Q): each column is a distribution (sums to one), like networkx's pagerank."""
    if not 0.0 < damping < 1.0:
        raise ParamsError(f"importance.damping: must be in (0, 1), got {damping}")
    adj = sp.csr_matrix(adj, dtype=np.float64)
    n = adj.shape[0]
    t = np.asarray(teleport, dtype=np.float64)
    if t.ndim == 1:
        t = t[:, None]
    if t.shape[0] != n:
        raise DataError(f"importance: teleport has {t.shape[0]} rows for a graph of {n} nodes")
    if np.any(t < 0) or np.any(np.abs(t.sum(axis=0) - 1.0) > 1e-6):
        raise DataError("importance: each teleport column must be non-negative and sum to one")
    out_deg = np.asarray(adj.sum(axis=1)).ravel()
    dangling = out_deg == 0
    inv = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, out_deg))
    pt = (sp.diags(inv) @ adj).T.tocsr()  # P^T, P row-stochastic
    r = t.copy()
    for _ in range(max_iter):
        # dangling mass goes back along the teleport vector (networkx's default dangling weights)
        nxt = damping * (pt @ r) + (damping * r[dangling].sum(axis=0) + (1.0 - damping)) * t
        err = np.abs(nxt - r).sum(axis=0).max()
        r = nxt
        if err < n * tol:
            break
    return r / r.sum(axis=0)
