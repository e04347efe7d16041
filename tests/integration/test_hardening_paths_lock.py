"""Hardening through the real entry point: path traversal, two writers, and a kill in the middle of a publish.

Each test reproduces a failure seen on the old code (see the issue): a held-out name that overwrote a
file outside the checkout, a second `paperline stage` that deleted the first one's live staging folder,
and a report folder left as a mix of two runs that `paperline show` displayed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from flows.runtime.workspace import set_profile
from tests.conftest import BIN, copy_project, paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def error_line(proc) -> str:
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ")
    return last


# ---- path traversal ---------------------------------------------------------------------------------


@pytest.fixture
def deep_project(tmp_path, prefect_api, shared_cache) -> Path:
    """A checkout at <tmp>/a/b/proj, so five '..' from its data folders still land inside <tmp>."""
    root = copy_project(tmp_path / "a" / "b" / "proj")
    set_profile(root, "smoke")
    return root


@pytest.mark.parametrize("field", ["heldout", "sources"])
def test_traversal_in_source_names_is_refused_and_nothing_outside_changes(deep_project, tmp_path, field):
    name = "../../../../../victim/victim"
    # what the old code read (from data/sources) and overwrote (from the corpus staging folder's heldout/)
    read_victim = tmp_path / "victim" / "victim.jsonl"
    written_victim = tmp_path / "a" / "b" / "victim" / "victim.jsonl"
    read_victim.parent.mkdir()
    read_victim.write_text(
        "".join(
            json.dumps({"id": f"v{i}", "source": "victim", "text": f"secret words number {i} " * 8}) + "\n"
            for i in range(400)
        )
    )
    written_victim.parent.mkdir()
    written_victim.write_text("precious\n")
    value = f"[austen,{name}]" if field == "heldout" else f"[wordnet,austen,shakespeare,linux_docs,{name}]"
    proc = paperline(
        "run",
        "qualitypajama",
        "--stage",
        "corpus",
        "--no-track",
        "--set",
        f"corpus.{field}={value}",
        cwd=deep_project,
        timeout=600,
    )
    assert f"qualitypajama.corpus.{field}: " in error_line(proc) and "unknown source" in error_line(proc)
    assert written_victim.read_text() == "precious\n"
    assert not (deep_project / "data" / "qualitypajama").exists()


@pytest.mark.parametrize(
    "override, field",
    [
        ("training.lrr=1", "qualitypajama.training.lrr: unknown key"),
        ("corpus.heldout=[../../x]", "qualitypajama.corpus.heldout: "),
    ],
)
def test_schedule_validates_overrides_before_creating_a_deployment(project, override, field):
    proc = paperline("schedule", "qualitypajama", "--cron", "0 3 * * *", "--set", override, cwd=project, timeout=300)
    assert field in error_line(proc)
    listed = paperline("deployments", "--json", cwd=project, timeout=300)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert not [d for d in json.loads(listed.stdout) if override in (d.get("parameters") or {}).get("overrides", [])]


# ---- two writers ------------------------------------------------------------------------------------


def _paused_writer(root: Path, go: Path) -> subprocess.Popen:
    """`paperline stage shared sources --force`, paused after its work with its staging folder live."""
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PAPERLINE_PAUSE_AT": "stage-end:shared:sources",
        "PAPERLINE_PAUSE_FILE": str(go),
    }
    proc = subprocess.Popen(
        [str(BIN / "paperline"), "stage", "shared", "sources", "--force"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    reached = Path(f"{go}.reached")
    while not reached.exists():  # the pause seam; a deadline only so a broken run cannot hang the suite
        assert proc.poll() is None, proc.stderr.read()[-3000:]
        time.sleep(0.1)
    return proc


def _staging(root: Path) -> list[Path]:
    return sorted((root / "data").glob(".tmp-sources-*"))


def test_second_writer_fails_at_once_and_the_first_one_completes(project, tmp_path):
    go = tmp_path / "go"
    first = _paused_writer(project, go)
    try:
        live = _staging(project)
        assert len(live) == 1 and live[0].is_dir()
        second = paperline("stage", "shared", "sources", "--force", cwd=project, timeout=600)
        assert f"error: paper shared is being written by PID {first.pid}" in error_line(second)
        assert _staging(project) == live and live[0].is_dir(), "the second writer touched the first one's staging"
    finally:
        go.write_text("go")
        out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err[-3000:]
    marker = json.loads((project / ".paperline/stages/shared/sources.json").read_text())
    assert marker["state"] == "complete"
    assert sorted(p.name for p in (project / "data/sources").iterdir()) == sorted(
        f"{n}.jsonl" for n in ("wordnet", "austen", "shakespeare", "linux_docs")
    )
    assert _staging(project) == []


def test_waiting_writer_runs_after_the_first_one(project, tmp_path):
    go = tmp_path / "go"
    first = _paused_writer(project, go)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    second = subprocess.Popen(
        [str(BIN / "paperline"), "stage", "shared", "sources", "--force", "--wait"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for line in second.stderr:  # it says that it waits, and for whom, before the first one is released
            if "waiting for it" in line:
                assert f"PID {first.pid}" in line
                break
        else:
            raise AssertionError("the second writer ended without waiting")
    finally:
        go.write_text("go")
        first.communicate(timeout=600)
    second.communicate(timeout=600)
    assert first.returncode == 0 and second.returncode == 0
    assert json.loads((project / ".paperline/stages/shared/sources.json").read_text())["state"] == "complete"


# ---- a kill in the middle of the report stage's publish ----------------------------------------------

REPORT_OUTS = 6  # report.md, report.html, claims.json, figures, metrics.json, plots/loss_vs_compute.csv


@pytest.fixture
def smoke_copy(smoke_run, tmp_path, prefect_api, shared_cache) -> Path:
    """A fresh copy of the session's smoke run (code, data, reports, markers) to kill publishes in."""
    src, _ = smoke_run
    root = copy_project(tmp_path / "proj")
    set_profile(root, "smoke")
    for rel in ("data", "reports", ".paperline/stages"):
        shutil.copytree(src / rel, root / rel, dirs_exist_ok=True, symlinks=True)
    return root


