"""Process helpers of the native stack: free ports, PostgreSQL binaries, health waits, ending process groups."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

BIN = Path(sys.executable).parent
PG_BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_binary(name: str) -> str | None:
    """A PostgreSQL server binary (initdb, pg_ctl): on PATH or in Debian's versioned folder."""
    found = shutil.which(name)
    if found:
        return found
    for folder in PG_BIN_DIRS:
        if (folder / name).is_file():
            return str(folder / name)
    return None


def missing_binaries() -> list[str]:
    """What the stack needs and this machine lacks (the tests skip naming these)."""
    missing = [n for n in ("initdb", "pg_ctl") if pg_binary(n) is None]
    missing += [n for n in ("prefect", "mlflow", "dask", "moto_server") if not (BIN / n).exists()]
    return missing


def why_not_startable() -> str | None:
    """Why the native stack cannot start on this machine (the stack tests skip with it), or None."""
    import os
    import shutil

    missing = missing_binaries()
    if missing:
        return f"native stack needs {', '.join(missing)} (apt-get install postgresql; pip install the stack extras)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root needs `runuser` to start PostgreSQL as the postgres user"
    return None


def _wait(check, what: str, timeout: float, proc: subprocess.Popen | None = None, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        if proc is not None and proc.poll() is not None:
            tail = log.read_text()[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"{what} exited with code {proc.returncode}:\n{tail}")
        time.sleep(0.5)
    raise RuntimeError(f"{what} did not become healthy within {timeout:.0f} s; see {log}")


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status < 500
    except OSError:
        return False


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _world_traversable_tmp(prefix: str) -> Path:
    """A fresh folder under /tmp that the ``postgres`` user may enter (pytest's tmp folders are 0700)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    return folder


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    for _ in range(40):
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.25)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
