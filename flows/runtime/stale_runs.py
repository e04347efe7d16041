"""MLflow runs left RUNNING by a killed process: found and marked KILLED on the next start.

Every run a :class:`~flows.runtime.tracking.Tracker` creates is tagged with the process
that owns it (host, PID, the process's start time since boot, the checkout). When the next
tracker of the same checkout starts, runs of that checkout on this host still RUNNING whose
process is gone (no such PID, or the PID now belongs to a process that started later) are
terminated as KILLED and tagged ``paperline.killed`` with the reason. Runs of other hosts
are left alone: their processes cannot be seen from here.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from pathlib import Path

log = logging.getLogger("paperline")

PID, HOST, START, CHECKOUT, KILLED = (
    "paperline.pid",
    "paperline.host",
    "paperline.process_start",
    "paperline.checkout",
    "paperline.killed",
)


def process_start(pid: int) -> str:
    """``<boot id>:<start time in clock ticks>`` of a process (Linux /proc), or "" where unknown."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may hold spaces and parentheses
    return f"{boot}:{fields[19]}"  # field 22 of stat; fields[0] is field 3


def alive(pid: int, start: str = "") -> bool:
    """True while process ``pid`` exists and (when ``start`` is known) is the same process as recorded."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    return not start or process_start(pid) in ("", start)


def owner_tags(checkout: Path | None = None) -> dict[str, str]:
    """The tags naming this process and checkout (``checkout`` defaults to the project root)."""
    from flows.runtime.settings import find_root

    root = Path(checkout).resolve() if checkout else find_root()
    return {PID: str(os.getpid()), HOST: socket.gethostname(), START: process_start(os.getpid()), CHECKOUT: str(root)}


def mark_stale_runs(client, experiment_id: str, checkout: str) -> list[str]:
    """Mark this checkout's RUNNING runs whose process on this host is gone as KILLED; returns their ids."""
    if "'" in checkout:  # cannot be quoted in an MLflow filter string; nothing is marked
        return []
    host = socket.gethostname()
    query = f"attributes.status = 'RUNNING' and tags.`{CHECKOUT}` = '{checkout}' and tags.`{HOST}` = '{host}'"
    marked = []
    for run in client.search_runs([experiment_id], filter_string=query, max_results=1000):
        tags = run.data.tags
        try:
            pid = int(tags.get(PID, ""))
        except ValueError:
            continue
        if alive(pid, tags.get(START, "")):
            continue
        when = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        client.set_tag(
            run.info.run_id, KILLED, f"process {pid} on {host} was gone at {when}; marked by process {os.getpid()}"
        )
        client.set_terminated(run.info.run_id, "KILLED")
        marked.append(run.info.run_id)
    if marked:
        log.warning("marked %d run(s) of a killed earlier process as KILLED: %s", len(marked), ", ".join(marked))
    return marked
