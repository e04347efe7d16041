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

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from components.errors import ParamsError
from components.evaluation.claims import ClaimResult, derive_verdict
from components.evaluation.rules import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from components.evaluation.seed_ci import seed_level_ci
from components.evaluation.stats import _as_values, _labels, cluster_design

if TYPE_CHECKING:
    from components.evaluation.claim_spec import ClaimSpec

Decide = Callable[[np.ndarray, np.ndarray, np.ndarray], str]  # (values, clusters, strata) -> verdict
SimulateCI = Callable[[np.random.Generator], tuple[float, float, float]]  # one simulated run -> (effect, lo, hi)


@dataclass(frozen=True)
class PowerPlan:
    """How a claim not reproduced gets its power check: planted effects in multiples of its band, simulated
    runs per planted effect, bootstrap resamples per simulated run. Set for a stage by :func:`planning`."""

    deltas: tuple[float, ...]
    n_sim: int
    n_resamples: int
    seed: int = 0


_PLAN: contextvars.ContextVar[PowerPlan | None] = contextvars.ContextVar("power_plan", default=None)


@contextlib.contextmanager
def planning(plan: PowerPlan | None) -> Iterator[None]:
    """Within the block, every claim decided by :func:`components.evaluation.claims.evaluate_standard` that is not
    reproduced carries its design's power (:func:`auto_power`). The runtime opens it around each stage with the
    paper's ``claims`` settings, so every pipeline, present and future, gets the check without asking."""
    token = _PLAN.set(plan)
    try:
        yield
    finally:
        _PLAN.reset(token)


def current_plan() -> PowerPlan | None:
    return _PLAN.get()


def planted_effects(record: ClaimResult, deltas: Sequence[float]) -> tuple[list[float], float, str]:
    """(planted effects, band, what the band is): ``threshold + side * k * band`` for each k in ``deltas`` (k = 0
    is the boundary: the false "reproduced" rate there). The band is the claim's no-effect band delta, else its
    non-inferiority margin or threshold, else the half-width of its own CI."""
    side = -1.0 if record.direction == "less" else 1.0
    t = record.threshold or 0.0
    if record.delta:
        band, what = record.delta, "the no-effect band delta"
    elif record.rule == "non-inferiority" or t:
        band, what = abs(t), "the margin" if record.rule == "non-inferiority" else "the threshold"
    else:
        band, what = (record.ci_high - record.ci_low) / 2, "the half-width of the observed CI"
    return [t + side * float(k) * band for k in deltas], float(band), what


def auto_power(
    record: ClaimResult,
    values: np.ndarray,
    clusters: np.ndarray | None,
    strata: np.ndarray | None,
    decide: Decide,
    plan: PowerPlan,
) -> ClaimResult:
    """``record`` with ``details["power"]``: its own rule (``decide``) on runs simulated from its units with the
    observed effect replaced by planted ones (:func:`planted_power`). Without clusters each unit is its own."""
    planted, band, what = planted_effects(record, plan.deltas)
    if band <= 0:
        why = "the claim has no band, margin or CI width to scale planted effects by"
        return replace(record, details={**record.details, "power_not_applicable": why})
    c = np.zeros(values.size, dtype=int) if clusters is None else clusters  # no clusters: units are resampled
    rows = planted_power(
        values,
        clusters=c,
        strata=strata,
        planted=planted,
        decide=decide,
        n_sim=plan.n_sim,
        seed=plan.seed,
    )
    power = {
        "planted_in_deltas": [float(k) for k in plan.deltas],
        "band": band,
        "band_is": what,
        "n_sim": plan.n_sim,
        "n_resamples": plan.n_resamples,
        "rows": [r.to_dict() for r in rows],
        "how": "the run's units with its observed effect removed and the planted one added, new seed effects "
        "from the run's between-seed spread, then units (strata kept), each decided by the claim's own rule; "
        "an upper bound with few seeds (the spread is estimated, not known)",
    }
    return replace(record, details={**record.details, "power": power})


