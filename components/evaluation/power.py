"""Can the design reach a verdict? A claim's own rule applied to data simulated from the run's own noise.

Before a claim is reported "not reproduced" (or "inconclusive"), the standard asks whether the run could
have said "reproduced" had the paper's effect been there. :func:`planted_power` answers with the run's own
units: it removes the observed effect from the per-unit values, plants a chosen effect, draws new data sets
of the run's design (:func:`simulated_units`: as many seeds as the run, each with new seed effects drawn
from the run's between-seed spread and its own units resampled around them), and applies the claim's own
decision to each. The share of "reproduced" at a planted effect is the design's power there; at a planted
effect of 0 it is the false-positive rate.

Why new seed effects and not seeds drawn with replacement: a real rerun has as many distinct seeds as the
run, while a redraw of 3 seeds with replacement keeps only 1 distinct seed in 1/9 of the simulated runs and 2
in 6/9, whose own two-stage CIs see less seed-to-seed spread than a real run's. In a check (3 seeds of 150
units, seed sd 0.5, unit sd 1, band 0.1, 60 observed runs x 20 simulated runs each) the share "reproduced" at a
planted 0 was 0.135 with the redraw, 0.109 with new seed effects, and 0.107 on fresh runs of the same model.
At a planted 0.3 both schemes overstate the power (0.49 and 0.50 against 0.35 on fresh runs): 3 seeds
estimate the between-seed spread on 2 degrees of freedom, and an estimate below the truth, the more likely
side, makes the simulated runs decide more often. With few seeds, read the power as an upper bound.

A statistic that is not a mean of units (a harmonic mean of split means, a rank correlation) cannot be planted
unit by unit; :func:`shifted_power` simulates it the same way at the level of the statistic: the caller draws
data sets the way the claim's bootstrap does and computes each one's effect and CI, and every simulated run is
moved by (planted - observed), a location shift, as planting a constant in every unit does for a mean.

Hand-written because no maintained library simulates a nested (clustered, stratified) bootstrap decision;
the claim's decision on each simulated run is the one :func:`components.evaluation.stats.two_stage_means`
serves (seeds, then units).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from components.errors import ParamsError
from components.evaluation.claims import ClaimResult, derive_verdict
from components.evaluation.planted import (  # noqa: F401  (re-exported: the power check's public names)
    Decide,
    PowerPlan,
    PowerRow,
    auto_power,
    current_plan,
    planning,
    planted_effects,
    planted_power,
    simulated_units,
)
from components.evaluation.rules import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from components.evaluation.seed_ci import seed_level_ci
from components.evaluation.stats import _as_values, _labels, cluster_design

if TYPE_CHECKING:
    from components.evaluation.claim_spec import ClaimSpec

SimulateCI = Callable[[np.random.Generator], tuple[float, float, float]]  # one simulated run -> (effect, lo, hi)


def attach_power(
    result: ClaimResult,
    spec: ClaimSpec,
    *,
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray,
    strata: Sequence[Any] | np.ndarray | None = None,
    delta: float,
    deltas: Sequence[float],
    n_sim: int,
    n_resamples: int,
    level: float,
    seed: int,
) -> ClaimResult:
    """``result`` with its design's power in ``details["power"]``, unless it is already reproduced.

    The planted effects are ``deltas`` multiples of the claim's no-effect band ``delta``, on the claimed side;
    each simulated run is decided by ``spec.standard`` (the claim's own rule and band) with ``n_resamples``
    resamples (fewer than the claim's 10,000, to keep ``n_sim`` runs cheap: stated in the record).
    """
    if spec.rule != "standard":
        raise ParamsError(f"claim {spec.id}: the power check applies the standard rule, not {spec.rule!r}")
    if result.verdict == REPRODUCED or n_sim == 0:
        return result
    side = -1.0 if spec.direction == "less" else 1.0

    def decide(v: np.ndarray, c: np.ndarray, s: np.ndarray) -> str:
        return spec.standard(
            method_values=v,
            baseline_values=None,
            clusters=c,
            strata=s,
            delta=delta,
            seed=seed,
            n_resamples=n_resamples,
            level=level,
        ).verdict

    rows = planted_power(
        values,
        clusters=clusters,
        strata=strata,
        planted=[side * k * delta for k in deltas],
        decide=decide,
        n_sim=n_sim,
        seed=seed,
    )
    power = {
        "planted_in_deltas": [float(k) for k in deltas],
        "n_sim": n_sim,
        "n_resamples": n_resamples,
        "rows": [r.to_dict() for r in rows],
        "how": "the run's units with its observed effect removed and the planted one added, new seed effects "
        "from the run's between-seed spread, then units (strata kept), each decided by the claim's "
        "own rule; an upper bound with few seeds (the spread is estimated, not known)",
    }
    return replace(result, details={**result.details, "power": power})


def shifted_power(
    simulate: SimulateCI,
    *,
    observed: float,
    planted: Sequence[float],
    decide: Callable[[float, float, float], str],
    n_sim: int = 200,
    seed: int = 0,
) -> list[PowerRow]:
    """The claim's verdicts on ``n_sim`` simulated runs for each planted effect, for a statistic that is not a
    mean of units. ``simulate(rng)`` draws one data set as the claim's bootstrap does (seeds, then units) and
    returns its (effect, CI low, CI high); each run is shifted by ``planted - observed`` and decided by
    ``decide(effect, low, high)``. The same ``n_sim`` runs serve every planted effect."""
    if n_sim < 1:
        raise ParamsError(f"n_sim: must be >= 1, got {n_sim}")
    rng = np.random.default_rng(seed)
    with planning(None):  # a simulated run carries no power check of its own
        runs = np.array([simulate(rng) for _ in range(n_sim)], dtype=float).reshape(n_sim, 3)
    rows = []
    for effect in planted:
        moved = runs + (float(effect) - float(observed))
        verdicts = [decide(*row) for row in moved.tolist()]
        rows.append(
            PowerRow(
                planted=float(effect),
                n_sim=n_sim,
                reproduced=verdicts.count(REPRODUCED) / n_sim,
                not_reproduced=verdicts.count(NOT_REPRODUCED) / n_sim,
                inconclusive=verdicts.count(INCONCLUSIVE) / n_sim,
            )
        )
    return rows


def attach_shifted_power(
    result: ClaimResult,
    *,
    simulate: SimulateCI,
    delta: float,
    deltas: Sequence[float],
    n_sim: int,
    n_resamples: int,
    seed: int,
    carrier: ClaimResult | None = None,
) -> ClaimResult:
    """``carrier`` (default ``result``) with the power of ``result``'s CI rule in ``details["power"]``, unless
    ``carrier`` is already reproduced: :func:`shifted_power` with ``result``'s own rule (its direction, band and
    seed count) deciding each simulated (effect, CI). ``carrier`` is the claim whose record holds the check when
    ``result`` is one part of a composite (the power is then the part's, named in ``details["power"]["part"]``)."""
    carrier = result if carrier is None else carrier
    if carrier.verdict == REPRODUCED or n_sim == 0:
        return carrier
    if result.effect is None:
        return carrier  # no observed effect to move (the claim's runs were not made)
    side = -1.0 if result.direction == "less" else 1.0
    stored = result.to_dict()

    def decide(effect: float, low: float, high: float) -> str:
        return derive_verdict({**stored, "effect": effect, "ci_low": low, "ci_high": high})

    rows = shifted_power(
        simulate,
        observed=result.effect,
        planted=[side * k * delta for k in deltas],
        decide=decide,
        n_sim=n_sim,
        seed=seed,
    )
    power = {
        "planted_in_deltas": [float(k) for k in deltas],
        "n_sim": n_sim,
        "n_resamples": n_resamples,
        "rows": [r.to_dict() for r in rows],
        "how": "runs simulated from this run's data by the claim's simulator (seeds, then units) with their "
        "effect and CI recomputed, each moved so its expected effect is the planted one, decided by "
        "the claim's own rule",
    }
    if carrier is not result:
        power["part"] = result.id
    return replace(carrier, details={**carrier.details, "power": power})


def power_table(results: Sequence[ClaimResult]) -> list[dict[str, Any]]:
    """One row per (claim with a power check, planted effect): the share of simulated runs per verdict."""
    return [
        {
            "claim": r.details["power"].get("part", r.id),
            "planted (x delta)": k,
            "planted effect": row["planted"],
            "reproduced": row["reproduced"],
            "not reproduced": row["not_reproduced"],
            "inconclusive": row["inconclusive"],
            "runs": row["n_sim"],
        }
        for r in results
        if "power" in r.details
        for k, row in zip(r.details["power"]["planted_in_deltas"], r.details["power"]["rows"])
    ]


def mean_simulator(
    values: Sequence[float] | np.ndarray,
    *,
    clusters: Sequence[Any] | np.ndarray,
    strata: Sequence[Any] | np.ndarray | None = None,
    n_resamples: int,
    level: float,
) -> SimulateCI:
    """For :func:`shifted_power` on a mean of units under any CI rule (standard or non-inferiority): each call
    draws a data set of the run's design (:func:`simulated_units`) and returns its mean with the rule's
    seed-level CI (:func:`components.evaluation.seed_ci.seed_level_ci`)."""
    x = _as_values("values", values)
    c, s = _labels("clusters", clusters, x.size), _labels("strata", strata, x.size)
    crossed = cluster_design(c, s, x.size) == "crossed"

    def simulate(rng: np.random.Generator) -> tuple[float, float, float]:
        v, sc, ss = simulated_units(x, c, s, rng, crossed)
        ci = seed_level_ci(
            v, clusters=sc, strata=ss, n_resamples=n_resamples, level=level, seed=int(rng.integers(1 << 31))
        )
        return ci.point, ci.low, ci.high

    return simulate
