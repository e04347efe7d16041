"""Fixtures of the runtime tests: an MLflow tracker on a SQLite store in a temporary checkout."""

from __future__ import annotations

import pytest

from tests.conftest import fake_checkout


@pytest.fixture
def tracker(tmp_path, monkeypatch):
    """A parent run of experiment ``toy`` on ``tmp_path/mlflow.db``, finished after the test."""
    pytest.importorskip("mlflow")
    from flows.runtime.tracking import Tracker

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("PAPERLINE_ROOT", str(fake_checkout(tmp_path)))
    t = Tracker("toy", "toy-run", {"paper": "toy", "git_commit": "0" * 40})
    yield t
    t.finish()
