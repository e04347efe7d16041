"""TOFU-style metrics (truth ratio, forget quality, model utility, ROUGE-L) and vision MIA.

Reference: open-unlearning's TOFU evaluators. Differences: probabilities are
length-normalised (``P^(1/|a|)`` = exp(-mean NLL)) everywhere; ROUGE-L recall is
on lower-cased whitespace words without a stemmer (``rouge_score`` is not a
dependency; the LCS below is the textbook dynamic programme); model utility is
the harmonic mean over {retain, general} x {probability, ROUGE-L, max(0, 1-R)}
as the card defines it (open-unlearning's ``hm_aggregate`` also uses the
truth-ratio "true/false" form on retain and world facts).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from components.errors import DataError


def lcs_len(a: Sequence[str], b: Sequence[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _words(text: str) -> list[str]:
    return "".join(c.lower() if c.isalnum() else " " for c in text).split()


def rouge_l_recall(prediction: str, reference: str) -> float:
    """LCS(prediction, reference) / |reference| over words."""
    ref = _words(reference)
    return lcs_len(_words(prediction), ref) / len(ref) if ref else 0.0


def truth_ratio(nll_para: np.ndarray, nll_pert: np.ndarray) -> np.ndarray:
    """R = mean_j P(perturbed_j)^(1/len) / P(paraphrase)^(1/len); ``nll_pert`` has shape (n, k)."""
    return np.exp(-np.asarray(nll_pert)).mean(axis=1) / np.exp(-np.asarray(nll_para))


def forget_quality(tr_unlearned: np.ndarray, tr_retrain: np.ndarray) -> float:
    """KS-test p-value between forget-set truth-ratio distributions (higher = closer to Retrain)."""
    if len(tr_unlearned) == 0 or len(tr_retrain) == 0:
        raise DataError("forget_quality: empty truth-ratio sample")
    return float(stats.ks_2samp(tr_unlearned, tr_retrain).pvalue)


def harmonic_mean(values: Sequence[float]) -> float:
    v = np.asarray(values, dtype=float)
    return 0.0 if np.any(v <= 0) else float(len(v) / np.sum(1.0 / v))


def utility_parts(prob: np.ndarray, rouge: np.ndarray, tr: np.ndarray) -> list[float]:
    """The three per-split means entering model utility."""
    return [float(np.mean(prob)), float(np.mean(rouge)), float(np.mean(np.maximum(0.0, 1.0 - tr)))]


def model_utility(splits: dict[str, dict[str, np.ndarray]]) -> float:
    """Harmonic mean of probability, ROUGE-L and max(0, 1 - R) over the given splits."""
    parts: list[float] = []
    for s in splits.values():
        parts += utility_parts(s["prob"], s["rouge"], s["tr"])
    return harmonic_mean(parts)


def mia_efficacy(retain_loss: np.ndarray, test_loss: np.ndarray, forget_loss: np.ndarray) -> float:
    """Fraction of forget samples a loss-threshold attack (fit on retain = member vs test = non-member) calls
    non-members."""
    from sklearn.linear_model import LogisticRegression

    x = np.concatenate([retain_loss, test_loss])[:, None]
    y = np.concatenate([np.ones(len(retain_loss)), np.zeros(len(test_loss))])
    clf = LogisticRegression(class_weight="balanced").fit(np.log1p(x), y)
    return float(np.mean(clf.predict(np.log1p(np.asarray(forget_loss)[:, None])) == 0))
