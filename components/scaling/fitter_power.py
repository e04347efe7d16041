"""The fitter's power on a run's own grid and noise: can a shared-E joint fit, bootstrapped over training runs,
see a planted change of the data exponent beta?

A known law and the same law with beta raised by ``delta_beta`` are simulated on the run's grid (sizes, seeds,
budgets) with the run and point noise its repeated seeds show (:mod:`components.scaling.simulate`), fitted with a
shared E and bootstrapped over runs like the real data (fewer refits). Each simulated pair reports the CI of the
beta difference, whether it excludes 0 (detected) and covers the planted change, and the CI widths.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from components.scaling.bootstrap import PARAM_NAMES
from components.scaling.joint import bootstrap_joint, e_state
from components.scaling.sanity import MIN_USABLE_REFITS, sane_samples, usable
from components.scaling.simulate import grid_arrays, grid_runs, run_noise, simulate_rows

BETA, E = PARAM_NAMES.index("beta"), PARAM_NAMES.index("E")  # columns of a refit row


def simulated_law(template: Sequence[Mapping], fitted: Mapping[str, float] | None = None) -> dict[str, float]:
    """The law to simulate: ``fitted`` (the baseline's law) when usable and its E not collapsed to ~0, else a plain
    law through the grid (E half the lowest loss, exponents 0.35, each term half the highest loss above E at the
    smallest N and D)."""
    if fitted is not None and usable(fitted) and fitted["E"] > 0.05 * min(r["loss"] for r in template):
        return dict(fitted)
    lo, hi = min(r["loss"] for r in template), max(r["loss"] for r in template)
    e, ex = 0.5 * lo, 0.35
    n0, d0 = min(r["N"] for r in template), min(r["D"] for r in template)
    return {"E": e, "alpha": ex, "beta": ex, "A": 0.5 * (hi - e) * n0**ex, "B": 0.5 * (hi - e) * d0**ex}


def _ci(x: np.ndarray, level: float) -> list[float]:
    tail = (1 - level) / 2
    return np.quantile(x, [tail, 1 - tail]).tolist() if x.size >= MIN_USABLE_REFITS else [float("nan")] * 2


def fitter_power(
    template: Sequence[Mapping],
    noise_rows: Sequence[Mapping],
    fitted: Mapping[str, float] | None,
    *,
    delta_beta: float,
    n_sim: int,
    n_boot: int,
    level: float,
    seed: int,
    huber_delta: float,
) -> dict[str, Any]:
    """``n_sim`` simulated pairs (the law, and beta + ``delta_beta``) on ``template``'s grid (one dataset's rows:
    N, D, size_target, seed, loss) with the noise of ``noise_rows`` (every dataset's rows), each fitted and
    bootstrapped over runs (``n_boot`` refits)."""
    noise = run_noise(noise_rows)
    truth = simulated_law(template, fitted)
    planted = {**truth, "beta": truth["beta"] + delta_beta}
    sims = []
    for i in range(n_sim):
        sim = simulate_rows(template, {"law": truth, "planted": planted}, noise, seed=seed + 1000 + i)
        data = {n: grid_arrays([r for r in sim if r["intervention"] == n]) for n in ("law", "planted")}
        runs = {n: grid_runs([r for r in sim if r["intervention"] == n]) for n in ("law", "planted")}
        jb = bootstrap_joint(data, runs, n_boot, seed=seed + 2000 + i, huber_delta=huber_delta)
        law, pl = (sane_samples(jb.samples[n])[0] for n in ("law", "planted"))
        ok = np.isfinite(law).all(axis=1) & np.isfinite(pl).all(axis=1)
        d_ci = _ci(pl[ok, BETA] - law[ok, BETA], level)
        b_ci, e_ci = _ci(law[ok, BETA], level), _ci(law[ok, E], level)
        sims.append(
            {
                "E": jb.full.E,
                "E_ci": e_ci,
                "E_state": e_state(jb.full.E, tuple(e_ci), min(data["law"][2]))["state"],
                "beta": jb.full.fits["law"].beta,
                "beta_ci": b_ci,
                "beta_ci_width": b_ci[1] - b_ci[0],
                "delta_beta": jb.full.fits["planted"].beta - jb.full.fits["law"].beta,
                "delta_beta_ci": d_ci,
                "delta_beta_ci_width": d_ci[1] - d_ci[0],
                "detected": bool(d_ci[0] > 0 or d_ci[1] < 0),
                "covers_truth": bool(d_ci[0] <= delta_beta <= d_ci[1]),
                "refits_used": int(ok.sum()),
            }
        )
    widths = [s["delta_beta_ci_width"] for s in sims if np.isfinite(s["delta_beta_ci_width"])]
    return {
        "truth": truth,
        "delta_beta": delta_beta,
        "noise": noise,
        "n_sim": len(sims),
        "refits": n_boot,
        "sims": sims,
        "median_delta_beta_ci_width": float(np.median(widths)) if widths else None,
        "median_beta_ci_width": float(np.median([s["beta_ci_width"] for s in sims])) if sims else None,
        "detected": sum(s["detected"] for s in sims),
        "how": (
            "the run's grid (sizes, seeds, budgets) simulated from a known law and from the same law with beta "
            "raised by delta_beta, with the run/point noise its repeated seeds show; each pair fitted with a "
            "shared E and bootstrapped over runs like the real data (fewer refits)"
        ),
    }
