"""ICQL's in-context critic: Q-hat(s, a | context) = linear-TD transformer over retrieved transitions.

Features ``phi(s, a)`` come from an MLP whose output is layer-normalised and scaled to
unit length (so an in-context TD step with alpha ~ 1 is stable), learned jointly by
default or frozen at its random initialisation (``fixed_features``). The context of a
query (s, a) is the k transitions retrieved for s: their ``phi(s_i, a_i)``,
``gamma * phi(s'_i, a'_i)`` (zero after a terminal) and ``r_i``.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from components.rl.linear_attention import LinearTDTransformer
from components.rl.networks import ensemble_mlp


class InContextQ(nn.Module):
    """``n`` in-context Q heads (ICQL's twin critics), stacked: feature MLPs and L-layer linear TD transformers.

    One forward computes every head's features for the context, next and query rows at once (one batched MLP)
    and runs the heads' transformers as one batched prompt: Q-hat of shape (n, B). Head i is distributed exactly
    as a separate critic would be (its own feature MLP draw; its own P, G).
    """

    def __init__(
        self,
        obs_dim: int,
        act_dim: int,
        *,
        n: int = 2,
        d: int = 32,
        hidden: int = 128,
        layers: int = 2,
        n_layers: int = 4,
        init: str = "td",
        alpha: float = 1.0,
        gamma: float = 0.99,
        fixed_features: bool = False,
        seed: int = 0,
    ):
        super().__init__()
        self.phi_net = ensemble_mlp(n, obs_dim + act_dim, d, hidden, layers)
        if fixed_features:
            self.phi_net.requires_grad_(False)
        self.tf = LinearTDTransformer(d, n_layers, init, alpha, seed, heads=n)
        self.gamma, self.d, self.n = gamma, d, n

    def phi(self, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        """Every head's features of (rows, obs) x (rows, act): (n, rows, d), layer-normalised, unit length."""
        f = self.phi_net(torch.cat([obs, act], -1))
        return F.layer_norm(f, (self.d,)) / math.sqrt(self.d)

    def forward(self, obs: torch.Tensor, act: torch.Tensor, ctx: dict | None = None) -> torch.Tensor:
        if ctx is None:
            raise ValueError("InContextQ needs a retrieved context (ctx)")
        b, k = ctx["rew"].shape
        rows = b * k
        f = self.phi(
            torch.cat([ctx["obs"].reshape(rows, -1), ctx["next_obs"].reshape(rows, -1), obs], 0),
            torch.cat([ctx["act"].reshape(rows, -1), ctx["next_act"].reshape(rows, -1), act], 0),
        )
        phi_ctx = f[:, :rows].reshape(self.n, b, k, self.d)
        phi_next = f[:, rows : 2 * rows].reshape(self.n, b, k, self.d) * ctx["not_done"].unsqueeze(-1)
        z = self.tf.prompt(phi_ctx, phi_next, ctx["rew"], f[:, 2 * rows :], self.gamma)
        return self.tf(z)
