"""Specification of the power check for statistics that are not a mean of units: runs redrawn from the data,
their effect and CI recomputed, then moved to the planted effect and decided by the claim's own rule."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import ParamsError
from components.evaluation import claims as CL
from components.evaluation.power import attach_shifted_power, mean_simulator, planted_power, power_table, shifted_power

DELTA = 0.1


def decide_ci(effect: float, low: float, high: float) -> str:
    return CL.from_ci(
        "C",
        "s",
        effect=effect,
        ci_low=low,
        ci_high=high,
        direction="greater",
        delta=DELTA,
        metric="m",
        method="a",
        baseline="b",
        unit="u",
        n_units=600,
        n_seeds=4,
        details={"interval": "the simulator's seed-level CI (seed_level_ci)"},
    ).verdict


def standard_rule(values, clusters, strata) -> str:
    return CL.evaluate_standard(
        "C",
        "s",
        method_values=values,
        baseline_values=None,
        clusters=clusters,
        strata=strata,
        direction="greater",
        delta=DELTA,
        metric="m",
        method="a",
        baseline="b",
        unit="u",
        seed=0,
        n_resamples=300,
    ).verdict


def run_units(mean: float, rng: np.random.Generator, n_seeds: int = 4, n_items: int = 150):
    effects = mean + rng.normal(0.0, 0.05, n_seeds)
    return np.concatenate([e + rng.normal(0.0, 1.0, n_items) for e in effects]), np.repeat(np.arange(n_seeds), n_items)


def simulator(values, seeds):
    """One run redrawn as the two-stage bootstrap does, its mean and percentile CI (the component's simulator)."""
    return mean_simulator(values, clusters=seeds, n_resamples=300, level=0.95)


def test_for_a_mean_it_agrees_with_planting_in_every_unit():
    """Known answer: where both apply (a mean), the location shift of the statistic and the unit-level planting
    give the same power curve, within simulation noise."""
    values, seeds = run_units(0.3, np.random.default_rng(0))
    planted = [0.0, 0.15, 0.25, 0.6]
    shifted = shifted_power(
        simulator(values, seeds), observed=float(values.mean()), planted=planted, decide=decide_ci, n_sim=80, seed=1
    )
    units = planted_power(values, clusters=seeds, planted=planted, decide=standard_rule, n_sim=80, seed=1)
    for a, b in zip(shifted, units):
        assert abs(a.reproduced - b.reproduced) <= 0.2, (a, b)
    assert shifted[0].reproduced <= 0.1 and shifted[-1].reproduced >= 0.9
    assert [r.reproduced for r in shifted] == sorted(r.reproduced for r in shifted)


def test_the_observed_effect_is_removed_before_the_planted_one_is_added():
    """Sabotage guard: a run with a large effect of its own shows no false positives at a planted 0 (moving the
    runs by +planted instead of planted - observed would pass every time)."""
    values, seeds = run_units(1.0, np.random.default_rng(2))
    (null,) = shifted_power(
        simulator(values, seeds), observed=float(values.mean()), planted=[0.0], decide=decide_ci, n_sim=40, seed=3
    )
    assert null.reproduced <= 0.1 and null.not_reproduced + null.inconclusive >= 0.9


def part_and_composite(effect: float, low: float, high: float):
    part = CL.from_ci(
        "C1/MU",
        "s",
        effect=effect,
        ci_low=low,
        ci_high=high,
        direction="greater",
        delta=DELTA,
        metric="m",
        method="a",
        baseline="b",
        unit="u",
        n_units=600,
        n_seeds=4,
        details={"interval": "a seed-level CI computed by the caller"},
    )
    other = CL.from_ci(
        "C1/FQ",
        "s",
        effect=0.0,
        ci_low=-1.0,
        ci_high=1.0,
        direction="greater",
        delta=DELTA,
        metric="m",
        method="a",
        baseline="b",
        unit="u",
        n_units=4,
        n_seeds=4,
        details={"interval": "a seed-level CI computed by the caller"},
    )
    return part, CL.composite("C1", "s", [part, other], how="all", metric="m", method="a", baseline="b", unit="u")


def test_a_part_s_power_goes_on_its_composite_named_and_the_table_reads_it():
    values, seeds = run_units(-0.3, np.random.default_rng(4))
    part, whole = part_and_composite(-0.3, -0.4, -0.2)
    assert whole.verdict == CL.NOT_REPRODUCED
    out = attach_shifted_power(
        part,
        simulate=simulator(values, seeds),
        delta=DELTA,
        deltas=[0, 5],
        n_sim=30,
        n_resamples=300,
        seed=5,
        carrier=whole,
    )
    assert out.id == "C1" and out.details["power"]["part"] == "C1/MU"
    rows = out.details["power"]["rows"]
    assert [r["planted"] for r in rows] == [0.0, 0.5] and rows[0]["reproduced"] <= 0.1 <= 0.9 <= rows[1]["reproduced"]
    table = power_table([out])
    assert [r["claim"] for r in table] == ["C1/MU", "C1/MU"] and table[1]["planted (x delta)"] == 5


def test_no_check_on_a_reproduced_claim_or_when_switched_off():
    values, seeds = run_units(0.5, np.random.default_rng(6))
    part, _ = part_and_composite(0.5, 0.4, 0.6)
    assert part.verdict == CL.REPRODUCED
    kw = dict(simulate=simulator(values, seeds), delta=DELTA, deltas=[0, 5], n_resamples=300, seed=0)
    assert "power" not in attach_shifted_power(part, n_sim=30, **kw).details
    weak, _ = part_and_composite(0.05, -0.1, 0.2)
    assert "power" not in attach_shifted_power(weak, n_sim=0, **kw).details
    with pytest.raises(ParamsError, match="n_sim"):
        shifted_power(kw["simulate"], observed=0.0, planted=[0.0], decide=decide_ci, n_sim=-1)
