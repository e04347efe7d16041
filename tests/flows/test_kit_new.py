"""`paperline new <slug>`: a skeleton whose own tests pass, touching only its own folders and generated files;
a paper that is not among the nineteen cards joins the registry and the suite stays green with it."""

from __future__ import annotations

import os
import subprocess
import sys
from xml.etree import ElementTree

import pytest

from flows.kit.new import targets
from tests.conftest import ROOT, copy_project, error_line, paperline

NEW = "toy-median"  # not one of the nineteen cards: a paper of the user's own
GENERATED = {"dvc.yaml", "params.yaml", "prefect.yaml", "README.md"}
# the suite's tests that look at every paper: they must stay green with a 20th one present
REGISTRY_WIDE = [
    "tests/flows/test_registry.py",
    "tests/flows/test_deployments.py",
    "tests/flows/test_readme_verdicts.py",
    "tests/flows/test_conformance.py",
    "tests/flows/test_test_layout.py",
    "tests/flows/test_verdict_records.py",
    "tests/flows/test_cli_habits.py",
    "tests/infra/test_docs_site.py",
    "tests/test_style.py",
]


def test_a_paper_of_your_own_without_a_title_is_one_error_line():
    line = error_line(paperline("new", "no-such-paper", cwd=ROOT))
    assert "'no-such-paper' is not one of the planned cards" in line and "--title" in line and "medgmae" in line
    assert not (ROOT / "flows/no_such_paper").exists()


@pytest.mark.parametrize(
    "title",
    [
        "Short title",
        "A title that is far longer than one line of spec.py allows once it is indented and quoted, as some "
        "ICLR titles are: steering-based metrics for implicit planning in language models",
        "x" * 150,  # one word longer than a line
    ],
)
def test_a_long_title_renders_as_a_literal_within_the_line_limit(title):
    from flows.kit.new import string_literal

    literal = string_literal(title)
    assert eval(literal) == title  # our own literal
    assert all(len(line) <= 100 for line in literal.split("' '"))


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
    proc = paperline("new", NEW, "--title", "Toy median: a robust centre under outliers", cwd=root, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    touched = _changed(root) - before
    # its own folders and the generated files only (its plot's template: none of the others colours by estimator)
    assert touched == set(targets(NEW).values()) | GENERATED | {".dvc/plots/paperline-scatter-by-estimator.json"}
    assert len(touched) == 18
    assert "| 20 | Toy median" in (root / "README.md").read_text()  # the next free number, a row in the table
    assert f"name: {NEW}" in (root / "prefect.yaml").read_text()
    for command in ("dvc-yaml", "params", "deployments-yaml", "verdicts"):
        check = paperline(command, "--check", cwd=root, env=env)
        assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]
    assert f"{NEW}-report" in (root / "dvc.yaml").read_text()

    package = NEW.replace("-", "_")
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
            *REGISTRY_WIDE,
            "-m",
            "not stack",
            f"--junitxml={tmp_path / 'junit.xml'}",
        ],
        cwd=root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    tail = run.stdout[-3000:] + run.stderr[-2000:]
    assert run.returncode == 0, tail
    cases = ElementTree.parse(tmp_path / "junit.xml").getroot().iter("testcase")
    own = {
        f"{c.get('classname')}.{c.get('name')}": [child.tag for child in c]
        for c in cases
        if package in c.get("classname", "") or NEW in c.get("name", "")
    }
    # smoke, 2 known-answer, its parts in the conformance test, at least: all ran and passed (no skip)
    assert len(own) >= 4 and not any(own.values()), own
    assert any(f"test_every_pipeline_has_its_parts[{NEW}]" in name for name in own), sorted(own)


def test_a_long_title_passes_the_style_check_once_rendered(tmp_path):
    """The rendered files are formatted before they are linted: a 90-character title on one line (as CDRA's and
    GoT-R1's did) stopped `paperline new` on E501."""
    import shutil

    from flows.kit.new import render, tidy

    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")  # the project's line limit
    title = "CDRA: critique-driven reasoning alignment with a personalised generative PRM, told at length"
    written = render(tmp_path, "toy-long-title", title)
    assert tidy(tmp_path, written)  # raises ParamsError naming ruff's complaint if a rendered line is too long
    spec = (tmp_path / "flows/toy_long_title/spec.py").read_text()
    assert max(len(line) for line in spec.splitlines()) <= 120 and "told at length" in spec
