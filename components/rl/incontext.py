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
from components.rl.networks import mlp


class InContextQ(nn.Module):
    """One in-context Q head: a feature MLP and an L-layer linear TD transformer."""

    def __init__(self, obs_dim: int, act_dim: int, *, d: int = 32, hidden: int = 128, layers: int = 2,
                 n_layers: int = 4, init: str = "td", alpha: float = 1.0, gamma: float = 0.99,
                 fixed_features: bool = False, seed: int = 0):
        super().__init__()
        self.phi_net = mlp(obs_dim + act_dim, d, hidden, layers)
        if fixed_features:
            self.phi_net.requires_grad_(False)
        self.tf = LinearTDTransformer(d, n_layers, init, alpha, seed)
        self.gamma, self.d = gamma, d

    def phi(self, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        f = self.phi_net(torch.cat([obs, act], -1))
        return F.layer_norm(f, (self.d,)) / math.sqrt(self.d)

    def forward(self, obs: torch.Tensor, act: torch.Tensor, ctx: dict | None = None) -> torch.Tensor:
        if ctx is None:
            raise ValueError("InContextQ needs a retrieved context (ctx)")
        b, k = ctx["rew"].shape
        both = self.phi(torch.cat([ctx["obs"], ctx["next_obs"]], 0).reshape(2 * b * k, -1),
                        torch.cat([ctx["act"], ctx["next_act"]], 0).reshape(2 * b * k, -1)).reshape(2, b, k, -1)
        phi_next = both[1] * ctx["not_done"].unsqueeze(-1)
        z = self.tf.prompt(both[0], phi_next, ctx["rew"], self.phi(obs, act), self.gamma)
        return self.tf(z)
