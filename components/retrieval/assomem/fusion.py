"""Adaptive fusion: per-query min-max + quantile bins, conditional-MI weights per question type, softmax.

For question type q and signal d, CMI_d(q) = I(bin_d ; relevant | type = q),
estimated on a labelled calibration split from the pooled (bin, relevant) pairs
of every candidate of every calibration question of that type
(``sklearn.metrics.mutual_info_score``, nats). Weights w_d(q) = softmax(CMI_d / T).

The paper gives no temperature scale. Raw CMI is bounded by the entropy of the
relevance label, which is tiny when one candidate in hundreds is gold, so a
fixed T in nats means different things on different memories. With
``normalise=True`` (our default) CMI is divided by H(relevant | type) (the
uncertainty coefficient, in [0, 1]) before the softmax.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from components.errors import DataError, ParamsError


def minmax(x: np.ndarray) -> np.ndarray:
    """Scaled to [0, 1] over one query's candidates (a constant signal becomes all zeros)."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return x
    lo, hi = x.min(), x.max()
    return np.zeros_like(x) if hi - lo <= 0 else (x - lo) / (hi - lo)


def quantile_bins(x: np.ndarray, n_bins: int = 3) -> np.ndarray:
    """Bin index 0..n_bins-1 of each value by the query's own quantiles (ties share a bin)."""
    if n_bins < 2:
        raise ParamsError(f"fusion.n_bins: must be >= 2, got {n_bins}")
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return np.zeros(0, dtype=np.int64)
    edges = np.quantile(x, np.linspace(0, 1, n_bins + 1)[1:-1])
    return np.searchsorted(edges, x, side="right").astype(np.int64)


def softmax(values: Sequence[float], temperature: float) -> np.ndarray:
    """softmax(values / temperature): non-negative, sums to one."""
    if temperature <= 0:
        raise ParamsError(f"fusion.temperature: must be > 0, got {temperature}")
    z = np.asarray(values, dtype=float) / temperature
    z = np.exp(z - z.max())
    return z / z.sum()


def cmi_weights(bins: Mapping[str, Sequence[np.ndarray]], relevant: Sequence[np.ndarray], types: Sequence[str], *,
                temperature: float, normalise: bool = True) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """(weights, cmi) per question type: {type: {signal: value}}.

    ``bins[d][i]`` and ``relevant[i]`` are the bins of signal d and the 0/1 gold labels of
    calibration question i's candidates; ``types[i]`` its type.
    """
    from sklearn.metrics import mutual_info_score

    signals = list(bins)
    if not signals:
        raise ParamsError("fusion: no signals to weight")
    n = len(types)
    if len(relevant) != n or any(len(bins[d]) != n for d in signals):
        raise DataError("fusion: bins, relevant labels and types must describe the same calibration questions")
    pooled_rel: dict[str, list] = defaultdict(list)
    pooled_bins: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for i, qtype in enumerate(types):
        pooled_rel[qtype].append(np.asarray(relevant[i]))
        for d in signals:
            pooled_bins[qtype][d].append(np.asarray(bins[d][i]))
    weights, cmi = {}, {}
    for qtype, rels in pooled_rel.items():
        rel = np.concatenate(rels)
        cmi[qtype] = {d: float(mutual_info_score(np.concatenate(pooled_bins[qtype][d]), rel)) for d in signals}
        scale = _entropy(rel) if normalise else 1.0
        w = softmax([cmi[qtype][d] / scale if scale > 0 else 0.0 for d in signals], temperature)
        weights[qtype] = {d: float(x) for d, x in zip(signals, w)}
    return weights, cmi


def _entropy(labels: np.ndarray) -> float:
    p = np.bincount(np.asarray(labels, dtype=np.int64)) / max(len(labels), 1)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def equal_weights(signals: Sequence[str]) -> dict[str, float]:
    return {d: 1.0 / len(signals) for d in signals}


def fuse(normalised: Mapping[str, np.ndarray], weights: Mapping[str, float]) -> np.ndarray:
    """Score = sum_d w_d * s_d over the signals named in ``weights``."""
    missing = [d for d in weights if d not in normalised]
    if missing:
        raise DataError(f"fusion: weights name signal(s) {missing} that were not computed")
    return sum(float(w) * np.asarray(normalised[d]) for d, w in weights.items())
