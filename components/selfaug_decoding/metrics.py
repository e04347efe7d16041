"""POPE (accuracy, precision, recall, F1, yes-ratio), CHAIR_s / CHAIR_i, MME-style acc / acc+, and the paired
two-stage bootstrap of a difference in a non-additive metric (F1, CHAIR_i): seeds first, then items within each
drawn seed, the same draw for both methods."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from components.errors import DataError
from components.selfaug_decoding.scenes import SHAPES


def yes(answer: str) -> bool:
    """POPE's parsing: an answer is "yes" iff its first word is "yes"."""
    words = answer.strip().lower().split()
    return bool(words) and words[0].strip(".,!") == "yes"


def pope(pred_yes: Sequence[bool], label_yes: Sequence[bool]) -> dict[str, float]:
    p, t = np.asarray(pred_yes, bool), np.asarray(label_yes, bool)
    if p.size == 0 or p.shape != t.shape:
        raise DataError(f"pope: need equal non-empty predictions and labels, got {p.size} and {t.size}")
    tp, fp = int((p & t).sum()), int((p & ~t).sum())
    fn, tn = int((~p & t).sum()), int((~p & ~t).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"accuracy": (tp + tn) / p.size, "precision": prec, "recall": rec, "f1": f1,
            "yes_ratio": float(p.mean()), "false_yes_rate": fp / (fp + tn) if fp + tn else 0.0}  # fmt: skip


def f1_from_counts(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    den = 2 * tp + fp + fn
    return np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), 0.0)


def mentions(caption_words: Sequence[str]) -> list[str]:
    """The object words a caption mentions (every shape word, repeats kept)."""
    return [w for w in caption_words if w in SHAPES]


def chair(captions: Sequence[Sequence[str]], truths: Sequence[Sequence[str]]) -> dict[str, float]:
    """CHAIR_s: captions with >= 1 hallucinated object / captions; CHAIR_i: hallucinated mentions / mentions."""
    if not captions or len(captions) != len(truths):
        raise DataError(f"chair: need equal non-empty captions and truths, got {len(captions)} and {len(truths)}")
    hal, men, bad = 0, 0, 0
    for cap, truth in zip(captions, truths):
        m = mentions(cap)
        h = sum(w not in set(truth) for w in m)
        hal, men, bad = hal + h, men + len(m), bad + (h > 0)
    return {"chair_s": bad / len(captions), "chair_i": hal / men if men else 0.0,
            "recall": _recall(captions, truths)}  # fmt: skip


def _recall(captions, truths) -> float:
    got = sum(len(set(mentions(c)) & set(t)) for c, t in zip(captions, truths))
    return got / max(1, sum(len(set(t)) for t in truths))


def mme(rows: Sequence[dict]) -> dict[str, dict[str, float]]:
    """Per category: acc (questions) and acc+ (images whose two questions are both right), MME's definitions.
    Rows carry ``qtype``, ``image``, ``correct``."""
    out = {}
    for qt in sorted({r["qtype"] for r in rows}):
        sub = [r for r in rows if r["qtype"] == qt]
        by_img: dict = {}
        for r in sub:
            by_img.setdefault(r["image"], []).append(bool(r["correct"]))
        out[qt] = {"acc": float(np.mean([r["correct"] for r in sub])),
                   "acc_plus": float(np.mean([all(v) for v in by_img.values()])), "n": len(sub)}  # fmt: skip
    return out


def two_stage_indices(
    clusters: np.ndarray,
    n_resamples: int,
    rng: np.random.Generator,
    *,
    strata: np.ndarray | None = None,
    labels_out: list | None = None,
) -> np.ndarray:
    """(R, n) item indices: per resample, clusters with replacement, then items with replacement within each
    drawn cluster (and within each stratum, when given: strata are groups fixed by design). Every cluster must
    hold the same items per stratum (each seed answers the same questions). ``labels_out``, a list, receives
    each column's new cluster label (the drawn cluster's position: a seed drawn twice is two clusters)."""
    clusters = np.asarray(clusters)
    s = np.zeros(clusters.size, int) if strata is None else np.asarray(strata)
    labels = np.unique(clusters)
    drawn = rng.integers(0, labels.size, (n_resamples, labels.size))
    parts = []
    for st in np.unique(s).tolist():
        groups = [np.flatnonzero((clusters == c) & (s == st)) for c in labels.tolist()]
        sizes = {g.size for g in groups}
        if len(sizes) != 1:
            raise DataError(f"bootstrap: clusters hold {sorted(sizes)} items in stratum {st!r}; they must be equal")
        g = np.stack(groups)  # (k, m)
        k, m = g.shape
        within = rng.integers(0, m, (n_resamples, k, m))
        parts.append(g[drawn[:, :, None], within].reshape(n_resamples, k * m))
        if labels_out is not None:
            labels_out.append(np.repeat(np.arange(k), m))
    if labels_out is not None:
        labels_out[:] = [np.concatenate(labels_out)]
    return np.concatenate(parts, axis=1)


def paired_bootstrap(
    stat: Callable[[np.ndarray], np.ndarray],
    n: int,
    clusters: Sequence | None,
    *,
    strata: Sequence | None = None,
    n_resamples: int,
    seed: int,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """Point value and percentile CI of ``stat(indices)`` (a paired difference computed on each row of an
    (R, n) index array) under the two-stage resample."""
    c = np.zeros(n, int) if clusters is None else np.asarray(clusters)
    st = None if strata is None else np.asarray(strata)
    rng = np.random.default_rng(seed)
    point = float(stat(np.arange(n)[None])[0])
    vals = np.concatenate([stat(two_stage_indices(c, min(500, n_resamples - i), rng, strata=st))
                           for i in range(0, n_resamples, 500)])  # fmt: skip
    a = (1 - level) / 2
    return point, float(np.quantile(vals, a)), float(np.quantile(vals, 1 - a))


def f1_difference(m_yes, b_yes, label_yes) -> Callable[[np.ndarray], np.ndarray]:
    """stat(idx): F1(method) - F1(baseline) on each row of item indices ``idx`` (R, n)."""
    m, b, t = (np.asarray(v, bool) for v in (m_yes, b_yes, label_yes))

    def f1(p: np.ndarray, tt: np.ndarray) -> np.ndarray:
        return f1_from_counts((p & tt).sum(1), (p & ~tt).sum(1), (~p & tt).sum(1))

    def stat(idx: np.ndarray) -> np.ndarray:
        tt = t[idx]
        return f1(m[idx], tt) - f1(b[idx], tt)

    return stat


def ratio_difference(m_num, m_den, b_num, b_den) -> Callable[[np.ndarray], np.ndarray]:
    """stat(idx): sum(m_num)/sum(m_den) - sum(b_num)/sum(b_den) per row of ``idx`` (CHAIR_i per caption)."""
    arrs = [np.asarray(v, float) for v in (m_num, m_den, b_num, b_den)]

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        return np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)

    def stat(idx: np.ndarray) -> np.ndarray:
        mn, md, bn, bd = (a[idx].sum(1) for a in arrs)
        return ratio(mn, md) - ratio(bn, bd)

    return stat
