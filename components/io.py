"""Atomic file output and validated JSONL/JSON input.

Every output is written to a temporary file beside its target and renamed into
place (``os.replace`` is atomic on POSIX), so a killed process never leaves a
half-written file at an output path, and an existing output is untouched until
the new one is complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from components.errors import DataError
from components.faults import crash_point

TMP_PREFIX = ".tmp-"


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, *, is_dir: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` on success.

    On an exception the temporary file (or directory) is removed and ``target``
    keeps its previous content.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if is_dir:
        tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX + target.name + "-", dir=target.parent))
    else:
        fd, name = tempfile.mkstemp(prefix=TMP_PREFIX + target.name + "-", dir=target.parent)
        os.close(fd)
        tmp = Path(name)
    try:
        yield tmp
        crash_point(f"write:{target.name}")
        if is_dir:
            if target.exists():
                old = target.with_name(TMP_PREFIX + target.name + "-old")
                shutil.rmtree(old, ignore_errors=True)
                os.replace(target, old)
                os.replace(tmp, target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, target)
        else:
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
    except BaseException:
        if is_dir:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        raise


def write_text(target: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``target`` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(target)


def finite_json(obj: Any) -> Any:
    """``obj`` with NaN and infinities replaced by None (JSON has no such numbers; strict readers reject them)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    if hasattr(obj, "item") and not hasattr(obj, "__len__"):  # numpy scalar
        return finite_json(obj.item())
    if hasattr(obj, "tolist"):
        return finite_json(obj.tolist())
    return obj


def write_json(target: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as indented, strict JSON atomically (non-finite numbers become null)."""
    text = json.dumps(finite_json(obj), indent=2, sort_keys=False, default=_json_default, allow_nan=False)
    return write_text(target, text + "\n")


def write_jsonl(target: str | os.PathLike, records: Iterable[dict]) -> int:
    """Write one JSON object per line atomically; return the number of records."""
    n = 0
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, default=_json_default))
            fh.write("\n")
            n += 1
    return n


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def iter_jsonl(path: str | os.PathLike, required: Iterable[str] = ()) -> Iterator[dict]:
    """Yield the objects of a JSONL file, failing clearly on a corrupt line.

    Raises :class:`DataError` naming the file and line when a line is not JSON,
    not an object, or lacks a ``required`` field. A file that ends without a
    newline after a truncated object is reported the same way.
    """
    path = Path(path)
    required = tuple(required)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg}); the file may be truncated") from None
            if not isinstance(rec, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(rec).__name__}")
            missing = [f for f in required if f not in rec]
            if missing:
                raise DataError(f"{path}:{lineno}: missing field(s) {', '.join(map(repr, missing))}")
            yield rec


def read_jsonl(path: str | os.PathLike, required: Iterable[str] = (), *, allow_empty: bool = False) -> list[dict]:
    """Read a whole JSONL file (see :func:`iter_jsonl`); an empty file is an error unless allowed."""
    rows = list(iter_jsonl(path, required))
    if not rows and not allow_empty:
        raise DataError(f"{path}: no records (empty JSONL)")
    return rows


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file, failing with the file name on a missing or corrupt file."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def file_md5(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """MD5 of a file's bytes (the hash DVC records for a file)."""
    h = hashlib.md5()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _ignored(rel: Path) -> bool:
    """Bytecode and staging leftovers are not content (the same rule as .dvcignore)."""
    return rel.name.startswith(TMP_PREFIX) or rel.suffix == ".pyc" or "__pycache__" in rel.parts


def path_md5(path: str | os.PathLike) -> str:
    """MD5 of a file, or of a directory's sorted (relative path, file md5) listing."""
    path = Path(path)
    if path.is_file():
        return file_md5(path)
    if path.is_dir():
        h = hashlib.md5()
        for p in sorted(q for q in path.rglob("*") if q.is_file() and not _ignored(q.relative_to(path))):
            h.update(f"{p.relative_to(path).as_posix()}:{file_md5(p)}\n".encode())
        return h.hexdigest() + ".dir"
    raise DataError(f"{path}: not found")
