"""The report writer's scratch folder: one per writer (its PID in the name), removed after use, and a killed
writer's left-over removed by the next report stage (never a live writer's)."""

from __future__ import annotations

import os
import subprocess
import sys

from components.reporting import Section
from flows.registry import papers
from flows.runtime.report_stage import write_report_outputs
from flows.runtime.settings import Paths
from flows.runtime.stages import StageContext
from tests.conftest import fake_checkout


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def _ctx(root):
    import importlib

    paper = papers()["ofmu"]
    module = importlib.import_module(paper.params_module)
    params = module.Params.model_validate(module.PRESETS["smoke"])
    fake_checkout(root)
    return StageContext(paper=paper, stage=paper.stage("report"), params=params, profile="smoke", paths=Paths(root))


def test_a_killed_writers_scratch_is_removed_and_a_live_ones_kept(tmp_path):
    ctx = _ctx(tmp_path)
    reports = ctx.paths.reports
    reports.mkdir(parents=True)
    dead = reports / f".tmp-report-{_dead_pid()}-0badc0de"
    live = reports / f".tmp-report-{os.getppid()}-0c0ffee0"
    for folder in (dead, live):
        folder.mkdir()
        (folder / "report.md").write_text("half written")
    doc = {"paper": "ofmu", "profile": "smoke", "claims": [], "summary": {}}
    write_report_outputs(ctx, claims_doc=doc, metrics={}, sections=[Section("S", "text")], readme_link="x")
    assert not dead.exists() and live.exists()
    assert sorted(p.name for p in reports.glob(".tmp-report-*")) == [live.name]  # its own scratch is gone too
    assert ctx.staged  # the report's outputs went to their staging paths
