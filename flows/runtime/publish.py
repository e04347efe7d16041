"""Publishing a stage's outputs as one set, and what readers check before trusting them.

The marker ``.paperline/stages/<owner>/<stage>.json`` moves through two states:

1. ``publishing``: written (fsynced) before the first rename; every staged file
   and folder is fsynced first, so the renames only move complete data;
2. ``complete``: written after the last rename and the fsync of the target
   folders, with the md5 of every output.

A process killed anywhere in between leaves the ``publishing`` marker, and
readers (``paperline show``, ``paperline report``, the next stage) refuse the
outputs of that stage with one line naming it, until a rerun publishes a whole
set. Outputs with no marker at all came from elsewhere (``dvc pull``,
``dvc checkout``) and are read as they are: DVC restores whole sets.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from components.errors import DataError
from components.faults import crash_point
from components.io import TMP_PREFIX, finite_json, path_md5
from flows.runtime.settings import Paths

PUBLISHING, COMPLETE = "publishing", "complete"


class IncompleteOutputs(DataError):
    """A stage's outputs are a mix of two runs (its publish was interrupted)."""


def marker_path(paths: Paths, owner: str, stage: str) -> Path:
    return paths.markers / owner / f"{stage}.json"


def read_marker(paths: Paths, owner: str, stage: str) -> dict[str, Any] | None:
    """The marker record, None when there is none; an unreadable one reads as ``publishing``."""
    path = marker_path(paths, owner, stage)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {"state": PUBLISHING}
    return record if isinstance(record, dict) else {"state": PUBLISHING}


def is_complete(record: Mapping[str, Any] | None) -> bool:
    """True for a marker written after a whole publish (markers of older versions have no state)."""
    return record is not None and record.get("state", COMPLETE) == COMPLETE


def unique_name(target: Path, tag: str = "") -> Path:
    """A sibling name no other writer can pick: ``.tmp-<name>-[<tag>-]<pid>-<random>``."""
    middle = f"{tag}-" if tag else ""
    return target.with_name(f"{TMP_PREFIX}{target.name}-{middle}{os.getpid()}-{secrets.token_hex(4)}")


_OWNER = re.compile(r"-(?:old-)?(\d+)(?:-[0-9a-f]+)?$")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale_staging(paths: Paths, rels: Iterable[str]) -> list[Path]:
    """Remove staging leftovers beside these outputs whose owning process is gone; returns what it removed.

    A name with no PID in it (an older version's) has no live owner: the paper lock is held.
    """
    removed = []
    for rel in rels:
        target = paths.root / rel
        if not target.parent.is_dir():
            continue
        prefix = f"{TMP_PREFIX}{target.name}-"
        for leftover in target.parent.glob(f"{glob_escape(prefix)}*"):
            m = _OWNER.search(leftover.name[len(prefix) - 1 :])
            if m and (int(m.group(1)) == os.getpid() or _pid_alive(int(m.group(1)))):
                continue
            remove(leftover)
            removed.append(leftover)
    return removed


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def fsync_path(path: Path) -> None:
    """fsync a file, or every file and folder of a tree (folders after their contents)."""
    if path.is_dir() and not path.is_symlink():
        for sub in sorted(path.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            if not sub.is_symlink():
                _fsync(sub, directory=sub.is_dir())
        _fsync(path, directory=True)
    elif path.is_file():
        _fsync(path, directory=False)


def _fsync(path: Path, *, directory: bool) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_marker_durably(path: Path, record: Mapping[str, Any]) -> None:
    """Write the marker to a temporary file, fsync it, rename it into place, fsync the folder."""
    if path.parent.is_symlink() or path.is_symlink():
        from components.errors import PaperlineError

        link = path.parent if path.parent.is_symlink() else path
        raise PaperlineError(f"{link}: a planted symlink where a stage marker goes; refused (remove it)")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = unique_name(path)
    try:
        # O_EXCL | O_NOFOLLOW: never write through a symlink planted under the temporary name
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(finite_json(dict(record)), indent=2, allow_nan=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _fsync(path.parent, directory=True)


def _replace(staging: Path, target: Path) -> None:
    """Move one staged output onto its target (a folder: the old one moves aside under a unique name first)."""
    if staging.is_dir() and target.exists():
        old = unique_name(target, "old")
        os.replace(target, old)
        os.replace(staging, target)
        remove(old)
    else:
        if target.is_dir() and not target.is_symlink():
            remove(target)
        os.replace(staging, target)


def publish_set(
    paths: Paths, owner: str, stage: str, staged: Mapping[str, Path], record: Mapping[str, Any], outs: Iterable[str]
) -> None:
    """Publish ``staged`` (rel -> staging path) as one set; the marker gets ``record`` plus the outputs' md5."""
    point = f"{owner}:{stage}"
    for rel, staging in staged.items():
        if not staging.exists():
            raise DataError(f"{point} declared {rel} but did not write it")
        fsync_path(staging)
    marker = marker_path(paths, owner, stage)
    write_marker_durably(marker, {"state": PUBLISHING, "pid": os.getpid(), "fingerprint": record.get("fingerprint")})
    crash_point(f"publish:{point}:0")
    for i, (rel, staging) in enumerate(staged.items(), 1):
        _replace(staging, paths.root / rel)
        crash_point(f"publish:{point}:{i}")
    for folder in sorted({(paths.root / rel).parent for rel in staged}):
        _fsync(folder, directory=True)
    hashes = {rel: path_md5(paths.root / rel) for rel in outs}
    write_marker_durably(marker, {"state": COMPLETE, **record, "outs": hashes})


def producers(rel: str) -> list[tuple[str, str]]:
    """The (owner, stage) pairs whose declared outputs are ``rel``, contain it or lie under it."""
    from flows.registry import papers

    rel = rel.strip("/")
    found = []
    for spec in papers().values():
        for st in spec.stages:
            for out in (*st.outs, *st.metrics, *st.plots):
                if out == rel or rel.startswith(out + "/") or out.startswith(rel + "/"):
                    found.append((spec.slug, st.name))
                    break
    return found


def check_published(paths: Paths, rel: str, exclude: tuple[str, str] | None = None) -> None:
    """Raise :class:`IncompleteOutputs` when a stage producing ``rel`` (other than ``exclude``) was interrupted."""
    for owner, stage in producers(rel):
        if (owner, stage) == exclude:
            continue
        record = read_marker(paths, owner, stage)
        if record is not None and not is_complete(record):
            again = f"paperline stage {owner} {stage}" if owner == "shared" else f"paperline run {owner}"
            raise IncompleteOutputs(
                f"{rel}: the outputs of {owner}:{stage} are incomplete (a run was interrupted while publishing them); "
                f"rerun it: {again}"
            )
