"""A claim declared once: what it says, the paper's number, what it compares and by which rule.

A pipeline's ``claims.py`` lists its claims as :class:`ClaimSpec` records (``CLAIMS``)
and builds each result from its declaration and the numbers computed in the run, so
the ~20 fields of a ``claims.json`` record are written once per claim, not at every
call. The report's ending (``flows.runtime.report_stage.finish_report``) checks that
the results are exactly the declared claims, in order, under their declared rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from components.errors import DataError, ParamsError
from components.evaluation import claims as CL
from components.evaluation.testability import supplied

SIMPLE_RULES = ("probability", "p-value", "point", "check")
RULES = (*CL.CI_RULES, *SIMPLE_RULES, "composite")


@dataclass(frozen=True)
class ClaimSpec:
    """One claim's declaration. ``method``/``baseline`` may be overridden per run (a best baseline chosen on data)."""

    id: str
    statement: str
    metric: str
    method: str
    baseline: str | None
    rule: str = "standard"
    unit: str = ""
    cluster_unit: str | None = "seed"
    direction: str | None = "greater"
    paper_value: str | None = None
    scale_note: str = ""
    bounds: tuple[float, float] | None = None  # the metric's floor and ceiling: both arms at one -> not testable
    requires: tuple[str, ...] = ()  # mechanism checks the run must supply (``testability=[Check(name, ...)]``)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ParamsError(f"claim {self.id}: rule {self.rule!r} is not one of {RULES}")

    def _common(self, kw: dict[str, Any]) -> dict[str, Any]:
        base = {
            "metric": self.metric,
            "method": self.method,
            "baseline": self.baseline,
            "unit": self.unit,
            "paper_value": self.paper_value,
            "scale_note": self.scale_note,
        }
        return {**base, **kw}

    def _statement(self, kw: dict[str, Any]) -> str:
        return kw.pop("statement", self.statement)

    def standard(self, **numbers: Any) -> CL.ClaimResult:
        """Paired per-unit values through :func:`claims.evaluate_standard` under the declared CI rule."""
        kw = {"rule": self.rule, "direction": self.direction, "cluster_unit": self.cluster_unit, **numbers}
        kw.setdefault("bounds", self.bounds)
        kw["testability"] = supplied(self.id, self.requires, kw.get("testability", ()))
        return CL.evaluate_standard(self.id, self._statement(kw), **self._common(kw))

    def from_ci(self, **numbers: Any) -> CL.ClaimResult:
        """A CI computed elsewhere, through :func:`claims.from_ci` under the declared CI rule."""
        kw = {"rule": self.rule, "direction": self.direction, "cluster_unit": self.cluster_unit, **numbers}
        kw["testability"] = supplied(self.id, self.requires, kw.get("testability", ()))
        return CL.from_ci(self.id, self._statement(kw), **self._common(kw))

    def simple(self, **numbers: Any) -> CL.ClaimResult:
        """A rule without a CI (probability, p-value, point, check), through :func:`claims.simple`."""
        kw = {
            "rule": self.rule,
            "direction": self.direction if self.rule == "point" else None,
            "cluster_unit": self.cluster_unit if self.rule == "probability" else None,
            **numbers,
        }
        kw["testability"] = supplied(self.id, self.requires, kw.get("testability", ()))
        return CL.simple(self.id, self._statement(kw), **self._common(kw))

    def composite(self, parts: Sequence[CL.ClaimResult], **numbers: Any) -> CL.ClaimResult:
        """A claim decided by its parts, through :func:`claims.composite`."""
        kw = dict(numbers)
        return CL.composite(self.id, self._statement(kw), parts, **self._common(kw))

    def part(self, suffix: str, statement: str, **changes: Any) -> ClaimSpec:
        """A part of a composite claim: id ``<id>/<suffix>``, its own statement, other fields as changed."""
        return replace(self, id=f"{self.id}/{suffix}", statement=statement, **changes)

    def evaluate(self, **numbers: Any) -> CL.ClaimResult:
        """Dispatch on the declared rule: a composite takes ``parts``; a CI rule takes per-unit values
        (``method_values``) or a computed CI (``ci_low``/``ci_high``); the rest are simple rules."""
        if self.rule == "composite":
            return self.composite(numbers.pop("parts"), **numbers)
        if self.rule in CL.CI_RULES:
            return self.standard(**numbers) if "method_values" in numbers else self.from_ci(**numbers)
        return self.simple(**numbers)


def check_results(declared: Sequence[ClaimSpec], results: Sequence[CL.ClaimResult], where: str) -> None:
    """The results must be the declared claims, in the declared order, each under its declared rule."""
    want = [c.id for c in declared]
    got = [r.id for r in results]
    if got != want:
        raise DataError(f"{where}: claims {got} were computed but {want} are declared (claims.py CLAIMS)")
    for spec, result in zip(declared, results):
        if result.rule != spec.rule:
            raise DataError(
                f"{where}: claim {spec.id} is declared with rule {spec.rule!r} but was decided by {result.rule!r}"
            )
