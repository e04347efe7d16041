"""The shared Prefect server: the first command that needs one starts it in the background, later commands reuse it
(same process), it stops itself once unused for PAPERLINE_SERVER_IDLE seconds, a killed command neither stops it
nor keeps it alive, and a stale record (dead process, earlier boot) never blocks a new one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.runtime import prefect_server
from tests.conftest import fake_checkout

pytestmark = [pytest.mark.slow, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
IDLE = 6  # seconds

# One command's use of the server, as `paperline run` makes it (prefect_server.connected), in its own process.
USE = """
import json, sys, time
from pathlib import Path
from flows.runtime import prefect_server
from flows.runtime.settings import Paths
paths = Paths(Path(sys.argv[1]))
with prefect_server.connected(paths) as server:
    print(json.dumps({"url": server.url, "started": server.proc is not None}), flush=True)
    time.sleep(float(sys.argv[2]))
"""


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    fake_checkout(tmp_path)
    (tmp_path / ".paperline").mkdir()
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    yield tmp_path
    if _record(tmp_path):  # a failed test must not leave its server behind (stop() ignores a stale record)
        prefect_server.stop(_paths(tmp_path))


def _paths(root: Path):
    from flows.runtime.settings import Paths

    return Paths(root)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    return {**env, prefect_server.IDLE_ENV: str(IDLE), "PYTHONPATH": str(ROOT)}


def _use(root: Path, hold: float = 0.0) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", USE, str(root), str(hold)], env=_env(), capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def _record(root: Path) -> dict | None:
    path = root / ".paperline" / "prefect-server.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").is_file() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def _gone_within(pid: int, root: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid) and _record(root) is None:
            return True
        time.sleep(0.5)
    return False


def test_a_second_command_reuses_the_server_and_an_unused_one_stops_itself(checkout):
    first = _use(checkout)
    assert first["started"]
    rec = _record(checkout)
    assert rec["url"] == first["url"] and rec["idle_seconds"] == IDLE
    second = _use(checkout, hold=IDLE + 3)  # held longer than the idle limit: a lease keeps it up
    assert not second["started"] and second["url"] == first["url"]
    assert _record(checkout)["pid"] == rec["pid"], "the second command started a server of its own"
    assert prefect_server.healthy(first["url"]), "the server stopped while a command held a lease"
    assert _gone_within(rec["pid"], checkout, IDLE + 20), "the unused server did not stop itself"
    assert not prefect_server.healthy(first["url"])


def test_a_killed_command_neither_stops_the_server_nor_keeps_it_alive(checkout):
    proc = subprocess.Popen(
        [sys.executable, "-c", USE, str(checkout), "600"], env=_env(), stdout=subprocess.PIPE, text=True
    )
    try:
        started = json.loads(proc.stdout.readline())
        assert started["started"]
        pid = _record(checkout)["pid"]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    again = _use(checkout)
    assert not again["started"] and again["url"] == started["url"] and _record(checkout)["pid"] == pid
    assert _gone_within(pid, checkout, IDLE + 20), "the killed command's lease kept the server alive"


@pytest.mark.parametrize("stale", ["dead process", "earlier boot"])
def test_a_stale_record_never_blocks(checkout, stale):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    port = prefect_server._free_port()
    rec = {"url": f"http://127.0.0.1:{port}/api", "pid": dead.pid, "start": None, "boot": None, "idle_seconds": IDLE}
    if stale == "earlier boot":  # a live PID (this process), recorded before a reboot
        rec.update(pid=os.getpid(), boot="an-earlier-boot")
    (checkout / ".paperline" / "prefect-server.json").write_text(json.dumps(rec))
    t0 = time.monotonic()
    fresh = _use(checkout)
    assert fresh["started"] and fresh["url"] != rec["url"]
    assert time.monotonic() - t0 < 60, "the stale record was waited for"
    new = _record(checkout)
    assert new["pid"] != rec["pid"] and _alive(new["pid"])
    assert prefect_server.stop(_paths(checkout)) and _gone_within(new["pid"], checkout, 20)


def test_the_idle_limit_is_checked():
    env = {**os.environ, prefect_server.IDLE_ENV: "soon"}
    code = "from flows.runtime import prefect_server; prefect_server.idle_seconds()"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode != 0 and "PAPERLINE_SERVER_IDLE='soon'" in proc.stderr
