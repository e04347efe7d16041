"""Reconstruction-based detectors: DOMINANT (Ding et al. 2019) as PyGOD defines it, and shared loss pieces.

PyGOD's DOMINANT/AnomalyDAE/GAE detectors do not run here: PyGOD 1.1.0 always batches through PyG's
``NeighborLoader``, which needs ``pyg-lib`` or ``torch-sparse``; neither has a wheel for torch 2.13 CPU.
So they are re-implemented with PyGOD's defaults and loss (``pygod.nn.functional.double_recon_loss``):
score_i = w * ||x_i - x^_i|| + (1 - w) * ||s_i - s^_i|| (``benchmarks/pygod_dominant_check.py`` runs
PyGOD's own DOMINANT through a one-batch loader: same seed, same scores). Without a sigmoid (DOMINANT's default) the
structure term is computed exactly without forming s^ = z z^T: ||s_i - s^_i||^2 = deg_i - 2 sum_{j in N(i)}
z_i.z_j + z_i^T (Z^T Z) z_i, which costs O(E h + n h^2) instead of O(n^2 h) (the 100k-node benchmark relies
on it). With a sigmoid (AnomalyDAE) it is dense up to ``dense_max_nodes`` and, above, estimated from the
node's edges plus ``neg_samples`` random non-edges rescaled to all n - deg_i non-edges.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from components.graph.gcn import GCN, gcn_norm
from components.graph.graph import Graph

log = logging.getLogger(__name__)
EPS = 1e-12


@dataclass
class Prepared:
    """Torch views of a graph shared by every detector: features, edges, and (small graphs) dense adjacency."""

    x: torch.Tensor
    edge_index: torch.Tensor
    n: int
    dense_s: torch.Tensor | None
    degree: torch.Tensor


def prepare(g: Graph, dense_max_nodes: int = 5000) -> Prepared:
    x = torch.as_tensor(g.x, dtype=torch.float32)
    ei = torch.as_tensor(g.edge_index, dtype=torch.long)
    dense = None
    if g.n <= dense_max_nodes:
        dense = torch.zeros(g.n, g.n)
        dense[ei[0], ei[1]] = 1.0
    return Prepared(x, ei, g.n, dense, torch.bincount(ei[0], minlength=g.n).float())


def attribute_error(x: torch.Tensor, x_hat: torch.Tensor) -> torch.Tensor:
    """Per-node ||x_i - x^_i||_2."""
    return torch.sqrt(((x - x_hat) ** 2).sum(1) + EPS)


def structure_error(
    z: torch.Tensor, p: Prepared, gen: torch.Generator, neg_samples: int = 32, sigmoid: bool = False
) -> torch.Tensor:
    """Per-node ||s_i - s^_i||_2 with s^ = z z^T (optionally through a sigmoid); see the module doc."""
    src, dst = p.edge_index
    if not sigmoid:  # exact, via the Gram matrix: no n x n tensor
        linked = torch.zeros(p.n).index_add(0, src, (z[src] * z[dst]).sum(1))
        quad = ((z @ (z.T @ z)) * z).sum(1)
        return torch.sqrt(torch.clamp(p.degree - 2 * linked + quad, min=0.0) + EPS)
    if p.dense_s is not None:
        return torch.sqrt(((p.dense_s - torch.sigmoid(z @ z.T)) ** 2).sum(1) + EPS)
    pos = (1.0 - torch.sigmoid((z[src] * z[dst]).sum(1))) ** 2
    pos_sum = torch.zeros(p.n).index_add(0, src, pos)
    neg_j = torch.randint(0, p.n, (p.n, neg_samples), generator=gen)
    neg = (torch.sigmoid((z.unsqueeze(1) * z[neg_j]).sum(-1)) ** 2).mean(1) * (p.n - p.degree)
    return torch.sqrt(pos_sum + neg + EPS)


@dataclass
class TrainConfig:
    """Full-batch training settings shared by the neural detectors (PyGOD defaults for DOMINANT)."""

    epochs: int = 100
    lr: float = 4e-3
    hid: int = 64
    weight: float = 0.5  # attribute vs structure share of the score (PyGOD's ``weight`` / ``alpha``)
    weight_decay: float = 0.0
    neg_samples: int = 32
    progress: bool = False


class Dominant(nn.Module):
    """Shared 2-layer GCN encoder, 2-layer GCN attribute decoder, 1-layer GCN + dot-product structure decoder."""

    def __init__(self, in_dim: int, hid: int):
        super().__init__()
        self.encoder = GCN([in_dim, hid, hid])
        self.attr_decoder = GCN([hid, hid, in_dim])
        self.struct_decoder = GCN([hid, hid])

    def forward(self, p: Prepared, norm) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.encoder(p.x, p.edge_index, norm)
        return self.attr_decoder(z, p.edge_index, norm), self.struct_decoder(z, p.edge_index, norm)


def _epochs(n: int, progress: bool, desc: str):
    if not progress:
        return range(n)
    from tqdm import tqdm

    return tqdm(range(n), desc=desc, leave=False)


def train_then_score(score, opt: torch.optim.Optimizer, cfg: TrainConfig, name: str) -> dict:
    """Minimise the mean per-node reconstruction score for ``cfg.epochs``, then score every node.

    The one training loop of every reconstruction detector (DOMINANT, GAE, AnomalyDAE): the
    outlier score is the per-node loss itself. Returns {"scores", "seconds", "final_loss"}.
    """
    t0, loss = time.perf_counter(), torch.tensor(float("nan"))
    for _ in _epochs(cfg.epochs, cfg.progress, name):
        opt.zero_grad()
        loss = score().mean()
        loss.backward()
        opt.step()
    with torch.no_grad():
        s = score()
    return {
        "scores": s.numpy().astype(np.float64),
        "seconds": time.perf_counter() - t0,
        "final_loss": float(loss.detach()),
    }


def fit_dominant(p: Prepared, cfg: TrainConfig, seed: int) -> dict:
    """Train DOMINANT; return {"scores": per-node outlier scores (numpy), "seconds", "final_loss"}."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = Dominant(p.x.shape[1], cfg.hid)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    norm = gcn_norm(p.edge_index, None, p.n)

    def score() -> torch.Tensor:
        x_hat, h = model(p, norm)
        return cfg.weight * attribute_error(p.x, x_hat) + (1 - cfg.weight) * structure_error(h, p, gen, cfg.neg_samples)

    return train_then_score(score, opt, cfg, "dominant")