@pytest.mark.parametrize("renames_done", range(REPORT_OUTS + 1))
def test_sigkill_at_every_report_rename_never_shows_a_mix(smoke_copy, renames_done):
    root = smoke_copy
    before = paperline("show", "qualitypajama", cwd=root, timeout=300)
    assert before.returncode == 0 and "C1:" in before.stdout
    args = ("run", "qualitypajama", "--stage", "report", "--no-track", "--set", "claims.level=0.9")
    proc = paperline(*args, cwd=root, env={"PAPERLINE_CRASH_AT": f"publish:qualitypajama:report:{renames_done}"})
    assert proc.returncode == -9, proc.stdout[-2000:] + proc.stderr[-3000:]

    shown = paperline("show", "qualitypajama", cwd=root, timeout=300)
    assert shown.returncode == 0, shown.stderr[-2000:]
    lines = [ln for ln in shown.stdout.splitlines() if ln.startswith("last claims")]
    assert len(lines) == 1 and "not shown" in lines[0] and "qualitypajama:report" in lines[0], shown.stdout
    assert "C1:" not in shown.stdout
    index = paperline("report", "--index-only", cwd=root, timeout=300)
    assert index.returncode == 0, index.stderr[-2000:]
    assert "incomplete" in (root / "reports/index.html").read_text()

    if renames_done == 3:  # the rerun publishes a whole set and show displays it again
        again = paperline(*args, cwd=root)
        assert again.returncode == 0, again.stderr[-3000:]
        assert "C1:" in paperline("show", "qualitypajama", cwd=root, timeout=300).stdout
        assert not list((root / "reports/qualitypajama").rglob(".tmp-*"))
