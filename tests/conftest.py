"""Test-wide settings: quiet, offline, and every run's state in a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows.runtime import prefect_server
from flows.runtime.settings import Paths
from flows.runtime.workspace import set_profile

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session", autouse=True)
def _quiet_env(tmp_path_factory):
    state = tmp_path_factory.mktemp("state")
    env = {
        "PREFECT_HOME": str(state / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "DVC_NO_ANALYTICS": "1",
        "GX_ANALYTICS_ENABLED": "false",
        "TQDM_DISABLE": "1",
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    os.environ.pop("PAPERLINE_ROOT", None)
    yield
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def tool(name: str, *args: str, cwd: Path, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run a console script of this venv (``paperline``, ``dvc``) in ``cwd``, with the venv first on PATH."""
    full_env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **(env or {})}
    return subprocess.run([str(BIN / name), *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)


def paperline(*args: str, cwd: Path, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run the real ``paperline`` entry point in ``cwd``."""
    return tool("paperline", *args, cwd=cwd, env=env, timeout=timeout)


def copy_project(dest: Path) -> Path:
    """A temporary copy of the repo (code, params, dvc.yaml, a fresh git repo) to run pipelines in."""
    from flows.runtime.workspace import copy_project as copy

    return copy(ROOT, dest)


def error_line(proc: subprocess.CompletedProcess) -> str:
    """The one-line ``error: ...`` a bad input must end in: exit code 2, no traceback, the line returned."""
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ")
    return last


# Fixtures for tests that run real pipelines (tests/flows/<pipeline>/ smoke tests, tests/integration):
# one Prefect server per session, a shared source cache, scratch project copies.


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
