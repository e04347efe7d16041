"""`paperline promote` (issue 47): a smoke run's champion candidate becomes ``@champion`` through the call a passing
run makes, its verdicts are accepted, and the recurring evaluation then finds it; before that, the recurring
evaluation's error names the command. On a SQLite MLflow store (no servers)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from components.errors import PaperlineError
from tests.conftest import fake_checkout

pytestmark = pytest.mark.slow  # MLflow import and store migrations

PAPER = "qualitypajama"


@pytest.fixture
def smoke_candidate(tmp_path, monkeypatch):
    """A store holding what a finished smoke run leaves: a child run's logged model, and on the parent the tag
    ``champion.<paper> = not moved: smoke profile``, the artifact ``champion/<paper>.json`` and verdict tags."""
    from mlflow.models import ModelSignature
    from mlflow.types import Schema, TensorSpec

    from components.models.tiny_lm import TinyLM, config_for_params, save_model
    from components.training.lm_trainer import evaluate_loss
    from flows.runtime.tracking import Tracker

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("PAPERLINE_ROOT", str(fake_checkout(tmp_path)))
    torch.manual_seed(0)
    model = TinyLM(config_for_params(5_000, vocab_size=64, max_seq_len=16))
    tokens = np.random.default_rng(0).integers(0, 64, size=600).astype(np.uint16)
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data/val-a.npy", tokens)
    loss = evaluate_loss(model, tokens, seq_len=16, max_windows=4)
    tracker = Tracker(PAPER, "smoke-run", {"paper": PAPER, "profile": "smoke"})
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
        "metrics": {"loss": loss},
        "eval": {"kind": "lm-loss", "seq_len": 16, "windows": 4, "data": {"a": "data/val-a.npy"}},
    }
    tracker.set_tag(f"champion.{PAPER}", "not moved: smoke profile")  # as flows.runtime.accepted.settle does
    tracker.log_json(champion, f"champion/{PAPER}.json")
    tracker.set_tag("verdict.C1", "reproduced")
    tracker.finish()
    return tmp_path, tracker.run_id, loss


def test_recurring_eval_without_a_champion_points_to_promote(smoke_candidate):
    from flows.recurring.flow import run

    root, _, _ = smoke_candidate
    with pytest.raises(PaperlineError, match=r"`paperline promote <paper>`"):
        run(str(root), {})


def test_promote_moves_champion_accepts_verdicts_and_the_recurring_eval_finds_it(smoke_candidate):
    from mlflow.tracking import MlflowClient

    from flows.recurring.flow import run
    from flows.runtime.promote import promote

    root, run_id, loss = smoke_candidate
    assert promote(PAPER) == {PAPER: "1"}
    client = MlflowClient()
    assert str(client.get_model_version_by_alias(PAPER, "champion").version) == "1"
    tags = client.get_registered_model(PAPER).tags
    assert float(tags["accepted.loss"]) == pytest.approx(loss) and tags["accepted.run_id"] == run_id
    assert tags["accepted.verdicts"] == '{"C1": "reproduced"}'
    assert client.get_run(run_id).data.tags[f"champion.{PAPER}"] == "version 1 (paperline promote)"
    result = run(str(root), {})  # every registered @champion: the promoted one
    assert result[PAPER]["metrics"]["loss"] == pytest.approx(loss, rel=1e-6) and result[PAPER]["regressions"] == []
    with pytest.raises(PaperlineError, match="no completed run with a champion candidate"):
        promote(PAPER)  # nothing left on record to promote


def test_promote_cli_names_the_version_and_fails_in_one_line_without_runs(smoke_candidate, tmp_path):
    from tests.conftest import error_line, paperline

    root, _, _ = smoke_candidate
    env = {"MLFLOW_TRACKING_URI": os.environ["MLFLOW_TRACKING_URI"], "PAPERLINE_ROOT": str(root)}
    done = paperline("promote", PAPER, cwd=root, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.strip() == f"{PAPER}: version 1 is @champion"
    (tmp_path / "other").mkdir()
    other = fake_checkout(tmp_path / "other")
    empty = {"MLFLOW_TRACKING_URI": f"sqlite:///{other / 'mlflow.db'}", "PAPERLINE_ROOT": str(other)}
    assert "paperline run ofmu" in error_line(paperline("promote", "ofmu", cwd=other, env=empty))
