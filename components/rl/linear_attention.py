"""The linear-attention transformer of ICQL whose layers run TD(0) on in-context linear Q weights.

Prompt ``Z`` (shape ``(B, 2d+1, k+1)``): column i < k is ``[phi_i; gamma*phi'_i; r_i]`` for a
retrieved transition, the last column is the query ``[phi_q; 0; 0]``. A layer is

    Z <- Z + P_l Z M (Z^T G_l Z) / k,      M = diag(1, ..., 1, 0)  (the query is not a key).

With ``P = e e^T`` (e = last unit vector) and ``G = alpha [[-I, I, 0]; 0; 0]`` the last row
of column j holds ``r_j + w^T(gamma phi'_j - phi_j)`` (the TD error of j under the implicit
weights w, and ``-w^T phi_q`` at the query), and one layer is exactly one batch TD(0)/SARSA step
``w <- w + alpha/k sum_i delta_i phi_i``. The Q estimate is ``-Z[-1, -1]`` after L layers.
``init="td"`` starts every layer at that construction; ``init="random"`` at small noise.
"""

from __future__ import annotations

import torch
from torch import nn

from components.errors import ParamsError

INITS = ("td", "random")


def td_construction(d: int, alpha: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(P, G) for which one layer performs one TD(0) step with step size ``alpha``."""
    n = 2 * d + 1
    p = torch.zeros(n, n)
    p[-1, -1] = 1.0
    g = torch.zeros(n, n)
    g[:d, :d] = -alpha * torch.eye(d)
    g[:d, d:2 * d] = alpha * torch.eye(d)
    return p, g


class LinearTDLayer(nn.Module):
    """One masked linear-attention layer with learnable P and G."""

    def __init__(self, d: int, init: str = "td", alpha: float = 1.0, noise: float = 0.01,
                 generator: torch.Generator | None = None):
        super().__init__()
        if init not in INITS:
            raise ParamsError(f"init: expected one of {INITS}, got {init!r}")
        n = 2 * d + 1
        if init == "td":
            p, g = td_construction(d, alpha)
        else:
            p = noise * torch.randn(n, n, generator=generator)
            g = noise * torch.randn(n, n, generator=generator)
        self.P = nn.Parameter(p)
        self.G = nn.Parameter(g)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        k = z.shape[-1] - 1
        keys = z[..., :k]  # Z M drops the query column
        scores = keys.transpose(1, 2) @ (self.G @ z)  # (Z M)^T G Z, rows of the masked query dropped
        update = self.P @ (keys @ scores) / k
        return z + update


class LinearTDTransformer(nn.Module):
    """L stacked :class:`LinearTDLayer`; ``forward`` returns Q-hat = -Z[-1, -1]."""

    def __init__(self, d: int, n_layers: int = 4, init: str = "td", alpha: float = 1.0, seed: int = 0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.d = d
        self.layers = nn.ModuleList(LinearTDLayer(d, init, alpha, generator=gen) for _ in range(n_layers))

    @staticmethod
    def prompt(phi: torch.Tensor, phi_next: torch.Tensor, rewards: torch.Tensor, phi_query: torch.Tensor,
               gamma: float) -> torch.Tensor:
        """Build Z from context features (B, k, d), next features (B, k, d), rewards (B, k), query (B, d)."""
        b, k, d = phi.shape
        ctx = torch.cat([phi, gamma * phi_next, rewards.unsqueeze(-1)], -1)  # (B, k, 2d+1)
        query = torch.cat([phi_query, torch.zeros(b, d + 1, dtype=phi.dtype)], -1).unsqueeze(1)
        return torch.cat([ctx, query], 1).transpose(1, 2)  # (B, 2d+1, k+1)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            z = layer(z)
        return -z[:, -1, -1]
