"""POPE's JSONL question format (``question_id``, ``image``, ``text``, ``label``), as the official POPE files and
``eunwooim/selfaug``'s ``src/data/POPE/*/*.jsonl`` hold it, and the object a question asks about.

The paper-scale path (LLaVA-1.5 on COCO val2014) reads its questions here; a wrong file is a DataError naming
the file and the line."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from components.errors import DataError

FIELDS = ("question_id", "image", "text", "label")
_OBJECT = re.compile(r"^is there an? (.+?) in the image\?$", re.IGNORECASE)


def load_pope(path: str | os.PathLike) -> list[dict]:
    """The questions of one POPE split file, each with its ``object`` parsed from the text."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise DataError(f"{path}:{n}: not a JSON line (POPE's format is JSONL)") from None
        missing = [f for f in FIELDS if not isinstance(row, dict) or f not in row]
        if missing:
            raise DataError(f"{path}:{n}: missing field(s) {missing} (POPE rows carry {list(FIELDS)})")
        if row["label"] not in ("yes", "no"):
            raise DataError(f"{path}:{n}: label {row['label']!r} is not 'yes' or 'no'")
        m = _OBJECT.match(row["text"].strip())
        rows.append({**row, "object": m.group(1) if m else None})
    if not rows:
        raise DataError(f"{path}: no questions")
    return rows
