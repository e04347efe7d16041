"""A pipeline's champion: the trained artifact that stands for its method, how to re-evaluate it, what is accepted.

A stage puts ``candidate(...)`` under ``"champion"`` in its summary. When a run that is not a smoke run
passes every stage, the pipeline registers it (``flows.runtime.tracking.register_champion``) as a new version
of the registered model named after the paper and moves ``@champion``; the metrics become its accepted
values. The recurring evaluation (``flows/recurring``) loads that version without unpickling (the allow-listed
loader its MLmodel file names), calls the paper's evaluator, ``flows.<package>.champion.evaluate(model,
settings, root) -> {metric: value}``, and judges each metric by the rule declared beside it here (direction,
tolerance): one contract for every paper. The evaluator module may name the field libraries its numbers depend
on (``LIBRARIES``); their versions are recorded beside every re-evaluation.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from components.errors import DataError


@dataclass(frozen=True)
class Rule:
    """How one accepted metric is judged: which way is better, and how far the other way it may move.

    ``relative``: the tolerance is a share of the accepted value (losses, returns); else it is in the
    metric's own units (rates and accuracies, where an accepted 0 must not forbid every change).
    """

    higher_is_better: bool
    tolerance: float = 0.02
    relative: bool = True

    def __post_init__(self) -> None:
        if not (math.isfinite(self.tolerance) and self.tolerance >= 0):
            raise ValueError(f"tolerance must be a finite number >= 0, got {self.tolerance}")


def candidate(
    paper: str,
    run_id: str | None,
    name: str,
    metrics: Mapping[str, float],
    rules: Mapping[str, Rule],
    settings: Mapping[str, Any],
) -> dict[str, Any] | None:
    """What a stage returns as its champion; None without a tracked run (nothing to register).

    ``settings`` is everything the evaluator needs besides the model (paths relative to the checkout, seeds,
    sizes), stored with the version as JSON; every metric needs a rule.
    """
    if run_id is None:
        return None
    if set(metrics) != set(rules):
        raise ValueError(f"{paper}: champion metrics {sorted(metrics)} and rules {sorted(rules)} differ")
    bad = [k for k, v in metrics.items() if not math.isfinite(float(v))]
    if bad:
        raise DataError(f"{paper}: champion metrics {bad} are not finite; nothing to accept")
    return {
        "run_id": run_id,
        "name": name,
        "metrics": {k: float(v) for k, v in metrics.items()},
        "eval": {
            "evaluator": paper,
            "settings": dict(settings),
            "rules": {k: asdict(r) for k, r in sorted(rules.items())},
        },
    }


def evaluated_candidate(
    paper: str,
    run_id: str | None,
    name: str,
    folder: Path,
    loader: str,
    evaluate: Callable[..., dict[str, float]],
    rules: Mapping[str, Rule],
    settings: Mapping[str, Any],
    root: Path,
) -> dict[str, Any] | None:
    """:func:`candidate` with the metrics computed by ``evaluate`` on the model loaded back from ``folder`` by the
    allow-listed ``loader`` it is logged with, so the accepted values are what the recurring evaluation recomputes."""
    from flows.runtime.mlflow_model import resolve_loader

    if run_id is None:  # not tracked: nothing to register, so nothing to evaluate
        return None
    model = resolve_loader(loader)(folder)
    return candidate(paper, run_id, name, evaluate(model, dict(settings), root), rules, settings)


def evaluator(paper: str) -> tuple[Callable[..., dict[str, float]], tuple[str, ...]]:
    """The evaluate function of ``paper``'s ``champion`` module and its field libraries.

    Only registered, implemented papers are looked up (the name comes from a registry tag, so it must not
    reach ``importlib`` unchecked); an unknown name or a paper without a champion module is a DataError.
    """
    from flows.registry import papers

    spec = papers().get(paper)
    if spec is None or not spec.implemented:
        raise DataError(f"champion evaluator {paper!r}: not an implemented paper")
    try:
        module = importlib.import_module(f"flows.{spec.module_name}.champion")
    except ModuleNotFoundError as exc:
        if exc.name != f"flows.{spec.module_name}.champion":
            raise
        raise DataError(f"{paper}: declares no champion evaluator (flows/{spec.module_name}/champion.py)") from None
    return module.evaluate, tuple(getattr(module, "LIBRARIES", ()))


def eval_spec(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A version's ``eval`` tag in the current form; the first form (``kind: lm-loss``, QualityPajama's
    settings at the top level, no rules) is read as QualityPajama's evaluator with its lower-is-better rules."""
    if "evaluator" in doc:
        return dict(doc)
    if doc.get("kind") == "lm-loss":
        settings = {k: v for k, v in doc.items() if k != "kind"}
        return {"evaluator": "qualitypajama", "settings": settings, "rules": {}}
    raise DataError(f"champion eval spec names no evaluator: {sorted(doc)}")
