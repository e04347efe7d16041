"""A watchdog that ends a Prefect server when the process it serves dies (even by SIGKILL).

Run as a file (standard library only, nothing of paperline is imported, so it starts in a few
milliseconds)::

    python orphan_guard.py run   --parent PID -- CMD ...   # run CMD; end it (its process group) when PID dies
    python orphan_guard.py watch --parent PID --match TEXT  # end PID's children whose command line holds TEXT
                                                            # once PID has died
    python orphan_guard.py idle --leases DIR --timeout S --record FILE -- CMD ...
                                    # run CMD; end it once no live process has held a lease in DIR for S seconds

``idle`` runs the shared server that commands start in the background and reuse
(``prefect_server.connected``): each command holds a lease, a file ``<pid>-<start time>`` in DIR, while it uses
the server; a lease whose process is gone (killed) counts as released. The guard removes FILE (the server's
record) when it ends the server, if the record still names the guard.

``run`` wraps a server paperline starts for one process (``prefect_server.start(owner_pid=...)``).
``watch`` covers the temporary server Prefect itself starts for a process without a server
(a child ``uvicorn ... prefect.server.api.server:create_app``), which would otherwise outlive a
killed parent. The parent is polled (``os.getppid()`` changes when it dies; for ``watch`` its PID
and start time are checked), which works from any thread of the parent, unlike
``PR_SET_PDEATHSIG`` (it fires when the spawning *thread* exits).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

POLL = 0.5  # how often ``run`` checks its parent
SCAN = 1.0  # how often ``watch`` checks its parent and, until it has found the server, scans /proc (~6 ms)
GRACE = 5.0
IDLE_FLAGS = ("--leases", "--timeout", "--record", "--")


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent PID, start time) of ``pid`` from /proc, or None if it is gone (a zombie has exited: it only
    waits to be reaped, so counting it alive made every stop wait out both grace periods, 10 s)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return None
    return int(fields[1]), fields[19]


def _alive(pid: int, start: str | None) -> bool:
    st = _stat(pid)
    return st is not None and (start is None or st[1] == start)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _children(parent: int, match: str) -> dict[int, str]:
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st and st[0] == parent and match in _cmdline(int(entry.name)):
                found[int(entry.name)] = st[1]
    return found


def _end(pids: dict[int, str], *, group: bool = False) -> None:
    """SIGTERM each (its process group if ``group``), SIGKILL what is left after the grace period."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid, start in pids.items():
            if _alive(pid, start):
                try:
                    os.killpg(pid, sig) if group else os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = time.monotonic() + GRACE
        while time.monotonic() < deadline and any(_alive(p, s) for p, s in pids.items()):
            time.sleep(0.1)


def watch(parent: int, match: str) -> int:
    parent_start = (_stat(parent) or (0, None))[1]
    seen: dict[int, str] = {}
    while _alive(parent, parent_start):
        seen = {p: s for p, s in seen.items() if _alive(p, s)}
        if not seen:  # scan /proc only until the server is found (Prefect starts one per process)
            seen = _children(parent, match)
        time.sleep(SCAN)
    _end(seen)
    return 0


def run(parent: int, cmd: list[str]) -> int:
    if os.getppid() != parent:  # the parent died before we got here
        return 0
    child = subprocess.Popen(cmd, start_new_session=True)  # its own group: ended as one
    start = (_stat(child.pid) or (0, None))[1]

    def stop(*_):
        _end({child.pid: start}, group=True)
        sys.exit(0)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    while True:
        try:
            return child.wait(timeout=POLL)
        except subprocess.TimeoutExpired:
            if os.getppid() != parent:
                stop()


def live_leases(leases: Path) -> int:
    """How many lease files in ``leases`` name a live process (``<pid>-<start time>``); stale ones are removed."""
    live = 0
    for entry in list(leases.glob("*-*")):
        pid, _, start = entry.name.partition("-")
        if pid.isdigit() and _alive(int(pid), start or None):
            live += 1
        else:
            entry.unlink(missing_ok=True)
    return live


def idle(leases: Path, timeout: float, record: Path, cmd: list[str]) -> int:
    leases.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen(cmd, start_new_session=True)
    start = (_stat(child.pid) or (0, None))[1]
    me = os.getpid()

    def forget() -> None:
        try:
            if json.loads(record.read_text()).get("pid") == me:  # still our record, not a newer server's
                record.unlink()
        except (OSError, ValueError, AttributeError):
            pass

    def stop(*_):
        _end({child.pid: start}, group=True)
        forget()
        sys.exit(0)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    last_used = time.monotonic()
    while True:
        try:
            code = child.wait(timeout=POLL * 2)
            forget()  # the server exited by itself
            return code
        except subprocess.TimeoutExpired:
            pass
        if live_leases(leases):
            last_used = time.monotonic()
        elif time.monotonic() - last_used > timeout:
            stop()


def main(argv: list[str]) -> int:
    if len(argv) > 8 and argv[0] == "idle" and (argv[1], argv[3], argv[5], argv[7]) == IDLE_FLAGS:
        return idle(Path(argv[2]), float(argv[4]), Path(argv[6]), argv[8:])
    if len(argv) >= 3 and argv[0] in ("run", "watch") and argv[1] == "--parent":
        parent = int(argv[2])
        if argv[0] == "run" and len(argv) > 4 and argv[3] == "--":
            return run(parent, argv[4:])
        if argv[0] == "watch" and len(argv) == 5 and argv[3] == "--match":
            return watch(parent, argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
