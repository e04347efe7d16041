"""Params of the recurring evaluation (the deployment's parameters), validated before any work."""

from __future__ import annotations

from pydantic import Field, field_validator

from flows.runtime.params import Section


class Params(Section):
    papers: list[str] | None = Field(
        None, description="papers to re-evaluate; null = every registered model with the alias"
    )
    alias: str = Field("champion", pattern=r"^[A-Za-z][\w-]*$", description="model registry alias to re-evaluate")
    default_tolerance: float = Field(
        0.05, ge=0, le=10, description="allowed relative worsening of a metric (0.05 = 5%)"
    )
    tolerances: dict[str, float] = Field(
        default_factory=dict, description="per-metric (or glob) tolerances overriding the default"
    )
    higher_is_better: list[str] = Field(
        default_factory=list, description="metric names/globs where larger is better (default: lower)"
    )
    experiment: str = Field("recurring-eval", min_length=1, description="MLflow experiment holding the time series")
    history: int = Field(50, ge=1, le=10_000, description="evaluations per paper shown in the report")

    @field_validator("tolerances")
    @classmethod
    def _non_negative(cls, v: dict[str, float]) -> dict[str, float]:
        bad = [k for k, t in v.items() if t < 0]
        if bad:
            raise ValueError(f"tolerances must be >= 0: {bad}")
        return v
