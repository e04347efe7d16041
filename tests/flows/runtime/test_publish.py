"""A stage's outputs are published as one set: SIGKILL at every rename never leaves a mix a reader trusts.

The real qualitypajama stage specs (6 report outputs) run a fake writer in a child process, so a kill
(the ``publish:<owner>:<stage>:<i>`` crash seam) hits the real publish code; readers are the real ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flows.cli_views import last_claims, print_show, report_problem, write_index
from flows.registry import get_paper
from flows.runtime import publish as pub
from flows.runtime.publish import IncompleteOutputs, clean_stale_staging, read_marker
from flows.runtime.settings import Paths

WRITER = """
import json
from pathlib import Path


def run(ctx):
    tag = f"level={ctx.params.claims.level}"
    for rel in (*ctx.stage.outs, *ctx.stage.metrics, *ctx.stage.plots):
        out = ctx.output(rel)
        if Path(rel).suffix:
            doc = {"profile": "smoke", "claims": [{"id": "C1", "verdict": "reproduced", "statement": tag}]}
            out.write_text(json.dumps(doc) if rel.endswith("claims.json") else tag)
        else:
            out.mkdir()
            (out / "part.txt").write_text(tag)
    return {}
"""

CHILD = """
import dataclasses, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from flows.qualitypajama.params import PRESETS, Params
from flows.registry import get_paper
from flows.runtime.params import resolve
from flows.runtime.settings import Paths
from flows.runtime.stages import StageContext, execute
paper = get_paper("qualitypajama")
stage = dataclasses.replace(paper.stage(sys.argv[3]), module="fake_set_writer")
p = resolve(Params, PRESETS, slug="qualitypajama", profile="smoke", overrides=sys.argv[4:])
execute(StageContext(paper, stage, p, "smoke", Paths(Path(sys.argv[1]))), force=True)
"""

REPORT = get_paper("qualitypajama").stage("report")
REPORT_OUTS = (*REPORT.outs, *REPORT.metrics, *REPORT.plots)


def run_stage(root: Path, stage: str, level: float, crash_at: str | None = None) -> subprocess.CompletedProcess:
    (root / "mod").mkdir(exist_ok=True)
    (root / "mod" / "fake_set_writer.py").write_text(textwrap.dedent(WRITER))
    env = {k: v for k, v in os.environ.items() if k != "PAPERLINE_CRASH_AT"}
    if crash_at:
        env["PAPERLINE_CRASH_AT"] = crash_at
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(root / "mod"), stage, f"claims.level={level}"],
        env=env,
        capture_output=True,
        text=True,
    )


def tags(root: Path) -> set[str]:
    """The run tags found across the published report outputs (two tags = a mix of two runs)."""
    found = set()
    for rel in REPORT_OUTS:
        path = root / rel
        if path.is_dir():
            path = path / "part.txt"
        if path.is_file():
            text = path.read_text()
            found.add(json.loads(text)["claims"][0]["statement"] if rel.endswith("claims.json") else text)
    return found


def test_report_stage_has_six_outputs():
    assert len(REPORT_OUTS) == 6


@pytest.mark.parametrize("renames_done", range(len(REPORT_OUTS) + 1))
def test_sigkill_at_every_rename_never_shows_a_mix(tmp_path, capsys, renames_done):
    paths = Paths(tmp_path)
    assert run_stage(tmp_path, "report", 0.95).returncode == 0
    assert last_claims(paths, "qualitypajama")["claims"][0]["statement"] == "level=0.95"

    proc = run_stage(tmp_path, "report", 0.9, crash_at=f"publish:qualitypajama:report:{renames_done}")
    assert proc.returncode == -9, proc.stderr[-2000:]
    if 0 < renames_done < len(REPORT_OUTS):
        assert tags(tmp_path) == {"level=0.95", "level=0.9"}, "the kill should have left a mix on disk"
    assert read_marker(paths, "qualitypajama", "report")["state"] == "publishing"

    # every reader refuses the folder, with one line naming the stage
    problem = report_problem(paths, "qualitypajama")
    assert problem and "qualitypajama:report are incomplete" in problem and "\n" not in problem
    assert last_claims(paths, "qualitypajama") is None
    print_show(paths, "qualitypajama")
    shown = capsys.readouterr().out
    assert "last claims: not shown: reports/qualitypajama: the outputs of qualitypajama:report" in shown
    assert "level=" not in shown
    index = write_index(paths).read_text()
    assert "level=0.9" not in index and "level=0.95" not in index and "incomplete" in index

    # the rerun publishes a whole set and removes the dead run's staging leftovers
    assert run_stage(tmp_path, "report", 0.9).returncode == 0
    assert tags(tmp_path) == {"level=0.9"}
    assert last_claims(paths, "qualitypajama")["claims"][0]["statement"] == "level=0.9"
    assert read_marker(paths, "qualitypajama", "report")["state"] == "complete"
    assert not list((tmp_path / "reports" / "qualitypajama").rglob(".tmp-*"))


def test_next_stage_refuses_outputs_of_an_interrupted_publish(tmp_path):
    assert run_stage(tmp_path, "fit", 0.95).returncode == 0
    assert run_stage(tmp_path, "fit", 0.9, crash_at="publish:qualitypajama:fit:1").returncode == -9
    proc = run_stage(tmp_path, "report", 0.9)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert "IncompleteOutputs: data/qualitypajama/fits: the outputs of qualitypajama:fit are incomplete" in last
    assert not (tmp_path / "reports" / "qualitypajama" / "claims.json").exists()
    with pytest.raises(IncompleteOutputs, match="rerun it: paperline run qualitypajama"):
        pub.check_published(Paths(tmp_path), "data/qualitypajama/fits/fits.json")


def test_markers_of_older_versions_and_missing_markers_are_trusted(tmp_path):
    paths = Paths(tmp_path)
    assert pub.is_complete({"fingerprint": "x", "outs": {}})  # written before markers had a state
    pub.check_published(paths, "data/qualitypajama/fits")  # no marker: outputs from `dvc pull`/`dvc checkout`
    marker = pub.marker_path(paths, "qualitypajama", "fit")
    marker.parent.mkdir(parents=True)
    marker.write_text("{not json")
    with pytest.raises(IncompleteOutputs):
        pub.check_published(paths, "data/qualitypajama/fits")


def test_staging_cleanup_keeps_live_writers_folders(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    folder = tmp_path / "data" / "fake"
    folder.mkdir(parents=True)
    live = [
        folder / f".tmp-out-{os.getppid()}-ab12cd34",
        folder / f".tmp-out-old-{os.getppid()}-0011aabb",
        folder / f".tmp-out-{os.getpid()}-ffff0000",
    ]
    stale = [
        folder / f".tmp-out-{dead.pid}-ab12cd34",
        folder / f".tmp-out-old-{dead.pid}-00aa11bb",
        folder / ".tmp-out-old",
        folder / ".tmp-out-k3j_z9q2",
    ]
    for path in (*live, *stale):
        path.mkdir()
    removed = clean_stale_staging(Paths(tmp_path), ["data/fake/out"])
    assert sorted(removed) == sorted(stale)
    assert all(p.is_dir() for p in live)


def test_unique_names_differ_between_calls(tmp_path):
    names = {pub.unique_name(tmp_path / "grid", "old").name for _ in range(50)}
    assert len(names) == 50 and all(n.startswith(f".tmp-grid-old-{os.getpid()}-") for n in names)
