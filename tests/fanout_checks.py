"""The fan-out check every pipeline's smoke test applies to its grid stage (one helper, not a copy per pipeline).

After the smoke run (its grid on the local runner), the grid stage runs again on a
process pool through ``PAPERLINE_RUNNER`` (what ``--runner`` sets), and every output
file must come out the same: JSON and JSON lines without timing keys, arrays and
other files byte for byte. So ``--runner process:N|dask|ray`` reaches the stage and
does not change its results.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from tests.conftest import paperline

TIMING = frozenset({"seconds", "steps_per_s", "wall_s", "cpu_s", "run_seconds", "pid", "elapsed", "time_s"})


def _strip(value: Any, ignore: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, ignore) for k, v in value.items() if k not in ignore}
    if isinstance(value, list):
        return [_strip(v, ignore) for v in value]
    return value


def _content(path: Path, ignore: frozenset[str]) -> Any:
    if path.suffix == ".jsonl":
        return [_strip(json.loads(line), ignore) for line in path.read_text().splitlines() if line.strip()]
    if path.suffix == ".json":
        return _strip(json.loads(path.read_text()), ignore)
    if path.suffix == ".npz":
        with np.load(path) as z:
            return {k: hashlib.sha256(np.ascontiguousarray(z[k]).tobytes()).hexdigest() for k in z.files}
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(folder: Path, ignore: frozenset[str] = TIMING) -> dict[str, Any]:
    """Every file under ``folder`` (Great Expectations results under ``_checks`` left out: they carry run times)."""
    return {
        str(p.relative_to(folder)): _content(p, ignore)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "_checks" not in p.relative_to(folder).parts
    }


def assert_fan_out_matches_local(
    project: Path, owner: str, stage: str, output: str, *, runner: str = "process:2", ignore: frozenset[str] = TIMING
) -> None:
    local = snapshot(project / output, ignore)
    assert local, f"{output}: nothing to compare (run the smoke profile first)"
    # every job recomputed in the pool: the kit's grid would otherwise answer from the local run's cache
    env = {"PAPERLINE_RUNNER": runner, "PAPERLINE_GRID_CACHE": "refresh"}
    proc = paperline("stage", owner, stage, "--force", cwd=project, env=env)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    reused = [int(n) for n in re.findall(r": (\d+) of \d+ jobs from the cache", log)]
    assert not any(reused), f"{owner}:{stage} took {reused} jobs from the cache instead of running them on {runner}"
    assert f"on the {runner} runner" in log, f"{owner}:{stage} did not fan out on {runner}:\n{log[-2000:]}"
    pooled = snapshot(project / output, ignore)
    assert sorted(pooled) == sorted(local)
    for name in local:
        assert pooled[name] == local[name], f"{output}/{name} differs between the local and the {runner} runner"
