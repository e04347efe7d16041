"""The seed-level CI of the standard rule (``shared/papers/README.md``, step 2, as of 2026-12-04).

With fewer than about 8 seeds the two-stage percentile bootstrap (seeds, then items) is too narrow when
the effect varies by seed: its resamples see at most k distinct seed effects and their spread is biased
low (measured: 8.7% false "reproduced" at 3 seeds, 12.7% with one value per seed, against 2.5% nominal).
So the CI is the **hull** of the two-stage bootstrap interval and a small-sample interval on the per-seed
effects (Student's t with k - 1 degrees of freedom); with one value per seed the t-interval alone is the CI.
``tests/unit/evaluation/test_few_seeds.py`` measures the calibration.

Designs:
- no strata, or crossed strata (every stratum holds the same seeds): a seed's effect is its strata-weighted
  mean difference (weights fixed by design: each stratum's share of the units), t on those k effects;
- nested strata (each stratum draws its own seeds): the stratum means are independent, so the variance of
  their weighted sum adds up and the degrees of freedom follow Welch-Satterthwaite; a stratum with one seed
  has no variance estimate, so the bootstrap stands alone there (said in the record);
- one seed: the items' bootstrap only, and the verdict speaks for that one trained model.

Hand-written on scipy's t and beta distributions: no maintained library combines a two-stage bootstrap
with a small-sample interval under fixed strata.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as st

from components.errors import DataError, ParamsError
from components.evaluation.stats import (
    Statistic,
    _as_values,
    _labels,
    bootstrap_samples,
    cluster_design,
    paired_differences,
    percentile_ci,
)


@dataclass(frozen=True)
class SeedCI:
    """A CI of a mean paired difference, with how it was built (stored in the claim's details)."""

    point: float
    low: float
    high: float
    how: str
    bootstrap: tuple[float, float]
    small_sample: tuple[float, float] | None = None
    seed_effects: list[float] = field(default_factory=list)
    df: float | None = None

    def details(self) -> dict[str, Any]:
        out: dict[str, Any] = {"interval": self.how, "bootstrap_ci": list(self.bootstrap)}
        if self.small_sample is not None:
            out["t_ci"] = list(self.small_sample)
            out["t_df"] = self.df
        if self.seed_effects:
            out["seed_effects"] = [round(e, 6) for e in self.seed_effects]
        return out


def t_interval(effects: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """Student's t interval on k per-seed effects (k - 1 df); None with fewer than 2 effects."""
    e = _as_values("effects", effects)
    if e.size < 2:
        return None
    half = float(st.t.ppf((1 + level) / 2, e.size - 1) * e.std(ddof=1) / np.sqrt(e.size))
    return float(e.mean() - half), float(e.mean() + half)


def cluster_effects(diffs: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Per-cluster effect for a crossed (or unstratified) design: the strata-weighted mean of its cells."""
    weights = {k: float(np.mean(s == k)) for k in np.unique(s).tolist()}
    out = []
    for j in np.unique(c).tolist():
        in_j = c == j
        out.append(sum(w * diffs[in_j & (s == k)].mean() for k, w in weights.items()))
    return np.asarray(out, dtype=float)


def _nested_t(diffs: np.ndarray, c: np.ndarray, s: np.ndarray, level: float) -> tuple[tuple[float, float], float]:
    """Weighted sum of independent stratum means, each a mean of its own seeds' effects; Welch-Satterthwaite df."""
    centre, var, df_den = 0.0, 0.0, 0.0
    for k in np.unique(s).tolist():
        in_k = s == k
        w = float(in_k.mean())
        e = np.array([diffs[in_k & (c == j)].mean() for j in np.unique(c[in_k]).tolist()])
        v = e.var(ddof=1) / e.size
        centre, var = centre + w * e.mean(), var + w * w * v
        df_den += (w * w * v) ** 2 / (e.size - 1)
    df = var * var / df_den if df_den > 0 else float(np.unique(c).size - 1)
    half = float(st.t.ppf((1 + level) / 2, df) * np.sqrt(var))
    return (centre - half, centre + half), float(df)


def seed_level_ci(
    diffs: Sequence[float] | np.ndarray,
    *,
    clusters: Sequence[Any] | np.ndarray | None,
    strata: Sequence[Any] | np.ndarray | None = None,
    n_resamples: int,
    level: float,
    seed: int,
) -> SeedCI:
    """The standard rule's CI of mean(diffs): see the module docstring."""
    if not 0.0 < level < 1.0:
        raise ParamsError(f"level: must be in (0, 1), got {level}")
    x = _as_values("values", diffs)
    point = float(x.mean())
    n_clusters = 0 if clusters is None else np.unique(np.asarray(clusters)).size
    if n_clusters < 2:  # no clusters, or one trained model: the items' bootstrap
        boot = percentile_ci(bootstrap_samples(x, strata=strata, n_resamples=n_resamples, seed=seed), level)
        how = "percentile bootstrap over units" + (" (one trained model)" if n_clusters == 1 else "")
        return SeedCI(point, boot[0], boot[1], how, boot)
    c, s = _labels("clusters", clusters, x.size), _labels("strata", strata, x.size)
    boot = percentile_ci(
        bootstrap_samples(x, clusters=c, strata=s, n_resamples=n_resamples, seed=seed),
        level,
    )
    crossed = cluster_design(c, s, x.size) == "crossed"
    one_value = all(np.sum((c == j) & (s == k)) <= 1 for j in np.unique(c).tolist() for k in np.unique(s).tolist())
    if crossed:
        effects = cluster_effects(x, c, s)
        small, df = t_interval(effects, level), float(effects.size - 1)
    else:
        effects = np.array([])
        if min(np.unique(c[s == k]).size for k in np.unique(s).tolist()) < 2:
            return SeedCI(point, boot[0], boot[1], "two-stage bootstrap (a stratum holds one seed: no t)", boot)
        small, df = _nested_t(x, c, s, level)
    assert small is not None
    if crossed and one_value:
        lo, hi, how = small[0], small[1], f"t-interval on the {effects.size} per-seed values ({df:g} df)"
    else:
        lo, hi = min(boot[0], small[0]), max(boot[1], small[1])
        how = f"hull of the two-stage bootstrap and a t-interval on the per-seed effects ({df:.3g} df)"
    return SeedCI(point, float(lo), float(hi), how, boot, small, effects.tolist(), df)


def binomial_ci(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval of a success rate: for a rate the grid fixes on every seed."""
    if trials < 1 or not 0 <= successes <= trials:
        raise DataError(f"binomial_ci: need 0 <= successes <= trials and trials >= 1, got {successes}/{trials}")
    a = (1 - level) / 2
    lo = 0.0 if successes == 0 else float(st.beta.ppf(a, successes, trials - successes + 1))
    hi = 1.0 if successes == trials else float(st.beta.ppf(1 - a, successes + 1, trials - successes))
    return lo, hi


def paired_bootstrap_ci(
    method_values: Sequence[float] | np.ndarray,
    baseline_values: Sequence[float] | np.ndarray | None = None,
    *,
    clusters: Sequence[Any] | np.ndarray | None = None,
    strata: Sequence[Any] | np.ndarray | None = None,
    n_resamples: int = 10_000,
    level: float = 0.95,
    seed: int,
    statistic: Statistic = np.mean,
) -> tuple[float, float, float]:
    """(point, lo, hi): the statistic of method - baseline and its CI.

    Units are paired by position. ``clusters`` labels the top-level independent
    unit of each paired unit (the seed where a trained model is involved): the CI
    is then the standard rule's seed-level CI (:func:`components.evaluation.seed_ci.seed_level_ci`:
    the two-stage bootstrap widened by a t-interval on the per-seed effects). ``strata``
    are groups fixed by design. Without clusters: the percentile bootstrap of units.
    """
    diffs = paired_differences(method_values, baseline_values)
    if not 0.0 < level < 1.0:  # checked before the resampling work
        raise ParamsError(f"level: must be in (0, 1), got {level}")
    if clusters is not None:
        if statistic is not np.mean:
            raise ParamsError("statistic: the two-stage (clustered) bootstrap supports the mean only")
        ci = seed_level_ci(diffs, clusters=clusters, strata=strata, n_resamples=n_resamples, level=level, seed=seed)
        return ci.point, ci.low, ci.high
    samples = bootstrap_samples(
        diffs, clusters=clusters, strata=strata, n_resamples=n_resamples, seed=seed, statistic=statistic
    )
    lo, hi = percentile_ci(samples, level)
    return float(statistic(diffs, axis=-1)), lo, hi
