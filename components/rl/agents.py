"""Offline RL agents: BC, TD3+BC (Fujimoto & Gu 2021), IQL (Kostrikov et al. 2022) and ICQL.

ICQL is IQL with its global MLP critics replaced by in-context critics
(:class:`~components.rl.incontext.InContextQ`): same expectile V, same AWR policy, same
Polyak targets and hyperparameters, which is the card's global-vs-local comparison.
Every agent has ``update(batch) -> dict`` and ``act(obs) -> action`` (deterministic,
no retrieval at deployment), ``q_values(batch)`` and ``schedulers(steps)`` (IQL and ICQL
anneal the actor's rate by cosine, as IQL's reference code does).
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from components.errors import ParamsError
from components.rl.incontext import InContextQ
from components.rl.networks import MLPQ, DeterministicActor, GaussianActor, MLPQEnsemble, mlp, polyak

ACTOR_SCHEDULES = ("cosine", "constant")  # IQL-family actor learning-rate schedule


def expectile_loss(diff: torch.Tensor, tau: float) -> torch.Tensor:
    """IQL's asymmetric L2: mean of |tau - 1(diff < 0)| * diff^2, with diff = Q - V."""
    weight = torch.where(diff < 0, 1.0 - tau, tau)
    return (weight * diff.pow(2)).mean()


class Agent(nn.Module):
    """Shared plumbing: deterministic action for numpy observations."""

    actor: nn.Module

    @torch.no_grad()
    def act(self, obs: np.ndarray) -> np.ndarray:
        o = torch.as_tensor(np.asarray(obs, dtype=np.float32)).reshape(1, -1)
        return self.actor(o)[0].numpy()

    @torch.no_grad()
    def pyfunc_predict(self, obs) -> np.ndarray:
        """MLflow pyfunc entry (``flows.runtime.mlflow_model``): observations (batch, obs_dim) -> actions."""
        return self.actor(torch.as_tensor(np.atleast_2d(np.asarray(obs, dtype=np.float32)))).numpy()

    def q_values(self, batch: dict) -> torch.Tensor:  # pragma: no cover - overridden by critics
        raise NotImplementedError

    def schedulers(self, steps: int) -> list:
        """Learning-rate schedulers for a run of ``steps`` gradient steps, stepped once per step (none here)."""
        return []


