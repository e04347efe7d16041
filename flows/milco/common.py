"""Helpers every milco stage shares: logging, threads, file names."""

from __future__ import annotations

import logging

log = logging.getLogger("paperline.milco")

PAIRS, QUERIES, SPLITS = "pairs.jsonl", "queries.jsonl", "splits.json"
TOKENIZER, ENGLISH, EXTERNAL = "tokenizer.json", "english.json", "external.jsonl"
USE_FILE = "use.npz"


def set_threads(n: int) -> None:
    import torch

    torch.set_num_threads(n)


# evaluation task -> (benchmark split, document side)
TASKS = {"es-en": ("bench", "en"), "es-es": ("bench", "es"), "bible-es-en": ("bible", "en")}
