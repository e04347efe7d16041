"""The CLI's infra options: `--runner`, `--cron` and `--set` are validated before any work (no server started)."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from components.errors import PaperlineError, ParamsError
from flows.cli import app
from tests.conftest import fake_checkout


@pytest.fixture(autouse=True)
def _restore_environment(tmp_path, monkeypatch):
    """The commands set environment defaults (apply_env_defaults); keep them out of later tests."""
    saved = dict(os.environ)
    monkeypatch.setenv("PAPERLINE_ROOT", str(tmp_path))
    fake_checkout(tmp_path)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_run_rejects_an_unknown_runner_naming_it(monkeypatch):
    monkeypatch.delenv("PAPERLINE_RUNNER", raising=False)
    result = CliRunner().invoke(app, ["run", "qualitypajama", "--runner", "spark"])
    assert isinstance(result.exception, ParamsError) and "runner 'spark'" in str(result.exception)
    assert "PAPERLINE_RUNNER" not in os.environ


def test_schedule_checks_its_input_before_any_server_starts(monkeypatch, tmp_path):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    bad = CliRunner().invoke(app, ["schedule", "qualitypajama", "--runner", "dask:zero"])
    assert isinstance(bad.exception, ParamsError)
    cron = CliRunner().invoke(app, ["schedule", "qualitypajama", "--cron", "every day"])
    assert isinstance(cron.exception, ParamsError) and "--cron 'every day'" in str(cron.exception)
    key = CliRunner().invoke(app, ["schedule", "qualitypajama", "--cron", "0 3 * * *", "--set", "training.nope=1"])
    assert isinstance(key.exception, ParamsError) and "training.nope" in str(key.exception)
    assert not (tmp_path / ".paperline" / "prefect-temporary-server.log").exists()  # no temporary server was started


def test_a_prefect_api_url_where_nothing_answers_is_named_before_any_work(monkeypatch):
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    for args in (["deployments"], ["schedule", "qualitypajama", "--cron", "0 3 * * *"], ["repro", "ofmu"]):
        result = CliRunner().invoke(app, args)
        assert isinstance(result.exception, PaperlineError) and "PREFECT_API_URL=http://127.0.0.1:9/api" in str(
            result.exception
        )


def test_dvc_plots_page_is_not_tracked():
    """`dvc plots show` writes dvc_plots/index.html in the checkout; git must ignore it."""
    import subprocess

    from tests.conftest import ROOT

    proc = subprocess.run(["git", "check-ignore", "-q", "dvc_plots/index.html"], cwd=ROOT)
    assert proc.returncode == 0
