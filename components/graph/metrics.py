"""Detection metrics: ROC-AUC, AP, Recall@k, F1 of labels, the trap/rest AUC split, and contamination labels.

ROC-AUC, AP and F1 are scikit-learn's; Recall@k and the neighbourhood split are written here.
"""

from __future__ import annotations

import numpy as np

from components.errors import DataError


def _check(y: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y, s = np.asarray(y).astype(np.int64), np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 1:
        raise DataError(f"metrics: labels {y.shape} and scores {s.shape} must be equal-length 1-D arrays")
    if not np.all(np.isfinite(s)):
        raise DataError(f"metrics: score of node {int(np.flatnonzero(~np.isfinite(s))[0])} is not finite")
    if set(np.unique(y)) - {0, 1}:
        raise DataError("metrics: labels must be 0/1")
    return y, s


def roc_auc(y, scores) -> float:
    from sklearn.metrics import roc_auc_score

    y, s = _check(y, scores)
    if y.min() == y.max():
        raise DataError("metrics: ROC-AUC needs both outliers and normal nodes")
    return float(roc_auc_score(y, s))


def average_precision(y, scores) -> float:
    from sklearn.metrics import average_precision_score

    y, s = _check(y, scores)
    return float(average_precision_score(y, s))


def recall_at_k(y, scores, k: int | None = None) -> float:
    """Share of true outliers among the k highest scores, k = number of true outliers by default (stable ties)."""
    y, s = _check(y, scores)
    k = int(y.sum()) if k is None else int(k)
    if k <= 0 or y.sum() == 0:
        raise DataError("metrics: Recall@k needs k >= 1 and at least one outlier")
    top = np.argsort(-s, kind="stable")[:k]
    return float(y[top].sum() / y.sum())


def f1(y, labels) -> float:
    from sklearn.metrics import f1_score

    y, lab = _check(y, labels)
    return float(f1_score(y, lab.astype(np.int64), zero_division=0))


def contamination_labels(scores, contamination: float = 0.1) -> np.ndarray:
    """PyGOD's thresholding: label 1 where the score exceeds its (1 - contamination) percentile."""
    if not 0 < contamination < 0.5:
        raise DataError(f"contamination: must be in (0, 0.5), got {contamination}")
    s = np.asarray(scores, dtype=np.float64)
    return (s > np.percentile(s, 100 * (1 - contamination))).astype(np.int64)


def trap_split(y, edge_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(trap mask, rest mask): outliers plus their 1-hop normal neighbours / outliers plus all other normal nodes."""
    y = np.asarray(y).astype(bool)
    src, dst = edge_index
    near = np.zeros(y.size, dtype=bool)
    near[dst[y[src]]] = True
    near &= ~y
    return y | near, y | (~y & ~near)


def detection_metrics(y, scores, edge_index: np.ndarray, labels=None, contamination: float = 0.1) -> dict:
    """Every metric of one run: AUC, AP, Recall@k, trap/rest AUC, F1 (own labels if given, else thresholded)."""
    trap, rest = trap_split(y, edge_index)
    y = np.asarray(y)
    own = labels is not None
    lab = np.asarray(labels) if own else contamination_labels(scores, contamination)
    return {
        "auc": roc_auc(y, scores),
        "ap": average_precision(y, scores),
        "recall_at_k": recall_at_k(y, scores),
        "trap_auc": roc_auc(y[trap], np.asarray(scores)[trap]),
        "rest_auc": roc_auc(y[rest], np.asarray(scores)[rest]),
        "f1": f1(y, lab),
        "f1_labels": "own" if own else f"contamination {contamination}",
        "n_trap_normals": int((trap & ~y.astype(bool)).sum()),
    }
