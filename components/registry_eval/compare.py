"""Comparing re-evaluated metrics with the last accepted values, within per-metric tolerances.

A metric regresses when it moves in its bad direction by more than its tolerance: relative to the
accepted value (``|new - old| > tol * max(|old|, eps)``), which keeps one setting meaningful for losses of
different scales, or in the metric's own units where its champion declared so (rates, accuracies).
Each metric's direction and tolerance come from the rule its champion declared
(``flows.runtime.champions.Rule``); a tolerance the user sets for a metric (or a glob) wins over it, and
a metric with no rule falls back to the settings (lower is better, ``default_tolerance``).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass

from components.errors import DataError


@dataclass(frozen=True)
class Regression:
    """One metric of one model that got worse than its tolerance allows."""

    paper: str
    metric: str
    old: float
    new: float
    tolerance: float
    lower_is_better: bool
    relative: bool = True

    def message(self) -> str:
        direction = "rose" if self.lower_is_better else "fell"
        if not self.relative:
            return (
                f"{self.paper}: {self.metric} {direction} from {self.old:.6g} to {self.new:.6g} "
                f"({self.new - self.old:+.4g}, tolerance {self.tolerance:g})"
            )
        change = (self.new - self.old) / max(abs(self.old), 1e-12)
        return (
            f"{self.paper}: {self.metric} {direction} from {self.old:.6g} to {self.new:.6g} "
            f"({change:+.2%}, tolerance {self.tolerance:.2%})"
        )


def tolerance_for(metric: str, tolerances: Mapping[str, float], default: float) -> float:
    """The tolerance of ``metric``: an exact key, else the first matching glob pattern, else ``default``."""
    if metric in tolerances:
        return float(tolerances[metric])
    for pattern, tol in tolerances.items():
        if fnmatch.fnmatchcase(metric, pattern):
            return float(tol)
    return float(default)


def find_regressions(
    paper: str,
    accepted: Mapping[str, float],
    current: Mapping[str, float],
    *,
    tolerances: Mapping[str, float] | None = None,
    default_tolerance: float = 0.05,
    higher_is_better: tuple[str, ...] = (),
    rules: Mapping[str, Mapping] | None = None,
) -> list[Regression]:
    """Metrics of ``current`` worse than ``accepted`` beyond tolerance; a missing or non-finite value is an error.

    ``rules``: the champion's declared rule per metric (``higher_is_better``, ``tolerance``, ``relative``).
    """
    out = []
    for metric, old in sorted(accepted.items()):
        if metric not in current:
            raise DataError(f"{paper}: re-evaluation did not produce accepted metric {metric!r}")
        new = float(current[metric])
        if not math.isfinite(new):
            raise DataError(f"{paper}: re-evaluated {metric} is {new}")
        rule = (rules or {}).get(metric)
        if rule is not None:
            higher, relative = bool(rule["higher_is_better"]), bool(rule.get("relative", True))
            declared = float(rule.get("tolerance", default_tolerance))
        else:
            higher, relative = any(fnmatch.fnmatchcase(metric, p) for p in higher_is_better), True
            declared = default_tolerance
        tol = tolerance_for(metric, tolerances or {}, declared)
        worse = (old - new) if higher else (new - old)
        if worse > (tol * max(abs(float(old)), 1e-12) if relative else tol + 1e-12):
            out.append(Regression(paper, metric, float(old), new, tol, not higher, relative))
    return out
