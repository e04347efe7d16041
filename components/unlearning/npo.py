"""NPO (Zhang et al. 2024): ``L = (2/beta) E[log(1 + (pi/pi_ref)^beta)] + alpha * L_r``.

As in open-unlearning's ``NPO`` (a GradDiff subclass), the forget term is the
negative preference loss against the frozen reference (the model before
unlearning) and a retain NLL term is added. Difference from open-unlearning:
``log pi`` here is minus the per-example loss the pipeline provides (the
length-normalised answer NLL, not the summed one), which rescales beta.
Cost: 2 gradient evaluations per step; the reference forward has no backward.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
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
    beta: float = 0.1
    alpha: float = 1.0
    optimizer: str = "adam"


def npo_loss(nll: torch.Tensor, ref_nll: torch.Tensor, beta: float) -> torch.Tensor:
    """``-(2/beta) * mean(logsigmoid(-beta * (log pi - log pi_ref)))`` with ``log pi = -nll``."""
    log_ratio = ref_nll - nll
    return -(2.0 / beta) * F.logsigmoid(-beta * log_ratio).mean()


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
    """Run NPO in place on ``model``; ``ref_model`` defaults to a frozen copy of the model at the start."""
    cfg = cfg or Config()
    ref = ref_model if ref_model is not None else copy.deepcopy(model)
    ref.eval()
    params, b = trainable(model), Budget(budget)
    opt = make_optimizer(params, cfg.optimizer, cfg.lr)

    def step(forget, retain) -> dict:
        with torch.no_grad():
            ref_nll = forget_loss(ref, forget)
        nll = forget_loss(model, forget)
        lf = npo_loss(nll, ref_nll, cfg.beta)
        gf = grads(lf, params, b)
        lr_ = retain_loss(model, retain).mean()
        gr = grads(lr_, params, b)
        descend(opt, params, [f + cfg.alpha * r for f, r in zip(gf, gr)])
        # cosine of the *NLL* gradients' directions: grad(NPO) is a positive reweighting of -grad(NLL)
        return {"loss_f": nll.mean().item(), "loss_r": lr_.item(), "npo": lf.item(), "cos": -cosine(gf, gr).item()}

    return run_steps("npo", model, step, cost=COST, batches=batches, budget=b, callback=callback, progress=progress)
