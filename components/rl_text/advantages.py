"""Group-relative advantages for groups of different sizes in one batch.

``rewards`` is one value per completion, ``groups`` the group (prompt) index of each completion. Groups need
not be contiguous or equal in size; this is why the loop is ours and not TRL's ``GRPOTrainer``, whose
``num_generations`` fixes one group size for the batch.
"""

from __future__ import annotations

import torch

from components.errors import ParamsError
from components.rl_text import ADVANTAGES as KINDS

STD_EPS = 1e-4  # TRL's epsilon in (r - mean) / (std + 1e-4)


def _group_stats(rewards: torch.Tensor, groups: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-completion group size, group sum and group sum of squares."""
    n_groups = int(groups.max()) + 1
    size = torch.zeros(n_groups, dtype=rewards.dtype).index_add_(0, groups, torch.ones_like(rewards))
    total = torch.zeros(n_groups, dtype=rewards.dtype).index_add_(0, groups, rewards)
    sq = torch.zeros(n_groups, dtype=rewards.dtype).index_add_(0, groups, rewards * rewards)
    return size[groups], total[groups], sq[groups]


def group_advantages(rewards: torch.Tensor, groups: torch.Tensor, kind: str) -> torch.Tensor:
    """One advantage per completion.

    - ``grpo``: (r - mean_g) / (std_g + 1e-4), std with Bessel's correction (as TRL's ``nanstd``);
    - ``drgrpo``: r - mean_g (Liu et al. 2025: no std scaling);
    - ``rloo``: r - mean of the *other* members of the group (Ahmadian et al. 2024).
    A group of one gets advantage 0 under every kind (no baseline can be formed).
    """
    if kind not in KINDS:
        raise ParamsError(f"advantage kind {kind!r} is not one of {KINDS}")
    rewards = rewards.to(torch.float64)
    groups = groups.long()
    if rewards.shape != groups.shape or rewards.dim() != 1:
        raise ParamsError(f"rewards {tuple(rewards.shape)} and groups {tuple(groups.shape)} must be equal 1-D shapes")
    n, total, sq = _group_stats(rewards, groups)
    mean = total / n
    if kind == "rloo":
        adv = torch.where(n > 1, rewards - (total - rewards) / (n - 1).clamp(min=1), torch.zeros_like(rewards))
    else:
        adv = rewards - mean
        if kind == "grpo":
            var = ((sq - n * mean * mean) / (n - 1).clamp(min=1)).clamp(min=0)
            adv = adv / (var.sqrt() + STD_EPS)
        adv = torch.where(n > 1, adv, torch.zeros_like(adv))
    return adv.float()


def token_advantages(adv: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Broadcast per-completion advantages (B,) to tokens (B, T); per-token advantages (B, T) pass through."""
    if adv.dim() == 1:
        adv = adv.unsqueeze(1).expand_as(mask)
    if adv.shape != mask.shape:
        raise ParamsError(f"advantages {tuple(adv.shape)} do not match the completion mask {tuple(mask.shape)}")
    return adv * mask


POSITION_EPS = 1e-8  # the official CDPATrainer's epsilon in (r - mean) / (std + 1e-8)


def position_group_advantages(
    token_rewards: torch.Tensor, groups: torch.Tensor, *, eps: float = POSITION_EPS
) -> torch.Tensor:
    """Per-token advantages normalised per token position within each group (CDRA's CDPA).

    ``token_rewards`` (B, T) gives every completion token a reward (a process reward: the score of the step the
    token belongs to; 0 past a completion's end, as in the official trainer, which pads with 0 and normalises
    the padded grid). For each group g and position t: A[b, t] = (r[b, t] - mean_g[t]) / (std_g[t] + eps), std
    with Bessel's correction (``torch.std``'s default). Groups may differ in size; a group of one gets 0.
    """
    if token_rewards.dim() != 2 or groups.dim() != 1 or groups.shape[0] != token_rewards.shape[0]:
        raise ParamsError(
            f"token rewards {tuple(token_rewards.shape)} must be (B, T) and groups {tuple(groups.shape)} (B,)"
        )
    r = token_rewards.to(torch.float64)
    groups = groups.long()
    n_groups = int(groups.max()) + 1
    size = torch.zeros(n_groups, dtype=r.dtype).index_add_(0, groups, torch.ones(r.shape[0], dtype=r.dtype))
    total = torch.zeros((n_groups, r.shape[1]), dtype=r.dtype).index_add_(0, groups, r)
    n = size[groups].unsqueeze(1)
    mean = total[groups] / n
    dev = r - mean
    sq = torch.zeros((n_groups, r.shape[1]), dtype=r.dtype).index_add_(0, groups, dev * dev)
    std = (sq[groups] / (n - 1).clamp(min=1)).sqrt()
    adv = torch.where(n > 1, dev / (std + eps), torch.zeros_like(dev))
    return adv.float()
