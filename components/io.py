"""Atomic file output and validated JSONL/JSON input.

Every output is written to a temporary file beside its target and renamed into
place (``os.replace`` is atomic on POSIX), so a killed process never leaves a
half-written file at an output path, and an existing output is untouched until
the new one is complete.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from components.errors import DataError
from components.faults import crash_point

TMP_PREFIX = ".tmp-"

# OSErrors that mean "this output cannot be written here" (full, read-only, over quota, too big,
# no permission): reported as a DataError naming the output instead of a traceback.
_WRITE_ERRNOS = {
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EROFS,
    errno.EFBIG,
    errno.EACCES,
    errno.EPERM,
    errno.EIO,
    errno.EISDIR,
    errno.ENOTDIR,
    errno.ENAMETOOLONG,
    errno.EXDEV,
}


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_output_path(target: str | os.PathLike, *, is_dir: bool = False) -> Path:
    """Fail with a :class:`DataError` naming ``target`` if it cannot be an output path (before any work).

    A file output must not be an existing directory (nor a directory output an existing
    file), and the nearest existing folder above it must be a folder.
    """
    target = Path(target)
    if not is_dir and target.is_dir():
        raise DataError(f"{target}: is a directory; give a file path for this output")
    if is_dir and target.exists() and not target.is_dir():
        raise DataError(f"{target}: is a file; give a folder path for this output")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise DataError(f"{target}: {parent} is not a folder")
            break
    return target


def _stage(target: Path, is_dir: bool) -> Path:
    """Create the temporary file (or folder) beside ``target`` that becomes it on commit."""
    check_output_path(target, is_dir=is_dir)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{target}: cannot create its folder {target.parent} ({_reason(exc)})") from None
    try:
        if is_dir:
            return Path(tempfile.mkdtemp(prefix=TMP_PREFIX + target.name + "-", dir=target.parent))
        fd, name = tempfile.mkstemp(prefix=TMP_PREFIX + target.name + "-", dir=target.parent)
        os.close(fd)
        return Path(name)
    except OSError as exc:
        raise DataError(f"{target}: cannot write in {target.parent} ({_reason(exc)})") from None


def _discard(tmp: Path, is_dir: bool) -> None:
    if is_dir:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _commit(tmp: Path, target: Path, is_dir: bool) -> None:
    if is_dir:
        if target.exists():
            # unique per writer: a fixed "-old" name could collide between two writers
            old = target.with_name(f"{TMP_PREFIX}{target.name}-old-{os.getpid()}-{secrets.token_hex(4)}")
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    else:
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)


def _as_data_error(exc: OSError, target: Path, staged: Iterable[Path]) -> DataError | None:
    """A DataError naming ``target`` for an OSError raised while writing or renaming its staging path, else None.

    An OSError about some other file (an input the body reads, say) is not converted.
    """
    names = {str(t) for t in staged}
    filename = None if exc.filename is None else str(exc.filename)
    ours = filename is None or filename in names or any(filename.startswith(n + os.sep) for n in names)
    if exc.errno in _WRITE_ERRNOS and ours:
        return DataError(f"{target}: cannot write ({_reason(exc)}); the previous file, if any, is unchanged")
    return None


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, *, is_dir: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` on success.

    On an exception the temporary file (or directory) is removed and ``target``
    keeps its previous content. An output that cannot be written (a directory in
    its place, a read-only or full file system) raises a :class:`DataError` naming it.
    """
    target = Path(target)
    tmp = _stage(target, is_dir)
    try:
        yield tmp
        crash_point(f"write:{target.name}")
        _commit(tmp, target, is_dir)
    except OSError as exc:
        _discard(tmp, is_dir)
        err = _as_data_error(exc, target, [tmp, target])
        if err is None:
            raise
        raise err from None
    except BaseException:
        _discard(tmp, is_dir)
        raise


@contextlib.contextmanager
def atomic_paths(*targets: str | os.PathLike | None) -> Iterator[list[Path | None]]:
    """Stage several output files together: yield one temporary path per target (None stays None).

    Nothing is renamed into place until the body has written every staging file;
    then each is renamed onto its target. If any write or rename fails, every
    target keeps its previous content (targets already replaced are restored from
    a hard-linked backup) and the staging files are removed. Targets must be distinct.
    """
    paths = [None if t is None else Path(t) for t in targets]
    real = [p for p in paths if p is not None]
    seen: dict[str, Path] = {}
    for p in real:
        key = os.path.realpath(p)
        if key in seen:
            raise DataError(f"{p}: given for two outputs; give each output its own path")
        seen[key] = p
    for p in real:
        check_output_path(p)
    tmps: dict[Path, Path] = {}
    try:
        for p in real:
            tmps[p] = _stage(p, False)
        yield [None if p is None else tmps[p] for p in paths]
        for p in real:
            crash_point(f"write:{p.name}")
        _commit_all(tmps)
    except OSError as exc:
        for tmp in tmps.values():
            _discard(tmp, False)
        names = {str(t): p for p, t in tmps.items()} | {str(p): p for p in tmps}
        named = names.get(None if exc.filename is None else str(exc.filename))
        label = named if named is not None else Path(", ".join(map(str, real))) if real else None
        err = None if label is None else _as_data_error(exc, label, [*tmps.values(), *tmps])
        if err is None:
            raise
        raise err from None
    except BaseException:
        for tmp in tmps.values():
            _discard(tmp, False)
        raise


