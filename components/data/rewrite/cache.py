"""Append-only JSONL cache of finished LLM rewrites, so a killed run resumes.

One line per rewrite, keyed by (orig_id, style, rewriter, prompt_hash,
text_md5): the source text's hash is part of the key so an edited document is
rewritten again. Each batch is appended, flushed and fsynced as soon as it is
generated. A process killed mid-write can leave a truncated last line: it is
ignored with a warning and cut off before the next append. A corrupt line
anywhere else means the file was damaged some other way and is an error.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from components.errors import DataError

log = logging.getLogger(__name__)

KEY_FIELDS = ("orig_id", "style", "rewriter", "prompt_hash", "text_md5")
CacheKey = tuple[str, str, str, str, str]


def text_md5(text: str) -> str:
    """MD5 of a text's UTF-8 bytes (identifies the source version in the cache)."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def record_key(rec: dict) -> CacheKey:
    """The cache key of a cache record."""
    return tuple(str(rec[f]) for f in KEY_FIELDS)  # type: ignore[return-value]


class RewriteCache:
    """Cached rewrites loaded from ``path`` (if it exists), plus appends to it."""

    def __init__(self, path: str | os.PathLike | None) -> None:
        self.path = Path(path) if path is not None else None
        self.entries: dict[CacheKey, str] = {}
        if self.path is not None and self.path.exists():
            self._load()

    def get(self, key: CacheKey) -> str | None:
        """The cached text for ``key``, or None."""
        return self.entries.get(key)

    def append(self, records: Iterable[dict]) -> None:
        """Store ``records`` (each with the key fields and ``text``) and append them durably to the file."""
        records = list(records)
        for rec in records:
            self.entries[record_key(rec)] = rec["text"]
        if self.path is None or not records:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())

    def _load(self) -> None:
        assert self.path is not None
        data = self.path.read_bytes()
        good_end = 0
        lines = data.split(b"\n")
        for lineno, raw in enumerate(lines, 1):
            is_tail = lineno == len(lines)  # text after the last newline: complete lines always end in "\n"
            if not raw.strip():
                good_end += len(raw) + (0 if is_tail else 1)
                continue
            try:
                rec = json.loads(raw)
                key = record_key(rec)
                text = rec["text"]
            except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError):
                if is_tail or lineno == len(lines) - 1 and not lines[-1]:
                    log.warning(
                        "%s:%d: ignoring a truncated last line (a run was killed while writing); "
                        "%d cached rewrites kept",
                        self.path,
                        lineno,
                        len(self.entries),
                    )
                    self._truncate(good_end)
                    return
                raise DataError(
                    f"{self.path}:{lineno}: corrupt rewrite-cache line; delete the file to start over"
                ) from None
            if is_tail:  # a complete record missing only its newline: keep it, restore the newline
                self.entries[key] = text
                with open(self.path, "ab") as fh:
                    fh.write(b"\n")
                return
            self.entries[key] = text
            good_end += len(raw) + 1
        log.info("%s: %d cached rewrites", self.path, len(self.entries))

    def _truncate(self, size: int) -> None:
        """Cut the file after its last complete line, so the next append starts on a fresh line."""
        assert self.path is not None
        with open(self.path, "r+b") as fh:
            fh.truncate(size)
