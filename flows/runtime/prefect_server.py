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

A command that needs a server and finds none (``connected``) starts the **shared server**: an API-only
``prefect server start`` in the background, recorded like the one ``paperline server start`` starts, that later
commands reuse (a run's first stage starts about 5 s sooner) and that stops itself once no command has used it
for ``PAPERLINE_SERVER_IDLE`` seconds (default 900; ``0`` gives each command a temporary server of its own
instead, as before). Every command holds a lease on the server while it uses it (``lease``), and the server runs
under ``orphan_guard.py idle``, which counts the leases of live processes: a command killed halfway releases its
lease by dying. A record that names a dead process, or a process of an earlier boot, is stale and is removed on
sight, so it never blocks; ``paperline server stop`` ends the server, ``paperline doctor`` reports it.

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


IDLE_ENV = "PAPERLINE_SERVER_IDLE"
DEFAULT_IDLE = 900.0  # seconds a shared server waits for the next command before it stops itself


def _record(paths: Paths) -> Path:
    return paths.state / "prefect-server.json"


def _leases(paths: Paths) -> Path:
    return paths.state / "prefect-server.leases"


def idle_seconds() -> float:
    """``PAPERLINE_SERVER_IDLE``: how long a shared server outlives its last command (0: no shared server)."""
    raw = os.environ.get(IDLE_ENV, "").strip()
    if not raw:
        return DEFAULT_IDLE
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (value >= 0 and value < float("inf")):
        raise PaperlineError(f"{IDLE_ENV}={raw!r}: expected a number of seconds >= 0 (0: no shared server)")
    return value


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """The start time of ``pid`` (clock ticks since boot, from /proc), or None where there is no /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[19]


def _pid_alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return start is None or _start_time(pid) in (start, None)


def record(
    paths: Paths, url: str, *, pid: int | None = None, owner_pid: int | None = None, idle: float | None = None
) -> Path:
    """Record ``url`` as this checkout's local server (what ``start`` writes; ``stop`` ends ``pid``'s group),
    with what tells a stale record (``pid``'s start time and the boot) and, for a shared server, its idle limit."""
    return write_json(
        _record(paths),
        {
            "url": url,
            "pid": pid,
            "owner_pid": owner_pid,
            "start": _start_time(pid) if pid else None,
            "boot": _boot_id(),
            "idle_seconds": idle,
        },
    )


def recorded(paths: Paths) -> dict | None:
    """The record of this checkout's server, or None; a stale one (its process gone, or of an earlier boot) is
    removed."""
    rec = _record(paths)
    try:
        data = json.loads(rec.read_text())
        url = data["url"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    pid = data.get("pid")
    stale = data.get("boot") not in (None, _boot_id()) or (
        isinstance(pid, int) and not _pid_alive(pid, data.get("start"))
    )
    if stale or not isinstance(url, str):
        rec.unlink(missing_ok=True)
        return None
    return data


@contextmanager
def lease(paths: Paths) -> Iterator[None]:
    """Hold a lease on this checkout's shared server for the block (its idle clock waits while one is held).
    The lease names this process and its start time, so a killed command's lease is seen as released."""
    folder = _leases(paths)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{os.getpid()}-{_start_time(os.getpid()) or 0}"
    path.touch()
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as resp:
            return resp.status == 200
    except OSError:
        return False


def running(paths: Paths, *, starting_timeout: float = 60.0) -> str | None:
    """The API URL of the recorded local server if it answers, else None. A live recorded server that does not
    answer yet (another command has just started it) is waited for, up to ``starting_timeout`` seconds."""
    data = recorded(paths)
    if data is None:
        return None
    url, pid = data["url"], data.get("pid")
    deadline = time.monotonic() + starting_timeout
    while True:
        if healthy(url):
            return url
        if not isinstance(pid, int) or not _pid_alive(pid, data.get("start")) or time.monotonic() > deadline:
            return None
        time.sleep(0.25)


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
    proc: subprocess.Popen | None = None  # the process this command started (None: a server that was running)
    log_path: Path | None = None
    idle: float | None = None  # a shared server (API only): seconds it outlives its last command

    def ready(self, timeout: float = 120.0) -> str:
        """Wait until the server answers (at once for a running one); its URL."""
        if self.proc is not None:
            _wait_healthy(self.url, self.proc, self.log_path, timeout)
        return self.url


@contextmanager
def connected(paths: Paths, *, wait: bool = True) -> Iterator[Server]:
    """The server a command talks to, as ``choose`` picks it; with none, the shared server (started here in the
    background and reused by later commands), or with ``PAPERLINE_SERVER_IDLE=0`` a temporary server on this
    checkout's Prefect database for the command's duration (``run``, ``stage``, ``report``, ``schedule``,
    ``deployments``). The command holds a lease on the server throughout (``lease``).

    Both kinds are ours (``prefect server start``, API only: no UI, no services such as the scheduler; the full
    server of ``paperline server start`` schedules runs), rather than Prefect's own temporary server, which writes
    its shutdown errors to this process's stderr and makes this process import Prefect's server code (5 s). The
    temporary one runs under the orphan guard, its output in ``.paperline/prefect-temporary-server.log``, and is
    stopped when the command ends, killed or not; the shared one under the guard's ``idle`` mode, its output in
    ``.paperline/prefect-server.log``. ``PREFECT_API_URL`` is set at once (the port is chosen before the server
    starts), so Prefect, imported later, reads it. With ``wait=False`` a server started here comes up in the
    background while the command does its own work (validating params, imports): call ``ready()`` before the
    first Prefect call.
    """
    with lease(paths):  # before looking: a shared server found idle cannot stop between the look and the use
        url = choose(paths)
        if url:
            os.environ["PREFECT_API_URL"] = url
            rec = recorded(paths) or {}
            yield Server(url, temporary=False, idle=rec.get("idle_seconds") if rec.get("url") == url else None)
            return
        idle = idle_seconds()
        server = _shared(paths, idle) if idle > 0 else _spawn(paths, port=None, owned=True, recorded=False)
        os.environ["PREFECT_API_URL"] = server.url
        try:
            if wait:
                server.ready()
            yield server
        finally:
            os.environ.pop("PREFECT_API_URL", None)
            if server.temporary:
                _terminate(server.proc.pid)


def _shared(paths: Paths, idle: float) -> Server:
    """This checkout's shared server: the one another command has just started (waited for), else a new one,
    recorded at once (one start at a time, under a file lock)."""
    import fcntl

    paths.state.mkdir(parents=True, exist_ok=True)
    with open(paths.state / "prefect-server.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file closes
        url = running(paths)
        if url:
            return Server(url, temporary=False, idle=(recorded(paths) or {}).get("idle_seconds"))
        server = _spawn(paths, port=None, owned=False, recorded=True, idle=idle)
        record(paths, server.url, pid=server.proc.pid, idle=idle)
        return server


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


def _spawn(paths: Paths, *, port: int | None, owned: bool, recorded: bool, idle: float | None = None) -> Server:
    """Start ``prefect server start`` on 127.0.0.1 without waiting for it (``Server.ready`` waits); ``idle``: the
    shared server (API only, under the guard's idle mode)."""
    if port is not None and not _port_free(port):
        raise PaperlineError(f"port {port} on 127.0.0.1 is already taken; choose another or stop what uses it")
    port = port or _free_port()
    db_templates.seed_prefect()
    url = f"http://127.0.0.1:{port}/api"
    log_path = paths.state / ("prefect-server.log" if recorded else "prefect-temporary-server.log")
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    if not recorded or idle:  # a command's temporary or shared server: the API only (no UI, scheduler, services)
        cmd += ["--no-services", "--no-ui"]
    if owned:
        cmd = [sys.executable, str(GUARD), "run", "--parent", str(os.getpid()), "--", *cmd]
    elif idle:
        guard = [sys.executable, str(GUARD), "idle", "--leases", str(_leases(paths)), "--timeout", str(idle)]
        cmd = [*guard, "--record", str(_record(paths)), "--", *cmd]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    return Server(url, temporary=not recorded, proc=proc, log_path=log_path, idle=idle)


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
    """Stop the recorded server; True if one was stopped. A stale record is removed without signalling anything
    (its PID may belong to another process by now)."""
    rec = _record(paths)
    if not rec.is_file():
        return False
    data = recorded(paths)
    pid = data.get("pid") if data else None
    if isinstance(pid, int) and pid != os.getpid():
        _terminate(pid)
    rec.unlink(missing_ok=True)
    return True
