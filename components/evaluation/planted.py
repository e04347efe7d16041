"""Planted power: the claim's own rule on runs simulated from its own units, with a chosen true effect.

The engine of :mod:`components.evaluation.power` (see its docstring for the design and its measured
limits), kept apart from the claim records so that :mod:`components.evaluation.claims` can attach the
check to every claim it decides (:func:`auto_power`, inside a :func:`planning` block) without a cycle.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from components.errors import ParamsError
from components.evaluation.rules import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from components.evaluation.stats import _as_values, _labels, cluster_design

ClaimResult = Any  # a components.evaluation.claims.ClaimResult (not imported: claims imports this module)

Decide = Callable[[np.ndarray, np.ndarray, np.ndarray], str]  # (values, clusters, strata) -> verdict


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
    token = _PLAN.set(None)  # a simulated run's own decision carries no power check of its own
    try:
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
    finally:
        _PLAN.reset(token)
    return rows
