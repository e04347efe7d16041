"""SIGKILL a running smoke pipeline at several points; a rerun completes without redoing finished work.

While the pipeline runs, a watcher keeps reading every output path: a partial
output must never be visible there (JSONL files always parse to the end).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from components.errors import DataError
from components.io import read_jsonl
from tests.conftest import paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]

OUTPUT_FOLDERS = ("data/qualitypajama", "reports/qualitypajama")  # data/sources: large, written the same way


class Watcher(threading.Thread):
    """Reads every JSONL/JSON file at an output path (not staging files) until stopped; records any partial one."""

    def __init__(self, root: Path):
        super().__init__(daemon=True)
        self.root, self.stop, self.partial, self.reads = root, threading.Event(), [], 0

    def run(self) -> None:
        while not self.stop.is_set():
            for path in self._outputs():
                self._check(path)
            self.stop.wait(0.2)

    def _outputs(self) -> list[Path]:
        found = []
        for folder in OUTPUT_FOLDERS:
            try:
                found += [
                    p
                    for p in (self.root / folder).rglob("*.json*")
                    if not any(part.startswith(".tmp-") for part in p.relative_to(self.root).parts)
                ]
            except FileNotFoundError:  # a staging folder vanished while listing: list again next round
                pass
        return found

    def _check(self, path: Path) -> None:
        try:
            if path.suffix == ".jsonl":
                read_jsonl(path, allow_empty=True)
            else:
                json.loads(path.read_text())
            self.reads += 1
        except FileNotFoundError:
            pass  # replaced between listing and reading
        except (DataError, ValueError) as exc:
            self.partial.append(f"{path}: {exc}")


def _run(root: Path, crash_at: str | None = None):
    env = {"PAPERLINE_CRASH_AT": crash_at} if crash_at else {}
    return paperline("run", "qualitypajama", "--profile", "smoke", cwd=root, env=env)


def _marker(root: Path, owner: str, stage: str) -> Path:
    return root / ".paperline/stages" / owner / f"{stage}.json"


def test_kill_at_several_points_then_resume(project):
    watcher = Watcher(project)
    watcher.start()
    try:
        # 1. during an output write: the pool file is complete in its temp file but not yet renamed
        proc = _run(project, "write:pool.jsonl")
        assert proc.returncode == -9, proc.stderr[-2000:]
        assert not (project / "data/qualitypajama/corpus").exists()
        sources_marker = _marker(project, "shared", "sources")
        assert sources_marker.is_file()
        sources_stamp = sources_marker.stat().st_mtime_ns

        # 2. between stages: corpus and curate finished and published, then the process dies
        proc = _run(project, "between:qualitypajama:curate")
        assert proc.returncode == -9
        assert sources_marker.stat().st_mtime_ns == sources_stamp, "a finished stage was recomputed"
        assert (project / "data/qualitypajama/curated/minhash-0.7.jsonl").is_file()
        curate_stamp = _marker(project, "qualitypajama", "curate").stat().st_mtime_ns

        # 3. inside a stage: killed after the second of eighteen models of the training grid (3 sizes x 3
        #    interventions x 2 seeds)
        proc = _run(project, "grid-job:qualitypajama:train:2")
        assert proc.returncode == -9
        assert not (project / "data/qualitypajama/grid").exists()
        assert _marker(project, "qualitypajama", "curate").stat().st_mtime_ns == curate_stamp

        # 4. at the end of a stage, after its work and before its outputs are published
        proc = _run(project, "stage-end:qualitypajama:fit")
        assert proc.returncode == -9
        assert not (project / "data/qualitypajama/fits").exists()
        summary = json.loads((project / "data/qualitypajama/grid/summary.json").read_text())
        assert summary == {"models": 18, "cached_models": 2, "points": 54}, (
            "the two models trained before the kill were cached"
        )
        grid_stamp = _marker(project, "qualitypajama", "train").stat().st_mtime_ns

        # 5. the rerun completes and recomputes nothing that had finished
        proc = _run(project)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert _marker(project, "qualitypajama", "train").stat().st_mtime_ns == grid_stamp
        assert "qualitypajama:fit: done" in proc.stdout and "qualitypajama:train: skipped" in proc.stdout
        assert (project / "reports/qualitypajama/claims.json").is_file()
    finally:
        watcher.stop.set()
        watcher.join()
    assert watcher.reads > 0
    assert watcher.partial == []
    leftovers = [p for f in OUTPUT_FOLDERS for p in (project / f).rglob(".tmp-*")]
    assert leftovers == []
