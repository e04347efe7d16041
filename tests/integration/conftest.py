"""Shared fixtures for tests that run real pipelines: one Prefect server, scratch project copies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flows.runtime import prefect_server
from flows.runtime.settings import Paths
from flows.runtime.workspace import set_profile
from tests.conftest import copy_project, paperline


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory):
    """One local Prefect server for the whole session (starting one costs 10-25 s here)."""
    home = tmp_path_factory.mktemp("prefect-server")
    (home / "params.yaml").write_text("profile: smoke\n")
    (home / "dvc.yaml").write_text("stages: {}\n")
    paths = Paths(home)
    paths.state.mkdir(parents=True, exist_ok=True)
    old = os.environ.pop("PREFECT_API_URL", None)
    url = prefect_server.start(paths, owned=True)  # ends with this session even if it is killed
    os.environ["PREFECT_API_URL"] = url
    yield url
    prefect_server.stop(paths)
    os.environ.pop("PREFECT_API_URL", None)
    if old:
        os.environ["PREFECT_API_URL"] = old


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    """Extracted sources are cached once for every project copy of the session."""
    cache = tmp_path_factory.mktemp("file-cache")
    os.environ["PAPERLINE_CACHE_DIR"] = str(cache)
    yield cache
    os.environ.pop("PAPERLINE_CACHE_DIR", None)


@pytest.fixture
def project(tmp_path, prefect_api, shared_cache) -> Path:
    """A fresh scratch copy of the repo with the smoke profile selected."""
    root = copy_project(tmp_path / "proj")
    set_profile(root, "smoke")
    return root


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory, prefect_api, shared_cache):
    """A copy in which `paperline run qualitypajama --profile smoke` ran once (the real entry point)."""
    root = copy_project(tmp_path_factory.mktemp("smoke") / "proj")
    proc = paperline("run", "qualitypajama", "--profile", "smoke", cwd=root)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return root, proc