def _commit_all(tmps: dict[Path, Path]) -> None:
    """Rename every staging file onto its target; on a failure put back the targets already replaced."""
    backups: dict[Path, Path | None] = {}
    try:
        for target, tmp in tmps.items():
            backup = None
            if target.exists():
                backup = target.with_name(f"{TMP_PREFIX}{target.name}-bak-{os.getpid()}-{secrets.token_hex(4)}")
                try:
                    os.link(target, backup)
                except OSError:
                    backup = None  # no hard links on this file system: this file cannot be rolled back
            backups[target] = backup
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
    except BaseException:
        for target, backup in backups.items():
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.replace(backup, target)
        raise
    finally:
        for backup in backups.values():
            if backup is not None:
                with contextlib.suppress(OSError):
                    backup.unlink()


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


def json_text(obj: Any) -> str:
    """``obj`` as indented, strict JSON text (non-finite numbers become null), newline-terminated."""
    return json.dumps(finite_json(obj), indent=2, sort_keys=False, default=_json_default, allow_nan=False) + "\n"


def write_json(target: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as indented, strict JSON atomically (non-finite numbers become null)."""
    return write_text(target, json_text(obj))


def dump_jsonl(path: str | os.PathLike, records: Iterable[dict]) -> int:
    """Write one JSON object per line to ``path`` directly (a staging path from :func:`atomic_paths`)."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, default=_json_default))
            fh.write("\n")
            n += 1
    return n


def write_jsonl(target: str | os.PathLike, records: Iterable[dict]) -> int:
    """Write one JSON object per line atomically; return the number of records."""
    with atomic_path(target) as tmp:
        return dump_jsonl(tmp, records)


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


# What a field's declared type accepts: ``int`` is not a bool; ``float`` is any finite real number (an int too);
# ``None`` in a tuple of types allows null.
Fields = Mapping[str, Any]


def _type_name(kind: Any) -> str:
    if isinstance(kind, tuple):
        return " or ".join(_type_name(k) for k in kind)
    return {None: "null", float: "a finite number", int: "an integer"}.get(kind, getattr(kind, "__name__", str(kind)))


def _is(value: Any, kind: Any) -> bool:
    if isinstance(kind, tuple):
        return any(_is(value, k) for k in kind)
    if kind is None:
        return value is None
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def check_fields(rec: Any, fields: Iterable[str] | Fields, where: str) -> dict:
    """``rec`` if it is an object with every field of ``fields`` (a mapping also gives each field's type);
    else a :class:`DataError` starting with ``where`` (the file, and line) naming the field."""
    if not isinstance(rec, dict):
        raise DataError(f"{where}: expected a JSON object, got {type(rec).__name__}")
    missing = [f for f in fields if f not in rec]
    if missing:
        raise DataError(f"{where}: missing field(s) {', '.join(map(repr, missing))}")
    if isinstance(fields, Mapping):
        for name, kind in fields.items():
            if kind is not Any and not _is(rec[name], kind):
                shown = repr(rec[name])
                shown = shown if len(shown) <= 40 else shown[:37] + "..."
                raise DataError(f"{where}: field {name!r} is {shown}, expected {_type_name(kind)}")
    return rec


def check_unique(rows: Iterable[dict], key: str, path: str | os.PathLike) -> None:
    """A :class:`DataError` naming ``path`` and the value when two records share the same ``key``."""
    seen: set = set()
    for i, row in enumerate(rows, 1):
        value = row.get(key)
        marker = json.dumps(value, sort_keys=True, default=str)
        if marker in seen:
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            raise DataError(f"{path}: duplicate {key} {shown} (record {i})")
        seen.add(marker)


def iter_jsonl(path: str | os.PathLike, required: Iterable[str] | Fields = ()) -> Iterator[dict]:
    """Yield the objects of a JSONL file, failing clearly on a corrupt line.

    Raises :class:`DataError` naming the file and line when a line is not JSON,
    not an object, or lacks a ``required`` field (or, when ``required`` maps
    fields to types, holds a value of another type). A file that ends without a
    newline after a truncated object is reported the same way.
    """
    path = Path(path)
    required = required if isinstance(required, Mapping) else tuple(required)
    check_input_file(path)
    try:
        fh = open(path, "rb")  # noqa: SIM115  (opened apart from the `with` so only open()'s OSError is caught here)
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({_reason(exc)})") from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            line = _decode_line(path, lineno, raw)
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg}); the file may be truncated") from None
            except RecursionError:
                raise DataError(f"{path}:{lineno}: JSON nested too deeply") from None
            yield check_fields(rec, required, f"{path}:{lineno}")


