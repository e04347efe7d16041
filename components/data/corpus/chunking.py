"""Split text into documents of roughly 1-4 KB on natural boundaries.

Sizes are counted in characters (the sources are almost all ASCII, so this is
close to bytes). Units (paragraphs, verses, dictionary entries) are packed into
balanced groups instead of greedy ones, so a 5 KB chapter becomes two 2.5 KB
documents rather than a 4 KB one and a 1 KB tail.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

TARGET_CHARS = 2048
MAX_CHARS = 4096

_BLANK_LINES = re.compile(r"\n[ \t]*\n+")


def paragraphs(text: str) -> list[str]:
    """Split ``text`` on blank lines, dropping empty paragraphs and trailing spaces."""
    return [p.rstrip() for p in _BLANK_LINES.split(text.strip("\n")) if p.strip()]


def split_oversized(unit: str, max_chars: int = MAX_CHARS) -> list[str]:
    """Break one unit longer than ``max_chars`` on line breaks, then on spaces, then hard."""
    if len(unit) <= max_chars:
        return [unit]
    for sep in ("\n", " "):
        parts = unit.split(sep)
        if len(parts) > 1:
            return [c for c in pack(parts, target=max_chars // 2, max_chars=max_chars, sep=sep) if c.strip()]
    return [unit[i : i + max_chars] for i in range(0, len(unit), max_chars)]


def group_units(
    lengths: Sequence[int], *, target: int = TARGET_CHARS, max_chars: int = MAX_CHARS, sep_len: int = 2
) -> list[range]:
    """Group consecutive units of the given lengths into balanced runs near ``target``.

    The number of runs is chosen from the total size, then each cut is placed at
    the unit boundary nearest its ideal position; a run exceeds ``max_chars``
    only when a single unit does.
    """
    sizes = [n + sep_len for n in lengths]
    total = sum(sizes) - sep_len
    if not sizes:
        return []
    k = max(1, round(total / target), math.ceil(total / max_chars))
    runs: list[range] = []
    start, size, done = 0, 0, 0
    for i, s in enumerate(sizes):
        ideal_end = (len(runs) + 1) * total / k
        if i > start and (size + s > max_chars or (done + size + s / 2 > ideal_end and len(runs) < k - 1)):
            runs.append(range(start, i))
            done += size
            start, size = i, 0
        size += s
    runs.append(range(start, len(sizes)))
    return runs


def pack(
    units: Sequence[str],
    *,
    target: int = TARGET_CHARS,
    max_chars: int = MAX_CHARS,
    sep: str = "\n\n",
) -> list[str]:
    """Join consecutive ``units`` into balanced chunks near ``target`` and at most ``max_chars``.

    Units longer than ``max_chars`` are split first (see :func:`group_units`).
    """
    flat = [piece for u in units for piece in split_oversized(u, max_chars)]
    runs = group_units([len(u) for u in flat], target=target, max_chars=max_chars, sep_len=len(sep))
    return [sep.join(flat[r.start : r.stop]) for r in runs]


def chunk_text(text: str, *, target: int = TARGET_CHARS, max_chars: int = MAX_CHARS) -> list[str]:
    """Chunk free text on paragraph boundaries (see :func:`pack`)."""
    return pack(paragraphs(text), target=target, max_chars=max_chars)
