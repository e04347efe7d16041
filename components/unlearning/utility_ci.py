"""A paired bootstrap CI for the difference in TOFU-style model utility between two models.

Model utility is a harmonic mean of per-split means (``metrics.model_utility``), so it is not a mean over
questions and a plain per-question bootstrap of differences does not apply: each resample redraws the
questions of every split (the same draw for both models: paired) and recomputes both utilities.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from components.errors import DataError
from components.unlearning.metrics import model_utility

Splits = Mapping[str, Mapping[str, np.ndarray]]  # split -> {"prob", "rouge", "tr"} arrays over questions


def utility_resampled(splits: Splits, picks: Mapping[str, np.ndarray]) -> np.ndarray:
    """Model utility under each resample; ``picks[split]`` is an (R, n_questions) index matrix."""
    parts = []
    for name, d in splits.items():
        sel = picks[name]
        parts += [np.asarray(d["prob"])[sel].mean(1), np.asarray(d["rouge"])[sel].mean(1),
                  np.maximum(0, 1 - np.asarray(d["tr"])[sel]).mean(1)]
    parts = np.stack(parts)
    return np.where((parts > 0).all(0), len(parts) / (1 / np.clip(parts, 1e-12, None)).sum(0), 0.0)


def utility_difference_ci(method: Sequence[Splits], baseline: Sequence[Splits], *, n_resamples: int, level: float,
                          seed: int) -> tuple[float, float, float, list[float]]:
    """Mean over seeds of MU(method) - MU(baseline) and its bootstrap CI (questions resampled per seed, paired).

    ``method[i]`` and ``baseline[i]`` are the two models' splits for seed i, over the same questions.
    Returns (point estimate, CI low, CI high, per-seed differences).
    """
    if len(method) != len(baseline) or not method:
        raise DataError(f"utility_difference_ci: {len(method)} method and {len(baseline)} baseline seeds")
    rng = np.random.default_rng(seed)
    per_seed, boots = [], np.zeros(n_resamples)
    for dm, db in zip(method, baseline):
        sizes = {s: len(dm[s]["prob"]) for s in dm}
        if set(dm) != set(db) or any(len(db[s]["prob"]) != n for s, n in sizes.items()):
            raise DataError("utility_difference_ci: the two models were scored on different questions")
        per_seed.append(model_utility(dm) - model_utility(db))
        picks = {s: rng.integers(0, n, size=(n_resamples, n)) for s, n in sizes.items()}
        boots += utility_resampled(dm, picks) - utility_resampled(db, picks)
    boots /= len(method)
    lo, hi = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return float(np.mean(per_seed)), float(lo), float(hi), per_seed
