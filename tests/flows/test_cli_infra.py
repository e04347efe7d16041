"""The CLI's infra options: `--runner` is validated before any work; schedule/deployments need a server."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from components.errors import PaperlineError, ParamsError
from flows.cli import app


@pytest.fixture(autouse=True)
def _restore_environment(tmp_path, monkeypatch):
    """The commands set environment defaults (apply_env_defaults); keep them out of later tests."""
    saved = dict(os.environ)
    monkeypatch.setenv("PAPERLINE_ROOT", str(tmp_path))
    (tmp_path / "params.yaml").write_text("profile: smoke\n")
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_run_rejects_an_unknown_runner_naming_it(monkeypatch):
    monkeypatch.delenv("PAPERLINE_RUNNER", raising=False)
    result = CliRunner().invoke(app, ["run", "qualitypajama", "--runner", "spark"])
    assert isinstance(result.exception, ParamsError) and "runner 'spark'" in str(result.exception)
    assert "PAPERLINE_RUNNER" not in os.environ


def test_schedule_checks_the_runner_and_needs_a_server(monkeypatch, tmp_path):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    bad = CliRunner().invoke(app, ["schedule", "qualitypajama", "--runner", "dask:zero"])
    assert isinstance(bad.exception, ParamsError)
    no_server = CliRunner().invoke(app, ["schedule", "qualitypajama", "--cron", "0 3 * * *"])
    assert isinstance(no_server.exception, PaperlineError) and "PREFECT_API_URL" in str(no_server.exception)
    listing = CliRunner().invoke(app, ["deployments"])
    assert isinstance(listing.exception, PaperlineError)
