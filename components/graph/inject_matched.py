"""A leak-free injection: outliers whose degree and feature norm match the node they replace.

PyGOD's injection leaks (VGOD, Huang et al. 2022): a clique raises its members' degree and the farthest-of-k
swap raises the feature norm, so max(rank(degree), rank(feature norm)) alone scores AUC above 0.9. Here each
outlier keeps its node's degree and its distance from the feature mean:

- contextual: the farthest of ``k`` random nodes' features, rescaled about the column mean to the node's own
  distance from it (the direction is foreign, the norm is not);
- structural: cliques of ``clique_size`` nodes drawn among nodes of degree >= clique_size - 1; each member drops
  as many of its own edges to non-members as the clique adds, so its degree is unchanged;
- trap: contextual features (norm-matched) and ``min(trap_degree, degree)`` of its edges rewired to random normal
  nodes, so its degree is unchanged and its neighbours are strangers.

The node sets are disjoint, drawn with the same private generator as ``inject.py``. Edges are dropped only
towards normal nodes, so every outlier's degree is exactly its node's (a member whose edges all lead to other
outliers keeps them and its degree may rise); a normal node that loses an edge loses one degree, and on average
normal nodes gain as many from the rewiring.
"""

from __future__ import annotations

import numpy as np
import torch

from components.errors import ParamsError
from components.graph.graph import CONTEXTUAL, NORMAL, STRUCTURAL, TRAP, Graph, from_pairs
from components.graph.inject import _pick, planned_counts


def _norm_matched(
    x: np.ndarray, count: int, k: int, gen: torch.Generator, exclude: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    xt = torch.as_tensor(x).clone()
    mean = xt.mean(0)
    idx = _pick(gen, xt.shape[0], count, exclude)
    for i in idx:
        cand = torch.randperm(xt.shape[0], generator=gen)[:k]
        far = xt[cand[torch.argmax(torch.cdist(xt[i].unsqueeze(0), xt[cand]), dim=1)]].squeeze(0)
        own, new = float(torch.linalg.norm(xt[i] - mean)), float(torch.linalg.norm(far - mean))
        xt[i] = mean + (far - mean) * (own / new if new > 0 else 1.0)
    return xt.numpy(), idx


class _Edges:
    """Undirected edges as adjacency sets, for dropping and adding edges one at a time."""

    def __init__(self, g: Graph):
        self.adj = [set() for _ in range(g.n)]
        for a, b in g.edge_index.T:
            self.adj[int(a)].add(int(b))

    def drop_from(self, i: int, count: int, keep: set, gen: torch.Generator) -> list[int]:
        """Drop up to ``count`` of i's edges to nodes outside ``keep``; the dropped neighbours."""
        cand = sorted(self.adj[i] - keep)
        order = torch.randperm(len(cand), generator=gen).numpy()[:count] if cand else []
        gone = [cand[j] for j in order]
        for j in gone:
            self.adj[i].discard(j)
            self.adj[j].discard(i)
        return gone

    def add(self, i: int, j: int) -> None:
        if i != j:
            self.adj[i].add(j)
            self.adj[j].add(i)

    def pairs(self) -> np.ndarray:
        out = [(i, j) for i, nb in enumerate(self.adj) for j in nb if i < j]
        return np.asarray(out, dtype=np.int64).reshape(-1, 2)


def inject_matched(
    g: Graph,
    *,
    contextual_rate: float,
    structural_rate: float,
    trap_rate: float,
    clique_size: int = 15,
    k: int = 50,
    trap_degree: int = 20,
    seed: int,
) -> Graph:
    """A copy of ``g`` with disjoint degree- and norm-matched contextual, structural and trap outliers."""
    counts = planned_counts(g.n, contextual_rate, structural_rate, trap_rate, clique_size)
    k = min(k, g.n)
    gen = torch.Generator().manual_seed(int(seed))
    kind = np.full(g.n, NORMAL, dtype=np.int64)
    x, ctx_idx = _norm_matched(g.x, counts["contextual"], k, gen, None)
    edges, deg = _Edges(g), g.degree()
    low = np.flatnonzero(deg < clique_size - 1)
    if counts["structural"] > g.n - low.size - ctx_idx.size:
        raise ParamsError(
            f"injection.clique_size: matched cliques of {clique_size} need nodes of degree >= "
            f"{clique_size - 1}; graph {g.name!r} has too few (lower clique_size or densify the graph)"
        )
    st_idx = _pick(gen, g.n, counts["structural"], np.concatenate([ctx_idx, low]))
    x, trap_idx = _norm_matched(x, counts["trap"], k, gen, np.concatenate([ctx_idx, st_idx]))
    # edges are dropped only towards normal nodes, so every outlier's degree is exactly its node's
    outliers = {int(i) for i in np.concatenate([ctx_idx, st_idx, trap_idx])}
    for c in range(counts["cliques"]):
        members = [int(i) for i in st_idx[c * clique_size : (c + 1) * clique_size]]
        for i in members:
            edges.drop_from(i, clique_size - 1 - len(edges.adj[i] & set(members)), outliers, gen)
        for a in members:
            for b in members:
                edges.add(a, b)
    normal = np.setdiff1d(np.arange(g.n), np.concatenate([ctx_idx, st_idx, trap_idx]))
    for i in trap_idx:
        gone = edges.drop_from(int(i), trap_degree, outliers, gen)
        free = normal[~np.isin(normal, list(edges.adj[int(i)]) + gone)]  # strangers, not the ones just cut
        for j in free[torch.randperm(free.size, generator=gen)[: len(gone)].numpy()]:
            edges.add(int(i), int(j))
    kind[ctx_idx], kind[st_idx], kind[trap_idx] = CONTEXTUAL, STRUCTURAL, TRAP
    out = from_pairs(g.name, x, edges.pairs(), kind)
    out.meta = {**g.meta, "counts": counts, "injection": "matched"}
    return out
