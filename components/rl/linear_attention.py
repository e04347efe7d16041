"""The linear-attention transformer of ICQL whose layers run TD(0) on in-context linear Q weights.

Prompt ``Z`` (shape ``(B, 2d+1, k+1)``): column i < k is ``[phi_i; gamma*phi'_i; r_i]`` for a
retrieved transition, the last column is the query ``[phi_q; 0; 0]``. A layer is

    Z <- Z + P_l Z M (Z^T G_l Z) / k,      M = diag(1, ..., 1, 0)  (the query is not a key).

With ``P = e e^T`` (e = last unit vector) and ``G = alpha [[-I, I, 0]; 0; 0]`` the last row
of column j holds ``r_j + w^T(gamma phi'_j - phi_j)`` (the TD error of j under the implicit
weights w, and ``-w^T phi_q`` at the query), and one layer is exactly one batch TD(0)/SARSA step
``w <- w + alpha/k sum_i delta_i phi_i``. The Q estimate is ``-Z[-1, -1]`` after L layers.
``init="td"`` starts every layer at that construction; ``init="random"`` at small noise.

``heads=n`` stacks n independent transformers (ICQL's twin critics): P and G get a leading axis of n and the
prompt one of n too, so the critics run as one batched forward. Only ``Z[-1, -1]`` of the last layer is read, so
the last layer computes that entry alone (the query column's update, exact: no other entry feeds it).
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
    g[:d, d : 2 * d] = alpha * torch.eye(d)
    return p, g


class LinearTDLayer(nn.Module):
    """One masked linear-attention layer with learnable P and G (``heads``: a stack of independent layers)."""

    def __init__(
        self,
        d: int,
        init: str = "td",
        alpha: float = 1.0,
        noise: float = 0.01,
        generator: torch.Generator | None = None,
        heads: int | None = None,
    ):
        super().__init__()
        if init not in INITS:
            raise ParamsError(f"init: expected one of {INITS}, got {init!r}")
        n = 2 * d + 1
        lead = () if heads is None else (heads,)
        if init == "td":
            p, g = (m.expand(*lead, n, n).clone() for m in td_construction(d, alpha))
        else:
            p = noise * torch.randn(*lead, n, n, generator=generator)
            g = noise * torch.randn(*lead, n, n, generator=generator)
        self.P = nn.Parameter(p)
        self.G = nn.Parameter(g)

    def _mix(self, xt: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        """``(M X)^T`` for token-major ``xt = X^T`` (..., rows, 2d+1): one large matmul per head, not one per prompt."""
        if m.dim() == 2:
            return xt @ m.t()
        lead = xt.shape[:-2]
        flat = xt.reshape(m.shape[0], -1, xt.shape[-1])  # (heads, batch * rows, 2d+1)
        return torch.bmm(flat, m.transpose(1, 2)).reshape(*lead, *xt.shape[-2:])

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        zt = z.transpose(-1, -2)  # token-major (..., k+1, 2d+1): a view of what ``prompt`` built
        k = zt.shape[-2] - 1
        keys = zt[..., :k, :]  # Z M drops the query column
        scores = keys @ self._mix(zt, self.G).transpose(-1, -2)  # (Z M)^T G Z: (..., k, k+1)
        update = self._mix(scores.transpose(-1, -2) @ keys, self.P) / k  # (P Z M (Z^T G Z))^T
        return (zt + update).transpose(-1, -2)

    def query_output(self, z: torch.Tensor) -> torch.Tensor:
        """``forward(z)[..., -1, -1]`` alone: the query column's last entry, at O(n^2 + nk) per prompt."""
        zt = z.transpose(-1, -2)
        k = zt.shape[-2] - 1
        keys = zt[..., :k, :]
        scores = keys @ self._mix(zt[..., k:, :].contiguous(), self.G).transpose(-1, -2)  # (..., k, 1)
        mixed = (scores.transpose(-1, -2) @ keys)[..., 0, :]  # (..., 2d+1): (Z M (Z^T G Z))[:, query]
        p_last = (
            self.P[..., -1, :]
            if self.P.dim() == 2
            else self.P[:, -1, :].reshape(self.P.shape[0], *([1] * (mixed.dim() - 2)), -1)
        )
        return zt[..., -1, -1] + (mixed * p_last).sum(-1) / k


class LinearTDTransformer(nn.Module):
    """L stacked :class:`LinearTDLayer`; ``forward`` returns Q-hat = -Z[-1, -1]."""

    def __init__(
        self, d: int, n_layers: int = 4, init: str = "td", alpha: float = 1.0, seed: int = 0, heads: int | None = None
    ):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.d, self.heads = d, heads
        self.layers = nn.ModuleList(LinearTDLayer(d, init, alpha, generator=gen, heads=heads) for _ in range(n_layers))

    @staticmethod
    def prompt(
        phi: torch.Tensor, phi_next: torch.Tensor, rewards: torch.Tensor, phi_query: torch.Tensor, gamma: float
    ) -> torch.Tensor:
        """Build Z from context features (..., B, k, d), next features (..., B, k, d), rewards (B, k) (broadcast
        over the leading axes) and the query (..., B, d); returns (..., B, 2d+1, k+1)."""
        d = phi.shape[-1]
        rew = rewards.unsqueeze(-1).expand(*phi.shape[:-1], 1).to(phi.dtype)
        ctx = torch.cat([phi, gamma * phi_next, rew], -1)  # (..., B, k, 2d+1)
        query = torch.cat([phi_query, phi_query.new_zeros(*phi_query.shape[:-1], d + 1)], -1).unsqueeze(-2)
        return torch.cat([ctx, query], -2).transpose(-1, -2)  # (..., B, 2d+1, k+1), a view of token-major data

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """Q-hat = -Z[-1, -1] after the L layers (the last one computes that entry only): shape (..., B)."""
        for layer in self.layers[:-1]:
            z = layer(z)
        return -self.layers[-1].query_output(z)
