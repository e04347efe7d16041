"""One GRPO-family update: sample variable-size groups, score, advantages, clipped loss + KL, optimiser step.

The caller chooses the group size of every prompt (uniform, VIP's allocation, a filter's survivors); the
trainer never assumes equal sizes. ``reward_fn(prompt_index, completion_text)`` returns a float per completion;
a caller with process rewards passes per-token advantages to :meth:`GroupRLTrainer.update` directly.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from components.errors import ParamsError
from components.rl_text import advantages as A
from components.rl_text import loss as L
from components.rl_text.sampling import Rollouts, completion_logps, sample


@dataclass(frozen=True)
class RLConfig:
    advantage: str = "drgrpo"  # grpo | drgrpo | rloo
    aggregation: str = "prompt_mean"  # see components.rl_text.loss
    lr: float = 1e-4
    beta: float = 0.0  # KL coefficient to the frozen reference
    eps_low: float = 0.2
    eps_high: float = 0.2
    ppo_epochs: int = 1  # updates per batch (1: ratio is 1 at the first step, as TRL's default num_iterations)
    temperature: float = 1.0
    max_new: int = 8
    grad_clip: float = 1.0

    def __post_init__(self) -> None:
        if self.advantage not in A.KINDS:
            raise ParamsError(f"advantage {self.advantage!r} is not one of {A.KINDS}")
        if self.aggregation not in L.AGGREGATIONS:
            raise ParamsError(f"aggregation {self.aggregation!r} is not one of {L.AGGREGATIONS}")
        if self.ppo_epochs < 1 or self.max_new < 1 or self.lr <= 0 or self.beta < 0:
            raise ParamsError("RLConfig: ppo_epochs and max_new must be >= 1, lr > 0, beta >= 0")


@dataclass
class StepStats:
    rewards: torch.Tensor  # (B,)
    prompt_index: torch.Tensor  # (B,)
    loss: float
    kl: float
    clip_frac: float
    tokens: int


class GroupRLTrainer:
    """Holds the policy, a frozen reference copy, an AdamW optimiser and a seeded sampling generator."""

    def __init__(
        self,
        policy: nn.Module,
        cfg: RLConfig,
        *,
        eos: int,
        pad: int = 0,
        seed: int = 0,
        reference: nn.Module | None = None,
    ) -> None:
        self.policy, self.cfg, self.eos, self.pad = policy, cfg, eos, pad
        self.reference = reference if reference is not None else copy.deepcopy(policy)
        self.reference.eval().requires_grad_(False)
        self.opt = torch.optim.AdamW(policy.parameters(), lr=cfg.lr, weight_decay=0.0)
        self.gen = torch.Generator().manual_seed(int(seed))

    def rollout(self, prompts: Sequence[Sequence[int]], group_sizes: Sequence[int]) -> Rollouts:
        return sample(
            self.policy,
            prompts,
            group_sizes,
            max_new=self.cfg.max_new,
            eos=self.eos,
            pad=self.pad,
            temperature=self.cfg.temperature,
            generator=self.gen,
        )

    def loss(
        self,
        ro: Rollouts,
        adv: torch.Tensor,
        old_logps: torch.Tensor | None = None,
        ref_logps: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict]:
        """The differentiable loss of a batch (advantages per completion (B,) or per token (B, T))."""
        c = self.cfg
        logps = completion_logps(self.policy, ro)
        old = logps.detach() if old_logps is None else old_logps
        if c.beta and ref_logps is None:
            with torch.no_grad():
                ref_logps = completion_logps(self.reference, ro)
        tok_adv = A.token_advantages(adv, ro.mask)
        return L.policy_loss(
            logps,
            old,
            ref_logps,
            tok_adv,
            ro.mask,
            how=c.aggregation,
            eps_low=c.eps_low,
            eps_high=c.eps_high,
            beta=c.beta,
            max_len=ro.max_new,
            groups=ro.prompt_index,
        )

    def update(self, ro: Rollouts, adv: torch.Tensor) -> dict:
        """``ppo_epochs`` optimiser steps on one batch; old log-probs fixed at the sampling policy. With one
        epoch they are the current log-probs, detached (TRL's ``num_iterations=1``), so no extra forward pass."""
        with torch.no_grad():
            old = completion_logps(self.policy, ro) if self.cfg.ppo_epochs > 1 else None
            ref = completion_logps(self.reference, ro) if self.cfg.beta else None
        self.policy.train()
        stats = {}
        for _ in range(self.cfg.ppo_epochs):
            loss, stats = self.loss(ro, adv, old, ref)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.policy.parameters(), self.cfg.grad_clip)
            self.opt.step()
            stats["loss"] = float(loss.detach())
        self.policy.eval()
        return stats

    def step(
        self, prompts: Sequence[Sequence[int]], group_sizes: Sequence[int], reward_fn: Callable[[int, list[int]], float]
    ) -> StepStats:
        """Sample, score, compute group advantages and update once."""
        ro = self.rollout(prompts, group_sizes)
        return self.train_on(ro, reward_fn)

    def score(self, ro: Rollouts, reward_fn: Callable[[int, list[int]], float]) -> torch.Tensor:
        return torch.tensor(
            [
                float(reward_fn(int(i), c[: int(m.sum())].tolist()))
                for i, c, m in zip(ro.prompt_index, ro.completions, ro.mask)
            ]
        )

    def train_on(
        self, ro: Rollouts, reward_fn: Callable[[int, list[int]], float], rewards: torch.Tensor | None = None
    ) -> StepStats:
        rewards = self.score(ro, reward_fn) if rewards is None else rewards
        adv = A.group_advantages(rewards, ro.prompt_index, self.cfg.advantage)
        st = self.update(ro, adv)
        return StepStats(
            rewards=rewards,
            prompt_index=ro.prompt_index,
            loss=st["loss"],
            kl=st["kl"],
            clip_frac=st["clip_frac"],
            tokens=int(ro.mask.sum()),
        )
