"""Helpers every milco stage shares: logging, threads, file names."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from components.io import read_json
from flows.runtime.tracking import TOKEN_IDS, Tensor, signature

log = logging.getLogger("paperline.milco")

PAIRS, QUERIES, SPLITS = "pairs.jsonl", "queries.jsonl", "splits.json"
TOKENIZER, ENGLISH, EXTERNAL = "tokenizer.json", "english.json", "external.jsonl"
USE_FILE = "use.npz"


# evaluation task -> (benchmark split, document side)
TASKS = {"es-en": ("bench", "en"), "es-es": ("bench", "es"), "bible-es-en": ("bible", "en")}


ENCODER_LOADER = "components.sparse_retrieval.model:load_encoder"  # allow-listed in flows/runtime/mlflow_model.py


def encoder_signature(folder: Path) -> Any:
    """The MLflow signature of a logged encoder: token ids in, the pivot vector (or dense embedding) out."""
    cfg = read_json(Path(folder) / "config.json")
    width = cfg["d_dense"] if cfg["kind"] == "dense" else cfg["vocab_en"]
    return signature(TOKEN_IDS, Tensor("pivot_or_embedding", "float32", (-1, int(width))))
