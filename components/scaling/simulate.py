"""Data from a known law on a run's own grid, with the run's own noise: what the fitter can resolve here.

Run noise has two parts: a multiplicative offset shared by every cooldown branch of a
run (seed, size) and an independent one per point. Both are estimated from seeds that
repeat a cell (:func:`run_noise`); :func:`simulate_rows` draws the same grid (sizes,
seeds, budgets) from a law with that noise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def run_noise(rows: Sequence[Mapping], *, by: str = "intervention", run_keys=("size_target", "seed")) -> dict:
    """Standard deviations of log loss shared by a run (``run``) and per point (``point``), from repeated seeds.

    Residuals are deviations from the mean over seeds of each (dataset, size, D) cell; a run's mean residual
    has variance (1 - 1/k)(s_run^2 + s_point^2 / m) and its within-run deviations (1 - 1/k)(1 - 1/m) s_point^2
    for k seeds and m points per run. None when no cell repeats.
    """
    cells: dict = {}
    for r in rows:
        cells.setdefault((r[by], r[run_keys[0]], r["D"]), []).append((r[run_keys[1]], np.log(r["loss"])))
    per_run: dict = {}
    ks = []
    for (ds, size, _), vals in cells.items():
        if len(vals) < 2:
            continue
        ks.append(len(vals))
        mean = np.mean([v for _, v in vals])
        for seed, v in vals:
            per_run.setdefault((ds, size, seed), []).append(v - mean)
    runs = [np.array(v) for v in per_run.values() if len(v) >= 2]
    if not runs:
        return {"run": None, "point": None, "runs": 0}
    k = float(np.mean(ks))
    m = float(np.mean([len(v) for v in runs]))
    within = np.concatenate([v - v.mean() for v in runs])
    s_point2 = float(np.mean(within**2)) / ((1 - 1 / k) * (1 - 1 / m))
    means = np.array([v.mean() for v in runs])
    s_run2 = max(0.0, float(np.mean(means**2)) / (1 - 1 / k) - s_point2 / m)
    return {"run": float(np.sqrt(s_run2)), "point": float(np.sqrt(s_point2)), "runs": len(runs)}


def simulate_rows(
    template: Sequence[Mapping],
    laws: Mapping[str, Mapping],
    noise: Mapping,
    seed: int,
    *,
    run_keys=("size_target", "seed"),
) -> list[dict]:
    """For each law name: the ``template`` rows' (N, D, size, seed) with loss from the law times run and point
    noise. ``template`` is one dataset's rows (its grid)."""
    rng = np.random.default_rng(seed)
    out = []
    s_run, s_pt = noise.get("run") or 0.0, noise.get("point") or 0.0
    for name, law in laws.items():
        offsets: dict = {}
        for r in template:
            key = tuple(r[k] for k in run_keys)
            if key not in offsets:
                offsets[key] = rng.normal(0.0, s_run)
            mean = law["E"] + law["A"] / r["N"] ** law["alpha"] + law["B"] / r["D"] ** law["beta"]
            loss = float(mean * np.exp(offsets[key] + rng.normal(0.0, s_pt)))
            out.append({"intervention": name, **{k: r[k] for k in (*run_keys, "N", "D")}, "loss": loss})
    return out


def grid_arrays(rows: Sequence[Mapping], column: str = "loss") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid rows' N, D and ``column`` (the loss) as arrays, the fitters' input."""
    return (
        np.array([r["N"] for r in rows], float),
        np.array([r["D"] for r in rows], float),
        np.array([r[column] for r in rows], float),
    )


def grid_runs(rows: Sequence[Mapping], run_keys=("size_target", "seed")) -> tuple[list, list]:
    """Each row's training run as (stratum, run) label lists: the unit ``bootstrap_joint`` resamples."""
    return [r[run_keys[0]] for r in rows], [r[run_keys[1]] for r in rows]
