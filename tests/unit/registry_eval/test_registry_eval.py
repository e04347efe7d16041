"""Recurring evaluation helpers: regression detection with tolerances, LM re-evaluation, flow params."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.errors import DataError, ParamsError
from components.registry_eval.compare import find_regressions, tolerance_for
from components.registry_eval.lm_eval import lm_losses


def test_a_loss_rising_beyond_tolerance_is_a_regression_named_in_the_message():
    [reg] = find_regressions("qualitypajama", {"loss": 3.0, "loss_austen": 3.1}, {"loss": 3.3, "loss_austen": 3.12})
    assert (reg.metric, reg.old, reg.new) == ("loss", 3.0, 3.3)
    assert reg.message() == "qualitypajama: loss rose from 3 to 3.3 (+10.00%, tolerance 5.00%)"


def test_within_tolerance_or_better_is_not_a_regression():
    assert find_regressions("p", {"loss": 3.0}, {"loss": 3.14}) == []
    assert find_regressions("p", {"loss": 3.0}, {"loss": 2.0}) == []


def test_per_metric_tolerances_and_higher_is_better():
    assert tolerance_for("loss_austen", {"loss_*": 0.2}, 0.05) == 0.2
    assert find_regressions("p", {"loss_austen": 1.0}, {"loss_austen": 1.15}, tolerances={"loss_*": 0.2}) == []
    [reg] = find_regressions("p", {"accuracy": 0.9}, {"accuracy": 0.8}, higher_is_better=("acc*",))
    assert "accuracy fell from 0.9 to 0.8" in reg.message()


def test_missing_or_nan_metric_is_an_error_not_a_pass():
    with pytest.raises(DataError, match="did not produce accepted metric 'loss'"):
        find_regressions("p", {"loss": 1.0}, {})
    with pytest.raises(DataError, match="nan"):
        find_regressions("p", {"loss": 1.0}, {"loss": float("nan")})


def test_lm_losses_match_the_trainers_evaluation(tmp_path):
    from components.models.tiny_lm import TinyLM, config_for_params
    from components.training.lm_trainer import evaluate_loss

    torch.manual_seed(0)
    model = TinyLM(config_for_params(5_000, vocab_size=64, max_seq_len=16))
    tokens = np.random.default_rng(0).integers(0, 64, size=400).astype(np.uint16)
    np.save(tmp_path / "val-a.npy", tokens)
    out = lm_losses(model, {"a": tmp_path / "val-a.npy"}, seq_len=16, windows=4)
    assert out["loss_a"] == pytest.approx(evaluate_loss(model, tokens, seq_len=16, max_windows=4))
    assert out["loss"] == out["loss_a"]
    with pytest.raises(DataError, match="val-b.npy"):
        lm_losses(model, {"b": tmp_path / "val-b.npy"}, seq_len=16, windows=4)


def test_recurring_params_name_the_bad_key(tmp_path):
    from flows.recurring.flow import run

    with pytest.raises(ParamsError, match="default_tolerance"):
        run(str(tmp_path), {"default_tolerance": -1})
