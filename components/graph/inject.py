"""Outlier injection: contextual and structural outliers as PyGOD generates them, plus the card's trap outliers.

``contextual`` and ``structural`` follow ``pygod.generator.gen_contextual_outlier`` / ``gen_structural_outlier``
draw for draw (same torch calls on a private generator, so for the same seed >= 1 and no exclusions they give
PyGOD's nodes; a unit test checks this against PyGOD when it is installed). Two deliberate differences: the
generator is private (no global torch seed), and later types avoid nodes already chosen (``exclude``), so the
label rate equals the injected rate exactly. ``trap`` outliers (our definition of the card's "wired to many
normal nodes") get contextual features and ``degree`` extra edges to random normal nodes: aggregation then
pulls those normal neighbours towards the outlier, the homophily trap.
"""

from __future__ import annotations

import numpy as np
import torch

from components.errors import ParamsError
from components.graph.graph import CONTEXTUAL, NORMAL, STRUCTURAL, TRAP, Graph, from_pairs

MAX_RATE = 0.5


def _pick(gen: torch.Generator, n: int, count: int, exclude: np.ndarray | None) -> np.ndarray:
    perm = torch.randperm(n, generator=gen).numpy()
    if exclude is not None and exclude.size:
        perm = perm[~np.isin(perm, exclude)]
    if count > perm.size:
        raise ParamsError(f"injection: {count} outliers requested but only {perm.size} nodes are free")
    return perm[:count]


def contextual(
    x: np.ndarray, count: int, k: int, gen: torch.Generator, exclude: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Replace each chosen node's features by those of the farthest of ``k`` random nodes; (new x, nodes)."""
    xt = torch.as_tensor(x).clone()
    idx = _pick(gen, xt.shape[0], count, exclude)
    for i in idx:
        cand = torch.randperm(xt.shape[0], generator=gen)[:k]
        far = cand[torch.argmax(torch.cdist(xt[i].unsqueeze(0), xt[cand]), dim=1)]
        xt[i] = xt[far]
    return xt.numpy(), idx


def structural(
    n: int, clique_size: int, n_cliques: int, gen: torch.Generator, exclude: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``n_cliques`` cliques of ``clique_size`` random nodes; (new undirected pairs, nodes)."""
    idx = _pick(gen, n, clique_size * n_cliques, exclude)
    pairs = [
        torch.combinations(torch.as_tensor(idx[c * clique_size : (c + 1) * clique_size])).numpy()
        for c in range(n_cliques)
    ]
    return (np.concatenate(pairs) if pairs else np.zeros((0, 2), np.int64)), idx


def trap(
    x: np.ndarray, count: int, degree: int, k: int, gen: torch.Generator, exclude: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contextual features plus ``degree`` edges to random normal nodes each; (new x, new pairs, nodes)."""
    x2, idx = contextual(x, count, k, gen, exclude)
    normal = np.setdiff1d(np.arange(x.shape[0]), np.concatenate([exclude, idx]))
    if count and degree > normal.size:
        raise ParamsError(f"injection.trap_degree: {degree} exceeds the {normal.size} normal nodes")
    pairs = [
        np.stack([np.full(degree, i), normal[torch.randperm(normal.size, generator=gen)[:degree].numpy()]], 1)
        for i in idx
    ]
    return x2, (np.concatenate(pairs) if pairs else np.zeros((0, 2), np.int64)), idx


def planned_counts(
    n: int, contextual_rate: float, structural_rate: float, trap_rate: float, clique_size: int
) -> dict[str, int]:
    """Outlier counts per type; checks the rates (each >= 0, total <= 0.5)."""
    rates = {"contextual_rate": contextual_rate, "structural_rate": structural_rate, "trap_rate": trap_rate}
    for key, r in rates.items():
        if not 0.0 <= r <= MAX_RATE:
            raise ParamsError(f"injection.{key}: must be in [0, {MAX_RATE}], got {r}")
    total = sum(rates.values())
    if total > MAX_RATE:
        raise ParamsError(f"injection: total rate {total:.3g} is above {MAX_RATE}; outliers must stay a minority")
    if clique_size < 2:
        raise ParamsError(f"injection.clique_size: must be >= 2, got {clique_size}")
    n_cliques = int(round(structural_rate * n / clique_size))
    return {
        "contextual": int(round(contextual_rate * n)),
        "structural": n_cliques * clique_size,
        "cliques": n_cliques,
        "trap": int(round(trap_rate * n)),
    }


def inject(
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
    """A copy of ``g`` with disjoint contextual, structural (clique) and trap outliers; ``kind`` marks each."""
    counts = planned_counts(g.n, contextual_rate, structural_rate, trap_rate, clique_size)
    k = min(k, g.n)
    gen = torch.Generator().manual_seed(int(seed))
    kind = np.full(g.n, NORMAL, dtype=np.int64)
    x, ctx_idx = contextual(g.x, counts["contextual"], k, gen)
    new_pairs, st_idx = structural(g.n, clique_size, counts["cliques"], gen, exclude=ctx_idx)
    x, trap_pairs, trap_idx = trap(x, counts["trap"], trap_degree, k, gen, np.concatenate([ctx_idx, st_idx]))
    kind[ctx_idx], kind[st_idx], kind[trap_idx] = CONTEXTUAL, STRUCTURAL, TRAP
    pairs = np.concatenate([g.edge_index.T, new_pairs, trap_pairs]).astype(np.int64)
    out = from_pairs(g.name, x, pairs, kind)
    out.meta = {**g.meta, "counts": counts}
    return out
