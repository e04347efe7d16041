"""GradDiff: descend on ``-gamma * L_f + alpha * L_r`` (open-unlearning ``GradDiff``).

With ``gamma = lambda`` and ``alpha = 1 - lambda`` this is the weighted-sum
scalarisation the OFMU abstract argues against (the lambda sweep in the
pipeline). Cost: 2 gradient evaluations per step (forget and retain batches);
the two gradients are taken separately, so the logged cosine is free.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from torch import nn

from components.unlearning.base import (
    Batch,
    Budget,
    Callback,
    LossFn,
    UnlearnResult,
    cosine,
    descend,
    grads,
    make_optimizer,
    trainable,
)
from components.unlearning.loop import run_steps

COST = 2


@dataclass
class Config:
    lr: float = 1e-3
    gamma: float = 1.0
    alpha: float = 1.0
    optimizer: str = "adam"


def unlearn(
    model: nn.Module,
    *,
    forget_loss: LossFn,
    retain_loss: LossFn,
    batches: Iterator[tuple[Batch, Batch]],
    budget: int,
    cfg: Config | None = None,
    callback: Callback | None = None,
    progress: bool = False,
    ref_model: nn.Module | None = None,
) -> UnlearnResult:
    """Run GradDiff in place on ``model`` for exactly ``budget`` gradient evaluations."""
    cfg = cfg or Config()
    params, b = trainable(model), Budget(budget)
    opt = make_optimizer(params, cfg.optimizer, cfg.lr)

    def step(forget, retain) -> dict:
        lf = forget_loss(model, forget).mean()
        gf = grads(lf, params, b)
        lr_ = retain_loss(model, retain).mean()
        gr = grads(lr_, params, b)
        descend(opt, params, [-cfg.gamma * f + cfg.alpha * r for f, r in zip(gf, gr)])
        return {"loss_f": lf.item(), "loss_r": lr_.item(), "cos": cosine(gf, gr).item()}

    return run_steps(
        "graddiff", model, step, cost=COST, batches=batches, budget=b, callback=callback, progress=progress
    )
