"""One writer per paper per checkout: an OS file lock (``fcntl.flock``) on ``.paperline/locks/<owner>.lock``.

``paperline run``, ``stage``, ``report`` and ``repro`` (and a deployment's run) hold the
lock of every owner whose stages they may write, taken in sorted order so two
writers never deadlock. A second writer fails at once with "paper X is being
written by PID N", or waits for it (``--wait``). The kernel drops the lock when
its holder dies, so a killed run never leaves a stale lock.

``paperline repro`` holds the locks while ``dvc repro`` runs its ``paperline stage``
children; it names them in ``PAPERLINE_LOCKS_HELD`` (``<pid>:<owner>,...``) and a
child whose ancestor is that pid, and whose lock file records it, does not lock again.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from components.errors import PaperlineError
from flows.runtime.paths import check_name
from flows.runtime.settings import Paths

log = logging.getLogger("paperline")

ENV = "PAPERLINE_LOCKS_HELD"
_HELD: dict[tuple[str, int], int] = {}  # (lock file, thread) -> depth: re-entrant within one thread


class PaperLocked(PaperlineError):
    """Another process is writing this paper's outputs."""


def lock_path(paths: Paths, owner: str) -> Path:
    return paths.state / "locks" / f"{check_name(owner, 'paper')}.lock"


def holder(paths: Paths, owner: str) -> int | None:
    """The PID holding the owner's lock now (from /proc/locks), else the one recorded in its lock file."""
    path = lock_path(paths, owner)
    live = _live_holder(path)
    if live:
        return live
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            return int(os.read(fd, 64).decode().strip() or 0) or None
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return None


def _live_holder(path: Path) -> int | None:
    """The PID of the process holding a FLOCK on ``path`` per /proc/locks (None where unknown)."""
    try:
        st = os.lstat(path)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and "->" not in line and fields[5] == want:
            return int(fields[4]) if fields[4].isdigit() else None
    return None


def _open_lock(path: Path) -> int:
    """Open (create) a lock file without following a planted symlink; a folder or link there is an error."""
    if path.parent.is_symlink() or (path.parent.exists() and not path.parent.is_dir()):
        raise PaperlineError(f"{path.parent}: expected a folder of lock files, found a file or link; move it away")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if path.is_symlink():
            raise PaperlineError(f"{path}: the lock file is a symlink; refused (remove it)") from None
        if path.is_dir():
            raise PaperlineError(f"{path}: the lock file is a folder; refused (remove it)") from None
        raise PaperlineError(f"{path}: cannot open the lock file ({exc.strerror})") from None


def _ancestors() -> set[int]:
    """This process's PID and its ancestors' (from /proc; only the parent where /proc is absent)."""
    pids, pid = {os.getpid(), os.getppid()}, os.getppid()
    while pid > 1:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            break
        pid = int(fields[1])
        pids.add(pid)
    return pids


def _inherited(paths: Paths, owner: str) -> bool:
    """True when an ancestor process holds ``owner``'s lock for us (``paperline repro`` around ``dvc repro``)."""
    raw = os.environ.get(ENV, "")
    pid, _, owners = raw.partition(":")
    if not pid.isdigit() or owner not in owners.split(","):
        return False
    return int(pid) in _ancestors() and holder(paths, owner) == int(pid)


def _acquire(paths: Paths, owner: str, *, wait: bool) -> int:
    path = lock_path(paths, owner)
    fd = _open_lock(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = holder(paths, owner)
            if not wait:
                raise PaperLocked(
                    f"paper {owner} is being written by PID {who or '?'} (lock {path}); wait for it or pass --wait"
                ) from None
            log.info("paper %s is being written by PID %s; waiting for it", owner, who or "?")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd
    except BaseException:
        os.close(fd)
        raise


@contextlib.contextmanager
def hold(paths: Paths, owners: Iterable[str], *, wait: bool = False, export: bool = False) -> Iterator[list[str]]:
    """Hold the lock of every owner (sorted order) for the block; yields the owners locked here.

    ``export`` names the held locks in ``PAPERLINE_LOCKS_HELD`` for child processes (``paperline repro``).
    """
    fds: list[int] = []
    mine: list[str] = []
    old_env = os.environ.get(ENV)
    try:
        for owner in sorted(set(owners)):
            key = (str(lock_path(paths, owner)), threading.get_ident())
            if key in _HELD or _inherited(paths, owner):
                continue
            fds.append(_acquire(paths, owner, wait=wait))
            _HELD[key] = fds[-1]
            mine.append(owner)
        if export and mine:
            os.environ[ENV] = f"{os.getpid()}:{','.join(mine)}"
        yield mine
    finally:
        if export:
            if old_env is None:
                os.environ.pop(ENV, None)
            else:
                os.environ[ENV] = old_env
        for owner, fd in zip(reversed(mine), reversed(fds)):
            _HELD.pop((str(lock_path(paths, owner)), threading.get_ident()), None)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
