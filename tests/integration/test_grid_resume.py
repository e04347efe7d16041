"""A grid stage killed after some jobs finished resumes from them, in a paper other than QualityPajama (whose
train stage has its own cache): CER-GOD's fit stage on the kit's grid (``flows/runtime/grid.py``)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from components.io import read_jsonl
from flows.runtime.workspace import set_profile
from tests.conftest import copy_project, paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]

RUNS = "data/cer-god/runs"


def _run(root, crash_at: str | None = None):
    env = {"PAPERLINE_CRASH_AT": crash_at} if crash_at else {}
    return paperline("run", "cer-god", "--profile", "smoke", cwd=root, env=env)


def _cached(proc) -> tuple[int, int]:
    found = re.findall(r"cer-god fits: (\d+) of (\d+) jobs from the cache", proc.stdout + proc.stderr)
    assert found, proc.stderr[-3000:]
    cached, total = found[-1]
    return int(cached), int(total)


def _outputs(root) -> tuple[list[dict], dict[str, np.ndarray], list[dict]]:
    rows = [{k: v for k, v in r.items() if k != "seconds"} for r in read_jsonl(root / RUNS / "runs.jsonl")]
    with np.load(root / RUNS / "scores.npz") as z:
        arrays = {k: z[k] for k in z.files}
    claims = json.loads((root / "reports/cer-god/claims.json").read_text())["claims"]
    keep = ("id", "verdict", "effect", "ci_low", "ci_high", "n_clusters", "n_units")
    return rows, arrays, [{k: c.get(k) for k in keep} for c in claims]


def test_a_killed_grid_stage_reruns_only_the_jobs_that_had_not_finished(project, tmp_path):
    killed = _run(project, "grid-job:cer-god:fit:3")  # SIGKILL once three fits have finished
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert not (project / RUNS).exists()  # nothing half-written at the output path

    resumed = _run(project)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    cached, total = _cached(resumed)
    assert 3 <= cached < total, (cached, total)  # the finished fits came from the cache, the rest ran

    clean = copy_project(tmp_path / "clean")
    set_profile(clean, "smoke")
    fresh = _run(clean)
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    assert _cached(fresh)[0] == 0

    rows, arrays, claims = _outputs(project)
    rows0, arrays0, claims0 = _outputs(clean)
    assert rows == rows0 and claims == claims0
    assert arrays.keys() == arrays0.keys() and all(np.array_equal(arrays[k], arrays0[k]) for k in arrays)
