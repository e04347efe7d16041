"""Safe paths: names from params or data become path parts only when checked.

Two defences, both raising :class:`UnsafePathError` with a one-line message
naming the field or file:

- :func:`check_name` accepts a name that becomes one path component only when
  it matches ``NAME`` (letters, digits, ``_ . -``; no separator, no leading dot,
  so never ``..``) or, for fields with a fixed vocabulary, a known list;
- :func:`safe_join` / :func:`inside` refuse a path that, once resolved
  (symlinks and ``..`` included), lies outside the checkout or one of the
  allowed roots (:func:`allowed_roots`: the checkout, where its ``data`` and
  ``reports`` folders point, and the shared file cache).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from components.errors import PaperlineError

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class UnsafePathError(PaperlineError):
    """A name or path built from params or data would leave the checkout (or is not a plain name)."""


def check_name(name: object, what: str, known: Iterable[str] | None = None) -> str:
    """``name`` if it is a plain path component (and one of ``known`` when given); else an error naming ``what``."""
    if not isinstance(name, str) or not NAME.match(name) or ".." in name:
        raise UnsafePathError(f"{what}: {name!r} is not a plain name (letters, digits, '_', '.', '-'; no '/' or '..')")
    if known is not None:
        allowed = list(known)
        if name not in allowed:
            raise UnsafePathError(f"{what}: unknown name {name!r}; use one of {allowed}")
    return name


def check_names(names: Iterable[object], what: str, known: Iterable[str] | None = None) -> list[str]:
    """:func:`check_name` for every entry (for pydantic field validators, wrap in ``ValueError``)."""
    allowed = list(known) if known is not None else None
    return [check_name(n, what, allowed) for n in names]


def allowed_roots(root: Path) -> list[Path]:
    """The folders a path may resolve into: the checkout, its data/reports targets, the file cache."""
    root = Path(root)
    roots = [root, root / "data", root / "reports"]
    cache = os.environ.get("PAPERLINE_CACHE_DIR")
    if cache:
        roots.append(Path(cache))
    return [r.resolve() for r in roots]


def inside(path: Path, roots: Sequence[Path], what: str) -> Path:
    """``path`` (resolved) if it lies under one of ``roots``; else an error naming ``what``."""
    resolved = Path(path).resolve()
    for base in roots:
        base = Path(base).resolve()
        if resolved == base or base in resolved.parents:
            return Path(path)
    raise UnsafePathError(f"{what}: {path} resolves to {resolved}, outside the checkout; refused")


def safe_join(base: Path, *parts: str, roots: Sequence[Path] | None = None, what: str | None = None) -> Path:
    """``base / parts...`` where every part is a relative path without ``..`` and the result stays under ``base``.

    With ``roots`` the result must also resolve under one of them (the checkout's :func:`allowed_roots`).
    """
    label = what or "/".join(parts)
    for part in parts:
        pieces = Path(part).parts
        if Path(part).is_absolute() or not pieces or any(p in ("..", ".", "") for p in pieces):
            raise UnsafePathError(f"{label}: {part!r} is not a relative path inside {base}")
    path = Path(base).joinpath(*parts)
    inside(path, [base], label)
    if roots is not None:
        inside(path, roots, label)
    return path
