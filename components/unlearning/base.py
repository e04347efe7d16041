"""The interface every unlearning method shares: a model, forget/retain batch pairs, a counted budget.

A *gradient evaluation* (the budget's unit) is one backward pass through the
graph of one batch's loss, whatever its order: a first-order gradient of L_f on
a forget batch costs 1, and so does a Hessian-vector product through that
batch's graph. GA spends 1 per step, GradDiff and NPO 2 (forget + retain), an
OFMU inner step 4 (g_f, g_r and the two Hessian-vector products inside
grad cos(g_f, g_r)) and an OFMU outer step 6 (the same 4 plus the HVP of
grad Phi through both batches) or 5 with ``hvp_mode="forget_only"``. Wall time
of each step is what ``benchmarks/unlearning.py`` measures.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from components.errors import ParamsError

log = logging.getLogger(__name__)

Batch = Any  # whatever the loss function understands: a tuple of tensors
LossFn = Callable[[nn.Module, Batch], torch.Tensor]  # per-example losses, shape (B,)
Callback = Callable[[int, nn.Module], None]  # (gradient evaluations used so far, model)


class BudgetExceeded(ParamsError):
    """A method tried to spend more gradient evaluations than it was given."""


@dataclass
class Budget:
    """A counter of gradient evaluations that refuses to go over ``total``."""

    total: int
    used: int = 0
    diagnostic: int = 0  # backward passes spent only on logging (e.g. GA's g_r for the cosine), not counted

    def __post_init__(self) -> None:
        if isinstance(self.total, bool) or not isinstance(self.total, int) or self.total < 0:
            raise ParamsError(f"budget: expected a non-negative integer of gradient evaluations, got {self.total!r}")

    @property
    def remaining(self) -> int:
        return self.total - self.used

    def spend(self, n: int) -> None:
        if self.used + n > self.total:
            raise BudgetExceeded(f"budget: spending {n} more would exceed {self.total} (used {self.used})")
        self.used += n


@dataclass
class UnlearnResult:
    """What a method did: evaluations spent, steps taken, and a per-step history (losses, cosine)."""

    method: str
    budget: int
    used: int
    steps: int
    history: list[dict] = field(default_factory=list)
    diagnostic_evals: int = 0
    seconds: float = 0.0
    stopped: bool = False  # the method's own stopping rule ended it before the budget (GA's early stop)

    def to_dict(self) -> dict:
        return {
            k: getattr(self, k) for k in ("method", "budget", "used", "steps", "diagnostic_evals", "seconds", "stopped")
        }


def trainable(model: nn.Module) -> list[nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def grads(
    loss: torch.Tensor,
    params: Sequence[torch.Tensor],
    budget: Budget,
    *,
    units: int = 1,
    create_graph: bool = False,
    diagnostic: bool = False,
) -> list[torch.Tensor]:
    """``d loss / d params`` (zeros where unused), charged ``units`` to the budget (or to diagnostics)."""
    if diagnostic:
        budget.diagnostic += units
    else:
        budget.spend(units)
    out = torch.autograd.grad(loss, list(params), create_graph=create_graph, allow_unused=True)
    return [torch.zeros_like(p) if g is None else g for p, g in zip(params, out)]


def flat(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors])


def cosine(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor], eps: float = 1e-12) -> torch.Tensor:
    """Cosine between two gradients given as lists of tensors (differentiable)."""
    fa, fb = flat(a), flat(b)
    return (fa @ fb) / (fa.norm() * fb.norm() + eps)


def dot(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor]) -> torch.Tensor:
    return sum((x * y).sum() for x, y in zip(a, b))


def make_optimizer(params: Sequence[torch.Tensor], kind: str, lr: float) -> torch.optim.Optimizer:
    """The update rule every method uses (same for all, so only the direction differs)."""
    if kind == "adam":
        return torch.optim.Adam(params, lr=lr)
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr)
    raise ParamsError(f"optimizer: expected 'adam' or 'sgd', got {kind!r}")


def descend(opt: torch.optim.Optimizer, params: Sequence[torch.Tensor], direction: Sequence[torch.Tensor]) -> None:
    """One optimizer step that *decreases* along ``direction`` (pass a negated gradient to ascend)."""
    for p, d in zip(params, direction):
        p.grad = d.detach().clone()
    opt.step()
    opt.zero_grad(set_to_none=True)


def check_cycle(budget: int, cost: int, method: str) -> None:
    """A budget must be a whole number of the method's step (or round) cost, so it is spent exactly."""
    if budget % cost:
        raise ParamsError(f"budget: {budget} gradient evaluations is not a multiple of {method}'s step cost {cost}")


@contextlib.contextmanager
def second_order_attention() -> Iterator[None]:
    """The math SDPA kernel: the fused CPU attention kernel has no double backward."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        yield


class Timer:
    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    def seconds(self) -> float:
        return round(time.perf_counter() - self.t0, 3)
