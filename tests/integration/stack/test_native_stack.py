"""Acceptance of the multi-machine platform, on the real services started natively on 127.0.0.1.

1. a deployment run on the process worker fans the QualityPajama grid out to two Dask worker
   processes, logs to the MLflow server (Postgres + S3 artifacts); `dvc push` to S3 and
   `dvc pull` into a fresh clone restore its outputs;
2. a scheduled recurring evaluation re-evaluates three papers' champions (QualityPajama's, and VIP's and
   AssoMem's from smoke runs logged to the stack) and records their metrics; a regression planted in one
   paper fails it naming that paper while the other two pass;
3. two flow runs logging to MLflow at the same time both complete, nothing lost;
4. killing a Dask worker in the middle of a grid does not lose the run;
0. (first) the stack runs secured: Prefect refuses a client without its auth string, Dask a client
   without TLS, MLflow's basic-auth app is on (test_stack_mlflow_auth.py checks its 401), no password
   is on a command line, the credential files are mode 0600.
The tests run in file order and share the session's stack (tests 2 and 3 use test 1's run).
"""

from __future__ import annotations

import contextvars
import json
import os
import signal
import threading

import pytest

from components.io import path_md5
from flows.runtime.workspace import copy_project
from tests.conftest import paperline, tool

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.stack]

# a small grid: 2 interventions x 2 sizes x 2 seeds (the fewest the fit accepts) = 8 models, short budgets (the smoke
# profile's shape)
GRID = [
    "interventions=[raw, minhash-0.7]",
    "grid.sizes=[5000, 10000]",
    "grid.budgets=[2048, 4096]",
    "training.eval_windows=4",
]
MODELS = 8
TIMEOUT = 420


def _run_deployment(name: str, parameters: dict | None = None):
    from prefect.deployments import run_deployment

    return run_deployment(name, parameters=parameters or {}, timeout=TIMEOUT)


def _s3_keys(stack, bucket: str) -> list[str]:
    import boto3

    s3 = boto3.client("s3", endpoint_url=stack["env"]["PAPERLINE_S3_ENDPOINT"])
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]


def _session_cmdlines(leader: int) -> list[str]:
    """Command lines of every process in the session ``leader`` started (a service and its workers)."""
    from pathlib import Path

    out = []
    for proc in Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text()
            if proc.name.isdigit() and int(stat[stat.rindex(")") + 2 :].split()[3]) == leader:
                out.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except (OSError, ValueError, IndexError):
            continue
    return out


