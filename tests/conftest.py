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

# `make test` runs on two pytest-xdist workers (`-n 2`), scheduled by file: a file's tests run on one worker, so
# its module-scoped fixtures (a trained model, the native stack) are built once. The files that read the
# session's QualityPajama smoke run (`smoke_run`) form one group, so that run happens once too
# (tests/flows/test_test_layout.py keeps this list true). xdist's own `--dist loadgroup` would do this with
# marks, but with pytest 9 it ignores them (measured: a marked file's tests went to both workers).
SMOKE_RUN_FILES = frozenset(
    {
        "tests/flows/qualitypajama/test_qualitypajama_smoke.py",
        "tests/flows/runtime/test_mlflow_complete.py",
        "tests/flows/runtime/test_variants.py",
        "tests/integration/test_hardening_paths_lock.py",
    }
)


@pytest.hookimpl(optionalhook=True)  # `pytest -p no:xdist` (no xdist hooks) must still run
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "qualitypajama-smoke-run" if path in SMOKE_RUN_FILES else path

    return ByFile(config, log)


def pytest_configure(config):
    """On a worker, torch and the subprocesses it starts take one thread each, so two workers fill two cores.

    Commands run by tests in scratch copies get a temporary Prefect server each (``PAPERLINE_SERVER_IDLE=0``)
    rather than a shared one that would outlive the copy by 15 minutes;
    tests/integration/test_shared_server.py checks the shared server itself."""
    os.environ.setdefault(prefect_server.IDLE_ENV, "0")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ.setdefault(var, "1")
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)


def tool(name: str, *args: str, cwd: Path, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run a console script of this venv (``paperline``, ``dvc``) in ``cwd``, with the venv first on PATH."""
    full_env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **(env or {})}
    return subprocess.run(
        [str(BIN / name), *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout
    )


def paperline(*args: str, cwd: Path, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run the real ``paperline`` entry point in ``cwd``."""
    return tool("paperline", *args, cwd=cwd, env=env, timeout=timeout)


def copy_project(dest: Path) -> Path:
    """A temporary copy of the repo (code, params, dvc.yaml, a fresh git repo) to run pipelines in."""
    from flows.runtime.workspace import copy_project as copy

    return copy(ROOT, dest)


def fake_checkout(folder: Path) -> Path:
    """Make ``folder`` a minimal paperline checkout (``PAPERLINE_ROOT`` must name one: params.yaml and dvc.yaml)."""
    (folder / "params.yaml").write_text("profile: smoke\n")
    (folder / "dvc.yaml").write_text("stages: {}\n")
    return folder


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
    fake_checkout(home)
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


# Every card of ../shared/papers/ has a pipeline now; the behaviour for a planned card (listed, "has no pipeline
# yet") is tested on a copy without one of them.
PLANNED_IN_COPY = "medgmae"


@pytest.fixture
def planned_project(tmp_path) -> tuple[Path, dict[str, str]]:
    """A copy of the project in which ``PLANNED_IN_COPY`` is a planned card (its pipeline package removed), and the
    environment that makes ``paperline`` import the copy's code."""
    import shutil

    root = copy_project(tmp_path / "planned")
    shutil.rmtree(root / "flows" / PLANNED_IN_COPY.replace("-", "_"))
    (root / "docs" / "verdicts" / f"{PLANNED_IN_COPY}.json").unlink(missing_ok=True)  # nor a recorded run
    return root, {"PYTHONPATH": str(root)}


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory, prefect_api, shared_cache):
    """A copy in which `paperline run qualitypajama --profile smoke` ran once (the real entry point)."""
    root = copy_project(tmp_path_factory.mktemp("smoke") / "proj")
    proc = paperline("run", "qualitypajama", "--profile", "smoke", cwd=root)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return root, proc
