"""MLflow's basic-auth app as the native stack starts it by default: 401 without credentials, in with them.

Only the services MLflow needs (PostgreSQL, the moto S3 server, MLflow), started by the same
``Stack`` methods as the full stack of test_native_stack.py (which runs every flow with auth on),
so this module adds about 40 s rather than a second full stack.
"""

from __future__ import annotations

import base64
import stat
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from scripts.services import native_stack
from tests.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.stack]


@pytest.fixture(scope="module")
def mlflow_stack(tmp_path_factory):
    reason = native_stack.why_not_startable()
    if reason:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("mlflow-auth-stack")
    stack = native_stack.Stack(folder, ROOT)
    try:
        stack.postgres()
        stack.s3()
        proc = stack.mlflow()
        uri = stack.state["env"]["MLFLOW_TRACKING_URI"]
        native_stack._wait(
            lambda: native_stack._http_ok(f"{uri}/health"), "mlflow server", 180, proc, stack.dir / "mlflow.log"
        )
        yield stack
    finally:
        native_stack.stop(folder)


def _session_cmdlines(leader: int) -> list[str]:
    """Command lines of every process in the session ``leader`` started (MLflow's server and its workers)."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            fields = (proc / "stat").read_text()
            if proc.name.isdigit() and int(fields[fields.rindex(")") + 2 :].split()[3]) == leader:
                out.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _get(url: str, user: str | None = None, password: str | None = None) -> int:
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as resp:
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code


def test_mlflow_refuses_a_client_without_credentials_and_accepts_one_with_them(mlflow_stack, monkeypatch):
    env = mlflow_stack.state["env"]
    assert mlflow_stack.state["mlflow_auth"] == "on"
    uri, user, password = env["MLFLOW_TRACKING_URI"], env["MLFLOW_TRACKING_USERNAME"], env["MLFLOW_TRACKING_PASSWORD"]
    api = f"{uri}/api/2.0/mlflow/experiments/search?max_results=1"
    assert _get(api) == 401
    assert _get(api, user, password + "x") == 401
    assert _get(api, user, password) == 200
    assert _get(f"{uri}/health") == 200  # the one open route, for health checks and probes

    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("MLFLOW_TRACKING_USERNAME")
    monkeypatch.delenv("MLFLOW_TRACKING_PASSWORD")
    with pytest.raises(MlflowException, match="401"):
        MlflowClient(uri).search_experiments(max_results=1)

    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", user)
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", password)
    client = MlflowClient(uri)  # what every client of the stack gets from stack.env
    run = client.create_run(client.create_experiment("auth-probe"))
    client.log_metric(run.info.run_id, "loss", 1.5)
    client.log_text(run.info.run_id, "through the server to S3", "note.txt")
    client.set_terminated(run.info.run_id)
    assert client.get_run(run.info.run_id).data.metrics == {"loss": 1.5}
    assert [a.path for a in client.list_artifacts(run.info.run_id)] == ["note.txt"]


def test_the_admin_password_goes_by_environment_and_0600_files_only(mlflow_stack):
    password = mlflow_stack.state["env"]["MLFLOW_TRACKING_PASSWORD"]
    lines = _session_cmdlines(mlflow_stack.state["pids"]["mlflow"])
    assert any("--app-name basic-auth" in line for line in lines)
    assert not any(password in line for line in lines), "the MLflow admin password is on a command line"
    ini = mlflow_stack.dir / "mlflow-auth.ini"
    assert password not in ini.read_text() and "admin_username = admin" in ini.read_text()
    for path in (ini, mlflow_stack.dir / "stack.env", mlflow_stack.dir / "stack.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{path.name} is readable by others"
    assert f'MLFLOW_TRACKING_PASSWORD="{password}"' in (mlflow_stack.dir / "stack.env").read_text()
