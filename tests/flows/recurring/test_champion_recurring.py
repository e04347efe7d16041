"""Champion registration and the recurring evaluation's body, on a SQLite MLflow store (no servers)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.conftest import fake_checkout

pytestmark = pytest.mark.slow  # MLflow import and store migrations: ~10-20 s here


@pytest.fixture
def champion_store(tmp_path, monkeypatch):
    """A checkout with one validation token file and a registered ``toy@champion`` tiny LM."""
    from mlflow.models import ModelSignature
    from mlflow.types import Schema, TensorSpec

    from components.models.tiny_lm import TinyLM, config_for_params, save_model
    from components.training.lm_trainer import evaluate_loss
    from flows.runtime.accepted import accept_verdicts
    from flows.runtime.tracking import Tracker, register_champion

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    fake_checkout(tmp_path)
    torch.manual_seed(0)
    model = TinyLM(config_for_params(5_000, vocab_size=64, max_seq_len=16))
    tokens = np.random.default_rng(0).integers(0, 64, size=600).astype(np.uint16)
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data/val-a.npy", tokens)
    loss = evaluate_loss(model, tokens, seq_len=16, max_windows=4)
    tracker = Tracker("toy", "toy-run", {"paper": "toy"})
    sig = ModelSignature(
        inputs=Schema([TensorSpec(np.dtype("int64"), (-1, -1), "ids")]),
        outputs=Schema([TensorSpec(np.dtype("int64"), (-1,), "next")]),
    )
    with tracker.child("m") as run_id:
        tracker.log_state_dict_model(
            run_id, save_model(model, tmp_path / "m"), loader="components.models.tiny_lm:load_model", signature=sig
        )
    champion = {
        "run_id": run_id,
        "name": "m",
        "metrics": {"loss": loss, "loss_a": loss},
        "eval": {"kind": "lm-loss", "seq_len": 16, "windows": 4, "data": {"a": "data/val-a.npy"}},
    }
    version = register_champion(tracker, "toy", champion)
    # what a passing run stores beside its champion (flows.runtime.accepted.settle): not metrics to compare
    accept_verdicts(tracker.client, "toy", {"C1": "reproduced", "C2": "inconclusive"}, tracker.run_id)
    tracker.finish()
    return tmp_path, version, loss


def test_champion_alias_and_accepted_values_are_registered(champion_store):
    from mlflow.tracking import MlflowClient

    _, version, loss = champion_store
    client = MlflowClient()
    assert str(client.get_model_version_by_alias("toy", "champion").version) == version == "1"
    assert float(client.get_registered_model("toy").tags["accepted.loss"]) == pytest.approx(loss)


def test_recurring_eval_logs_history_and_fails_naming_the_regression(champion_store):
    from mlflow.tracking import MlflowClient

    from flows.recurring.flow import RegressionDetected, run

    root, _, loss = champion_store
    result = run(str(root), {"papers": ["toy"]})
    assert result["toy"]["metrics"]["loss"] == pytest.approx(loss, rel=1e-6) and result["toy"]["regressions"] == []
    assert result["toy"]["seconds"] > 0  # the paper's own cost (load, recompute, compare), also in the report
    client = MlflowClient()
    client.set_registered_model_tag(
        "toy", "accepted.loss", repr(loss * 0.5)
    )  # plant: the accepted value was much better
    with pytest.raises(RegressionDetected, match=r"toy: loss rose from .* to .* \(\+100\.00%, tolerance 5\.00%\)"):
        run(str(root), {"papers": ["toy"]})
    report = (root / "reports/recurring-eval/report.md").read_text()
    assert "REGRESSED: toy: loss rose" in report and "Re-evaluated in " in report
    runs = client.search_runs([client.get_experiment_by_name("recurring-eval").experiment_id])
    assert sorted(r.data.tags["regressed"] for r in runs) == ["false", "true"]


def test_recurring_eval_without_a_champion_says_what_to_do(tmp_path, monkeypatch):
    from components.errors import PaperlineError
    from flows.recurring.flow import run

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    fake_checkout(tmp_path)
    with pytest.raises(PaperlineError, match="no registered model has alias @champion"):
        run(str(tmp_path), {})


def test_a_run_that_loses_the_race_to_create_its_experiment_uses_the_winners(tmp_path, monkeypatch):
    """Two flow runs start at once: both see no experiment, one creates it, the other must not fail."""
    from mlflow.tracking import MlflowClient

    from flows.runtime.tracking import Tracker

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    winner = MlflowClient().create_experiment("concurrent")
    real_get = MlflowClient.get_experiment_by_name
    calls = []

    def stale_first_read(self, name):  # the loser read before the winner's commit
        calls.append(name)
        return None if len(calls) == 1 else real_get(self, name)

    monkeypatch.setattr(MlflowClient, "get_experiment_by_name", stale_first_read)
    tracker = Tracker("concurrent", "late-run", {"paper": "toy"})
    tracker.finish()
    assert tracker.experiment_id == winner
    assert len(calls) == 2