def test_0_the_stack_runs_with_authentication_and_tls(stack, tmp_path):
    import stat
    import urllib.error
    import urllib.request
    from pathlib import Path

    url = stack["env"]["PREFECT_API_URL"]
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(f"{url}/flows/filter", data=b"{}", method="POST"), timeout=10)
    assert refused.value.code == 401
    assert stack["prefect_auth"] is True and stack["env"]["PREFECT_API_AUTH_STRING"].startswith("paperline:")
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:  # the exported auth string gets in
        assert client.read_flows(limit=1) is not None

    address = stack["env"]["PAPERLINE_DASK_ADDRESS"]
    assert address.startswith("tls://")
    from distributed import Client
    from distributed.security import Security

    with pytest.raises((OSError, TimeoutError)):  # a plain-TCP client gets nowhere: the scheduler speaks TLS only
        Client(address.replace("tls://", "tcp://"), timeout=5, security=Security(require_encryption=False))
    with Client(address, timeout=30) as client:  # the stack's CA and client certificate (DASK_* variables)
        assert client.scheduler_info()["workers"]

    folder = Path(stack["env"]["PAPERLINE_SHARED_DIR"]).parents[1]
    for name in ("stack.json", "stack.env", "pg-password", "tls/dask-key.pem"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, f"{name} is readable by others"
    password = (folder / "pg-password").read_text().strip()
    assert password not in (folder / "stack.json").read_text()
    for service in ("mlflow", "prefect-server", "prefect-worker", "dask-workers"):
        lines = _session_cmdlines(stack["pids"][service])
        assert lines and not any(password in line for line in lines), (
            f"the database password is on {service}'s command line"
        )
    assert stack["mlflow_auth"] == "on" and stack["env"]["MLFLOW_TRACKING_PASSWORD"]  # every client below logs with it


def test_1_deployment_on_worker_fans_out_to_dask_logs_to_mlflow_and_dvc_s3(stack, stack_project, tmp_path):
    sets = [a for s in GRID for a in ("--set", s)]
    made = paperline("schedule", "qualitypajama", "--cron", "0 3 * * *", "--profile", "smoke", *sets, cwd=stack_project)
    assert made.returncode == 0, made.stderr[-2000:]
    listed = paperline("deployments", "--json", cwd=stack_project)
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["paperline-run/qualitypajama"]["schedules"] == ["0 3 * * *"]
    assert rows["paperline-run/qualitypajama"]["pool"] == "paperline"

    run = _run_deployment("paperline-run/qualitypajama", {"stages": ["train"]})
    assert run.state.is_completed(), run.state.message
    assert run.work_pool_name == "paperline"
    grid = stack_project / "data/qualitypajama/grid"
    assert json.loads((grid / "summary.json").read_text())["models"] == MODELS
    assert json.loads((grid / "_checks/grid.json").read_text())["success"] is True

    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    exp = client.get_experiment_by_name("qualitypajama")
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    assert parents[0].data.metrics["train.worker_processes"] >= 2, (
        "the grid must run in more than one Dask worker process"
    )
    assert len(children) == MODELS and all(r.info.status == "FINISHED" and "loss" in r.data.metrics for r in children)
    # a smoke run never moves @champion; its candidate is on record, and promoting it is what a real run does
    assert parents[0].data.tags["champion.qualitypajama"] == "not moved: smoke profile"
    assert client.search_registered_models() == []
    _promote_smoke_candidate(client, parents[0].info.run_id, tmp_path)
    assert str(client.get_model_version_by_alias("qualitypajama", "champion").version) == "1"
    assert _s3_keys(stack, "mlflow"), "model artifacts must land in the S3 artifact store"

    for args in (
        ["remote", "add", "-f", "s3", "s3://dvc/store"],
        ["remote", "modify", "s3", "endpointurl", stack["env"]["PAPERLINE_S3_ENDPOINT"]],
        ["commit", "-f", "--with-deps", "qualitypajama-train"],
        ["push", "-r", "s3", "qualitypajama-train"],
    ):
        proc = tool("dvc", *args, cwd=stack_project)
        assert proc.returncode == 0, f"dvc {args}: {proc.stdout[-1500:]} {proc.stderr[-1500:]}"
    assert _s3_keys(stack, "dvc")
    clone = copy_project(
        stack_project, tmp_path / "clone", share_sources=False
    )  # a fresh clone: code, dvc.yaml, dvc.lock
    assert not (clone / "data/qualitypajama/grid").exists()
    pulled = tool("dvc", "pull", "-r", "s3", "qualitypajama-train", cwd=clone)
    assert pulled.returncode == 0, pulled.stderr[-2000:]
    assert path_md5(clone / "data/qualitypajama/grid") == path_md5(grid)


def _promote_smoke_candidate(client, parent_run_id: str, tmp_path, slug: str = "qualitypajama") -> dict:
    """Register the smoke run's champion candidate (artifact champion/<slug>.json) as a non-smoke run would."""
    from types import SimpleNamespace

    import mlflow

    from flows.runtime.tracking import register_champion

    local = client.download_artifacts(parent_run_id, f"champion/{slug}.json", str(tmp_path / slug))
    with open(local) as fh:
        candidate = json.load(fh)
    register_champion(SimpleNamespace(client=client, _mlflow=mlflow), slug, candidate)
    return candidate


# two more papers with cheap smoke runs and champions of other kinds (an RL policy, a retrieval index)
MORE_PAPERS = ("vip", "assomem")


def _smoke_run_and_promote(client, slug: str, stack_project, tmp_path) -> dict:
    """``paperline run <slug> --profile smoke`` logging to the stack's MLflow (runs on this machine), then promote."""
    proc = paperline("run", slug, "--profile", "smoke", cwd=stack_project, env={"PAPERLINE_RUNNER": "local"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    exp = client.get_experiment_by_name(slug)
    [parent] = [r for r in client.search_runs([exp.experiment_id]) if "mlflow.parentRunId" not in r.data.tags]
    assert parent.info.status == "FINISHED" and parent.data.tags[f"champion.{slug}"] == "not moved: smoke profile"
    return _promote_smoke_candidate(client, parent.info.run_id, tmp_path, slug)


def _plant_regression(client, tmp_path) -> None:
    """A new champion version with noisy weights; the accepted values stay those of the real run."""
    import mlflow
    import numpy as np
    import torch
    from mlflow.models import ModelSignature
    from mlflow.types import Schema, TensorSpec

    from components.models.tiny_lm import save_model
    from flows.runtime.mlflow_model import load_folder_model, log_folder_model

    model = load_folder_model("models:/qualitypajama@champion", tmp_path / "champion")
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * 0.5)
    folder = save_model(model, tmp_path / "noisy")
    sig = ModelSignature(
        inputs=Schema([TensorSpec(np.dtype("int64"), (-1, -1), "ids")]),
        outputs=Schema([TensorSpec(np.dtype("int64"), (-1,), "next")]),
    )
    exp = client.get_experiment_by_name("qualitypajama")
    with mlflow.start_run(experiment_id=exp.experiment_id, run_name="planted-regression") as run:
        log_folder_model(
            folder,
            name="qualitypajama-planted-regression",
            loader="components.models.tiny_lm:load_model",
            signature=sig,
        )
    version = mlflow.register_model(
        f"runs:/{run.info.run_id}/qualitypajama-planted-regression",
        "qualitypajama",
        tags={"eval": client.get_model_version("qualitypajama", "1").tags["eval"]},
    ).version
    client.set_registered_model_alias("qualitypajama", "champion", version)


def test_2_recurring_evaluation_records_metrics_and_fails_on_a_planted_regression(stack, stack_project, tmp_path):
    made = paperline("schedule", "recurring-eval", "--cron", "0 4 * * *", cwd=stack_project)
    assert made.returncode == 0, made.stderr[-2000:]
    assert "recurring-eval/recurring-eval" in paperline("deployments", cwd=stack_project).stdout

    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    candidates = {slug: _smoke_run_and_promote(client, slug, stack_project, tmp_path) for slug in MORE_PAPERS}
    first = _run_deployment("recurring-eval/recurring-eval")
    assert first.state.is_completed(), first.state.message
    exp = client.get_experiment_by_name("recurring-eval")
    evaluations = {r.data.tags["paper"]: r for r in client.search_runs([exp.experiment_id])}
    assert sorted(evaluations) == sorted(["qualitypajama", *MORE_PAPERS])  # every paper with @champion, one run each
    accepted = float(client.get_registered_model("qualitypajama").tags["accepted.loss"])
    assert evaluations["qualitypajama"].data.metrics["loss"] == pytest.approx(
        accepted, rel=1e-4
    )  # same model, same data
    for slug, candidate in candidates.items():  # the other kinds of champion re-evaluate to their accepted values too
        for metric, value in candidate["metrics"].items():
            assert evaluations[slug].data.metrics[metric] == pytest.approx(value, rel=1e-6, abs=1e-9), (slug, metric)
        assert evaluations[slug].data.tags["regressed"] == "false"

    _plant_regression(client, tmp_path)
    second = _run_deployment("recurring-eval/recurring-eval")
    assert second.state.is_failed()
    assert "qualitypajama: loss rose from" in second.state.message and "tolerance 2.00%" in second.state.message
    latest = client.search_runs(
        [exp.experiment_id], filter_string="tags.paper = 'qualitypajama'", order_by=["attributes.start_time DESC"]
    )[0]
    losses = client.get_metric_history(latest.info.run_id, "loss")
    assert losses and losses[0].value > accepted
    report = (stack_project / "reports/recurring-eval/report.md").read_text()
    assert "## qualitypajama" in report and "REGRESSED: qualitypajama: loss rose from" in report
    history = json.loads((stack_project / "reports/recurring-eval/history.json").read_text())
    assert [row["regressed"] for row in history["qualitypajama"]["history"]] == [False, True]
    for slug in MORE_PAPERS:  # the regression in one paper leaves the others evaluated and passing
        assert f"## {slug}" in report and f"REGRESSED: {slug}" not in report
        assert [row["regressed"] for row in history[slug]["history"]] == [False, False]
    assert not any(slug in second.state.message for slug in MORE_PAPERS), second.state.message


def test_3_two_flow_runs_logging_at_once_both_complete(stack, stack_project):
    from mlflow.tracking import MlflowClient

    results = {}

    def trigger(key: str) -> None:
        results[key] = _run_deployment(
            "recurring-eval/recurring-eval",
            {"experiment": "concurrent", "papers": ["qualitypajama"], "tolerances": {"loss*": 10.0}},
        )

    # each thread runs in a copy of this context: Prefect's settings (the stack's API URL) live in a context variable
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(trigger, k)) for k in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.state.is_completed() for r in results.values()), [r.state.message for r in results.values()]
    client = MlflowClient()
    runs = client.search_runs([client.get_experiment_by_name("concurrent").experiment_id])
    assert len(runs) == 2 and all(r.info.status == "FINISHED" and "loss" in r.data.metrics for r in runs)


def test_4_killing_a_dask_worker_mid_grid_does_not_lose_the_run(stack):
    from distributed import Client
    from prefect import flow

    from flows.runtime import runners

    address = stack["env"]["PAPERLINE_DASK_ADDRESS"]
    calls = [{"seconds": 2.0, "tag": i} for i in range(8)]
    killed = []

    @flow(name="kill-a-worker")
    def grid() -> list[str]:
        out = []
        for _call, state in runners.fan_out(runners.probe_task(), calls, runners.parse(address)):
            if not killed:
                with Client(address) as client:
                    pid = next(iter(client.run(os.getpid).values()))
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            out.append(state.result())
        return out

    done = grid()
    assert len(done) == len(calls) and killed
    with Client(address) as client:
        client.wait_for_workers(2, timeout=120)  # the nanny restarted the killed process
