"""`paperline new <slug>`: a skeleton whose own tests pass, touching only its own folders and generated files."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from flows.kit.new import targets
from flows.registry import papers
from tests.conftest import ROOT, copy_project, error_line, paperline

FREE = next(slug for slug, spec in papers().items() if not spec.implemented)
GENERATED = {"dvc.yaml", "params.yaml"}


def test_unknown_paper_is_one_error_line():
    line = error_line(paperline("new", "no-such-paper", cwd=ROOT))
    assert "unknown paper 'no-such-paper'" in line and "ofmu" in line


def test_an_existing_pipeline_is_never_overwritten():
    before = (ROOT / "flows/ofmu/spec.py").read_text()
    line = error_line(paperline("new", "ofmu", cwd=ROOT))
    assert "already has files" in line
    assert (ROOT / "flows/ofmu/spec.py").read_text() == before


def _changed(root) -> set[str]:
    out = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    return {line[3:] for line in out.splitlines()}


@pytest.mark.slow
@pytest.mark.integration
def test_new_renders_a_pipeline_whose_own_tests_pass(tmp_path):
    root = copy_project(tmp_path / "proj")
    env = {"PYTHONPATH": str(root)}  # the copy's code, not the installed checkout's
    before = _changed(root)
    proc = paperline("new", FREE, cwd=root, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    touched = _changed(root) - before
    assert touched == set(targets(FREE).values()) | GENERATED  # its own folders and the generated files only
    assert len(touched) == 15
    for command in ("dvc-yaml", "params"):
        check = paperline(command, "--check", cwd=root, env=env)
        assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]
    assert f"{FREE}-report" in (root / "dvc.yaml").read_text()

    package = FREE.replace("-", "_")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"tests/flows/{package}",
            f"tests/unit/{package}",
            f"tests/flows/test_conformance.py::test_every_pipeline_has_its_parts[{FREE}]",
        ],
        cwd=root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    tail = run.stdout[-3000:] + run.stderr[-2000:]
    assert run.returncode == 0, tail
    assert "4 passed" in tail and "failed" not in tail and "skipped" not in tail  # smoke, 2 known-answer, parts
