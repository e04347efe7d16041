"""The command line a user meets first: help, show, and the generated-file checks."""

import pytest

from tests.conftest import PLANNED_IN_COPY, ROOT, paperline

pytestmark = pytest.mark.integration


def test_help_lists_every_command():
    out = paperline("--help", cwd=ROOT, timeout=120)
    assert out.returncode == 0
    for command in (
        "list",
        "show",
        "run",
        "stage",
        "report",
        "repro",
        "server",
        "scaling-fit",
        "curate",
        "dvc-yaml",
        "params",
    ):
        assert command in out.stdout


def test_show_prints_stages_and_params_per_profile():
    out = paperline("show", "qualitypajama", cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    for text in ("corpus", "train", "report", "[smoke]", "[default]", "[full]", "minhash-0.7"):
        assert text in out.stdout


def test_show_says_a_planned_card_is_not_implemented_yet(planned_project):
    root, env = planned_project
    unimplemented = paperline("show", PLANNED_IN_COPY, cwd=root, env=env, timeout=120)
    assert "not implemented yet" in unimplemented.stdout


@pytest.mark.parametrize("command", ["dvc-yaml", "params"])
def test_generated_files_are_up_to_date(command):
    out = paperline(command, "--check", cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "up to date" in out.stdout
