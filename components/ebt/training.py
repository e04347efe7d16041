"""The EBT training loop: the repo's ``forward_loss_wrapper`` under the Transformer++'s optimiser and schedule.

Loss: cross-entropy of softmax(y_i) against the next token, averaged over the optimisation steps i = 1..M
(``truncate_mcmc=False``; ``truncate`` keeps only the last step), backpropagated through the optimisation
(``create_graph=True``). The optimiser, batches and schedule are the tiny LM trainer's
(``components.training.lm_trainer``: AdamW 0.9/0.95, decay on matrices, warmup-stable-decay, batch s depends only
on (seed, s)), so EBT and Transformer++ see the same tokens in the same order; alpha trains at
``peak_lr * step_size_lr_mult`` (the repo's ``mcmc_step_size_lr_multiplier``).

Plain PyTorch rather than Lightning for the same reason as the LM trainer: the tiny models are overhead-bound on
2 CPU cores (benchmarks/trainer_overhead.py).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from components.ebt.energy_model import EnergyTransformer
from components.ebt.optimise import initial_logits, minimise
from components.ebt.tricks import ReplayBuffer, Tricks, randomised_alpha, step_plan
from components.errors import ParamsError
from components.training.lm_trainer import sample_batch
from components.training.schedules import wsd_lr


@dataclass
class EBTTrainResult:
    history: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    tokens_per_step: int = 0
    steps: int = 0


def make_optimizer(model: EnergyTransformer, *, lr: float, weight_decay: float, alpha_lr_mult: float):
    """AdamW with the LM trainer's groups (decay on matrices only) plus alpha at ``lr * alpha_lr_mult``."""
    params = [p for n, p in model.named_parameters() if p.requires_grad and n != "alpha"]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay, "mult": 1.0},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0, "mult": 1.0},
    ]
    if model.alpha.requires_grad:
        groups.append({"params": [model.alpha], "weight_decay": 0.0, "mult": alpha_lr_mult})
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8)


def ebt_loss(
    model: EnergyTransformer,
    x: torch.Tensor,
    targets: torch.Tensor,
    *,
    steps: int,
    tricks: Tricks,
    gen: torch.Generator,
    rng: random.Random,
    init_scale: float = 1.0,
    detach: bool = True,
    truncate: bool = False,
    replay: ReplayBuffer | None = None,
    second_order: bool = True,
) -> tuple[torch.Tensor, dict]:
    """The training loss on one batch; returns (loss, {loss per step, steps taken, final energy}).

    ``second_order=False`` (an ablation, and the known-answer test's sabotage) detaches dE/dy from the graph,
    so the loss reaches only alpha, never the energy's parameters."""
    fresh = x.shape[0]
    y0 = initial_logits((*x.shape, model.config.vocab_size), scale=init_scale, generator=gen)
    sampled = replay.sample() if replay is not None else None
    if sampled is not None:  # fresh windows first, then replayed ones restarting from their stored logits
        rw, ry = sampled
        x, targets = torch.cat([x, rw[:, :-1]]), torch.cat([targets, rw[:, 1:]])
        y0 = torch.cat([y0, ry])
    ctx = model.context(x)
    alpha = randomised_alpha(model.step_size(), tuple(x.shape), tricks, gen)
    m = step_plan(steps, tricks, rng)
    traj = minimise(
        model,
        ctx,
        y0,
        steps=m,
        alpha=alpha,
        create_graph=second_order,
        detach=detach,
        noise_std=tricks.langevin_noise,
        generator=gen,
        keep_graph=True,
    )
    ces = [F.cross_entropy(y.reshape(-1, y.shape[-1]), targets.reshape(-1)) for y in traj.ys[1:]]
    loss = ces[-1] if truncate else torch.stack(ces).mean()
    if replay is not None:
        windows = torch.cat([x[:fresh], targets[:fresh, -1:]], dim=1)
        replay.add(windows, traj.final[:fresh])
    return loss, {"ce": [c.item() for c in ces], "steps": m, "energy": traj.energies[-1].mean().item()}


def train_ebt(
    model: EnergyTransformer,
    train_tokens: np.ndarray,
    *,
    steps: int,
    batch_size: int,
    seq_len: int,
    peak_lr: float,
    mcmc_steps: int = 2,
    tricks: Tricks | None = None,
    warmup_frac: float = 0.05,
    cooldown_frac: float = 0.1,
    weight_decay: float = 0.1,
    grad_clip: float | None = 1.0,
    alpha_lr_mult: float = 3.0,
    init_scale: float = 1.0,
    detach: bool = True,
    truncate: bool = False,
    seed: int = 0,
    num_threads: int = 1,
    log_every: int = 10,
    progress: bool = True,
    second_order: bool = True,
) -> EBTTrainResult:
    """Train ``model`` in place for ``steps`` optimiser steps on windows of ``train_tokens``."""
    if steps < 1 or mcmc_steps < 1:
        raise ParamsError(f"steps and mcmc_steps must be >= 1, got {steps}, {mcmc_steps}")
    tricks = tricks or Tricks()
    warmup = int(warmup_frac * steps + 0.5)
    cooldown = max(1, int(cooldown_frac * steps + 0.5))
    opt = make_optimizer(model, lr=peak_lr, weight_decay=weight_decay, alpha_lr_mult=alpha_lr_mult)
    gen = torch.Generator().manual_seed(int(seed) + 7919)
    rng = random.Random(seed)
    replay = (
        ReplayBuffer(tricks.replay_size, int(batch_size * tricks.replay_share), seed) if tricks.replay_buffer else None
    )
    prev = torch.get_num_threads()
    torch.set_num_threads(num_threads)
    result, window = EBTTrainResult(tokens_per_step=batch_size * seq_len, steps=steps), []
    t0 = time.perf_counter()
    model.train()
    try:
        for s in tqdm(range(steps), desc="ebt", unit="step", disable=None if progress else True, leave=False):
            lr = wsd_lr(s, peak_lr=peak_lr, warmup_steps=warmup, decay_start=steps - cooldown, decay_steps=cooldown)
            for g in opt.param_groups:
                g["lr"] = lr * g["mult"]
            x, y = sample_batch(train_tokens, step=s, seed=seed, batch_size=batch_size, seq_len=seq_len)
            loss, info = ebt_loss(
                model,
                x,
                y,
                steps=mcmc_steps,
                tricks=tricks,
                gen=gen,
                rng=rng,
                init_scale=init_scale,
                detach=detach,
                truncate=truncate,
                replay=replay,
                second_order=second_order,
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if grad_clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            opt.step()
            window.append((loss.item(), info["ce"][-1], model.alpha.item()))
            if len(window) >= log_every or s == steps - 1:
                arr = np.asarray(window)
                result.history.append(
                    {
                        "step": s + 1,
                        "tokens": (s + 1) * result.tokens_per_step,
                        "lr": lr,
                        "loss": float(arr[:, 0].mean()),
                        "final_ce": float(arr[:, 1].mean()),
                        "alpha": float(arr[-1, 2]),
                    }
                )
                window.clear()
    finally:
        torch.set_num_threads(prev)
    model.eval()
    result.seconds = time.perf_counter() - t0
    return result
