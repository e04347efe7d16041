"""The commands `paperline schedule` prints work as printed (issue 47): pasted into a shell with no
PREFECT_API_URL, `paperline trigger ...` and `PREFECT_API_URL=... prefect deployment run ...` each create a flow
run of the deployment on the server the schedule went to (Prefect's CLI alone looked at a server of its own and
said "Deployment not found")."""

from __future__ import annotations

import os
import subprocess

import pytest

from flows.runtime import prefect_server
from flows.runtime.settings import Paths
from tests.conftest import ROOT, paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]
NAME = "paperline-run/qualitypajama"


def _clean(proc) -> None:
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


def _runs(url: str) -> int:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: url}), get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name(NAME)
        from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

        flt = DeploymentFilter(id=DeploymentFilterId(any_=[deployment.id]))
        return len(client.read_flow_runs(deployment_filter=flt))


def test_printed_schedule_commands_run_as_printed(project, prefect_api, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)  # as a user has it
    monkeypatch.delenv("PREFECT_HOME", raising=False)
    prefect_server.record(Paths(project), prefect_api)  # the full server, as `paperline server start` records it
    scheduled = paperline("schedule", "qualitypajama", "--profile", "smoke", cwd=project)
    _clean(scheduled)
    lines = scheduled.stdout.splitlines()
    commands = [line.split(": ", 1)[1] for line in lines if line.lstrip().startswith(("run it now:", "or with"))]
    assert commands == [
        f"paperline trigger '{NAME}'",
        f"PREFECT_API_URL={prefect_api} prefect deployment run '{NAME}'",
    ], scheduled.stdout
    worker = next(line for line in lines if line.startswith("a worker that runs it: "))
    assert worker.endswith(f"PREFECT_API_URL={prefect_api} prefect worker start --pool paperline")

    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"  # `paperline`, `prefect` as installed
    before = _runs(prefect_api)
    for n, command in enumerate(commands, 1):
        proc = subprocess.run(["bash", "-c", command], cwd=project, env=env, capture_output=True, text=True)
        _clean(proc)
        assert "not found" not in proc.stdout + proc.stderr
        assert _runs(prefect_api) == before + n, command


def test_trigger_names_the_way_out_for_an_unknown_deployment(project, prefect_api, monkeypatch):
    monkeypatch.delenv("PREFECT_HOME", raising=False)
    proc = paperline("trigger", "no-such-flow/no-such-deployment", cwd=project)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "`paperline deployments` lists them" in proc.stderr
