"""Bootstrap helpers for the standard verdict rule (see ``claims.py``).

The rule asks for a 95% percentile bootstrap CI with 10,000 resamples over the
claim's unit (items, episodes, seeds), stratified by seed, on paired
differences method - baseline. Resampling is vectorised with numpy: indices for
a block of resamples are drawn at once per stratum, so 10k resamples over a few
thousand units take a fraction of a second. Hand-written rather than
``scipy.stats.bootstrap`` because scipy cannot keep per-stratum counts fixed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from components.errors import DataError, ParamsError

log = logging.getLogger(__name__)

Statistic = Callable[..., Any]  # called as statistic(x, axis=-1), numpy-style
_BLOCK_ELEMENTS = 1_000_000  # values resampled per block (bounds memory to ~10 MB)


def _as_values(name: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise DataError(f"{name}: expected a non-empty 1-D sequence of numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise DataError(f"{name}: value at position {bad} is not finite ({arr[bad]})")
    return arr


def paired_differences(method_values: Sequence[float] | np.ndarray,
                       baseline_values: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """method - baseline per paired unit (or the method values alone when baseline is None)."""
    method = _as_values("method_values", method_values)
    if baseline_values is None:
        return method
    baseline = _as_values("baseline_values", baseline_values)
    if baseline.shape != method.shape:
        raise DataError(f"baseline_values: {baseline.size} values but method_values has {method.size}; "
                        "paired units must align")
    return method - baseline


def _strata_groups(strata: Sequence[Any] | np.ndarray | None, n: int) -> list[np.ndarray]:
    """Unit indices per stratum, strata in sorted order (one group when strata is None)."""
    if strata is None:
        return [np.arange(n)]
    labels = np.asarray(strata)
    if labels.shape != (n,):
        raise DataError(f"strata: {labels.size} labels but {n} units; give one stratum label per unit")
    _, inverse = np.unique(labels, return_inverse=True)
    groups = [np.flatnonzero(inverse == k) for k in range(int(inverse.max()) + 1)]
    if all(g.size == 1 for g in groups) and n > 1:
        log.warning("every stratum holds one unit: the stratified bootstrap has zero spread")
    return groups


def _index_dtype(size: int) -> type:
    # Small index types make numpy's bounded integer draws several times faster.
    return np.uint16 if size <= np.iinfo(np.uint16).max else np.int64


def bootstrap_samples(values: Sequence[float] | np.ndarray, *, strata: Sequence[Any] | np.ndarray | None = None,
                      n_resamples: int = 10_000, seed: int, statistic: Statistic = np.mean) -> np.ndarray:
    """The statistic on ``n_resamples`` resamples of ``values`` (units drawn with replacement).

    With ``strata``, each resample draws exactly as many units from each stratum as
    it holds, so per-stratum counts stay fixed. ``statistic(x, axis=-1)`` must
    reduce the last axis. Deterministic for a given ``seed``.
    """
    x = _as_values("values", values)
    if not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ParamsError(f"n_resamples: must be a positive integer, got {n_resamples!r}")
    groups = [(x[g], _index_dtype(g.size)) for g in _strata_groups(strata, x.size)]
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_ELEMENTS // x.size)
    out = np.empty(n_resamples, dtype=float)
    mat = np.empty((min(block, n_resamples), x.size), dtype=float)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        col = 0
        for xg, dtype in groups:  # fixed order: same seed, same resamples
            mat[:rows, col:col + xg.size] = xg[rng.integers(0, xg.size, size=(rows, xg.size), dtype=dtype)]
            col += xg.size
        out[start:start + rows] = statistic(mat[:rows], axis=-1)
    return out


def percentile_ci(samples: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval (lo, hi) holding ``level`` of the bootstrap ``samples``."""
    if not 0.0 < level < 1.0:
        raise ParamsError(f"level: must be in (0, 1), got {level}")
    arr = _as_values("samples", samples)
    lo, hi = np.quantile(arr, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(lo), float(hi)


def paired_bootstrap_ci(method_values: Sequence[float] | np.ndarray,
                        baseline_values: Sequence[float] | np.ndarray | None = None, *,
                        strata: Sequence[Any] | np.ndarray | None = None, n_resamples: int = 10_000,
                        level: float = 0.95, seed: int, statistic: Statistic = np.mean) -> tuple[float, float, float]:
    """(point, lo, hi): the statistic of method - baseline and its percentile bootstrap CI.

    Units are paired by position; with ``strata`` (usually the seed of each unit)
    units are resampled within their stratum, as the standard rule asks.
    """
    diffs = paired_differences(method_values, baseline_values)
    if not 0.0 < level < 1.0:  # checked before the resampling work
        raise ParamsError(f"level: must be in (0, 1), got {level}")
    samples = bootstrap_samples(diffs, strata=strata, n_resamples=n_resamples, seed=seed, statistic=statistic)
    lo, hi = percentile_ci(samples, level)
    return float(statistic(diffs, axis=-1)), lo, hi


def stratum_signs(differences: Sequence[float] | np.ndarray,
                  strata: Sequence[Any] | np.ndarray) -> tuple[list[Any], list[int]]:
    """(labels, signs): the sign (+1/-1/0) of the mean difference within each stratum, labels sorted."""
    diffs = _as_values("differences", differences)
    labels = np.asarray(strata)
    if labels.shape != diffs.shape:
        raise DataError(f"strata: {labels.size} labels but {diffs.size} differences")
    uniq = np.unique(labels)
    signs = [int(np.sign(diffs[labels == u].mean())) for u in uniq]
    return [u.item() if hasattr(u, "item") else u for u in uniq], signs


def relative_delta(reference: float, fraction: float = 0.02) -> float:
    """δ for losses and perplexities: ``fraction`` (default 2%) of the reference value's magnitude."""
    if not np.isfinite(reference):
        raise DataError(f"relative_delta: reference value is not finite ({reference})")
    if fraction < 0:
        raise ParamsError(f"relative_delta: fraction must be >= 0, got {fraction}")
    return abs(float(reference)) * float(fraction)
