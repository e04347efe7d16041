"""After a kill: stale RUNNING MLflow runs are marked KILLED on the next start; no Prefect server outlives its
parent."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, fake_checkout

GUARD = ROOT / "flows/runtime/orphan_guard.py"
LINUX = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the guard reads /proc (Linux)")


def _gone(pid: int, within: float = 60.0) -> bool:
    """Wait (up to ``within`` s, generous: the machine is shared) until ``pid`` no longer exists or is a zombie."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.2)
    return False


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# -- stale MLflow runs ------------------------------------------------------------------------------
@pytest.fixture
def store(tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("PAPERLINE_ROOT", str(fake_checkout(tmp_path)))
    return tmp_path


def _run_with(client, exp: str, tags: dict[str, str]) -> str:
    return client.create_run(exp, tags=tags).info.run_id


@pytest.mark.slow  # MLflow's SQLite store set-up: ~10 s here
def test_runs_of_a_dead_process_of_this_checkout_are_marked_killed_on_the_next_start(store):
    from mlflow.tracking import MlflowClient

    from flows.runtime import stale_runs as S
    from flows.runtime.tracking import Tracker, experiment_id

    client = MlflowClient()
    exp = experiment_id(client, "toy")
    host, here = socket.gethostname(), str(store.resolve())
    me = {S.HOST: host, S.CHECKOUT: here, S.PID: str(os.getpid()), S.START: S.process_start(os.getpid())}
    dead = _run_with(client, exp, {**me, S.PID: str(_dead_pid()), S.START: ""})
    reused = _run_with(client, exp, {**me, S.START: "another-boot:1"})  # this PID, but a different process
    live = _run_with(client, exp, me)
    other_checkout = _run_with(client, exp, {**me, S.PID: str(_dead_pid()), S.CHECKOUT: "/elsewhere"})
    other_host = _run_with(client, exp, {**me, S.PID: str(_dead_pid()), S.HOST: "another-host"})

    tracker = Tracker("toy", "next-run", {"paper": "toy"})
    status = {r: client.get_run(r).info.status for r in (dead, reused, live, other_checkout, other_host)}
    assert status == {
        dead: "KILLED",
        reused: "KILLED",
        live: "RUNNING",
        other_checkout: "RUNNING",
        other_host: "RUNNING",
    }
    assert "was gone" in client.get_run(dead).data.tags[S.KILLED]
    assert S.KILLED not in client.get_run(live).data.tags
    new = client.get_run(tracker.run_id).data.tags
    assert (new[S.PID], new[S.HOST], new[S.CHECKOUT]) == (str(os.getpid()), host, here) and new["paper"] == "toy"
    tracker.finish()


@pytest.mark.slow  # a child process imports MLflow: ~10-20 s here
def test_a_sigkilled_runs_parent_and_child_runs_are_killed_not_running_forever(store):
    from mlflow.tracking import MlflowClient

    from flows.runtime import stale_runs as S
    from flows.runtime.tracking import Tracker

    script = textwrap.dedent("""
        import sys, time
        from flows.runtime.tracking import Tracker
        t = Tracker("toy", "doomed", {"paper": "toy"})
        with t.child("model") as child:
            print(t.run_id, child, flush=True)
            time.sleep(600)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env, cwd=store)
    parent, child = proc.stdout.readline().split()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    client = MlflowClient()
    assert client.get_run(parent).info.status == "RUNNING"  # what a kill leaves behind
    Tracker("toy", "after-the-kill", {"paper": "toy"}).finish()
    assert [client.get_run(r).info.status for r in (parent, child)] == ["KILLED", "KILLED"]
    assert str(proc.pid) in client.get_run(parent).data.tags[S.KILLED]


# -- Prefect servers ----------------------------------------------------------------------------------
PARENT = """
import subprocess, sys, time
server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{match}"])
{guard}
print(server.pid, flush=True)
time.sleep(600)
"""


def _parent_then_kill(guard_line: str) -> int:
    """Start a parent that starts a stand-in server and the guard; SIGKILL the parent; return the server's PID."""
    code = PARENT.format(match="prefect.server.api.server:create_app", guard=guard_line)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    server = int(parent.stdout.readline())
    assert not _gone(server, within=1.0)
    time.sleep(2.5)  # let the watchdog see the server once (it scans every second)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    return server


@LINUX
def test_prefects_temporary_server_ends_when_its_parent_is_killed():
    guard = "from flows.runtime.prefect_server import watch_temporary; watch_temporary()"
    server = _parent_then_kill(guard)
    assert _gone(server), f"the temporary server {server} outlived its killed parent"


@LINUX
def test_the_watchdog_leaves_other_children_alone_and_exits_with_its_parent():
    code = PARENT.format(
        match="not-a-prefect-server",
        guard="import os; from flows.runtime.prefect_server import "
        "watch_temporary; w = watch_temporary(); print(w.pid, flush=True)",
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    watchdog, other = int(parent.stdout.readline()), int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert _gone(watchdog)
    assert not _gone(other, within=1.0)
    os.kill(other, signal.SIGKILL)


@LINUX
def test_an_owned_server_runs_under_the_guard_and_ends_with_its_owner(tmp_path):
    """``orphan_guard.py run`` (what ``prefect_server.start(owned=True)`` wraps the server in)."""
    code = textwrap.dedent(f"""
        import os, subprocess, sys, time
        child = "import os, time; print(os.getpid(), flush=True); time.sleep(600)"
        guard = subprocess.Popen([sys.executable, {str(GUARD)!r}, "run", "--parent", str(os.getpid()), "--",
                                  sys.executable, "-c", child])
        time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    server = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert _gone(server), "an owned server outlived its killed owner"


def test_the_guard_refuses_a_bad_command_line():
    proc = subprocess.run([sys.executable, str(GUARD), "run", "--parent"], capture_output=True, text=True)
    assert proc.returncode == 2 and "orphan_guard.py run" in proc.stderr


@LINUX
def test_an_exited_child_not_yet_reaped_counts_as_gone():
    """A zombie has exited; counting it alive made every stop of an owned server wait out both grace periods."""
    sys.path.insert(0, str(GUARD.parent))
    import orphan_guard

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while Path(f"/proc/{child.pid}/stat").read_text().split(")")[-1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.05)
    assert orphan_guard._stat(child.pid) is None
    assert not orphan_guard._alive(child.pid, None)
    child.wait()
