"""The step loop the first-order methods share: take steps until the budget is spent, log each step."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from torch import nn
from tqdm.auto import tqdm

from components.unlearning.base import Batch, Budget, Callback, Timer, UnlearnResult, check_cycle

StepFn = Callable[[Batch, Batch], dict]


def run_steps(name: str, model: nn.Module, step: StepFn, *, cost: int, batches: Iterator[tuple[Batch, Batch]],
              budget: Budget, callback: Callback | None = None, progress: bool = False) -> UnlearnResult:
    """Call ``step(forget, retain)`` (which spends ``cost``) until ``budget`` is exhausted."""
    check_cycle(budget.total, cost, name)
    timer, history = Timer(), []
    model.train()
    with tqdm(total=budget.total, desc=name, unit="eval", disable=not progress) as bar:
        while budget.remaining >= cost:
            forget, retain = next(batches)
            row = step(forget, retain)
            history.append({"step": len(history), "evals": budget.used, **row})
            bar.update(cost)
            if callback is not None:
                callback(budget.used, model)
    return UnlearnResult(name, budget.total, budget.used, len(history), history, budget.diagnostic, timer.seconds())
