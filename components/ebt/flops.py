"""FLOPs per token of both models, counted by torch's ``FlopCounterMode`` (matmuls, incl. double backward).

Measured, not derived from 6N: the EBT's cost depends on the number of optimisation steps and on the
second-order backward, which a formula would have to guess. One training step (forward + backward, and for the
EBT the whole inner optimisation) and one inference pass at each step count are run on a batch and divided by
its tokens. Matmul-only counts (attention and linear layers), as FlopCounterMode reports them.
"""

from __future__ import annotations

import random

import torch
from torch.utils.flop_counter import FlopCounterMode

from components.ebt.energy_model import EnergyTransformer
from components.ebt.optimise import initial_logits, minimise
from components.ebt.training import ebt_loss
from components.ebt.tricks import Tricks


def _count(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


def lm_train_flops(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Transformer++ training FLOPs per token (one forward + backward)."""

    def step():
        _, loss = model(x, y)
        loss.backward()

    flops = _count(step)
    model.zero_grad(set_to_none=True)
    return flops / x.numel()


def lm_infer_flops(model: torch.nn.Module, x: torch.Tensor) -> float:
    with torch.no_grad():
        return _count(lambda: model(x)) / x.numel()


def ebt_train_flops(
    model: EnergyTransformer, x: torch.Tensor, y: torch.Tensor, *, steps: int, detach: bool = True
) -> float:
    """EBT training FLOPs per token at ``steps`` optimisation steps (no randomisation: the expected plan)."""

    def step():
        loss, _ = ebt_loss(
            model,
            x,
            y,
            steps=steps,
            tricks=Tricks(),
            gen=torch.Generator().manual_seed(0),
            rng=random.Random(0),
            detach=detach,
        )
        loss.backward()

    flops = _count(step)
    model.zero_grad(set_to_none=True)
    return flops / x.numel()


def ebt_infer_flops(model: EnergyTransformer, x: torch.Tensor, *, steps: int, candidates: int = 1) -> float:
    """EBT inference FLOPs per token: real stream once, ``steps`` energy+gradient evaluations per candidate,
    plus the final energy used for verification when ``candidates`` > 1."""

    def run():
        with torch.no_grad():
            ctx = model.context(x)
            if candidates > 1:
                ctx = ctx.repeat(candidates)
            y0 = initial_logits(
                (x.shape[0] * candidates, x.shape[1], model.config.vocab_size),
                generator=torch.Generator().manual_seed(0),
            )
            y = minimise(model, ctx, y0, steps=steps).final
            if candidates > 1:
                model.energy(ctx, y)

    return _count(run) / x.numel()
