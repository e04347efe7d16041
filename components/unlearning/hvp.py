"""Hessian-vector products by double backprop, and the penalised inner objective's gradient.

``hvp`` differentiates ``<grad f, v>`` once more (Pearlmutter's trick) instead of
forming a Hessian; ``torch.func.hvp`` would need a functional model, and the
plain-autograd form works on any ``nn.Module`` (including the graph of a
gradient that already carries second-order terms, as grad Phi does).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from components.unlearning.base import Budget, cosine, dot, grads


def hvp(
    grad_with_graph: Sequence[torch.Tensor],
    params: Sequence[torch.Tensor],
    v: Sequence[torch.Tensor],
    budget: Budget,
    *,
    units: int = 1,
    create_graph: bool = False,
) -> list[torch.Tensor]:
    """``H v`` where ``grad_with_graph`` is ``grad f`` computed with ``create_graph=True``."""
    return grads(dot(grad_with_graph, [x.detach() for x in v]), params, budget, units=units, create_graph=create_graph)


def penalty(gf: Sequence[torch.Tensor], gr: Sequence[torch.Tensor], kind: str) -> torch.Tensor:
    """The similarity penalty on (g_f, g_r): ``cos`` (the card's formula), ``cos2`` or ``abs``."""
    c = cosine(gf, gr)
    if kind == "cos":
        return c
    if kind == "cos2":
        return c * c
    if kind == "abs":
        return c.abs()
    raise ValueError(f"penalty: expected 'cos', 'cos2' or 'abs', got {kind!r}")


def phi_and_grad(
    lf: torch.Tensor,
    lr: torch.Tensor,
    params: Sequence[torch.Tensor],
    budget: Budget,
    *,
    beta: float,
    kind: str = "cos",
    create_graph: bool = False,
) -> dict:
    """``Phi = L_f - beta * pen(g_f, g_r)`` and ``grad Phi``; 4 gradient evaluations.

    g_f and g_r are built with a graph (1 each), then ``grad pen`` is a backward
    through both gradient graphs (two Hessian-vector products, 1 each).
    ``create_graph`` keeps grad Phi differentiable for the outer step's HVP.
    The penalty is always computed (also for beta = 0), so the ablation
    costs the same and logs the same cosine.
    """
    gf = grads(lf, params, budget, create_graph=True)
    gr = grads(lr, params, budget, create_graph=True)
    pen = penalty(gf, gr, kind)
    gpen = grads(pen, params, budget, units=2, create_graph=create_graph)
    gphi = [f - beta * p for f, p in zip(gf, gpen)]
    return {"phi": lf - beta * pen, "gphi": gphi, "gf": gf, "gr": gr, "cos": cosine(gf, gr).detach(), "pen": pen}
