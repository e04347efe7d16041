"""The clipped per-token policy loss with a KL penalty to a frozen reference, as TRL's ``GRPOTrainer``.

Per token: ``-min(ratio * A, clip(ratio, 1-eps_low, 1+eps_high) * A) + beta * KL``, with the k3 estimator
``exp(ref - logp) - (ref - logp) - 1`` (Schulman's unbiased, non-negative KL estimate, TRL's choice).
Aggregations (``tests/unit/rl_text`` checks each against TRL's own ``_compute_loss`` on one batch):

- ``seq_mean`` = TRL ``loss_type="grpo"``: mean over sequences of the per-sequence token mean;
- ``token_mean`` = TRL ``"bnpo"`` (DAPO's token-level mean over the batch);
- ``constant`` = TRL ``"dr_grpo"``: token sum / (B * max_completion_length);
- ``prompt_mean``: mean over prompts of each prompt's (token sum / (n_i * max_completion_length)). With equal
  group sizes this equals ``constant``; with variable sizes each prompt's gradient is the mean over its own n_i
  rollouts, the estimator whose variance the VIP allocator minimises ((n-1)/n^2 per prompt for Dr.GRPO).
"""

from __future__ import annotations

import torch

from components.errors import ParamsError

AGGREGATIONS = ("seq_mean", "token_mean", "constant", "prompt_mean")


def per_token_loss(
    logps: torch.Tensor,
    old_logps: torch.Tensor,
    ref_logps: torch.Tensor | None,
    advantages: torch.Tensor,
    *,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
    beta: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-token loss (B, T) and per-token KL (or None when beta is 0)."""
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)
    ratio = torch.exp(logps - old_logps)
    clipped = torch.clamp(ratio, 1 - eps_low, 1 + eps_high)
    loss = -torch.min(ratio * advantages, clipped * advantages)
    kl = None
    if beta != 0.0:
        if ref_logps is None:
            raise ParamsError("beta > 0 needs the reference model's log-probabilities")
        kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
        loss = loss + beta * kl
    return loss, kl


def aggregate(
    loss: torch.Tensor, mask: torch.Tensor, *, how: str, max_len: int | None = None, groups: torch.Tensor | None = None
) -> torch.Tensor:
    """Reduce a per-token loss (B, T) to a scalar under one of :data:`AGGREGATIONS`."""
    mask = mask.to(loss.dtype)
    if how == "seq_mean":
        return ((loss * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
    if how == "token_mean":
        return (loss * mask).sum() / mask.sum().clamp(min=1.0)
    if how not in ("constant", "prompt_mean"):
        raise ParamsError(f"loss aggregation {how!r} is not one of {AGGREGATIONS}")
    if max_len is None or max_len < 1:
        raise ParamsError(f"aggregation {how!r} needs max_len >= 1 (the max completion length)")
    if how == "constant":
        return (loss * mask).sum() / (loss.size(0) * max_len)
    if groups is None:
        raise ParamsError("aggregation 'prompt_mean' needs the group index of each completion")
    groups = groups.long()
    seq = (loss * mask).sum(-1) / max_len
    n_groups = int(groups.max()) + 1
    size = torch.zeros(n_groups, dtype=seq.dtype).index_add_(0, groups, torch.ones_like(seq))
    per_group = torch.zeros(n_groups, dtype=seq.dtype).index_add_(0, groups, seq) / size.clamp(min=1)
    return per_group[size > 0].mean()


def policy_loss(
    logps,
    old_logps,
    ref_logps,
    advantages,
    mask,
    *,
    how: str,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
    beta: float = 0.0,
    max_len: int | None = None,
    groups: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict]:
    """The scalar loss and a few statistics (mean KL over completion tokens, clipped share)."""
    loss, kl = per_token_loss(logps, old_logps, ref_logps, advantages, eps_low=eps_low, eps_high=eps_high, beta=beta)
    total = aggregate(loss, mask, how=how, max_len=max_len, groups=groups)
    m = mask.to(loss.dtype)
    with torch.no_grad():
        ratio = torch.exp(logps - old_logps)
        adv = advantages.unsqueeze(1) if advantages.dim() == 1 else advantages
        clipped = (((ratio < 1 - eps_low) & (adv < 0)) | ((ratio > 1 + eps_high) & (adv > 0))).to(m.dtype)
        stats = {
            "clip_frac": float((clipped * m).sum() / m.sum().clamp(min=1)),
            "kl": float((kl * m).sum() / m.sum().clamp(min=1)) if kl is not None else 0.0,
        }
    return total, stats
