"""Exact and MinHash-LSH deduplication of documents (dicts with ``id`` and a text field).

Framework-free: no Prefect, DVC or MLflow here. See :mod:`.text` for the text
normalisation, :mod:`.minhash_numpy` for the vectorised backend.
"""

from components.data.dedup.exact import exact_dedup
from components.data.dedup.minhash import BACKENDS, choose_bands_rows, minhash_dedup
from components.data.dedup.result import DedupResult, score_dedup, write_dedup
from components.data.dedup.text import normalize_text

__all__ = [
    "BACKENDS",
    "DedupResult",
    "choose_bands_rows",
    "exact_dedup",
    "minhash_dedup",
    "normalize_text",
    "score_dedup",
    "write_dedup",
]
