"""Baselines beside DOMINANT: GAE reconstruction, AnomalyDAE, a feature-only Isolation Forest, leakage probes.

GAE and AnomalyDAE follow PyGOD 1.1.0's definitions and defaults (see ``recon.py`` for why PyGOD's own
detectors cannot run here). The probes score nodes by degree alone or by feature norm alone: if either
matches the detectors, the injected outliers leak through a trivial statistic (Huang et al. 2022).
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from components.graph.gcn import GCN, gcn_norm
from components.graph.recon import Prepared, TrainConfig, attribute_error, structure_error, train_then_score


def fit_gae(p: Prepared, cfg: TrainConfig, seed: int) -> dict:
    """PyGOD ``GAE`` (recon_s=False): 2-layer GCN encoder + 2-layer GCN decoder, score = per-node attribute MSE."""
    torch.manual_seed(seed)
    model = nn.ModuleDict({"enc": GCN([p.x.shape[1], cfg.hid, cfg.hid]), "dec": GCN([cfg.hid, cfg.hid, p.x.shape[1]])})
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    norm = gcn_norm(p.edge_index, None, p.n)

    def score() -> torch.Tensor:
        x_hat = model["dec"](model["enc"](p.x, p.edge_index, norm), p.edge_index, norm)
        return ((p.x - x_hat) ** 2).mean(1)

    return train_then_score(score, opt, cfg, "gae")


class GATLayer(nn.Module):
    """Single-head graph attention with self-loops (PyG ``GATConv`` defaults: LeakyReLU 0.2, bias)."""

    def __init__(self, in_dim: int, out_dim: int):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.att_src = nn.Parameter(torch.empty(out_dim))
        self.att_dst = nn.Parameter(torch.empty(out_dim))
        self.bias = nn.Parameter(torch.zeros(out_dim))
        nn.init.xavier_uniform_(self.lin.weight)
        nn.init.normal_(self.att_src, std=0.1)
        nn.init.normal_(self.att_dst, std=0.1)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        loops = torch.arange(n)
        src = torch.cat([edge_index[0], loops])
        dst = torch.cat([edge_index[1], loops])
        h = self.lin(x)
        e = torch.nn.functional.leaky_relu((h * self.att_src).sum(1)[src] + (h * self.att_dst).sum(1)[dst], 0.2)
        emax = torch.zeros(n).scatter_reduce(0, dst, e.detach(), "amax", include_self=False)
        w = torch.exp(e - emax[dst])
        alpha = w / torch.zeros(n).index_add(0, dst, w)[dst]
        return torch.zeros_like(h).index_add(0, dst, h[src] * alpha.unsqueeze(1)) + self.bias


class AnomalyDAE(nn.Module):
    """Structure autoencoder (dense + GAT) and attribute autoencoder over X^T; X^ = Z_v Z_a^T,
    S^ = sigmoid(Z_v Z_v^T)."""

    def __init__(self, in_dim: int, n: int, emb: int, hid: int):
        super().__init__()
        self.dense_stru = nn.Linear(in_dim, emb)
        self.gat = GATLayer(emb, hid)
        self.dense_attr_1 = nn.Linear(n, emb)
        self.dense_attr_2 = nn.Linear(emb, hid)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z_v = self.gat(torch.relu(self.dense_stru(x)), edge_index)
        z_a = self.dense_attr_2(torch.relu(self.dense_attr_1(x.T)))
        return z_v @ z_a.T, z_v


def fit_anomalydae(p: Prepared, cfg: TrainConfig, seed: int) -> dict:
    """PyGOD ``AnomalyDAE`` (alpha = cfg.weight, theta = eta = 1 so no positive re-weighting)."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = AnomalyDAE(p.x.shape[1], p.n, cfg.hid, cfg.hid)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)

    def score() -> torch.Tensor:
        x_hat, z_v = model(p.x, p.edge_index)
        s_err = structure_error(z_v, p, gen, cfg.neg_samples, sigmoid=True)
        return cfg.weight * attribute_error(p.x, x_hat) + (1 - cfg.weight) * s_err

    return train_then_score(score, opt, cfg, "anomalydae")


def fit_iforest(x: np.ndarray, seed: int, n_estimators: int = 100) -> dict:
    """Feature-only Isolation Forest (scikit-learn); higher score = more outlying."""
    from sklearn.ensemble import IsolationForest

    t0 = time.perf_counter()
    forest = IsolationForest(n_estimators=n_estimators, random_state=seed).fit(x)
    return {"scores": -forest.score_samples(x), "seconds": time.perf_counter() - t0}


def degree_probe(degree: np.ndarray) -> np.ndarray:
    """Leakage probe: the degree alone as the outlier score."""
    return np.asarray(degree, dtype=np.float64)


def feature_norm_probe(x: np.ndarray) -> np.ndarray:
    """Leakage probe: distance of the features from their column mean, as the outlier score."""
    return np.linalg.norm(x - x.mean(0), axis=1).astype(np.float64)


def leakage_probe(degree: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The leakage probe of the card's guard: max(rank(degree), rank(feature norm)), ranks scaled to (0, 1].

    Injected outliers leak through either signal (cliques raise the degree, the farthest-of-k swap raises the
    feature norm; VGOD, Huang et al. 2022), so the guard's probe takes whichever of the two ranks a node higher.
    """
    from scipy.stats import rankdata

    n = max(len(degree), 1)
    return np.maximum(rankdata(degree_probe(degree)) / n, rankdata(feature_norm_probe(x)) / n)
