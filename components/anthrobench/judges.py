"""The offline judges of the 13 judged behaviours, their majority vote, Fleiss' kappa and F1.

Every judge maps a list of target messages to a 0/1 matrix (messages x ``JUDGED``); a message shows a behaviour
when any of its sentences does. J1 matches lexicons, J2 thresholds the cosine between a sentence's embedding and
the behaviour's exemplar centroid, J3 is a bag-of-words logistic regression (one per behaviour) trained on
simulator-labelled sentences. Pronoun use is not judged: it is the regex of :mod:`behaviours`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from components.anthrobench import behaviours as B
from components.errors import DataError

_SPLIT = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    return [s for s in _SPLIT.split(text.strip()) if s] or [text]


def _per_sentence(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    flat, owner = [], []
    for i, t in enumerate(texts):
        for s in sentences(t):
            flat.append(s)
            owner.append(i)
    return flat, np.asarray(owner, dtype=int)


def _any_by_message(flags: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n, flags.shape[1]), dtype=int)
    np.maximum.at(out, owner, flags.astype(int))
    return out


def pronoun_labels(texts: Sequence[str]) -> np.ndarray:
    return np.array([int(B.has_pronoun(t)) for t in texts], dtype=int)


class LexiconJudge:
    """J1: any lexicon pattern of the behaviour in the message."""

    name = "J1_lexicon"

    def fit(self, rows: Sequence[dict]) -> LexiconJudge:
        return self

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[int(any(p.search(t) for p in B.COMPILED[b])) for b in B.JUDGED] for t in texts], dtype=int)


class CentroidJudge:
    """J2: cosine between each sentence and the behaviour's exemplar centroid >= a threshold tuned on dev sentences."""

    name = "J2_centroid"

    def __init__(self, embedder, grid: Sequence[float] = tuple(np.round(np.arange(0.30, 0.86, 0.025), 3))) -> None:
        self.embedder, self.grid, self.threshold = embedder, tuple(grid), None
        ex = [s for b in B.JUDGED for s in B.EXEMPLARS[b]]
        self._fit_texts = ex + list(B.NEUTRAL)
        embedder.fit(self._fit_texts)
        e = embedder.encode(ex)
        k = [len(B.EXEMPLARS[b]) for b in B.JUDGED]
        cents = np.stack([m.mean(axis=0) for m in np.split(e, np.cumsum(k)[:-1])])
        self.centroids = cents / np.linalg.norm(cents, axis=1, keepdims=True)

    def similarity(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.encode(list(texts)) @ self.centroids.T

    def fit(self, rows: Sequence[dict]) -> CentroidJudge:
        """Tune the threshold on labelled dev sentences (micro F1 over behaviours)."""
        sim = self.similarity([r["text"] for r in rows])
        truth = np.array([[int(r["behaviour"] == b) for b in B.JUDGED] for r in rows])
        scores = [f1(truth, (sim >= th).astype(int)) for th in self.grid]
        self.threshold = float(self.grid[int(np.argmax(scores))])
        return self

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        if self.threshold is None:
            raise DataError("J2: fit (tune the threshold on dev sentences) before predict")
        flat, owner = _per_sentence(texts)
        return _any_by_message(self.similarity(flat) >= self.threshold, owner, len(texts))


class LogRegJudge:
    """J3: word uni+bigram counts -> one logistic regression per behaviour (simulator-labelled sentences).

    Its decision threshold is tuned like J2's, by template-wise cross-validation on the training sentences (each
    fold holds out one cue template per behaviour, so the threshold is chosen for phrasings the model has not
    seen); then the model is refitted on all of them.
    """

    name = "J3_logreg"

    def __init__(self, C: float = 1.0, seed: int = 0, grid: Sequence[float] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5)) -> None:
        self.C, self.seed, self.grid, self.train_texts, self.threshold = C, seed, tuple(grid), frozenset(), 0.5

    def _fit(self, rows: Sequence[dict]):
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.linear_model import LogisticRegression

        texts = [r["text"] for r in rows]
        vec = CountVectorizer(ngram_range=(1, 2), lowercase=True, binary=True).fit(texts)
        x = vec.transform(texts)
        models = []
        for b in B.JUDGED:
            y = np.array([int(r["behaviour"] == b) for r in rows])
            if y.min() == y.max():
                raise DataError(f"J3: the training sentences hold only one class for {b}")
            models.append(
                LogisticRegression(C=self.C, max_iter=1000, class_weight="balanced", random_state=self.seed).fit(x, y)
            )
        return vec, models

    @staticmethod
    def _proba(vec, models, texts: Sequence[str]) -> np.ndarray:
        x = vec.transform(list(texts))
        return np.stack([m.predict_proba(x)[:, 1] for m in models], axis=1)

    def fit(self, rows: Sequence[dict]) -> LogRegJudge:
        folds = sorted({r.get("template", 0) for r in rows})
        if len(folds) > 1:
            probs, truth = [], []
            for k in folds:
                held = [r for r in rows if r.get("template", 0) == k]
                vec, models = self._fit([r for r in rows if r.get("template", 0) != k])
                probs.append(self._proba(vec, models, [r["text"] for r in held]))
                truth.append(np.array([[int(r["behaviour"] == b) for b in B.JUDGED] for r in held]))
            p, t = np.concatenate(probs), np.concatenate(truth)
            self.threshold = float(self.grid[int(np.argmax([f1(t, (p >= th).astype(int)) for th in self.grid]))])
        self.train_texts = frozenset(r["text"] for r in rows)
        self.vec, self.models = self._fit(rows)
        return self

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        flat, owner = _per_sentence(texts)
        return _any_by_message(self._proba(self.vec, self.models, flat) >= self.threshold, owner, len(texts))


