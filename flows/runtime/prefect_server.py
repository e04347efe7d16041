"""One local Prefect server shared by every stage process of a reproduction.

Without ``PREFECT_API_URL`` every process that runs a flow needs a temporary
server (5 s here on a migrated database, 15 s on a new one; ``db_templates``).
``paperline repro`` (and ``paperline server start``) starts
one server on 127.0.0.1 instead and records it in ``.paperline/prefect-server.json``;
stage processes find it there, which brings a stage's orchestration overhead to a
few seconds (see ``benchmarks/orchestration.py``).

Which server a command talks to (``run``, ``stage``, ``report``, ``repro``, ``schedule``,
``deployments``): the user's ``PREFECT_API_URL`` when set (it must answer), else the recorded
local server when it answers, else a temporary one of ours for that command (``connected``).

No server outlives a killed parent that owns it: a server started ``owned`` runs
under ``orphan_guard.py run`` and ends when that process dies, and a Python caller left to
Prefect's own temporary server gets an ``orphan_guard.py watch`` that ends it if the process is
killed (``prepare_temporary``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from components.errors import PaperlineError
from components.io import write_json
from flows.runtime import db_templates
from flows.runtime.settings import Paths

GUARD = Path(__file__).with_name("orphan_guard.py")
EPHEMERAL_APP = "prefect.server.api.server:create_app"
_WATCHDOGS: list[subprocess.Popen] = []  # what Prefect's temporary server runs (uvicorn --factory)


def _record(paths: Paths) -> Path:
    return paths.state / "prefect-server.json"


def record(paths: Paths, url: str, *, pid: int | None = None, owner_pid: int | None = None) -> Path:
    """Record ``url`` as this checkout's local server (what ``start`` writes; ``stop`` ends ``pid``'s group)."""
    return write_json(_record(paths), {"url": url, "pid": pid, "owner_pid": owner_pid})


def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as resp:
            return resp.status == 200
    except OSError:
        return False


def running(paths: Paths) -> str | None:
    """The API URL of the recorded local server if it answers, else None."""
    rec = _record(paths)
    if not rec.is_file():
        return None
    try:
        url = json.loads(rec.read_text())["url"]
    except (ValueError, KeyError):
        return None
    return url if healthy(url) else None


def choose(paths: Paths) -> str | None:
    """The server a command talks to: PREFECT_API_URL when set (it must answer), else the recorded
    local server when it answers, else None (the command needs a temporary one)."""
    url = os.environ.get("PREFECT_API_URL")
    if url:
        if not healthy(url, timeout=5.0):
            raise PaperlineError(
                f"PREFECT_API_URL={url}: no Prefect server answers at {url}/health (it is down, or its port is "
                "taken by another program); start one with `paperline server start` or unset PREFECT_API_URL"
            )
        return url
    return running(paths)


def prepare_temporary() -> None:
    """For a Python caller that runs a flow with no server (``PREFECT_API_URL`` unset), so Prefect starts its own
    temporary server inside the flow call: give that server the migrated database template (10 s less) and a
    watchdog that ends it if this process is killed (see ``watch_temporary``). The CLI never gets here: its
    commands start their temporary server themselves (``connected``)."""
    db_templates.seed_prefect()
    watch_temporary()


@dataclass
class Server:
    url: str
    temporary: bool  # started for this command only, stopped when it ends
    proc: subprocess.Popen | None = None  # the temporary server's process (None: someone else's server)
    log_path: Path | None = None

    def ready(self, timeout: float = 120.0) -> str:
        """Wait until the server answers (at once for a running one); its URL."""
        if self.proc is not None:
            _wait_healthy(self.url, self.proc, self.log_path, timeout)
        return self.url


@contextmanager
def connected(paths: Paths, *, wait: bool = True) -> Iterator[Server]:
    """The server a command talks to, as ``choose`` picks it; with none, a temporary server on this checkout's
    Prefect database for the command's duration (``run``, ``stage``, ``report``, ``schedule``, ``deployments``).

    The temporary server is one of ours (``prefect server start`` under the orphan guard, its output in
    ``.paperline/prefect-temporary-server.log``, not recorded), stopped when the command ends, killed or not,
    rather than Prefect's own temporary server, which writes its shutdown errors to this process's stderr and
    makes this process import Prefect's server code (5 s). It serves the API only (no UI, no services such as the
    scheduler): the next full server schedules runs. ``PREFECT_API_URL`` is set at once (the port is chosen
    before the server starts), so Prefect, imported later, reads it. With ``wait=False`` the server starts in
    the background while the command does its own work (validating params, imports): call ``ready()`` before
    the first Prefect call.
    """
    url = choose(paths)
    if url:
        os.environ["PREFECT_API_URL"] = url
        yield Server(url, temporary=False)
        return
    server = _spawn(paths, port=None, owned=True, recorded=False)
    os.environ["PREFECT_API_URL"] = server.url
    try:
        if wait:
            server.ready()
        yield server
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        _terminate(server.proc.pid)


def watch_temporary(parent: int | None = None) -> subprocess.Popen | None:
    """Start the watchdog that ends ``parent``'s (default: this process's) temporary Prefect server
    when ``parent`` dies; it exits with ``parent``. Linux only (it reads /proc): elsewhere None."""
    if not Path("/proc/self/stat").exists():
        return None
    cmd = [sys.executable, str(GUARD), "watch", "--parent", str(parent or os.getpid()), "--match", EPHEMERAL_APP]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    _WATCHDOGS.append(proc)  # held, so it is not collected (and warned about) while it runs
    return proc


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def start(paths: Paths, *, port: int | None = None, timeout: float = 120.0, owned: bool = False) -> str:
    """Start a server on 127.0.0.1 (if none runs) and wait until it is healthy; returns its API URL.

    An ``owned`` server belongs to this process (what ``paperline repro`` wants): it runs under
    the orphan guard and ends when this process dies, killed or not. Otherwise it stays up
    until ``stop`` (``paperline server start``).
    """
    url = running(paths)
    if url:
        return url
    return _start(paths, port=port, timeout=timeout, owned=owned, recorded=True)[0]


def _start(
    paths: Paths, *, port: int | None, timeout: float, owned: bool, recorded: bool
) -> tuple[str, subprocess.Popen]:
    server = _spawn(paths, port=port, owned=owned, recorded=recorded)
    server.ready(timeout)
    if recorded:
        record(paths, server.url, pid=server.proc.pid, owner_pid=os.getpid() if owned else None)
    return server.url, server.proc


def _spawn(paths: Paths, *, port: int | None, owned: bool, recorded: bool) -> Server:
    """Start ``prefect server start`` on 127.0.0.1 without waiting for it (``Server.ready`` waits)."""
    if port is not None and not _port_free(port):
        raise PaperlineError(f"port {port} on 127.0.0.1 is already taken; choose another or stop what uses it")
    port = port or _free_port()
    db_templates.seed_prefect()
    url = f"http://127.0.0.1:{port}/api"
    log_path = paths.state / ("prefect-server.log" if recorded else "prefect-temporary-server.log")
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    if not recorded:  # a command's temporary server: the API only (no UI, no scheduler or other services)
        cmd += ["--no-services", "--no-ui"]
    if owned:
        cmd = [sys.executable, str(GUARD), "run", "--parent", str(os.getpid()), "--", *cmd]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    return Server(url, temporary=not recorded, proc=proc, log_path=log_path)


def _wait_healthy(url: str, proc: subprocess.Popen, log_path: Path | None, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if healthy(url):
            return
        if proc.poll() is not None:
            raise PaperlineError(f"prefect server exited with code {proc.returncode}; see {log_path}")
        time.sleep(0.25)
    _terminate(proc.pid)
    raise PaperlineError(f"prefect server did not answer within {timeout:.0f} s; see {log_path}")


def _terminate(pid: int) -> None:
    """SIGTERM the server's process group and wait (up to 10 s) until its leader is gone."""
    try:
        os.killpg(pid, signal.SIGTERM)
        for _ in range(40):
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
            except ChildProcessError:
                os.kill(pid, 0)  # not our child: raises once it is gone
            time.sleep(0.25)
    except (ProcessLookupError, PermissionError):
        pass


def stop(paths: Paths) -> bool:
    """Stop the recorded server; True if one was stopped."""
    rec = _record(paths)
    if not rec.is_file():
        return False
    try:
        pid = int(json.loads(rec.read_text())["pid"])
    except (ValueError, KeyError, TypeError):
        pid = None
    if pid is not None:
        _terminate(pid)
    rec.unlink(missing_ok=True)
    return True
