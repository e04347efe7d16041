"""The step loop the first-order methods share: take steps until the budget is spent, log each step."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from torch import nn
from tqdm.auto import tqdm

from components.unlearning.base import Batch, Budget, Callback, Timer, UnlearnResult, check_cycle

StepFn = Callable[[Batch, Batch], "dict | None"]  # None: the method's stopping rule fired, no step taken


def run_steps(
    name: str,
    model: nn.Module,
    step: StepFn,
    *,
    cost: int,
    batches: Iterator[tuple[Batch, Batch]],
    budget: Budget,
    callback: Callback | None = None,
    progress: bool = False,
) -> UnlearnResult:
    """Call ``step(forget, retain)`` (which spends ``cost``) until ``budget`` is exhausted or it returns None
    (its stopping rule fired; the result is then marked ``stopped`` and spent less than its budget)."""
    check_cycle(budget.total, cost, name)
    timer, history, stopped = Timer(), [], False
    model.train()
    with tqdm(total=budget.total, desc=name, unit="eval", disable=None if progress else True) as bar:
        while budget.remaining >= cost:
            forget, retain = next(batches)
            row = step(forget, retain)
            if row is None:
                stopped = True
                break
            history.append({"step": len(history), "evals": budget.used, **row})
            bar.update(cost)
            if callback is not None:
                callback(budget.used, model)
    return UnlearnResult(
        name, budget.total, budget.used, len(history), history, budget.diagnostic, timer.seconds(), stopped
    )
