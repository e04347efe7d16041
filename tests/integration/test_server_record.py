"""One server record: `paperline schedule` and `deployments` talk to the server `paperline server start`
recorded in the checkout (not a temporary one of their own), and fall back to a temporary server only
when none is up; no command prints a traceback on its way out."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from flows.runtime import prefect_server
from flows.runtime.settings import Paths
from tests.conftest import paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.fixture
def as_user(project, monkeypatch):
    """The copy as a user has it: no PREFECT_API_URL, and its own Prefect database (.paperline/prefect),
    so a temporary server would hold other deployments than the recorded one."""
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("PREFECT_HOME", raising=False)
    return project


def _clean(proc) -> None:
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


def test_schedule_and_deployments_use_the_recorded_server(as_user, prefect_api):
    root = as_user
    prefect_server.record(Paths(root), prefect_api)  # the session's server, as `paperline server start` records it
    assert paperline("server", "status", cwd=root).stdout.strip() == prefect_api

    scheduled = paperline("schedule", "qualitypajama", "--cron", "0 3 * * 1", "--profile", "smoke", cwd=root)
    _clean(scheduled)
    assert "no Prefect server with a scheduler was running" not in scheduled.stderr

    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: prefect_api}), get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("paperline-run/qualitypajama")
        assert deployment.parameters["root"] == str(root)  # this copy's deployment, on the recorded server
        assert [s.schedule.cron for s in deployment.schedules] == ["0 3 * * 1"]
        # one made on the recorded server by someone else: `paperline deployments` must show it too
        flow_id = client.create_flow_from_name("server-record-probe")
        client.create_deployment(flow_id=flow_id, name=root.parent.name, parameters={"root": str(root)})

    listed = paperline("deployments", "--json", cwd=root)
    _clean(listed)
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["paperline-run/qualitypajama"]["schedules"] == ["0 3 * * 1"]
    assert f"server-record-probe/{root.parent.name}" in rows
    assert not (root / ".paperline" / "prefect-temporary-server.log").exists()


def test_with_no_server_a_temporary_one_keeps_the_deployment_in_the_checkout(as_user):
    root = as_user
    assert paperline("server", "status", cwd=root).stdout.strip() == "not running"

    scheduled = paperline("schedule", "ofmu", "--cron", "0 4 * * *", cwd=root)
    _clean(scheduled)
    assert "no Prefect server with a scheduler was running" in scheduled.stderr
    assert "paperline server start" in scheduled.stderr

    listed = paperline("deployments", "--json", cwd=root)  # another temporary server, on the same database
    _clean(listed)
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["paperline-run/ofmu"]["schedules"] == ["0 4 * * *"]
    assert rows["paperline-run/ofmu"]["parameters"]["root"] == str(root)
    assert paperline("server", "status", cwd=root).stdout.strip() == "not running"  # nothing left recorded


def _servers_of(root) -> list[int]:
    """PIDs of Prefect servers running on this checkout's database (their PREFECT_HOME is in the checkout)."""
    home = f"PREFECT_HOME={root}/.paperline/prefect".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            env = Path(f"/proc/{entry.name}/environ").read_bytes()
        except OSError:
            continue
        if b"prefect\0server\0start" in cmd and home in env.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc (Linux)")
def test_run_with_no_server_starts_its_own_and_leaves_none_even_on_bad_input(as_user):
    """`paperline run` with no server starts its own temporary one (API only, its log in the checkout) beside
    the params check, and stops it when the command ends, successful or refused."""
    root = as_user
    bad = paperline("run", "optimistic-o2nc", "--profile", "smoke", "--set", "nonsense.key=1", cwd=root)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1].startswith("error: ")
    assert not _servers_of(root)

    good = paperline("run", "optimistic-o2nc", "--profile", "smoke", "--no-track", cwd=root)
    _clean(good)
    assert "starting a temporary Prefect server" in good.stderr
    log = (root / ".paperline" / "prefect-temporary-server.log").read_text()
    port = re.findall(r"127\.0\.0\.1:(\d+)/api", log)[-1]
    assert not prefect_server.healthy(f"http://127.0.0.1:{port}/api")
    assert not _servers_of(root)
    assert paperline("server", "status", cwd=root).stdout.strip() == "not running"  # nothing recorded
