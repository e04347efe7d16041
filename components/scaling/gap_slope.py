"""The paired gap-slope test: does the loss gap between two datasets change with D inside each training run?

Two datasets trained with the same seed, size N and token budgets give paired cells
(N, seed, D). Within each run (a seed at a size) the gap g(D) = L_b(D) - L_a(D) is
regressed on log D; the slope is one number per run, and the runs are the units a
claim bootstraps (seeds within N). Noise a run shares across its cooldown branches
cancels in the slope, which a fit of the whole law cannot exploit. Under
L = E + A/N^alpha + B/D^beta a slope away from 0 says the D term differs (beta, or B);
it is the mini-scale proxy for "the data exponent moved", not an estimate of Δbeta.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from components.errors import DataError


def run_slopes(
    rows: Sequence[Mapping],
    a: str,
    b: str,
    *,
    by: str = "intervention",
    run_keys=("size_target", "seed"),
    x: str = "D",
    y: str = "loss",
) -> dict:
    """Per run present for both ``a`` and ``b``: the OLS slope of (y_b - y_a) against log x over the shared cells.

    Returns values (slopes), runs (run labels), strata (the first run key, e.g. N) and points per run.
    """
    cells: dict = {}
    for r in rows:
        if r[by] in (a, b):
            cells.setdefault(tuple(r[k] for k in run_keys), {}).setdefault(r[x], {})[r[by]] = float(r[y])
    values, runs, strata, sizes = [], [], [], []
    for key in sorted(cells, key=str):
        pairs = [(d, v[b] - v[a]) for d, v in sorted(cells[key].items()) if a in v and b in v]
        if len(pairs) < 2:
            continue
        lx = np.log([p[0] for p in pairs])
        g = np.array([p[1] for p in pairs])
        values.append(float(np.polyfit(lx, g, 1)[0]))
        runs.append("/".join(map(str, key)))
        strata.append(key[0])
        sizes.append(len(pairs))
    if not values:
        raise DataError(f"gap slope: no run has two or more cells for both {a!r} and {b!r}")
    return {"values": np.array(values), "runs": runs, "strata": strata, "points": sizes}


def slope_of_term_change(B: float, beta: float, d_beta: float, D: Sequence[float]) -> float:
    """The gap slope (vs log D, over the budgets ``D``) that a change of beta by ``d_beta`` at fixed B gives:
    the effect a planted Δbeta corresponds to in this test's units."""
    lx = np.log(np.asarray(D, float))
    gap = B * np.exp(-(beta + d_beta) * lx) - B * np.exp(-beta * lx)
    return float(np.polyfit(lx, gap, 1)[0])
