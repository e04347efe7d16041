"""Bootstraps of detection metrics, which are not means over images: each resample re-weights images (the
multiplicity of each image in the resample) and recomputes AP or recall from the pooled, score-sorted matches.

Two-stage (the standard rule where trained models are involved): draw clusters (seeds) with replacement, then,
for every drawn cluster, the test images with replacement; the statistic is the mean over drawn clusters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from components.detection import coco as C

Metric = Callable[[C.Pooled, np.ndarray], np.ndarray]  # (pooled, weights (B, n_images)) -> (B,)


def ap_metric(key: str = "ap") -> Metric:
    return lambda p, w: C.average_precision(p, w)[key]


def recall_metric(fppi: float = 1.0) -> Metric:
    return lambda p, w: C.recall_at_fppi(p, fppi, w)


def image_weights(rng: np.random.Generator, n_images: int, shape: tuple[int, ...]) -> np.ndarray:
    """Multinomial image counts: shape + (n_images,), each row summing to n_images."""
    return rng.multinomial(n_images, np.full(n_images, 1.0 / n_images), size=shape).astype(float)


def _eval(metric: Metric, p: C.Pooled, w: np.ndarray, chunk: int = 64) -> np.ndarray:
    return np.concatenate([metric(p, w[i : i + chunk]) for i in range(0, len(w), chunk)]) if len(w) else np.zeros(0)


def clustered(
    groups: Sequence[Sequence[C.Pooled]],
    stat: Callable[[np.ndarray], np.ndarray],
    metric: Metric,
    *,
    n_resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-stage bootstrap of ``stat`` over clusters.

    ``groups[c]`` holds cluster c's pooled matches (one per compared quantity, all on the same images);
    ``stat(values)`` maps values (..., n_quantities) to the statistic (...). Returns (point estimate: the statistic of
    the quantities averaged over clusters at unit weights, per-cluster statistics, resampled statistics).
    """
    n_c, n_q = len(groups), len(groups[0])
    n_img = len(groups[0][0].n_gt)
    ones = np.ones((1, n_img))
    at_ones = np.array([[metric(q, ones)[0] for q in g] for g in groups])  # (n_c, n_q)
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, n_c, size=(n_resamples, n_c))
    w = image_weights(rng, n_img, (n_resamples, n_c))
    values = np.full((n_resamples, n_c, n_q), np.nan)
    for c in range(n_c):
        sel = drawn == c
        if sel.any():
            for q in range(n_q):
                values[sel, q] = _eval(metric, groups[c][q], w[sel])
    # each resample's statistic: the statistic of the quantities averaged over its drawn clusters
    return float(stat(at_ones.mean(0))), stat(at_ones), stat(np.nanmean(values, axis=1))


def unclustered(
    pooled: Sequence[C.Pooled], stat: Callable[[np.ndarray], np.ndarray], metric: Metric, *, n_resamples: int, seed: int
) -> tuple[float, np.ndarray]:
    """Image-level bootstrap for a deterministic detector (no seeds): (point estimate, resampled statistics)."""
    n_img = len(pooled[0].n_gt)
    ones = np.ones((1, n_img))
    point = float(stat(np.array([metric(q, ones)[0] for q in pooled])))
    w = image_weights(np.random.default_rng(seed), n_img, (n_resamples,))
    vals = np.stack([_eval(metric, q, w) for q in pooled], axis=-1)
    return point, stat(vals)


def average_ranks(y: np.ndarray) -> np.ndarray:
    """Ranks (1..k) along the last axis, ties sharing their average rank (scipy's ``rankdata`` default)."""
    y = np.asarray(y, float)
    less = (y[..., None, :] < y[..., :, None]).sum(-1)
    equal = (y[..., None, :] == y[..., :, None]).sum(-1)
    return less + (equal + 1) / 2.0


def spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of a fixed x against each row of y (..., k), average ranks for ties (scipy's definition);
    numpy only (k is small; importing scipy.stats costs seconds)."""
    rx = average_ranks(np.asarray(x, float))
    ry = average_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((rx**2).sum() * (ry**2).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (ry * rx).sum(-1) / den
