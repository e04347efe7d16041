"""The paired gap-slope test and the run-noise estimate, on known answers."""

import numpy as np
import pytest

from components.errors import DataError
from components.scaling.gap_slope import run_slopes, slope_of_term_change
from components.scaling.simulate import run_noise, simulate_rows

LAW = {"E": 2.5, "A": 48.0, "alpha": 0.35, "B": 56.0, "beta": 0.35}
BUDGETS = (31_250, 62_500, 125_000, 250_000, 500_000)


def grid(sizes=(20_000, 50_000, 120_000, 300_000), seeds=(0, 1)):
    return [{"size_target": n, "seed": s, "N": n, "D": d} for n in sizes for s in seeds for d in BUDGETS]


def test_slope_is_zero_for_one_law_and_the_planted_value_for_a_moved_beta():
    rows = simulate_rows(grid(), {"raw": LAW, "same": LAW, "steeper": {**LAW, "beta": 0.40}}, {}, seed=0)
    assert np.allclose(run_slopes(rows, "raw", "same")["values"], 0.0)
    g = run_slopes(rows, "raw", "steeper")
    assert len(g["values"]) == 8 and sorted(set(g["strata"])) == [20_000, 50_000, 120_000, 300_000]
    np.testing.assert_allclose(g["values"], slope_of_term_change(56.0, 0.35, 0.05, BUDGETS), rtol=1e-9)
    assert abs(slope_of_term_change(56.0, 0.35, 0.05, BUDGETS)) > 0.01


def test_noise_a_run_shares_across_its_branches_cancels_in_the_slope():
    rows = simulate_rows(grid(), {"raw": LAW, "same": LAW}, {}, seed=0)
    rng = np.random.default_rng(1)
    offset = {}
    for r in rows:  # an additive offset per (dataset, run): shared by every branch of the run
        r["loss"] += offset.setdefault((r["intervention"], r["size_target"], r["seed"]), rng.normal(0, 0.05))
    assert np.allclose(run_slopes(rows, "raw", "same")["values"], 0.0, atol=1e-12)


def test_run_noise_recovers_the_simulated_parts():
    rows = simulate_rows(
        grid(sizes=tuple(range(20_000, 420_000, 20_000)), seeds=(0, 1, 2)),
        {f"d{i}": LAW for i in range(4)},
        {"run": 0.01, "point": 0.003},
        seed=5,
    )
    est = run_noise(rows)
    assert est["run"] == pytest.approx(0.01, rel=0.25) and est["point"] == pytest.approx(0.003, rel=0.2)
    assert run_noise(simulate_rows(grid(seeds=(0,)), {"a": LAW}, {}, seed=0))["run"] is None


def test_a_missing_pair_is_an_error_naming_both():
    rows = simulate_rows(grid(), {"raw": LAW}, {}, seed=0)
    with pytest.raises(DataError, match="'raw' and 'qa'"):
        run_slopes(rows, "raw", "qa")
