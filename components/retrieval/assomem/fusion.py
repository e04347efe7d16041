"""Adaptive fusion: signal bins, conditional-MI weights per question type, softmax.

For question type q and signal d, CMI_d(q) = I(bin_d ; relevant | type = q),
estimated on a labelled calibration split from the pooled (bin, relevant) pairs
of every candidate of every calibration question of that type (plug-in
estimator, ``sklearn.metrics.mutual_info_score``, nats: the released code's
``_compute_cmi`` restricted to one type is the same sum). Weights
w_d(q) = softmax(CMI_d / T).

Bins (``binning``): ``pooled`` (the released code's ``_bin_scores``, the default)
cuts the raw values of every calibration candidate, all questions and types
together, at the sorted positions n/3 and 2n/3 (a value above a cut moves up a
bin); ``per-query`` (our earlier reading, a variant) cuts each query's min-max
scaled values at its own tertiles.

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


BINNINGS = ("pooled", "per-query")


def pooled_bins(values: Sequence[np.ndarray], n_bins: int = 3) -> list[np.ndarray]:
    """Bins of every question's values, cut at the sorted positions i*n/n_bins of all values pooled (released code).

    Cut i is the value at sorted position int(n * (i + 1) / n_bins) - 1; a value's bin is the number of cuts it
    exceeds, so ties with a cut stay below it.
    """
    if n_bins < 2:
        raise ParamsError(f"fusion.n_bins: must be >= 2, got {n_bins}")
    arrays = [np.asarray(v, dtype=float) for v in values]
    pooled = np.sort(np.concatenate(arrays)) if arrays else np.zeros(0)
    if pooled.size == 0:
        return [np.zeros(len(a), dtype=np.int64) for a in arrays]
    cuts = pooled[[int(pooled.size * (i + 1) / n_bins) - 1 for i in range(n_bins - 1)]]
    return [np.searchsorted(cuts, a, side="left").astype(np.int64) for a in arrays]


def calibration_bins(
    sigs: Sequence, signals: Sequence[str], *, binning: str = "pooled", n_bins: int = 3
) -> dict[str, list[np.ndarray]]:
    """{signal: [bins of each question's candidates]} for the CMI fit (``sigs``: retriever QuerySignals)."""
    if binning not in BINNINGS:
        raise ParamsError(f"fusion.binning: expected one of {BINNINGS}, got {binning!r}")
    if binning == "per-query":
        return {d: [s.bins[d] for s in sigs] for d in signals}
    return {d: pooled_bins([s.raw[d] for s in sigs], n_bins) for d in signals}


def softmax(values: Sequence[float], temperature: float) -> np.ndarray:
    """softmax(values / temperature): non-negative, sums to one."""
    if temperature <= 0:
        raise ParamsError(f"fusion.temperature: must be > 0, got {temperature}")
    z = np.asarray(values, dtype=float) / temperature
    z = np.exp(z - z.max())
    return z / z.sum()


def cmi_weights(
    bins: Mapping[str, Sequence[np.ndarray]],
    relevant: Sequence[np.ndarray],
    types: Sequence[str],
    *,
    temperature: float,
    normalise: bool = True,
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
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
