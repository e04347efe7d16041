"""The fitter's power on a grid and its noise, on known answers: a large planted change of beta on a wide grid
with little noise is seen, no change is not, and the simulated law falls back to a plain one when the fitted law
cannot be used."""

import numpy as np

from components.scaling.fitter_power import fitter_power, simulated_law
from components.scaling.sanity import param_cis, sane_samples, usable
from components.scaling.simulate import simulate_rows

LAW = {"E": 2.5, "A": 48.0, "alpha": 0.35, "B": 56.0, "beta": 0.35}
BUDGETS = (31_250, 125_000, 500_000, 2_000_000, 8_000_000)


def grid_rows(noise, seed=0):
    template = [
        {"size_target": n, "seed": s, "N": n, "D": d}
        for n in (20_000, 80_000, 320_000, 1_280_000)
        for s in (0, 1)
        for d in BUDGETS
    ]
    return simulate_rows(template, {"raw": LAW, "other": LAW}, noise, seed=seed)


def power(delta_beta, noise, seed=0):
    rows = grid_rows(noise, seed)
    base = [r for r in rows if r["intervention"] == "raw"]
    return fitter_power(
        base, rows, LAW, delta_beta=delta_beta, n_sim=3, n_boot=40, level=0.95, seed=seed, huber_delta=1e-3
    )


def test_a_large_planted_beta_change_is_seen_on_a_wide_quiet_grid_and_its_ci_covers_it():
    out = power(0.15, {"run": 0.002, "point": 0.001})
    assert out["truth"] == LAW and out["n_sim"] == 3 and out["noise"]["runs"] > 0
    assert out["detected"] == 3
    assert all(s["delta_beta_ci"][0] > 0 and s["refits_used"] >= 10 for s in out["sims"])
    assert sum(s["covers_truth"] for s in out["sims"]) >= 2


def test_noise_widens_the_beta_difference_ci():
    """The power follows the run's own noise (sabotage: simulating without it would give the quiet widths)."""
    quiet = power(0.05, {"run": 0.001, "point": 0.0005}, seed=1)
    loud = power(0.05, {"run": 0.03, "point": 0.01}, seed=1)
    assert loud["median_delta_beta_ci_width"] > 3 * quiet["median_delta_beta_ci_width"]


def test_an_unusable_fitted_law_is_replaced_by_a_plain_law_through_the_grid():
    rows = [r for r in grid_rows({}) if r["intervention"] == "raw"]
    assert simulated_law(rows, LAW) == LAW
    plain = simulated_law(rows, {**LAW, "alpha": 101.0})
    assert usable(plain) and plain["alpha"] == plain["beta"] == 0.35
    assert plain["E"] == 0.5 * min(r["loss"] for r in rows)


def test_insane_refits_are_dropped_and_too_few_leave_no_ci():
    good = np.tile([48.0, 56.0, 2.5, 0.35, 0.35], (12, 1)) + np.linspace(0, 0.01, 12)[:, None]
    bad = np.array([[1e245, 56.0, 2.5, 101.0, 0.35]])
    samples, dropped = sane_samples(np.vstack([good, bad]))
    assert dropped == 1 and np.isnan(samples[-1]).all()
    ci = param_cis(samples, 0.95)
    assert 0.35 < ci["beta"][0] < ci["beta"][1] < 0.36  # the 12 usable refits' 2.5% and 97.5% quantiles
    assert all(np.isnan(v).all() for v in param_cis(samples[:9], 0.95).values())
