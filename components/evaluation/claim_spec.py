"""A claim declared once: what it says, the paper's number, what it compares and by which rule.

A pipeline's ``claims.py`` lists its claims as :class:`ClaimSpec` records (``CLAIMS``)
and builds each result from its declaration and the numbers computed in the run, so
the ~20 fields of a ``claims.json`` record are written once per claim, not at every
call. The report's ending (``flows.runtime.report_stage.finish_report``) checks that
the results are exactly the declared claims, in order, under their declared rules.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from components.errors import DataError, ParamsError
from components.evaluation import claims as CL
from components.evaluation.claims import CIRule, ClaimResult, Combine, Direction, Rule, SimpleRule
from components.evaluation.testability import Check, supplied

SIMPLE_RULES = CL.SIMPLE_RULES
RULES = CL.RULES


class _Declared(enum.Enum):
    """The default of a per-run override: keep what the claim declares."""

    AS_DECLARED = "as declared"

    def __repr__(self) -> str:
        return "AS_DECLARED"


AS_DECLARED = _Declared.AS_DECLARED
Declared = _Declared  # the type of AS_DECLARED, for annotations


@dataclass(frozen=True)
class ClaimSpec:
    """One claim's declaration. ``method``/``baseline`` may be overridden per run (a best baseline chosen on data).

    An unknown ``rule`` or ``direction`` raises ParamsError here, at declaration.
    """

    id: str
    statement: str
    metric: str
    method: str
    baseline: str | None
    rule: Rule = "standard"
    unit: str = ""
    cluster_unit: str | None = "seed"
    direction: Direction | None = "greater"
    paper_value: str | None = None
    scale_note: str = ""
    bounds: tuple[float, float] | None = None  # the metric's floor and ceiling: both arms at one -> not testable
    requires: tuple[str, ...] = ()  # mechanism checks the run must supply (``testability=[Check(name, ...)]``)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ParamsError(f"claim {self.id}: rule {self.rule!r} is not one of {', '.join(RULES)}")
        if self.direction is not None and self.direction not in CL.DIRECTIONS:
            raise ParamsError(
                f"claim {self.id}: direction {self.direction!r} is not one of {', '.join(CL.DIRECTIONS)} (or None)"
            )

    def _run(self, **overrides: Any) -> ClaimSpec:
        """This declaration with the per-run overrides that were given (checked again)."""
        given = {k: v for k, v in overrides.items() if v is not AS_DECLARED}
        return replace(self, **given) if given else self

    def standard(
        self,
        *,
        method_values: Sequence[float] | np.ndarray,
        baseline_values: Sequence[float] | np.ndarray | None,
        clusters: Sequence[Any] | np.ndarray | int | None = None,
        seeds: Sequence[Any] | np.ndarray | int | None = None,
        strata: Sequence[Any] | np.ndarray | None = None,
        censored: Sequence[bool] | np.ndarray | None = None,
        direction: Direction | Declared = AS_DECLARED,
        delta: float | None = None,
        threshold: float = 0.0,
        null: float = 0.0,
        rule: CIRule | Declared = AS_DECLARED,
        margin: float | None = None,
        metric: str | Declared = AS_DECLARED,
        method: str | Declared = AS_DECLARED,
        baseline: str | None | Declared = AS_DECLARED,
        unit: str | Declared = AS_DECLARED,
        seed: int,
        n_resamples: int = 10_000,
        level: float = 0.95,
        scale_note: str | Declared = AS_DECLARED,
        details: Mapping | None = None,
        paper_value: str | None | Declared = AS_DECLARED,
        cluster_unit: str | None | Declared = AS_DECLARED,
        censored_bound: Sequence[bool] | np.ndarray | None = None,
        bounds: tuple[float, float] | None | Declared = AS_DECLARED,
        testability: Sequence[Check] = (),
        power: bool = True,
        statement: str | Declared = AS_DECLARED,
    ) -> CL.ClaimResult:
        """Paired per-unit values through :func:`claims.evaluate_standard` under the declared CI rule.

        The parameters are :func:`claims.evaluate_standard`'s; those left AS_DECLARED take the declaration's value.

        Args:
            method_values: the method's value on each paired unit (or the per-unit effect when there is no baseline).
            baseline_values: the baseline's value on each paired unit; None: ``method_values`` are the differences.
            clusters: the top-level independent unit of each paired unit (seed, run); one label for all is allowed.
            seeds: the older name of ``clusters``; give one of them, not both.
            strata: a group fixed by design for each unit; the bootstrap resamples within each.
            censored: per unit, whether either side hit a budget cap, diverged or timed out.
            direction: the claimed side: "greater", "less" or "two-sided".
            delta: half-width of the no-practical-effect band around ``null`` (not with non-inferiority).
            threshold: the claimed side's boundary of the effect.
            null: the value of no effect: 0 for a difference, 1 for a ratio.
            rule: the CI rule: "standard", "non-inferiority" or "ci-excludes".
            margin: the non-inferiority margin (rule "non-inferiority" only).
            metric: what is measured, in words.
            method: the method's name.
            baseline: the baseline's name; None for a claim about the method alone.
            unit: what the paired units are ("items", "seeds", "edited facts").
            seed: the bootstrap's random seed.
            n_resamples: bootstrap resamples.
            level: the CI's confidence level.
            scale_note: how this run's scale differs from the paper's.
            details: extra numbers kept in the record's ``details``.
            paper_value: the paper's own number, where the card gives one.
            cluster_unit: what a cluster is ("seed"); set, the rule needs at least two of them; None: not clustered.
            censored_bound: per unit, whether only the baseline's side was censored (kept at the cap as a bound).
            bounds: the metric's (floor, ceiling): both arms at one on every unit -> not testable.
            testability: the run's mechanism checks; any failed -> inconclusive.
            power: attach the open power plan's power when a testable claim is not reproduced.
            statement: the claim in one sentence, as the report shows it.
        """
        spec = self._run(
            statement=statement, rule=rule, direction=direction, metric=metric, method=method, baseline=baseline,
            unit=unit, scale_note=scale_note, paper_value=paper_value, cluster_unit=cluster_unit, bounds=bounds,
        )  # fmt: skip
        return CL.evaluate_standard(
            spec.id,
            spec.statement,
            method_values=method_values,
            baseline_values=baseline_values,
            clusters=clusters,
            seeds=seeds,
            strata=strata,
            censored=censored,
            direction=spec.direction,  # type: ignore[arg-type]  # None: evaluate_standard says so
            delta=delta,
            threshold=threshold,
            null=null,
            rule=spec.rule,  # type: ignore[arg-type]  # not a CI rule: evaluate_standard says so
            margin=margin,
            metric=spec.metric,
            method=spec.method,
            baseline=spec.baseline,
            unit=spec.unit,
            seed=seed,
            n_resamples=n_resamples,
            level=level,
            scale_note=spec.scale_note,
            details=details,
            paper_value=spec.paper_value,
            cluster_unit=spec.cluster_unit,
            censored_bound=censored_bound,
            bounds=spec.bounds,
            testability=supplied(self.id, self.requires, testability),
            power=power,
        )

    def from_ci(
        self,
        *,
        effect: float | None,
        ci_low: float | None,
        ci_high: float | None,
        rule: CIRule | Declared = AS_DECLARED,
        direction: Direction | Declared = AS_DECLARED,
        threshold: float = 0.0,
        delta: float | None = None,
        null: float = 0.0,
        metric: str | Declared = AS_DECLARED,
        method: str | Declared = AS_DECLARED,
        baseline: str | None | Declared = AS_DECLARED,
        unit: str | Declared = AS_DECLARED,
        n_units: int,
        n_seeds: int,
        cluster_unit: str | None | Declared = AS_DECLARED,
        ci_level: float = 0.95,
        per_seed_signs: list[int] | None = None,
        n_censored: int = 0,
        uncensored: Mapping | None = None,
        details: Mapping | None = None,
        scale_note: str | Declared = AS_DECLARED,
        paper_value: str | None | Declared = AS_DECLARED,
        seed_effects: Sequence[float] | None = None,
        n_censored_bound: int = 0,
        testability: Sequence[Check] = (),
        power_reason: str | None = None,
        statement: str | Declared = AS_DECLARED,
    ) -> CL.ClaimResult:
        """A CI computed elsewhere, through :func:`claims.from_ci` under the declared CI rule.

        The parameters are :func:`claims.from_ci`'s; those left AS_DECLARED take the declaration's value.
        """
        spec = self._run(
            statement=statement, rule=rule, direction=direction, metric=metric, method=method, baseline=baseline,
            unit=unit, scale_note=scale_note, paper_value=paper_value, cluster_unit=cluster_unit,
        )  # fmt: skip
        return CL.from_ci(
            spec.id,
            spec.statement,
            effect=effect,
            ci_low=ci_low,
            ci_high=ci_high,
            rule=spec.rule,  # type: ignore[arg-type]
            direction=spec.direction,  # type: ignore[arg-type]
            threshold=threshold,
            delta=delta,
            null=null,
            metric=spec.metric,
            method=spec.method,
            baseline=spec.baseline,
            unit=spec.unit,
            n_units=n_units,
            n_seeds=n_seeds,
            cluster_unit=spec.cluster_unit,
            ci_level=ci_level,
            per_seed_signs=per_seed_signs,
            n_censored=n_censored,
            uncensored=uncensored,
            details=details,
            scale_note=spec.scale_note,
            paper_value=spec.paper_value,
            seed_effects=seed_effects,
            n_censored_bound=n_censored_bound,
            testability=supplied(self.id, self.requires, testability),
            power_reason=power_reason,
        )

    def simple(
        self,
        *,
        rule: SimpleRule | Declared = AS_DECLARED,
        effect: float | None,
        metric: str | Declared = AS_DECLARED,
        method: str | Declared = AS_DECLARED,
        baseline: str | None | Declared = AS_DECLARED,
        unit: str | Declared = AS_DECLARED,
        n_units: int,
        n_seeds: int = 0,
        direction: Direction | None | Declared = AS_DECLARED,
        threshold: float | None = None,
        details: Mapping | None = None,
        scale_note: str | Declared = AS_DECLARED,
        paper_value: str | None | Declared = AS_DECLARED,
        cluster_unit: str | None | Declared = AS_DECLARED,
        testability: Sequence[Check] = (),
        statement: str | Declared = AS_DECLARED,
    ) -> CL.ClaimResult:
        """A rule without a CI (probability, p-value, point, check), through :func:`claims.simple`.

        The parameters are :func:`claims.simple`'s; those left AS_DECLARED take the declaration's value, except
        that the declared direction applies to a 'point' rule only and the declared cluster unit to a
        'probability' rule only (else None).
        """
        spec = self._run(
            statement=statement, rule=rule, direction=direction, metric=metric, method=method, baseline=baseline,
            unit=unit, scale_note=scale_note, paper_value=paper_value, cluster_unit=cluster_unit,
        )  # fmt: skip
        return CL.simple(
            spec.id,
            spec.statement,
            rule=spec.rule,  # type: ignore[arg-type]  # not a simple rule: claims.simple says so
            effect=effect,
            metric=spec.metric,
            method=spec.method,
            baseline=spec.baseline,
            unit=spec.unit,
            n_units=n_units,
            n_seeds=n_seeds,
            direction=spec.direction if direction is not AS_DECLARED or self.rule == "point" else None,
            threshold=threshold,
            details=details,
            scale_note=spec.scale_note,
            paper_value=spec.paper_value,
            cluster_unit=spec.cluster_unit if cluster_unit is not AS_DECLARED or self.rule == "probability" else None,
            testability=supplied(self.id, self.requires, testability),
        )

    def composite(
        self,
        parts: Sequence[ClaimResult | Mapping],
        *,
        how: Combine = "all",
        min_parts: int | None = None,
        preconditions: Sequence[ClaimResult | Mapping] = (),
        metric: str | Declared = AS_DECLARED,
        method: str | Declared = AS_DECLARED,
        baseline: str | None | Declared = AS_DECLARED,
        unit: str | Declared = AS_DECLARED,
        headline: int | None = 0,
        ci_level: float | None = 0.95,
        scale_note: str | Declared = AS_DECLARED,
        details: Mapping | None = None,
        paper_value: str | None | Declared = AS_DECLARED,
        statement: str | Declared = AS_DECLARED,
    ) -> CL.ClaimResult:
        """A claim decided by its parts, through :func:`claims.composite`.

        The parameters are :func:`claims.composite`'s; those left AS_DECLARED take the declaration's value.
        """
        spec = self._run(
            statement=statement, metric=metric, method=method, baseline=baseline, unit=unit, scale_note=scale_note,
            paper_value=paper_value,
        )  # fmt: skip
        return CL.composite(
            spec.id,
            spec.statement,
            parts,
            how=how,
            min_parts=min_parts,
            preconditions=preconditions,
            metric=spec.metric,
            method=spec.method,
            baseline=spec.baseline,
            unit=spec.unit,
            headline=headline,
            ci_level=ci_level,
            scale_note=spec.scale_note,
            details=details,
            paper_value=spec.paper_value,
        )

    def part(
        self,
        suffix: str,
        statement: str,
        *,
        metric: str | Declared = AS_DECLARED,
        method: str | Declared = AS_DECLARED,
        baseline: str | None | Declared = AS_DECLARED,
        rule: Rule | Declared = AS_DECLARED,
        unit: str | Declared = AS_DECLARED,
        cluster_unit: str | None | Declared = AS_DECLARED,
        direction: Direction | None | Declared = AS_DECLARED,
        paper_value: str | None | Declared = AS_DECLARED,
        scale_note: str | Declared = AS_DECLARED,
        bounds: tuple[float, float] | None | Declared = AS_DECLARED,
        requires: tuple[str, ...] | Declared = AS_DECLARED,
    ) -> ClaimSpec:
        """A part of a composite claim: id ``<id>/<suffix>``, its own statement, the fields given changed."""
        return self._run(
            id=f"{self.id}/{suffix}", statement=statement, metric=metric, method=method, baseline=baseline,
            rule=rule, unit=unit, cluster_unit=cluster_unit, direction=direction, paper_value=paper_value,
            scale_note=scale_note, bounds=bounds, requires=requires,
        )  # fmt: skip


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