@dataclass(frozen=True)
class PowerRow:
    """The verdicts of ``n_sim`` simulated runs with ``planted`` as the true effect."""

    planted: float
    n_sim: int
    reproduced: float
    not_reproduced: float
    inconclusive: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def simulated_units(
    x: np.ndarray, c: np.ndarray, s: np.ndarray, rng: np.random.Generator, crossed: bool | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One simulated data set of the run's design: in every stratum, each of its seeds (relabelled 0..k-1)
    keeps its count of units, its units are its own deviations from its mean resampled with replacement, and
    its mean is the stratum's mean plus a new seed effect, normal with the stratum's between-seed variance (the
    spread of the seed means less what their units' noise explains, ANOVA's method of moments; 0 with one
    seed). A crossed design (every stratum holds the same seeds) gives a seed the same standard-normal draw in
    every stratum, so its effect moves them together (the conservative end for a mean over strata); ``crossed``
    may be given when the caller already knows the design."""
    if crossed is None:
        crossed = cluster_design(c, s, x.size) == "crossed"
    every = np.unique(c)
    shared = rng.standard_normal(every.size) if crossed else None
    vals, labs, strs = [], [], []
    for k in np.unique(s).tolist():
        in_k = s == k
        present = np.unique(c[in_k])
        cells = [x[in_k & (c == j)] for j in present.tolist()]
        means = np.array([cell.mean() for cell in cells])
        spread = 0.0
        if present.size > 1:
            noise = np.mean([cell.var(ddof=1) / cell.size if cell.size > 1 else 0.0 for cell in cells])
            spread = float(np.sqrt(max(means.var(ddof=1) - noise, 0.0)))
        z = shared[np.searchsorted(every, present)] if crossed else rng.standard_normal(present.size)
        centre = x[in_k].mean()
        for new_label, (cell, mean, zj) in enumerate(zip(cells, means.tolist(), z.tolist())):
            deviations = cell - mean
            vals.append(deviations[rng.integers(0, cell.size, size=cell.size)] + centre + spread * zj)
            labs.append(np.full(cell.size, new_label))
            strs.append(np.full(cell.size, k))
    return np.concatenate(vals), np.concatenate(labs), np.concatenate(strs)


def planted_power(
    values: Sequence[float] | np.ndarray,
    *,
    clusters: Sequence[Any] | np.ndarray,
    strata: Sequence[Any] | np.ndarray | None = None,
    planted: Sequence[float],
    decide: Decide,
    n_sim: int = 200,
    seed: int = 0,
) -> list[PowerRow]:
    """The claim's verdicts on ``n_sim`` simulated runs for each planted effect.

    ``values`` are the per-unit contributions whose mean is the claim's effect (method - baseline per paired
    unit, or the stratum-scaled values of an unpaired claim): adding a constant to every value adds it to the
    effect. ``decide`` is the claim's own rule on (values, clusters, strata) and returns a verdict string.
    """
    x = _as_values("values", values)
    if n_sim < 1:
        raise ParamsError(f"n_sim: must be >= 1, got {n_sim}")
    c, s = _labels("clusters", clusters, x.size), _labels("strata", strata, x.size)
    centred = x - x.mean()
    crossed = cluster_design(c, s, x.size) == "crossed"  # the design is the run's: found once
    rng = np.random.default_rng(seed)
    rows = []
    for effect in planted:
        counts = {REPRODUCED: 0, NOT_REPRODUCED: 0, INCONCLUSIVE: 0}
        for _ in range(n_sim):
            v, sc, ss = simulated_units(centred + float(effect), c, s, rng, crossed)
            counts[decide(v, sc, ss)] += 1
        rows.append(
            PowerRow(
                planted=float(effect),
                n_sim=n_sim,
                reproduced=counts[REPRODUCED] / n_sim,
                not_reproduced=counts[NOT_REPRODUCED] / n_sim,
                inconclusive=counts[INCONCLUSIVE] / n_sim,
            )
        )
    return rows


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
        ci = seed_level_ci(v, clusters=sc, strata=ss, n_resamples=n_resamples, level=level, seed=int(rng.integers(1 << 31)))
        return ci.point, ci.low, ci.high

    return simulate
