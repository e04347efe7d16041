"""One writer per paper: a second writer fails at once naming the holder's PID, or waits for it."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from flows.runtime import lock
from flows.runtime.lock import PaperLocked, hold
from flows.runtime.settings import Paths

HOLDER = """
import sys
from pathlib import Path
from flows.runtime.lock import hold
from flows.runtime.settings import Paths
with hold(Paths(Path(sys.argv[1])), sys.argv[2].split(","), export=True):
    print("locked", flush=True)
    sys.stdin.readline()
    Path(sys.argv[1], "released").write_text("1")
"""


def start_holder(root: Path, owners: str = "qualitypajama") -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root), owners], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "locked"
    return proc


def release(proc: subprocess.Popen) -> None:
    proc.stdin.close()
    assert proc.wait() == 0


def test_second_writer_fails_at_once_naming_the_holder(tmp_path):
    paths = Paths(tmp_path)
    proc = start_holder(tmp_path)
    try:
        with (
            pytest.raises(PaperLocked, match=rf"^paper qualitypajama is being written by PID {proc.pid} "),
            hold(paths, ["qualitypajama"]),
        ):
            pass
        with hold(paths, ["ofmu"]):  # another paper is not blocked
            pass
    finally:
        release(proc)
    with hold(paths, ["qualitypajama"]) as mine:
        assert mine == ["qualitypajama"] and lock.holder(paths, "qualitypajama") == os.getpid()


def test_waiting_writer_gets_the_lock_after_the_holder_releases_it(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="paperline")
    paths = Paths(tmp_path)
    proc = start_holder(tmp_path)
    waiting = threading.Event()

    class Seen(logging.Handler):
        def emit(self, record):
            if "waiting for it" in record.getMessage() and str(proc.pid) in record.getMessage():
                waiting.set()

    handler = Seen()
    logging.getLogger("paperline").addHandler(handler)
    seen: list[bool] = []
    waiter = threading.Thread(target=lambda: seen.append(_wait_and_check(paths, tmp_path)), daemon=True)
    try:
        waiter.start()
        assert waiting.wait(60), "the second writer did not report that it waits"
    finally:
        logging.getLogger("paperline").removeHandler(handler)
        release(proc)
    waiter.join()
    assert seen == [True]


def _wait_and_check(paths: Paths, root: Path) -> bool:
    with hold(paths, ["qualitypajama"], wait=True):
        return (root / "released").is_file()  # the holder finished its block before we got in


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    proc = start_holder(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with hold(Paths(tmp_path), ["qualitypajama"]):
        pass


def test_lock_is_reentrant_in_one_thread_but_not_across_threads(tmp_path):
    paths = Paths(tmp_path)
    errors: list[str] = []

    def other_thread():
        try:
            with hold(paths, ["qualitypajama"]):
                pass
        except PaperLocked as exc:
            errors.append(str(exc))

    with hold(paths, ["qualitypajama"]):
        with hold(paths, ["qualitypajama", "shared"]) as inner:
            assert inner == ["shared"]
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert len(errors) == 1 and f"PID {os.getpid()}" in errors[0]


def test_children_of_the_holder_inherit_its_lock_others_do_not(tmp_path, monkeypatch):
    paths = Paths(tmp_path)
    child = (
        "import sys; from pathlib import Path; from flows.runtime.lock import hold; "
        "from flows.runtime.settings import Paths\n"
        "with hold(Paths(Path(sys.argv[1])), ['qualitypajama']) as mine: print(mine)"
    )
    with hold(paths, ["qualitypajama"], export=True):
        out = subprocess.run([sys.executable, "-c", child, str(tmp_path)], capture_output=True, text=True)
        assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr
    proc = start_holder(tmp_path)
    try:  # a forged variable naming a process that is not our ancestor does not let us in
        monkeypatch.setenv(lock.ENV, f"{proc.pid}:qualitypajama")
        with pytest.raises(PaperLocked), hold(paths, ["qualitypajama"]):
            pass
    finally:
        release(proc)


def test_pipeline_run_refuses_before_any_stage_while_another_process_writes(tmp_path):
    from flows.runtime import pipeline

    proc = start_holder(tmp_path, "qualitypajama,shared")
    try:
        with pytest.raises(PaperLocked, match=rf"is being written by PID {proc.pid}"):
            pipeline.run("qualitypajama", Paths(tmp_path), profile="smoke", track=False)
    finally:
        release(proc)
    assert not (tmp_path / "data").exists()


def test_repro_locks_the_paper_and_the_shared_stages_it_reads():
    from flows.runtime.repro import lock_owners

    assert lock_owners("qualitypajama") == ["qualitypajama", "shared"]
    assert {"shared", "qualitypajama", "ofmu"} <= set(lock_owners(None))


@pytest.mark.parametrize(
    "override, message",
    [
        ("training.lrr=1", "qualitypajama.training.lrr: unknown key"),
        ("corpus.heldout=[../x]", "qualitypajama.corpus.heldout: "),
    ],
)
def test_schedule_validates_overrides_without_a_server(tmp_path, monkeypatch, override, message):
    from components.errors import ParamsError
    from flows.deployments import schedule

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with pytest.raises(ParamsError, match=re.escape(message)):
        schedule("qualitypajama", tmp_path, cron="0 3 * * *", overrides=[override])
