"""OFMU: penalty-based bi-level unlearning (inner forget maximisation, outer retain minimisation).

Per round k: T inner ascent steps on ``Phi = L_f - beta * cos(g_f, g_r)``, then
one outer descent step on ``F = L_r + rho_k * ||grad Phi||^2`` whose gradient
``grad L_r + 2 rho_k (Hess Phi) grad Phi`` uses a Hessian-vector product; then
``rho_{k+1} = c * rho_k``. ``hvp_mode="full"`` differentiates the exact grad Phi
(third order through the cosine); ``"forget_only"`` uses Hess L_f instead.
``inner_on_copy`` runs the inner steps on a copy theta' and applies the outer
step computed at theta' to theta (the card leaves this open; default in place).
Cost per round: 4 T + (6 full | 5 forget_only) gradient evaluations.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

from torch import nn
from tqdm.auto import tqdm

from components.errors import ParamsError
from components.unlearning.base import (
    Batch,
    Budget,
    Callback,
    LossFn,
    Timer,
    UnlearnResult,
    check_cycle,
    descend,
    flat,
    make_optimizer,
    second_order_attention,
    trainable,
)
from components.unlearning.hvp import hvp, phi_and_grad

INNER_COST = 4
OUTER_COST = {"full": 6, "forget_only": 5}


@dataclass
class Config:
    beta: float = 1.0
    inner_steps: int = 3
    lr_inner: float = 1e-3
    lr_outer: float = 1e-3
    rho0: float = 0.01
    rho_growth: float = 1.1
    hvp_mode: str = "full"
    penalty: str = "cos"
    inner_on_copy: bool = False
    optimizer: str = "adam"

    def __post_init__(self) -> None:
        if self.hvp_mode not in OUTER_COST:
            raise ParamsError(f"hvp_mode: expected one of {list(OUTER_COST)}, got {self.hvp_mode!r}")
        if self.inner_steps < 0 or self.rho0 < 0 or self.rho_growth < 1:
            raise ParamsError("ofmu: need inner_steps >= 0, rho0 >= 0 and rho_growth >= 1")


def round_cost(cfg: Config) -> int:
    return INNER_COST * cfg.inner_steps + OUTER_COST[cfg.hvp_mode]


def _inner(model, target, opt, forget_loss, retain_loss, batches, b, cfg, history, k) -> None:
    params = trainable(target)
    for _ in range(cfg.inner_steps):
        forget, retain = next(batches)
        lf, lr = forget_loss(target, forget).mean(), retain_loss(target, retain).mean()
        out = phi_and_grad(lf, lr, params, b, beta=cfg.beta, kind=cfg.penalty)
        descend(opt, params, [-g for g in out["gphi"]])  # ascent on Phi
        history.append(
            {
                "step": len(history),
                "evals": b.used,
                "round": k,
                "phase": "inner",
                "loss_f": lf.item(),
                "loss_r": lr.item(),
                "cos": out["cos"].item(),
            }
        )


def _outer(model, at, opt, forget_loss, retain_loss, batches, b, cfg, rho, history, k) -> None:
    params_at, params = trainable(at), trainable(model)
    forget, retain = next(batches)
    lf, lr = forget_loss(at, forget).mean(), retain_loss(at, retain).mean()
    out = phi_and_grad(lf, lr, params_at, b, beta=cfg.beta, kind=cfg.penalty, create_graph=True)
    if cfg.hvp_mode == "full":
        h = hvp(out["gphi"], params_at, out["gphi"], b, units=2)
    else:  # Hess Phi ~ Hess L_f
        h = hvp(out["gf"], params_at, out["gphi"], b, units=1)
    direction = [r.detach() + 2.0 * rho * x for r, x in zip(out["gr"], h)]
    descend(opt, params, direction)
    history.append(
        {
            "step": len(history),
            "evals": b.used,
            "round": k,
            "phase": "outer",
            "loss_f": lf.item(),
            "loss_r": lr.item(),
            "cos": out["cos"].item(),
            "rho": rho,
            "grad_phi_sq": float(flat(out["gphi"]).detach().pow(2).sum()),
        }
    )


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
    """Run OFMU rounds in place on ``model`` until exactly ``budget`` gradient evaluations are spent."""
    cfg = cfg or Config()
    cost = round_cost(cfg)
    check_cycle(budget, cost, "ofmu")
    b, timer, history = Budget(budget), Timer(), []
    opt_out = make_optimizer(trainable(model), cfg.optimizer, cfg.lr_outer)
    opt_in = None if cfg.inner_on_copy else make_optimizer(trainable(model), cfg.optimizer, cfg.lr_inner)
    rho, k = cfg.rho0, 0
    model.train()
    with (
        second_order_attention(),
        tqdm(total=budget, desc="ofmu", unit="eval", disable=None if progress else True) as bar,
    ):
        while b.remaining >= cost:
            target = copy.deepcopy(model) if cfg.inner_on_copy else model
            opt = make_optimizer(trainable(target), cfg.optimizer, cfg.lr_inner) if cfg.inner_on_copy else opt_in
            _inner(model, target, opt, forget_loss, retain_loss, batches, b, cfg, history, k)
            _outer(model, target, opt_out, forget_loss, retain_loss, batches, b, cfg, rho, history, k)
            rho, k = rho * cfg.rho_growth, k + 1
            bar.update(cost)
            if callback is not None:
                callback(b.used, model)
    return UnlearnResult("ofmu", budget, b.used, len(history), history, b.diagnostic, timer.seconds())
