"""Shared helpers of got-r1's stages."""

from __future__ import annotations

import logging

from components.errors import DataError
from components.io import read_jsonl

log = logging.getLogger("paperline.got_r1")
SPLITS = ("sft", "rl", "dev", "test")


def load_prompts(path, split: str) -> list[dict]:
    rows = [r for r in read_jsonl(path) if r["split"] == split]
    if not rows:
        raise DataError(f"{path}: no prompts of split {split!r}")
    return [{"prompt": r["prompt"], "tag": r["tag"], "include": r["include"], "id": r["id"]} for r in rows]
