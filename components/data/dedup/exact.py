"""Exact dedup: documents whose normalised text is identical form one cluster."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from components.data.dedup.result import DedupResult, result_from_pairs
from components.data.dedup.text import doc_texts, normalize_text


def exact_dedup(docs: Sequence[dict], *, text_field: str = "text") -> DedupResult:
    """Keep the first document of each group with the same normalised text.

    Normalisation (NFKC, lowercase, punctuation/symbols to spaces, whitespace
    collapsed) is :func:`components.data.dedup.text.normalize_text`, so copies that
    differ only in case, spacing or punctuation are duplicates. Texts are compared by
    a 128-bit BLAKE2b digest. Empty input gives an empty result.
    """
    texts = doc_texts(docs, text_field)
    first: dict[bytes, int] = {}
    pairs: list[tuple[int, int]] = []
    for i, text in enumerate(texts):
        key = hashlib.blake2b(normalize_text(text).encode("utf-8"), digest_size=16).digest()
        j = first.setdefault(key, i)
        if j != i:
            pairs.append((j, i))
    return result_from_pairs(docs, np.array(pairs, dtype=np.int64), method="exact", params={"text_field": text_field})
