"""A content-addressed cache of files that a deterministic step produces.

A stage that builds several independent files (one per source, one per
intervention) keeps each finished file here, keyed by everything it depends on;
a rerun after a kill, or after switching profiles back, copies finished files
instead of recomputing them. Files are written atomically, so a killed producer
leaves no cache entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from components.io import atomic_path


def cache_key(parts: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:20]


def materialise(cache_dir: Path, key_parts: dict[str, Any], dest: Path, produce: Callable[[Path], Any]) -> bool:
    """Put the file for ``key_parts`` at ``dest``: from the cache if present (True), else ``produce`` it (False)."""
    entry = cache_dir / f"{cache_key(key_parts)}{dest.suffix}"
    hit = entry.is_file()
    if not hit:
        with atomic_path(entry) as tmp:
            produce(tmp)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        dest.unlink()
    try:
        os.link(entry, dest)
    except OSError:
        shutil.copy2(entry, dest)
    return hit
