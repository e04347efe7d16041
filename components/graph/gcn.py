"""A GCN layer with per-edge weights, on sparse message passing (scatter-add over the edge list).

Symmetric normalisation over A~ + I: out_i = sum_j w_ij / sqrt(d_i d_j) h_j + h_i / d_i with
d_i = 1 + sum_j w_ij, exactly PyG's ``GCNConv(edge_weight=...)`` with unit self-loops. Written with
``index_add_`` rather than PyG so the gradient reaches the edge weights without torch_sparse / pyg-lib
(neither installs for this torch), and memory stays O(E d): the 100k-node benchmark relies on that.
"""

from __future__ import annotations

import torch
from torch import nn


def gcn_norm(edge_index: torch.Tensor, weight: torch.Tensor | None, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(normalised edge coefficients, self-loop coefficients 1/d_i) for A~ + I."""
    src, dst = edge_index
    w = torch.ones(src.numel(), dtype=torch.float32) if weight is None else weight
    deg = torch.ones(n, dtype=w.dtype).index_add(0, dst, w)
    inv = deg.rsqrt()
    return inv[src] * w * inv[dst], 1.0 / deg


def propagate(h: torch.Tensor, edge_index: torch.Tensor, coef: torch.Tensor, self_coef: torch.Tensor) -> torch.Tensor:
    """sum over incoming edges of coef * h[src], plus the self-loop term."""
    src, dst = edge_index
    out = h * self_coef.unsqueeze(1)
    return out.index_add(0, dst, h[src] * coef.unsqueeze(1))


class GCNLayer(nn.Module):
    """One GCN layer: propagate(x W) + b, with normalisation supplied by the caller (computed once per forward)."""

    def __init__(self, in_dim: int, out_dim: int):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim))
        nn.init.xavier_uniform_(self.lin.weight)

    def forward(
        self,
        x: torch.Tensor,
        edge_index: torch.Tensor,
        norm: tuple[torch.Tensor, torch.Tensor],
        detach_weights: bool = False,
    ) -> torch.Tensor:
        w, b = (self.lin.weight.detach(), self.bias.detach()) if detach_weights else (self.lin.weight, self.bias)
        return propagate(x @ w.T, edge_index, *norm) + b


class GCN(nn.Module):
    """A stack of GCN layers with ReLU between layers (none after the last), as PyG's ``GCN``."""

    def __init__(self, dims: list[int], dropout: float = 0.0):
        super().__init__()
        self.layers = nn.ModuleList(GCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = dropout

    def forward(
        self,
        x: torch.Tensor,
        edge_index: torch.Tensor,
        norm: tuple[torch.Tensor, torch.Tensor],
        return_first: bool = False,
    ):
        first = None
        for i, layer in enumerate(self.layers):
            x = layer(x, edge_index, norm)
            if i < len(self.layers) - 1:
                x = torch.nn.functional.dropout(torch.relu(x), self.dropout, self.training)
            if i == 0:
                first = x
        return (x, first) if return_first else x
