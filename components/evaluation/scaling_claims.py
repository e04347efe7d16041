"""Comparing fitted scaling laws through their bootstrap refits (QualityPajama-style claims).

Each intervention's law comes with ``samples``: an (n_boot, 5) array of refits in
(A, B, E, alpha, beta) order (``components.scaling.bootstrap``). Two interventions
were fitted on different data, so their resamples are independent: the i-th
difference pairs two independent draws, and percentiles of the differences give
the CI of the difference. Coefficients (A, B, E) are compared in log space, where
a difference is a ratio and does not depend on units; exponents are compared
directly.
"""

from __future__ import annotations

import math
from itertools import combinations
from types import SimpleNamespace

import numpy as np

from components.errors import ParamsError
from components.scaling.allocation import optimal_loss, tokens_per_param

PARAMS = ("A", "B", "E", "alpha", "beta")
LOG_PARAMS = ("A", "B", "E")
# Which way each component improves the loss L = E + A/N^alpha + B/D^beta.
IMPROVES = {"A": -1, "B": -1, "E": -1, "alpha": +1, "beta": +1}


def _col(samples: np.ndarray, name: str) -> np.ndarray:
    x = samples[:, PARAMS.index(name)]
    return np.log(x) if name in LOG_PARAMS else x


def _ci(x: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    lo, hi = np.quantile(x, [tail, 1 - tail])
    return float(lo), float(hi)


def _pairable(a: np.ndarray, b: np.ndarray) -> int:
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != 5 or b.shape[1] != 5:
        raise ParamsError("bootstrap samples must be (n_boot, 5) arrays in A, B, E, alpha, beta order")
    return min(len(a), len(b))


def param_deltas(samples: np.ndarray, base: np.ndarray, full: dict, full_base: dict, *, level: float = 0.95) -> dict:
    """For each component: point (full fits), CI of (intervention − baseline), log for A, B, E."""
    n = _pairable(samples, base)
    ok = np.isfinite(samples[:n]).all(axis=1) & np.isfinite(base[:n]).all(axis=1)
    out = {}
    for name in PARAMS:
        diff = _col(samples[:n][ok], name) - _col(base[:n][ok], name)
        point = _point(full, full_base, name)
        lo, hi = _ci(diff, level) if ok.sum() >= 10 else (math.nan, math.nan)
        out[name] = {
            "effect": float(point),
            "ci_low": lo,
            "ci_high": hi,
            "scale": "log" if name in LOG_PARAMS else "linear",
        }
    return out


def _point(full: dict, full_base: dict, name: str) -> float:
    a, b = full.get(name), full_base.get(name)
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        return math.nan
    if name in LOG_PARAMS:
        return math.log(a) - math.log(b) if a > 0 and b > 0 else math.nan
    return a - b


def classify(delta: dict, name: str) -> str:
    """``improved`` / ``worsened`` when the CI excludes 0 (direction per IMPROVES), else ``unclear``."""
    lo, hi = delta["ci_low"], delta["ci_high"]
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "unclear"
    if lo > 0 or hi < 0:
        return "improved" if (lo > 0) == (IMPROVES[name] > 0) else "worsened"
    return "unclear"


def _law(row: np.ndarray) -> SimpleNamespace:
    return SimpleNamespace(**dict(zip(PARAMS, map(float, row))))


def _valid(row: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(row)) and np.all(row[[0, 1, 3, 4]] > 0))


def reversal_probability(a: np.ndarray, b: np.ndarray, c_small: float, c_big: float) -> dict:
    """P(the compute-optimal loss order of a and b at ``c_small`` differs from the order at ``c_big``).

    Evaluated on paired draws of the two bootstrap distributions; draws with a
    non-positive exponent (no compute-optimal allocation) are skipped and counted.
    """
    n = _pairable(a, b)
    flips, used = 0, 0
    for ra, rb in zip(a[:n], b[:n]):
        if not (_valid(ra) and _valid(rb)):
            continue
        la, lb = _law(ra), _law(rb)
        small = optimal_loss(la, c_small) - optimal_loss(lb, c_small)
        big = optimal_loss(la, c_big) - optimal_loss(lb, c_big)
        flips += (small > 0) != (big > 0)
        used += 1
    return {"p": flips / used if used else math.nan, "draws": used, "skipped": n - used}


def log_allocation_ratio(
    a: np.ndarray, b: np.ndarray, full_a: dict, full_b: dict, c: float, *, level: float = 0.95
) -> dict:
    """log[(D/N)_a / (D/N)_b] at budget ``c``: point from the full fits, CI from paired draws."""
    n = _pairable(a, b)
    diffs = [
        math.log(tokens_per_param(_law(ra), c)) - math.log(tokens_per_param(_law(rb), c))
        for ra, rb in zip(a[:n], b[:n])
        if _valid(ra) and _valid(rb)
    ]
    laws = [np.array([full[k] if full.get(k) is not None else math.nan for k in PARAMS]) for full in (full_a, full_b)]
    point = (
        math.log(tokens_per_param(_law(laws[0]), c)) - math.log(tokens_per_param(_law(laws[1]), c))
        if _valid(laws[0]) and _valid(laws[1])
        else math.nan
    )
    if len(diffs) < 10:
        return {"effect": point, "ci_low": math.nan, "ci_high": math.nan, "draws": len(diffs)}
    lo, hi = _ci(np.asarray(diffs), level)
    return {"effect": point, "ci_low": lo, "ci_high": hi, "draws": len(diffs)}


def pairs(names: list[str]) -> list[tuple[str, str]]:
    return list(combinations(names, 2))