def read_jsonl(
    path: str | os.PathLike,
    required: Iterable[str] | Fields = (),
    *,
    allow_empty: bool = False,
    unique: str | None = None,
) -> list[dict]:
    """Read a whole JSONL file (see :func:`iter_jsonl`); an empty file is an error unless allowed, and so are two
    records with the same ``unique`` field."""
    rows = list(iter_jsonl(path, required))
    if not rows and not allow_empty:
        raise DataError(f"{path}: no records (empty JSONL)")
    if unique is not None:
        check_unique(rows, unique, path)
    return rows


def check_input_file(path: str | os.PathLike) -> Path:
    """``path`` if it is a file, else a :class:`DataError` saying what it is instead."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path}: is a directory, expected a file")
    if not path.is_file():
        raise DataError(f"{path}: file not found" if not path.exists() else f"{path}: not a regular file")
    return path


_BOMS = {b"\xff\xfe": "UTF-16 (little-endian byte-order mark)", b"\xfe\xff": "UTF-16 (big-endian byte-order mark)"}


def _decode_line(path: Path, lineno: int, raw: bytes) -> str:
    """One line of a text file as str; a DataError naming the file and line if it is not UTF-8 text."""
    if lineno == 1:
        for bom, what in _BOMS.items():
            if raw.startswith(bom):
                raise DataError(f"{path}: the file is {what}; convert it to UTF-8")
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
    if b"\x00" in raw:
        raise DataError(f"{path}:{lineno}: contains NUL bytes (a binary or UTF-16 file); expected UTF-8 text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}:{lineno}: not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1}; "
            "a binary file or another encoding)"
        ) from None


def read_text_file(path: str | os.PathLike) -> str:
    """A whole UTF-8 text file; a DataError naming it when missing, a directory, unreadable or not UTF-8."""
    path = check_input_file(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({_reason(exc)})") from None
    return "".join(_decode_line(path, i, raw) for i, raw in enumerate(data.splitlines(keepends=True), 1))


def read_json(
    path: str | os.PathLike, fields: Iterable[str] | Fields | None = None, *, kind: type | None = None
) -> Any:
    """Read a JSON file, failing with the file name on a missing, unreadable or corrupt file.

    ``kind`` (``dict`` or ``list``) is the type the document must have; ``fields`` makes it an object with those
    fields (a mapping also gives their types, as in :func:`check_fields`)."""
    path = Path(path)
    text = read_text_file(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise DataError(f"{path}: JSON nested too deeply") from None
    if kind is not None and not isinstance(doc, kind):
        raise DataError(f"{path}: a JSON {type(doc).__name__}, expected a JSON {_type_name(kind)}")
    if fields is not None:
        check_fields(doc, fields, str(path))
    return doc


def read_json_records(
    path: str | os.PathLike, fields: Iterable[str] | Fields = (), *, unique: str | None = None
) -> list[dict]:
    """A JSON file holding a list of objects, each with ``fields`` (typed when a mapping); ``unique``: no two
    records share that field's value."""
    path = Path(path)
    rows = read_json(path, kind=list)
    for i, rec in enumerate(rows, 1):
        check_fields(rec, fields, f"{path}: record {i}")
    if unique is not None:
        check_unique(rows, unique, path)
    return rows


def model_files(folder: str | os.PathLike, weights: str, written_by: str) -> tuple[Path, Path]:
    """``folder/config.json`` and ``folder/<weights>`` of a saved model folder; a missing one is a DataError naming
    it and the function that writes such folders (``written_by``)."""
    folder = Path(folder)
    paths = (folder / "config.json", folder / weights)
    for path in paths:
        if not path.is_file():
            raise DataError(f"{path}: missing (expected a folder written by {written_by})")
    return paths


def read_model_config(path: str | os.PathLike, model_type: str, config_cls: type) -> Any:
    """The dataclass ``config_cls`` from a model folder's ``config.json`` written as ``{"model_type": ..., **fields}``;
    a file of another model type or with unknown fields is a DataError naming it."""
    import dataclasses

    path = Path(path)
    raw = read_json(path)
    if not isinstance(raw, dict) or raw.pop("model_type", None) != model_type:
        raise DataError(f"{path}: not a {model_type} config")
    unknown = sorted(set(raw) - {f.name for f in dataclasses.fields(config_cls)})
    if unknown:
        raise DataError(f"{path}: unknown field(s) {', '.join(unknown)}")
    return config_cls(**raw)


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
