"""Gradient ascent (GA): maximise the forget loss, nothing else (open-unlearning ``GradAscent``).

Cost: 1 gradient evaluation per step. Early stop (``stop_loss_f``, the usual TOFU practice for GA): once the
forget-batch loss, measured before a step, exceeds the threshold, GA stops and keeps the current weights
(the flow sets it to the Retrain model's forget loss: "as unfamiliar as data never seen"); the
rest of the budget is left unspent and the result is marked ``stopped``. The retain gradient, needed only for the
logged cosine, is a diagnostic pass outside the budget (``log_cos=False`` skips it).
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

COST = 1


@dataclass
class Config:
    lr: float = 1e-3
    optimizer: str = "adam"
    log_cos: bool = True
    stop_loss_f: float | None = None  # stop once the forget-batch mean loss exceeds this (None: never)


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
    """Run GA in place on ``model`` for exactly ``budget`` gradient evaluations."""
    cfg = cfg or Config()
    params, b = trainable(model), Budget(budget)
    opt = make_optimizer(params, cfg.optimizer, cfg.lr)

    def step(forget, retain) -> dict:
        lf = forget_loss(model, forget).mean()
        if cfg.stop_loss_f is not None and lf.item() > cfg.stop_loss_f:
            return None
        gf = grads(lf, params, b)
        row = {"loss_f": lf.item()}
        if cfg.log_cos:
            lr_ = retain_loss(model, retain).mean()
            gr = grads(lr_, params, b, diagnostic=True)
            row.update(loss_r=lr_.item(), cos=cosine(gf, gr).item())
        descend(opt, params, [-g for g in gf])
        return row

    return run_steps("ga", model, step, cost=COST, batches=batches, budget=b, callback=callback, progress=progress)
