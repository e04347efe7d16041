"""Held-out accuracy (mean@k, unbiased pass@k), zero-variance group share and the empirical gradient variance
along fixed random directions (measured by re-sampling at frozen parameters)."""

from __future__ import annotations

from math import comb

import numpy as np
import torch

from components.rl_text.sampling import sample
from components.vip.codec import CHAR, Codec


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k)."""
    if k > n:
        raise ValueError(f"pass@k needs k <= n, got k={k}, n={n}")
    return 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)


def correct_counts(
    model, rows: list[dict], k: int, *, max_new: int, seed: int, temperature: float = 1.0, codec: Codec = CHAR
) -> np.ndarray:
    """Successes out of ``k`` samples per prompt (a fixed generator: every method is scored on the same draws)."""
    ro = sample(
        model,
        [codec.encode(r["prompt"]) for r in rows],
        [k] * len(rows),
        max_new=max_new,
        eos=codec.eos,
        pad=codec.pad,
        temperature=temperature,
        generator=torch.Generator().manual_seed(seed),
    )
    texts = ro.texts(codec.decode)
    ok = np.array([codec.reward(rows[int(i)]["target"], t) for i, t in zip(ro.prompt_index, texts)])
    return np.bincount(ro.prompt_index.numpy(), weights=ok, minlength=len(rows))


def accuracy(counts: np.ndarray, k: int, pass_ks=(1, 4, 8)) -> dict:
    out = {"mean@k": float(np.mean(counts / k))}
    for kk in pass_ks:
        if kk <= k:
            out[f"pass@{kk}"] = float(np.mean([pass_at_k(k, int(c), kk) for c in counts]))
    return out


def zero_variance_fraction(rewards: np.ndarray, groups: np.ndarray) -> float:
    """Share of groups whose rewards are all equal (no learning signal under group baselines)."""
    ids = np.unique(groups)
    return float(np.mean([np.ptp(rewards[groups == g]) == 0 for g in ids]))


def projected_gradient_variance(
    trainer, prompts, group_sizes, reward_fn, *, repeats: int, n_dirs: int, seed: int
) -> float:
    """Mean over ``n_dirs`` fixed random unit directions of the variance (over ``repeats`` re-samplings at frozen
    parameters) of the policy gradient's projection. Parameters are not changed."""
    from components.rl_text import advantages as A

    params = [p for p in trainer.policy.parameters() if p.requires_grad]
    dim = sum(p.numel() for p in params)
    g = torch.Generator().manual_seed(seed)
    dirs = torch.randn(n_dirs, dim, generator=g)
    dirs = dirs / dirs.norm(dim=1, keepdim=True)
    proj = []
    for _ in range(repeats):
        ro = trainer.rollout(prompts, group_sizes)
        rewards = trainer.score(ro, reward_fn)
        adv = A.group_advantages(rewards, ro.prompt_index, trainer.cfg.advantage)
        loss, _ = trainer.loss(ro, adv)
        grads = torch.autograd.grad(loss, params, allow_unused=True)
        flat = torch.cat([(gr if gr is not None else torch.zeros_like(p)).reshape(-1) for gr, p in zip(grads, params)])
        proj.append((dirs @ flat).numpy())
    return float(np.mean(np.var(np.array(proj), axis=0, ddof=1)))
