"""The native stack for the `stack` tests: started once for their module on 127.0.0.1, stopped at the end even on
failure.

PostgreSQL (Debian's server binaries; run as the `postgres` user when root), a Prefect
server on it with a process pool and worker, an MLflow server on it with artifacts on a
moto S3 server, and a Dask scheduler with two worker processes: the services of
infra/compose/compose.yml, started by scripts/services/native_stack.py with its defaults:
Prefect basic auth, MLflow's basic-auth app and Dask TLS on (the tests check that each refuses a
client without its credentials).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os

import pytest

from flows.runtime.workspace import set_profile
from tests.conftest import ROOT, copy_project


def _native_stack():
    spec = importlib.util.spec_from_file_location("native_stack", ROOT / "scripts/services/native_stack.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """The running stack's state (URLs, pids); its variables are exported into this process meanwhile.

    Module-scoped: the stack stops, and its variables (MLFLOW_TRACKING_URI, MLFLOW_TRACKING_PASSWORD,
    PAPERLINE_RUNNER, ...) are restored, before any other test module runs, so no other test logs to it
    or fans out to its Dask.
    """
    native = _native_stack()
    reason = native.why_not_startable()
    if reason:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("stack")
    running = native.start(folder, ROOT)
    old = {k: os.environ.get(k) for k in running.state["env"]}
    os.environ.update(running.state["env"])
    _refresh_dask_config()  # Dask TLS (the stack's CA and client certificate) comes by DASK_* variables
    try:
        with _prefect_settings(running.state["env"]):
            yield running.state
    finally:
        native.stop(folder)
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        _refresh_dask_config()


def _refresh_dask_config() -> None:
    """Dask reads DASK_* variables when imported; re-read them if it already was."""
    import sys

    if "dask" in sys.modules:
        import dask.config

        dask.config.refresh()


@contextlib.contextmanager
def _prefect_settings(env: dict[str, str]):
    """Point this process's Prefect client at the stack too.

    Prefect reads its settings from the environment once, when it is first imported; in a full
    `pytest` run other test modules import it at collection, before this fixture exports the
    stack's variables, so the exported PREFECT_* values are applied as temporary settings as well.
    """
    import prefect.settings as ps

    updates = {getattr(ps, k): v for k, v in env.items() if k.startswith("PREFECT_") and hasattr(ps, k)}
    with ps.temporary_settings(updates=updates):
        yield


@pytest.fixture(scope="module")
def stack_project(tmp_path_factory, stack):
    """A smoke-profile scratch copy of the repo that the stack's worker runs deployments in."""
    root = copy_project(tmp_path_factory.mktemp("stack-proj") / "proj")
    set_profile(root, "smoke")
    return root
