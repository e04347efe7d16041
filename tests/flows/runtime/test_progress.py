"""Every running stage shows its elapsed time and an ETA from its earlier runs (flows/runtime/progress.py)."""

from __future__ import annotations

import io
import logging
import time

from flows.runtime import progress as PR
from flows.runtime.settings import Paths
from flows.runtime.stages import execute
from tests.flows.runtime.test_stages import make_stage, writer


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _shown(expected, seconds, stream, monkeypatch, **kw) -> str:
    monkeypatch.setattr(PR, "TICK_S", 0.05)
    with PR.StageClock("paper:stage", expected, stream=stream, **kw):
        time.sleep(seconds)
    return stream.getvalue()


def test_a_terminal_sees_elapsed_time_and_time_left_then_longer_than_usual(monkeypatch):
    out = _shown(0.3, 0.6, Terminal(), monkeypatch)
    assert "paper:stage: 00:00 of ~00:00, ~00:00 left" in out
    assert "longer than usual" in out.split("left")[-1]
    assert out.endswith("\r")  # the line is cleared when the stage ends (leave=False)


def test_without_history_it_shows_elapsed_time_only(monkeypatch):
    out = _shown(None, 0.2, Terminal(), monkeypatch)
    assert "paper:stage: 00:00 elapsed" in out and "left" not in out


def test_nothing_is_drawn_off_a_terminal_or_with_progress_off(monkeypatch):
    assert _shown(1.0, 0.1, io.StringIO(), monkeypatch) == ""
    assert _shown(1.0, 0.1, Terminal(), monkeypatch, enabled=False) == ""


def test_the_estimate_is_the_median_of_the_last_runs_at_that_profile(tmp_path):
    paths = Paths(tmp_path)
    assert PR.expected_seconds(paths, "p", "s", "smoke") is None
    for seconds in (10, 30, 20, 1000, 40, 50):
        PR.record(paths, "p", "s", "smoke", seconds)
    assert PR.recorded(paths, "p", "s", "smoke") == [30, 20, 1000, 40, 50]  # the last KEEP runs
    assert PR.expected_seconds(paths, "p", "s", "smoke") == 40
    assert PR.expected_seconds(paths, "p", "s", "default") is None
    PR.timings_file(paths, "p", "s", "smoke").write_text("{not json")
    assert PR.expected_seconds(paths, "p", "s", "smoke") is None  # a damaged file costs the estimate, not the run


def test_a_stage_run_records_its_time_and_the_next_run_logs_the_usual_time(tmp_path, caplog):
    ctx = make_stage(tmp_path, writer([]))
    with caplog.at_level(logging.INFO, logger="paperline"):
        execute(ctx)
        first = [r.getMessage() for r in caplog.records if "running" in r.getMessage()]
        caplog.clear()
        execute(ctx, force=True)
        second = [r.getMessage() for r in caplog.records if "running" in r.getMessage()]
    assert first == ["fake:make running"]
    assert len(second) == 1 and second[0].startswith("fake:make running (usually ") and second[0].endswith(" s)")
    assert len(PR.recorded(ctx.paths, "fake", "make", "smoke")) == 2
