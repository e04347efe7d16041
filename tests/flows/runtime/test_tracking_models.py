"""The kit's model logging: a child run per model with its params, final metrics, whole curves (one point per
step) and the folder as a pyfunc with the declared signature; without a folder the run is logged without a model."""

from __future__ import annotations

import json

import pytest
import yaml

from components.models.tiny_lm import TinyLM, TinyLMConfig, save_model
from flows.runtime.tracking import LM_LOADER, NEXT_TOKEN, TOKEN_IDS, Tensor


@pytest.mark.slow  # MLflow's SQLite store set-up: ~10 s here
def test_log_model_records_params_metrics_curves_and_the_signature(tracker, tmp_path):
    folder = tmp_path / "lm"
    save_model(TinyLM(TinyLMConfig(vocab_size=16, d_model=8, n_layers=1, n_heads=2, d_ff=16, max_seq_len=8)), folder)
    curve = [(0, 2.5), (10, 1.5), (20, 1.25)]
    rid = tracker.log_model(
        "m-s0",
        {"seed": 0, "lr": 0.01},
        folder,
        loader=LM_LOADER,
        inputs=TOKEN_IDS,
        outputs=NEXT_TOKEN,
        metrics={"acc": 0.75},
        curves={"train_loss": curve},
    )
    client = tracker.client
    run = client.get_run(rid)
    assert run.data.params == {"seed": "0", "lr": "0.01", "loader": LM_LOADER}
    assert run.data.metrics["acc"] == 0.75
    assert run.data.tags["mlflow.parentRunId"] == tracker.run_id
    history = [(m.step, m.value) for m in client.get_metric_history(rid, "train_loss")]
    assert sorted(history) == curve
    assert run.data.tags["paperline.model_name"] == "toy-m-s0"  # the paper and the run, not "model"
    local = client.download_artifacts(rid, "toy-m-s0/MLmodel", str(tmp_path / "download"))
    with open(local, encoding="utf-8") as f:
        sig = yaml.safe_load(f)["signature"]
    assert json.loads(sig["inputs"])[0]["tensor-spec"] == {"dtype": "int64", "shape": [-1, -1]}
    assert json.loads(sig["outputs"])[0]["name"] == "next_token"


@pytest.mark.slow
def test_log_model_without_a_folder_logs_the_run_and_no_model(tracker):
    rid = tracker.log_model(
        "sweep-point",
        {"lr": 0.1},
        None,
        loader=LM_LOADER,
        inputs=Tensor("x", "float32", (-1, 3)),
        outputs=Tensor("y", "float32", (-1,)),
        curves={"loss": [(0, 1.0), (5, 0.5)]},
    )
    assert [a.path for a in tracker.client.list_artifacts(rid)] == []
    assert tracker.client.get_run(rid).info.status == "FINISHED"
    assert len(tracker.client.get_metric_history(rid, "loss")) == 2


@pytest.mark.slow  # MLflow's SQLite store set-up
def test_runs_read_well_in_the_mlflow_ui(tracker):
    """The classic view (not GenAI), and the standard source tags the UI's Source column reads."""
    client = tracker.client
    assert client.get_experiment(tracker.experiment_id).tags["mlflow.experimentKind"] == "custom_model_development"
    tags = client.get_run(tracker.run_id).data.tags
    assert tags["mlflow.source.git.commit"] == "0" * 40
    assert tags["mlflow.source.name"] == "paperline run toy" and tags["mlflow.source.type"] == "LOCAL"
    rid = tracker.log_model("m", None, None, loader=LM_LOADER, inputs=TOKEN_IDS, outputs=NEXT_TOKEN)
    assert client.get_run(rid).data.tags["mlflow.source.git.commit"] == "0" * 40  # child runs too
