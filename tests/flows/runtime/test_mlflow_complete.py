"""What `paperline run` leaves in MLflow, read back from a real local store (SQLite + file artifacts):
the parent run's params (the resolved config, flattened), profile and commit tags, the report's files as
artifacts, one tag per claim verdict; a smoke run never moves ``@champion``; a failed run is FAILED with an
``error`` tag holding the line the CLI printed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import error_line, paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]

PAPER = "optimistic-o2nc"


def _store(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    return uri, {"MLFLOW_TRACKING_URI": uri}


def _parent(uri: str, experiment: str):
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None, f"no MLflow experiment {experiment!r}"
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 1, [r.info.run_name for r in parents]
    return client, parents[0]


def _artifacts(client, run_id: str, path: str | None = None) -> set[str]:
    return {a.path for a in client.list_artifacts(run_id, path)}


def test_smoke_run_logs_config_report_artifacts_and_verdicts(project, tmp_path):
    uri, env = _store(tmp_path)
    proc = paperline("run", PAPER, "--profile", "smoke", cwd=project, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    client, run = _parent(uri, PAPER)
    assert run.info.status == "FINISHED"

    # 1. the resolved config: every leaf of the smoke profile's params as a dotted param, values <= 500 chars
    from flows.registry import get_paper
    from flows.runtime.pipeline import resolve_owner_params
    from flows.runtime.settings import Paths
    from flows.runtime.tracking import flatten

    resolved = resolve_owner_params(get_paper(PAPER), Paths(project), "smoke", ()).model_dump(mode="json")
    expected = flatten(resolved)
    params = run.data.params
    assert set(params) == set(expected), set(expected) ^ set(params)
    assert any("." in k for k in params) and all(len(v) <= 500 for v in params.values())
    assert params["seed"] == json.dumps(resolved["seed"])
    short = {k: v for k, v in expected.items() if len(json.dumps(v)) < 500}
    assert all(params[k] == v if isinstance(v, str) else json.loads(params[k]) == v for k, v in short.items())
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True).stdout.strip()
    assert run.data.tags["profile"] == "smoke" and run.data.tags["git_commit"] == head

    # 2. the report's files are the run's artifacts; each claim's verdict is a tag, plus the counts
    report = project / "reports" / PAPER
    top = _artifacts(client, run.info.run_id)
    assert {"report.md", "report.html", "claims.json", "metrics.json", "figures", "params.json"} <= top, top
    figures = {p.split("/", 1)[1] for p in _artifacts(client, run.info.run_id, "figures")}
    assert figures and figures == {p.name for p in (report / "figures").iterdir()}
    doc = json.loads((report / "claims.json").read_text())
    verdicts = {c["id"]: c["verdict"] for c in doc["claims"]}
    assert set(verdicts) == {"C1", "C2", "C3"}
    assert {k: run.data.tags.get(f"verdict.{k}") for k in verdicts} == verdicts
    assert run.data.tags["verdicts"] == ", ".join(f"{k}={v}" for k, v in doc["summary"].items())
    local = client.download_artifacts(run.info.run_id, "claims.json", str(tmp_path))
    assert json.loads(Path(local).read_text()) == doc

    # a smoke run registers no model
    assert client.search_registered_models() == []


def test_a_failed_stage_ends_the_run_failed_with_the_error_line(project, tmp_path):
    uri, env = _store(tmp_path)
    # the report stage alone in a fresh copy: its input (the measure stage's runs) is missing, so the stage fails
    proc = paperline("stage", PAPER, "report", "--profile", "smoke", cwd=project, env=env)
    line = error_line(proc)
    assert "missing input" in line
    client, run = _parent(uri, PAPER)
    assert run.info.status == "FAILED"
    assert "error: " + run.data.tags["error"] == line
    assert run.data.params["seed"]  # the config was logged before the failure
    assert not any(k.startswith("verdict.") for k in run.data.tags)


def test_a_smoke_run_never_moves_champion(smoke_run, tmp_path, monkeypatch):
    """QualityPajama's train stage proposes a champion model; under the smoke profile it is not registered."""
    from mlflow import MlflowClient

    root, _ = smoke_run
    client = MlflowClient(tracking_uri=f"sqlite:///{root / '.paperline' / 'mlflow.db'}")
    exp = client.get_experiment_by_name("qualitypajama")
    trained = [
        r
        for r in client.search_runs([exp.experiment_id])
        if "mlflow.parentRunId" not in r.data.tags
        and any(k.startswith("stage_hash.qualitypajama-train") for k in r.data.tags)
    ]
    assert trained, "the session's smoke run trained no grid"
    assert all(r.info.status == "FINISHED" for r in trained)
    assert all(r.data.tags["champion.qualitypajama"] == "not moved: smoke profile" for r in trained)
    assert client.search_registered_models() == []
    local = client.download_artifacts(trained[0].info.run_id, "champion/qualitypajama.json", str(tmp_path))
    candidate = json.loads(Path(local).read_text())
    assert candidate["run_id"] and "loss" in candidate["metrics"]  # on record, for whoever promotes it
    # promoted by hand, it re-evaluates through the registry to the train stage's own losses
    from tests.champion_checks import check_champion

    check_champion(root, "qualitypajama", tmp_path / "promote", monkeypatch)
