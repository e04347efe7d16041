"""A paired bootstrap CI for the difference in TOFU-style model utility between two models.

Model utility is a harmonic mean of per-split means (``metrics.model_utility``), so it is not a mean over
questions and a plain per-question bootstrap of differences does not apply: each resample redraws the
questions of every split (the same draw for both models: paired) and recomputes both utilities.

With ``clusters`` (the seed of each entry: the top-level independent unit of the standard rule) the resampling is
two-stage: each resample draws clusters with replacement, then the questions of each drawn cluster's entries, a fresh
draw for every copy; the statistic is the mean over the drawn entries. Without it the seeds are held fixed (only
questions are resampled), which treats them as fixed and gives CIs far too narrow when the effect varies by seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from components.errors import DataError
from components.evaluation.seed_ci import t_interval
from components.unlearning.metrics import model_utility

Splits = Mapping[str, Mapping[str, np.ndarray]]  # split -> {"prob", "rouge", "tr"} arrays over questions


def utility_resampled(splits: Splits, picks: Mapping[str, np.ndarray]) -> np.ndarray:
    """Model utility under each resample; ``picks[split]`` is an (R, n_questions) index matrix."""
    parts = []
    for name, d in splits.items():
        sel = picks[name]
        parts += [
            np.asarray(d["prob"])[sel].mean(1),
            np.asarray(d["rouge"])[sel].mean(1),
            np.maximum(0, 1 - np.asarray(d["tr"])[sel]).mean(1),
        ]
    parts = np.stack(parts)
    return np.where((parts > 0).all(0), len(parts) / (1 / np.clip(parts, 1e-12, None)).sum(0), 0.0)


def _check_pairs(method: Sequence[Splits], baseline: Sequence[Splits]) -> list[dict[str, int]]:
    if len(method) != len(baseline) or not method:
        raise DataError(f"utility_difference_ci: {len(method)} method and {len(baseline)} baseline seeds")
    out = []
    for dm, db in zip(method, baseline):
        sizes = {s: len(dm[s]["prob"]) for s in dm}
        if set(dm) != set(db) or any(len(db[s]["prob"]) != n for s, n in sizes.items()):
            raise DataError("utility_difference_ci: the two models were scored on different questions")
        out.append(sizes)
    return out


def _resampled_difference(
    dm: Splits, db: Splits, sizes: Mapping[str, int], rows: int, rng: np.random.Generator
) -> np.ndarray:
    picks = {s: rng.integers(0, n, size=(rows, n)) for s, n in sizes.items()}
    return utility_resampled(dm, picks) - utility_resampled(db, picks)


def utility_difference_ci(
    method: Sequence[Splits],
    baseline: Sequence[Splits],
    *,
    n_resamples: int,
    level: float,
    seed: int,
    clusters: Sequence[Any] | None = None,
    offsets: Sequence[float] | None = None,
) -> tuple[float, float, float, list[float]]:
    """Mean over seeds of MU(method) - MU(baseline) and its bootstrap CI (paired: one question draw for both models).

    ``method[i]`` and ``baseline[i]`` are the two models' splits for seed i, over the same questions.
    ``clusters[i]`` labels entry i's top-level independent unit (its seed): given, each resample draws clusters
    with replacement, then questions within every drawn entry (two-stage). None: seeds fixed, questions resampled
    within each (the older behaviour, kept number for number). ``offsets[i]`` is added to entry i's difference
    (the power check's new seed effects, :func:`utility_difference_simulator`); None: no offsets.
    Returns (point estimate, CI low, CI high, per-seed differences).
    """
    sizes = _check_pairs(method, baseline)
    rng = np.random.default_rng(seed)
    shift = np.zeros(len(method)) if offsets is None else np.asarray(offsets, float).ravel()
    if shift.shape != (len(method),):
        raise DataError(f"offsets: {shift.size} values but {len(method)} seeds; give one offset per seed")
    per_seed = [model_utility(dm) - model_utility(db) + float(o) for dm, db, o in zip(method, baseline, shift)]
    if clusters is None:
        boots = np.zeros(n_resamples)
        for dm, db, sz, o in zip(method, baseline, sizes, shift):
            boots += _resampled_difference(dm, db, sz, n_resamples, rng) + o
        boots /= len(method)
    else:
        labels = np.asarray(clusters)
        if labels.shape != (len(method),):
            raise DataError(f"clusters: {labels.size} labels but {len(method)} seeds; give the cluster of each seed")
        _, inverse = np.unique(labels, return_inverse=True)
        inverse = inverse.reshape(-1)
        n_clusters = int(inverse.max()) + 1
        drawn = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
        total, count = np.zeros(n_resamples), np.zeros(n_resamples)
        for k in range(n_clusters):
            rows = np.nonzero(drawn == k)[0]  # one row index per copy of cluster k drawn
            if not rows.size:
                continue
            for i in np.flatnonzero(inverse == k):
                np.add.at(
                    total, rows, _resampled_difference(method[i], baseline[i], sizes[i], rows.size, rng) + shift[i]
                )
                np.add.at(count, rows, 1)
        boots = total / count
    lo, hi = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return float(np.mean(per_seed)), float(lo), float(hi), per_seed


def between_seed_variance(
    method: Sequence[Splits], baseline: Sequence[Splits], *, n_resamples: int = 200, seed: int = 0
) -> float:
    """The spread of the seeds' true MU differences: the variance of the per-seed differences less the mean of
    their question-resampling variances (ANOVA's method of moments, as ``power.simulated_units``; 0 with one seed
    or when the questions explain the whole spread)."""
    sizes = _check_pairs(method, baseline)
    if len(method) < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    diffs = [model_utility(dm) - model_utility(db) for dm, db in zip(method, baseline)]
    within = [
        _resampled_difference(dm, db, sz, n_resamples, rng).var(ddof=1) for dm, db, sz in zip(method, baseline, sizes)
    ]
    return max(0.0, float(np.var(diffs, ddof=1) - np.mean(within)))


def simulated_seeds(
    method: Sequence[Splits], baseline: Sequence[Splits], rng: np.random.Generator, *, seed_sd: float
) -> tuple[list[dict], list[dict], np.ndarray]:
    """One simulated run of the design for a statistic that is not a mean of units: the run's seeds, each with
    its own questions resampled (one draw for both models: paired), and per-seed offsets that move seed i from
    its own difference to the seeds' mean plus a new seed effect ~ N(0, ``seed_sd``^2). As in
    ``components.evaluation.power.simulated_units``: a rerun has as many distinct seeds as the run, so seeds are
    not redrawn with replacement (3 seeds redrawn keep 1 distinct seed in 1/9 of the runs)."""
    sizes = _check_pairs(method, baseline)
    diffs = np.array([model_utility(dm) - model_utility(db) for dm, db in zip(method, baseline)])
    dm, db = [], []
    for i, sz in enumerate(sizes):
        picks = {s: rng.integers(0, n, size=n) for s, n in sz.items()}
        dm.append({s: {k: np.asarray(v)[picks[s]] for k, v in method[i][s].items()} for s in picks})
        db.append({s: {k: np.asarray(v)[picks[s]] for k, v in baseline[i][s].items()} for s in picks})
    offsets = diffs.mean() - diffs + seed_sd * rng.standard_normal(len(diffs))
    return dm, db, offsets


def utility_difference_simulator(
    method: Sequence[Splits], baseline: Sequence[Splits], *, n_resamples: int, level: float
) -> Callable[[np.random.Generator], tuple[float, float, float]]:
    """One simulated run per call, for the power check (``components.evaluation.power.shifted_power``): the run's
    seeds with new seed effects and their questions resampled (:func:`simulated_seeds`), and the simulated run's
    MU difference with the CI the claim itself uses: its two-stage bootstrap (``n_resamples`` resamples) widened,
    with two or more seeds, to the hull with a t-interval on its per-seed differences (the standard rule's
    small-sample interval, as ``components.evaluation.claims.from_ci`` with ``seed_effects``). Deciding simulated
    runs on the bootstrap alone would overstate the power and the false-positive rate of a claim whose own CI is
    the hull."""
    seed_sd = float(np.sqrt(between_seed_variance(method, baseline)))

    def simulate(rng: np.random.Generator) -> tuple[float, float, float]:
        dm, db, offsets = simulated_seeds(method, baseline, rng, seed_sd=seed_sd)
        pt, lo, hi, per_seed = utility_difference_ci(
            dm,
            db,
            n_resamples=n_resamples,
            level=level,
            seed=int(rng.integers(1 << 31)),
            clusters=list(range(len(dm))),
            offsets=offsets,
        )
        small = t_interval(per_seed, level)
        if small is not None:
            lo, hi = min(lo, small[0]), max(hi, small[1])
        return pt, lo, hi

    return simulate