class BC(Agent):
    """Behaviour cloning: MSE between tanh-MLP actions and dataset actions."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 128, layers: int = 2, lr: float = 3e-4, **_):
        super().__init__()
        self.actor = DeterministicActor(obs_dim, act_dim, hidden, layers)
        self.opt = torch.optim.Adam(self.actor.parameters(), lr=lr)

    def update(self, b: dict) -> dict:
        loss = F.mse_loss(self.actor(b["obs"]), b["act"])
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return {"actor_loss": loss.item()}


class TD3BC(Agent):
    """TD3 with a BC term: actor loss = -lambda Q1(s, pi(s)) + (pi(s) - a)^2, lambda = alpha / mean|Q|."""

    def __init__(
        self,
        obs_dim: int,
        act_dim: int,
        hidden: int = 128,
        layers: int = 2,
        lr: float = 3e-4,
        gamma: float = 0.99,
        polyak_tau: float = 0.005,
        td3_alpha: float = 2.5,
        policy_noise: float = 0.2,
        noise_clip: float = 0.5,
        policy_delay: int = 2,
        **_,
    ):
        super().__init__()
        self.actor = DeterministicActor(obs_dim, act_dim, hidden, layers)
        self.qs = nn.ModuleList(MLPQ(obs_dim, act_dim, hidden, layers) for _ in range(2))
        self.actor_t, self.qs_t = copy.deepcopy(self.actor), copy.deepcopy(self.qs)
        self.opt_a = torch.optim.Adam(self.actor.parameters(), lr=lr)
        self.opt_q = torch.optim.Adam(self.qs.parameters(), lr=lr)
        self.gamma, self.tau, self.alpha = gamma, polyak_tau, td3_alpha
        self.noise, self.clip, self.delay, self.steps = policy_noise, noise_clip, policy_delay, 0

    def update(self, b: dict) -> dict:
        with torch.no_grad():
            noise = (torch.randn_like(b["act"]) * self.noise).clamp(-self.clip, self.clip)
            a2 = (self.actor_t(b["next_obs"]) + noise).clamp(-1, 1)
            q2 = torch.min(*[q(b["next_obs"], a2) for q in self.qs_t])
            y = b["rew"] + self.gamma * b["not_done"] * q2
        q_loss = sum(F.mse_loss(q(b["obs"], b["act"]), y) for q in self.qs)
        self.opt_q.zero_grad()
        q_loss.backward()
        self.opt_q.step()
        out = {"q_loss": q_loss.item()}
        self.steps += 1
        if self.steps % self.delay == 0:
            pi = self.actor(b["obs"])
            q = self.qs[0](b["obs"], pi)
            lam = self.alpha / q.abs().mean().detach().clamp_min(1e-6)
            a_loss = -lam * q.mean() + F.mse_loss(pi, b["act"])
            self.opt_a.zero_grad()
            a_loss.backward()
            self.opt_a.step()
            polyak(self.actor_t, self.actor, self.tau)
            polyak(self.qs_t, self.qs, self.tau)
            out["actor_loss"] = a_loss.item()
        return out

    @torch.no_grad()
    def q_values(self, b: dict) -> torch.Tensor:
        return torch.min(*[q(b["obs"], b["act"]) for q in self.qs])


class IQL(Agent):
    """Implicit Q-learning: expectile V, MSE Q onto r + gamma V(s'), AWR policy, Polyak Q targets.

    The ``n_critics`` critics are one stacked module (``qs``: forward -> (n_critics, B)), so the twin critics
    and their targets each take one batched forward.
    """

    uses_context = False

    def __init__(
        self,
        obs_dim: int,
        act_dim: int,
        hidden: int = 128,
        layers: int = 2,
        lr: float = 3e-4,
        gamma: float = 0.99,
        polyak_tau: float = 0.005,
        expectile: float = 0.7,
        beta: float = 3.0,
        max_weight: float = 100.0,
        n_critics: int = 2,
        actor_schedule: str = "cosine",
        **critic_kw,
    ):
        super().__init__()
        if actor_schedule not in ACTOR_SCHEDULES:
            raise ParamsError(f"actor_schedule: expected one of {ACTOR_SCHEDULES}, got {actor_schedule!r}")
        self.actor_schedule = actor_schedule
        self.qs = self.make_critics(obs_dim, act_dim, hidden, layers, gamma, n_critics, critic_kw)
        self.qs_t = copy.deepcopy(self.qs).requires_grad_(False)
        self.v = mlp(obs_dim, 1, hidden, layers)
        self.actor = GaussianActor(obs_dim, act_dim, hidden, layers)
        self.opt_q = torch.optim.Adam([p for p in self.qs.parameters() if p.requires_grad], lr=lr)
        self.opt_v = torch.optim.Adam(self.v.parameters(), lr=lr)
        self.opt_a = torch.optim.Adam(self.actor.parameters(), lr=lr)
        self.gamma, self.tau, self.expectile, self.beta, self.max_w = gamma, polyak_tau, expectile, beta, max_weight

    def make_critics(self, obs_dim, act_dim, hidden, layers, gamma, n, kw) -> nn.Module:
        return MLPQEnsemble(n, obs_dim, act_dim, hidden, layers)

    def _q(self, critics: nn.Module, b: dict) -> torch.Tensor:
        """Every critic's Q(s, a) (with its retrieved context for ICQL): (n_critics, B)."""
        return critics(b["obs"], b["act"], b.get("ctx"))

    def update(self, b: dict) -> dict:
        with torch.no_grad():
            q_t = self._q(self.qs_t, b).min(0).values
        v = self.v(b["obs"]).squeeze(-1)
        v_loss = expectile_loss(q_t - v, self.expectile)
        self.opt_v.zero_grad()
        v_loss.backward()
        self.opt_v.step()
        with torch.no_grad():
            y = b["rew"] + self.gamma * b["not_done"] * self.v(b["next_obs"]).squeeze(-1)
        q_loss = (self._q(self.qs, b) - y).pow(2).mean(1).sum()  # sum over critics of each one's MSE
        self.opt_q.zero_grad()
        q_loss.backward()
        self.opt_q.step()
        w = torch.exp(self.beta * (q_t - v.detach())).clamp(max=self.max_w)
        a_loss = -(w * self.actor.log_prob(b["obs"], b["act"])).mean()
        self.opt_a.zero_grad()
        a_loss.backward()
        self.opt_a.step()
        polyak(self.qs_t, self.qs, self.tau)
        return {"v_loss": v_loss.item(), "q_loss": q_loss.item(), "actor_loss": a_loss.item()}

    @torch.no_grad()
    def q_values(self, b: dict) -> torch.Tensor:
        return self._q(self.qs, b).min(0).values

    def schedulers(self, steps: int) -> list:
        """``cosine``: the actor's rate anneals to 0 over the run (``CosineAnnealingLR(T_max=steps)``), as IQL's
        reference code and its CORL and d3rlpy reproductions do; the critics and V keep a constant rate."""
        if self.actor_schedule == "cosine":
            return [torch.optim.lr_scheduler.CosineAnnealingLR(self.opt_a, T_max=max(1, steps))]
        return []


class ICQL(IQL):
    """IQL whose critics are in-context linear-TD transformers over retrieved transitions."""

    uses_context = True

    def make_critics(self, obs_dim, act_dim, hidden, layers, gamma, n, kw) -> nn.Module:
        return InContextQ(
            obs_dim,
            act_dim,
            n=n,
            hidden=hidden,
            layers=layers,
            gamma=gamma,
            seed=kw.get("seed", 0),
            **{k: v for k, v in kw.items() if k != "seed"},
        )


AGENTS = {"bc": BC, "td3bc": TD3BC, "iql": IQL, "icql": ICQL}
