"""Hardening, round 2 (issue 55, the kit half): every bad input below ends in one short ``error:`` line.

Each case reproduces an audit finding on the old code: params that expand ("billion laughs") or hold a
5,000-digit integer, a lock or state folder planted as a symlink, file or folder, the lock message naming a
stale PID, path params leaving the checkout, a ``PAPERLINE_ROOT`` that is not a checkout, loosely typed
``--set``/``--profile``/``--runner`` values and a bad cron. They fail before any work, in a scratch copy.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.runtime.workspace import set_profile
from tests.conftest import ROOT, copy_project

pytestmark = [pytest.mark.integration]

LAUGHS = "".join(
    f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10) if i else ', '.join(['lol'] * 10)}]\n" for i in range(9)
)


def cli(*args: str, cwd: Path, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """``python -m flows.cli`` with this worktree's code first on the path."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "flows.cli", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout
    )


def error_line(proc: subprocess.CompletedProcess, *names: str) -> str:
    """Exit 2, no traceback, a last line ``error: ...`` under 300 characters naming each of ``names``."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-2000:]
    assert "Traceback" not in out, out[-3000:]
    assert len(out) < 20_000, f"{len(out)} characters of output"
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and len(last) < 300, last[:500]
    for name in names:
        assert name in last, last
    return last


@pytest.fixture
def proj(tmp_path) -> Path:
    root = copy_project(tmp_path / "proj")
    set_profile(root, "smoke")
    (root / "reports" / "assomem").mkdir(parents=True, exist_ok=True)
    (root / "reports" / "assomem" / "keep.txt").write_text("keep\n")
    return root


def _append_params(root: Path, text: str) -> None:
    p = root / "params.yaml"
    body = p.read_text().replace("\nassomem:", "\nassomem_old_unused:", 1)
    p.write_text(body + "\nassomem:\n" + text)


@pytest.mark.parametrize("command", [["show", "assomem"], ["run", "assomem", "--no-track"]])
def test_params_that_expand_are_refused_before_building(proj, command):
    _append_params(proj, LAUGHS + "  seed: *l8\n")
    start = time.monotonic()
    error_line(cli(*command, cwd=proj), "params.yaml", "aliases")
    assert time.monotonic() - start < 60
    assert (proj / "reports" / "assomem" / "keep.txt").exists()


@pytest.mark.parametrize("command", [["show", "assomem"], ["run", "assomem", "--no-track"]])
def test_a_5000_digit_integer_is_a_clean_error(proj, command):
    _append_params(proj, f"  seed: {'7' * 5000}\n")
    error_line(cli(*command, cwd=proj), "params.yaml", "digits")


@pytest.mark.parametrize(
    "args, names",
    [
        (["--set", "seed=yes"], ["assomem.seed"]),
        (["--set", "seed=true"], ["assomem.seed"]),
        (["--profile", ""], ["profile"]),
        (["--set", "data.sizes=[" + ",".join(["1e7"] * 2000) + "]"], ["assomem.data.sizes"]),
        (["--set", "data.seeds=[" + ",".join(["1"] * 2000) + "]"], ["assomem.data.seeds"]),
        (["--runner", "process:100000"], ["runner", "process:100000"]),
        (["--runner", "tcp://256.0.0.1:99999"], ["runner", "tcp://256.0.0.1:99999"]),
        (["--runner", "tcp://127.0.0.1:0"], ["runner"]),
        (["--set", "data.source=longmemeval", "--set", "data.path=/etc/passwd"], ["assomem.data.path", "outside"]),
        (["--set", "data.source=longmemeval", "--set", "data.path=../../../etc/hostname"], ["assomem.data.path"]),
        (["--set", "data.topics_path=/etc/passwd"], ["assomem.data.topics_path", "outside"]),
    ],
    ids=lambda v: " ".join(v)[:40] if isinstance(v, list) else None,
)
def test_loose_values_are_refused_before_any_work(proj, args, names):
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in [Path("/etc/hostname")] if p.exists()}
    error_line(cli("run", "assomem", "--no-track", *args, cwd=proj), *names)
    assert not (proj / "data" / "assomem").exists()
    assert (proj / "reports" / "assomem" / "keep.txt").exists()
    assert before == {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in before}


@pytest.mark.parametrize(
    "paper, key, field",
    [
        ("neuraldb", "data.dataset_path", "neuraldb.data.dataset_path"),
        ("vip", "data.local_file", "vip.data.local_file"),
        ("dka", "data.path", "dka.data.path"),
    ],
)
def test_other_path_params_stay_inside(proj, paper, key, field):
    from flows.registry import papers

    if paper not in papers():
        pytest.skip(f"{paper} not registered")
    proc = cli("run", paper, "--no-track", "--set", f"{key}=/etc/passwd", cwd=proj)
    if "unknown key" in proc.stderr:
        pytest.skip(f"{key} is not a key of {paper}")
    error_line(proc, field)


@pytest.mark.parametrize("kind", ["symlink", "folder"])
def test_a_planted_lock_is_refused_and_its_target_unchanged(proj, tmp_path, kind):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    stamp = outside.stat().st_mtime_ns
    locks = proj / ".paperline" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        (locks / "assomem.lock").symlink_to(outside)
    else:
        (locks / "assomem.lock").mkdir()
    error_line(cli("stage", "assomem", "report", "--force", cwd=proj, timeout=300), "assomem.lock")
    assert outside.read_text() == "precious\n" and outside.stat().st_mtime_ns == stamp
    assert (proj / "reports" / "assomem" / "keep.txt").exists()


def test_state_folder_that_is_a_file(proj):
    import shutil

    shutil.rmtree(proj / ".paperline", ignore_errors=True)
    (proj / ".paperline").write_text("not a folder\n")
    error_line(cli("list", cwd=proj), ".paperline")
    assert (proj / ".paperline").read_text() == "not a folder\n"


def test_lock_message_names_the_live_holder(proj):
    locks = proj / ".paperline" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    lock = locks / "assomem.lock"
    lock.write_text("999999\n")  # a stale PID left by an earlier holder
    code = (
        f"import fcntl, os, time; fd = os.open({str(lock)!r}, os.O_RDWR); fcntl.flock(fd, fcntl.LOCK_EX); "
        "print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        last = error_line(cli("stage", "assomem", "report", "--force", cwd=proj, timeout=300), "assomem")
        assert f"PID {holder.pid} " in last and "999999" not in last
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("args", [["list"], ["run", "assomem", "--no-track"]])
def test_paperline_root_that_is_not_a_checkout(proj, tmp_path, args):
    stray = tmp_path / "stray"
    stray.mkdir()
    error_line(cli(*args, cwd=proj, env={"PAPERLINE_ROOT": str(stray)}), "PAPERLINE_ROOT")
    assert list(stray.iterdir()) == []


def test_a_bad_cron_is_one_line(proj):
    error_line(cli("schedule", "assomem", "--cron", "61 25 * * *", cwd=proj), "cron")