def majority(votes: Sequence[np.ndarray], k: int | None = None) -> np.ndarray:
    """1 where at least ``k`` judges (default: a strict majority) flag the behaviour."""
    stack = np.stack(votes)
    need = k if k is not None else len(votes) // 2 + 1
    return (stack.sum(axis=0) >= need).astype(int)


def f1(truth: np.ndarray, pred: np.ndarray) -> float:
    """Micro F1 over every (message, behaviour) cell; 0 when there is nothing to find and nothing flagged."""
    t, p = np.asarray(truth).astype(bool), np.asarray(pred).astype(bool)
    tp = int((t & p).sum())
    denom = int(t.sum() + p.sum())
    return 0.0 if denom == 0 else 2.0 * tp / denom


def f1_parts(truth: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Per-unit (tp, n_true, n_pred) along the first axis, summed over the rest: micro F1 = 2 tp / (t + p)."""
    t, p = np.asarray(truth).astype(bool), np.asarray(pred).astype(bool)
    axes = tuple(range(1, t.ndim))
    return np.stack([(t & p).sum(axis=axes), t.sum(axis=axes), p.sum(axis=axes)], axis=-1).astype(float)


def fleiss_kappa(table: np.ndarray) -> float:
    """Fleiss' kappa of an (items x categories) table of rating counts, each row summing to the raters' number.

    The formula of ``statsmodels.stats.inter_rater.fleiss_kappa(method='fleiss')``:
    P_i = (sum_j n_ij^2 - n) / (n (n - 1)), P_bar = mean P_i, p_j = sum_i n_ij / (N n), P_e = sum_j p_j^2,
    kappa = (P_bar - P_e) / (1 - P_e).
    """
    x = np.asarray(table, dtype=float)
    if x.ndim != 2 or x.shape[0] < 1:
        raise DataError(f"fleiss_kappa: expected an items x categories table, got shape {x.shape}")
    n = x.sum(axis=1)
    if not np.allclose(n, n[0]) or n[0] < 2:
        raise DataError("fleiss_kappa: every item needs the same number (>= 2) of ratings")
    n = n[0]
    p_i = ((x * x).sum(axis=1) - n) / (n * (n - 1))
    p_j = x.sum(axis=0) / (x.shape[0] * n)
    p_e = float((p_j**2).sum())
    return float("nan") if p_e == 1.0 else float((p_i.mean() - p_e) / (1 - p_e))


def kappa_of_votes(votes: Sequence[np.ndarray]) -> float:
    """Fleiss' kappa over every (message, behaviour) cell of binary votes from several judges."""
    stack = np.stack([np.asarray(v).ravel() for v in votes])  # judges x cells
    yes = stack.sum(axis=0)
    return fleiss_kappa(np.stack([len(votes) - yes, yes], axis=1))


J3_LOADER = "components.anthrobench.judges:load_j3"


def save_j3(judge: LogRegJudge, folder) -> Path:
    """J3 as ``j3.npz`` (coefficients, intercepts) + ``config.json`` (vocabulary in column order, threshold): no
    pickle, so MLflow can log it as a folder model and :func:`load_j3` rebuild it."""
    import json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    coef = np.stack([m.coef_[0] for m in judge.models])
    intercept = np.array([m.intercept_[0] for m in judge.models])
    np.savez(folder / "j3.npz", coef=coef, intercept=intercept)
    vocab = sorted(judge.vec.vocabulary_, key=judge.vec.vocabulary_.get)
    config = {"behaviours": list(B.JUDGED), "vocabulary": vocab, "threshold": judge.threshold, "C": judge.C,
              "ngram_range": [1, 2]}  # fmt: skip
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


class SavedJ3:
    """J3 rebuilt from its folder: the same votes as the fitted judge."""

    name = LogRegJudge.name

    def __init__(self, coef: np.ndarray, intercept: np.ndarray, vocabulary: list[str], threshold: float) -> None:
        from sklearn.feature_extraction.text import CountVectorizer

        self.coef, self.intercept, self.threshold = coef, intercept, threshold
        self.vec = CountVectorizer(ngram_range=(1, 2), lowercase=True, binary=True,
                                   vocabulary={w: i for i, w in enumerate(vocabulary)})  # fmt: skip

    def proba(self, features: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(np.asarray(features, dtype=float) @ self.coef.T + self.intercept)))

    def pyfunc_predict(self, model_input: np.ndarray) -> np.ndarray:
        """Binary bag-of-words rows (the vocabulary of config.json) -> 0/1 per judged behaviour."""
        return (self.proba(model_input) >= self.threshold).astype(np.int64)

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        flat, owner = _per_sentence(texts)
        flags = self.pyfunc_predict(self.vec.transform(flat).toarray())
        return _any_by_message(flags, owner, len(texts))


def load_j3(folder) -> SavedJ3:
    """J3 from its folder through the guarded readers: a missing, truncated or malformed file is a DataError
    naming it (no pickle)."""
    from components.inputs import load_npz
    from components.io import read_json

    folder = Path(folder)
    config = read_json(folder / "config.json")
    if not isinstance(config, dict) or not {"vocabulary", "threshold"} <= set(config):
        raise DataError(f"{folder / 'config.json'}: not a J3 config (needs vocabulary and threshold)")
    z = load_npz(folder / "j3.npz", keys=("coef", "intercept"), finite=True)
    return SavedJ3(z["coef"], z["intercept"], config["vocabulary"], float(config["threshold"]))
