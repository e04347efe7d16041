"""Small torch networks shared by the offline RL agents: MLPs (single and stacked ensembles), a Gaussian and a
deterministic actor."""

from __future__ import annotations

import math

import torch
from torch import nn


def mlp(inp: int, out: int, hidden: int = 128, layers: int = 2) -> nn.Sequential:
    """``layers`` hidden ReLU layers of width ``hidden``."""
    mods: list[nn.Module] = []
    d = inp
    for _ in range(layers):
        mods += [nn.Linear(d, hidden), nn.ReLU()]
        d = hidden
    mods.append(nn.Linear(d, out))
    return nn.Sequential(*mods)


class EnsembleLinear(nn.Module):
    """``n`` independent linear layers run as one batched matmul: weight (n, in, out), bias (n, 1, out).

    Each member is initialised as ``nn.Linear`` would be (its own draw from the global generator), so a stack of
    ``n`` members is distributed as ``n`` separate layers; an input (rows, in) is shared by every member, an input
    (n, rows, in) gives each member its own rows. Output: (n, rows, out).
    """

    def __init__(self, n: int, inp: int, out: int):
        super().__init__()
        members = [nn.Linear(inp, out) for _ in range(n)]
        self.weight = nn.Parameter(torch.stack([m.weight.detach().t() for m in members]).contiguous())
        self.bias = nn.Parameter(torch.stack([m.bias.detach() for m in members]).unsqueeze(1).contiguous())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:
            n, inp, out = self.weight.shape
            y = x @ self.weight.transpose(0, 1).reshape(inp, n * out)  # one GEMM for every member
            return y.reshape(-1, n, out).transpose(0, 1) + self.bias
        return torch.baddbmm(self.bias, x, self.weight)


def ensemble_mlp(n: int, inp: int, out: int, hidden: int = 128, layers: int = 2) -> nn.Sequential:
    """``n`` stacked :func:`mlp` of the same shape, evaluated in one pass: (rows, inp) -> (n, rows, out)."""
    mods: list[nn.Module] = []
    d = inp
    for _ in range(layers):
        mods += [EnsembleLinear(n, d, hidden), nn.ReLU()]
        d = hidden
    mods.append(EnsembleLinear(n, d, out))
    return nn.Sequential(*mods)


class MLPQ(nn.Module):
    """Q(s, a) as an MLP on the concatenation (the global Q of IQL / TD3+BC)."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 128, layers: int = 2):
        super().__init__()
        self.net = mlp(obs_dim + act_dim, 1, hidden, layers)

    def forward(self, obs: torch.Tensor, act: torch.Tensor, ctx: dict | None = None) -> torch.Tensor:
        return self.net(torch.cat([obs, act], -1)).squeeze(-1)


class MLPQEnsemble(nn.Module):
    """``n`` global MLP critics (IQL's twin Q) stacked: one forward for all; returns (n, batch)."""

    def __init__(self, n: int, obs_dim: int, act_dim: int, hidden: int = 128, layers: int = 2):
        super().__init__()
        self.n = n
        self.net = ensemble_mlp(n, obs_dim + act_dim, 1, hidden, layers)

    def forward(self, obs: torch.Tensor, act: torch.Tensor, ctx: dict | None = None) -> torch.Tensor:
        return self.net(torch.cat([obs, act], -1)).squeeze(-1)


class GaussianActor(nn.Module):
    """tanh-squashed mean and a state-independent log-std (IQL's policy); deterministic at evaluation."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 128, layers: int = 2):
        super().__init__()
        self.net = mlp(obs_dim, act_dim, hidden, layers)
        self.log_std = nn.Parameter(torch.zeros(act_dim))

    def mean(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.net(obs))

    def log_prob(self, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        """Log-density of ``act`` under N(mean, std^2) (the AWR objective's log pi)."""
        log_std = self.log_std.clamp(-5.0, 2.0)
        z = (act - self.mean(obs)) / log_std.exp()
        return (-0.5 * z.pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.mean(obs)


class DeterministicActor(nn.Module):
    """a = tanh(MLP(s)) (BC and TD3+BC)."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 128, layers: int = 2):
        super().__init__()
        self.net = mlp(obs_dim, act_dim, hidden, layers)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.net(obs))


@torch.no_grad()
def polyak(target: nn.Module, source: nn.Module, tau: float) -> None:
    """target <- (1 - tau) target + tau source, parameter by parameter."""
    for t, s in zip(target.parameters(), source.parameters()):
        t.mul_(1 - tau).add_(s, alpha=tau)
