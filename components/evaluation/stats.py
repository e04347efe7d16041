"""Bootstrap helpers for the standard verdict rule (see ``claims.py``).

The rule asks for a 95% percentile bootstrap CI with 10,000 resamples on paired
differences method - baseline, resampling the **top-level independent unit
first** (``shared/papers/README.md``): with ``clusters`` (the seed, run or graph
draw of each unit) each resample draws clusters with replacement, then units
with replacement within each drawn cluster (the two-stage bootstrap). ``strata``
are groups fixed by design (functions, datasets, question types): resampled
within, never across, with their weights fixed. Resampling is vectorised with
numpy (a block of resamples at once), so 10k resamples over a few thousand units
take a fraction of a second. Hand-written rather than ``scipy.stats.bootstrap``
because scipy has neither fixed strata nor nested resampling.
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
MAX_RESAMPLES = 1_000_000  # more would only cost memory and time; 10,000 is the rule


def _as_values(name: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise DataError(f"{name}: expected a non-empty 1-D sequence of numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise DataError(f"{name}: value at position {bad} is not finite ({arr[bad]})")
    return arr


def paired_differences(
    method_values: Sequence[float] | np.ndarray, baseline_values: Sequence[float] | np.ndarray | None = None
) -> np.ndarray:
    """method - baseline per paired unit (or the method values alone when baseline is None)."""
    method = _as_values("method_values", method_values)
    if baseline_values is None:
        return method
    baseline = _as_values("baseline_values", baseline_values)
    if baseline.shape != method.shape:
        raise DataError(
            f"baseline_values: {baseline.size} values but method_values has {method.size}; paired units must align"
        )
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


def bootstrap_samples(
    values: Sequence[float] | np.ndarray,
    *,
    clusters: Sequence[Any] | np.ndarray | None = None,
    strata: Sequence[Any] | np.ndarray | None = None,
    n_resamples: int = 10_000,
    seed: int,
    statistic: Statistic = np.mean,
) -> np.ndarray:
    """The statistic on ``n_resamples`` resamples of ``values`` (units drawn with replacement).

    With ``strata``, each resample draws exactly as many units from each stratum as
    it holds, so per-stratum counts stay fixed. ``statistic(x, axis=-1)`` must
    reduce the last axis. With ``clusters`` the resampling is two-stage (see
    :func:`two_stage_means`) and the statistic must be the mean. Deterministic for
    a given ``seed``.
    """
    x = _as_values("values", values)
    if not isinstance(n_resamples, (int, np.integer)) or isinstance(n_resamples, bool) or n_resamples < 1:
        raise ParamsError(f"n_resamples: must be a positive integer, got {n_resamples!r}")
    if n_resamples > MAX_RESAMPLES:
        raise ParamsError(f"n_resamples: at most {MAX_RESAMPLES:,} (got {n_resamples:,})")
    if clusters is not None:
        if statistic is not np.mean:
            raise ParamsError("statistic: the two-stage (clustered) bootstrap supports the mean only")
        return two_stage_means(x, clusters=clusters, strata=strata, n_resamples=n_resamples, seed=seed)
    groups = [(x[g], _index_dtype(g.size)) for g in _strata_groups(strata, x.size)]
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_ELEMENTS // x.size)
    out = np.empty(n_resamples, dtype=float)
    mat = np.empty((min(block, n_resamples), x.size), dtype=float)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        col = 0
        for xg, dtype in groups:  # fixed order: same seed, same resamples
            mat[:rows, col : col + xg.size] = xg[rng.integers(0, xg.size, size=(rows, xg.size), dtype=dtype)]
            col += xg.size
        out[start : start + rows] = statistic(mat[:rows], axis=-1)
    return out


def _labels(name: str, labels: Sequence[Any] | np.ndarray | None, n: int) -> np.ndarray:
    """Integer codes 0..k-1 of one label per unit (all zeros when ``labels`` is None)."""
    if labels is None:
        return np.zeros(n, dtype=np.int64)
    arr = np.asarray(labels)
    if arr.shape != (n,):
        raise DataError(f"{name}: {arr.size} labels but {n} units; give one {name[:-1]} label per unit")
    return np.unique(arr, return_inverse=True)[1].reshape(n)


def cluster_design(clusters: Sequence[Any] | np.ndarray, strata: Sequence[Any] | np.ndarray | None, n: int) -> str:
    """``"crossed"`` when every stratum holds the same clusters (one seed's model seen in every stratum),
    else ``"nested"`` (each stratum draws its own clusters)."""
    c, s = _labels("clusters", clusters, n), _labels("strata", strata, n)
    sets = {k: frozenset(c[s == k].tolist()) for k in np.unique(s).tolist()}
    return "crossed" if len(set(sets.values())) == 1 else "nested"


def _cells(x: np.ndarray, c: np.ndarray, members: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """(values padded to a (clusters, max size) matrix, size of each cluster's cell) for one stratum."""
    sizes = np.bincount(c[members], minlength=n_clusters)
    pad = np.zeros((n_clusters, max(1, int(sizes.max()))), dtype=float)
    for k in np.flatnonzero(sizes):
        pad[k, : sizes[k]] = x[members[c[members] == k]]
    return pad, sizes


def two_stage_means(
    values: Sequence[float] | np.ndarray,
    *,
    clusters: Sequence[Any] | np.ndarray,
    strata: Sequence[Any] | np.ndarray | None = None,
    n_resamples: int = 10_000,
    seed: int,
) -> np.ndarray:
    """Means of ``n_resamples`` two-stage resamples: clusters with replacement, then units within each drawn cluster.

    Crossed designs (every stratum holds the same clusters) draw one multiset of
    clusters per resample for all strata, so a seed's shared effect moves every
    stratum together; nested designs draw clusters within each stratum. Each
    stratum's resampled mean enters with its fixed share of the units.
    """
    x = _as_values("values", values)
    c, s = _labels("clusters", clusters, x.size), _labels("strata", strata, x.size)
    crossed = cluster_design(c, s, x.size) == "crossed"
    rng = np.random.default_rng(seed)
    strata_ids = np.unique(s)
    cells = []
    for k in strata_ids.tolist():
        members = np.flatnonzero(s == k)
        present = np.unique(c[members])
        local = np.searchsorted(present, c)  # cluster codes local to this stratum
        pad, sizes = _cells(x, local, members, present.size)
        cells.append((pad, sizes, members.size / x.size))
    n_global = int(c.max()) + 1
    width = sum(p.size for p, _, _ in cells)
    block = max(1, _BLOCK_ELEMENTS // width)
    out = np.empty(n_resamples, dtype=float)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        shared = rng.integers(0, n_global, size=(rows, n_global)) if crossed else None
        total = np.zeros(rows)
        for pad, sizes, weight in cells:  # fixed order: same seed, same resamples
            k = shared if crossed else rng.integers(0, sizes.size, size=(rows, sizes.size))
            sz = sizes[k]  # (rows, clusters drawn): units to draw from each drawn cluster
            pos = (rng.random((rows, k.shape[1], pad.shape[1]), dtype=np.float32) * sz[..., None]).astype(np.int64)
            np.minimum(pos, np.maximum(sz[..., None] - 1, 0), out=pos)  # float32 rounding guard
            valid = np.arange(pad.shape[1]) < sz[..., None]
            drawn = np.where(valid, pad[k[..., None], pos], 0.0)
            total += weight * drawn.sum(axis=(1, 2)) / sz.sum(axis=1)
        out[start : start + rows] = total
    return out


def percentile_ci(samples: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval (lo, hi) holding ``level`` of the bootstrap ``samples``."""
    if not 0.0 < level < 1.0:
        raise ParamsError(f"level: must be in (0, 1), got {level}")
    arr = _as_values("samples", samples)
    lo, hi = np.quantile(arr, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(lo), float(hi)


def stratum_signs(
    differences: Sequence[float] | np.ndarray, strata: Sequence[Any] | np.ndarray
) -> tuple[list[Any], list[int]]:
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
