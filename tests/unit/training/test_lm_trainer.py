"""The warmup-stable-decay trainer with cooldown branches, on a learnable toy corpus."""

import numpy as np
import pytest
import torch

from components.errors import DataError, ParamsError
from components.models.tiny_lm import TinyLM, TinyLMConfig, non_embedding_params
from components.training.lm_trainer import (
    eval_window_starts,
    evaluate_loss,
    sample_batch,
    train_with_cooldowns,
)

CFG = TinyLMConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=2, d_ff=96, max_seq_len=32)
PATTERN = np.random.default_rng(0).integers(0, 64, size=37)
TRAIN = np.tile(PATTERN, 400).astype(np.uint16)  # a repeating sequence: learnable in a few dozen steps
VAL = {"toy": np.tile(PATTERN, 20).astype(np.uint16)}
BATCH, SEQ = 8, 32
TPS = BATCH * SEQ  # 256 tokens per optimizer step
BUDGETS = [1024, 4096, 16384]  # 4, 16 and 64 steps


def run(budgets=BUDGETS, seed=1, **kw):
    kw = {
        "batch_size": BATCH,
        "seq_len": SEQ,
        "peak_lr": 3e-3,
        "weight_decay": 0.1,
        "grad_clip": 1.0,
        "seed": seed,
        "num_threads": 1,
        "progress": False,
        **kw,
    }
    return train_with_cooldowns(TinyLM(CFG, seed=0), TRAIN, budgets=budgets, val_sets=VAL, **kw)


@pytest.fixture(autouse=True)
def _one_thread():
    # one thread: on 2 shared cores, two OpenMP threads stall whenever another process runs
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def state(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


@pytest.fixture(scope="module")
def result():
    return run()


def test_loss_decreases_on_repetitive_corpus(result):
    first = next(h for h in result.history if h["branch"] == "main")
    assert first["loss"] > 3.0
    assert result.points[-1]["train_loss"] < 1.0
    assert result.points[-1]["val_loss"]["toy"] < 1.0


def test_larger_budget_gives_lower_val_loss(result):
    losses = [p["val_loss"]["toy"] for p in result.points]
    assert losses == sorted(losses, reverse=True) and losses[0] - losses[-1] > 1.0


def test_each_branch_sees_exactly_its_budget(result):
    # budgets that are whole batches are met exactly; others round DOWN to whole batches
    for p, d in zip(result.points, BUDGETS):
        assert p["budget_tokens"] == d and p["tokens_seen"] == d and p["steps"] == d // TPS
        assert p["flops"] == 6 * non_embedding_params(CFG) * d
        last = [h for h in result.history if h["branch"] == d][-1]
        assert last["tokens"] == d and last["lr"] > 0
    odd = run(budgets=[1000, 1300]).points
    assert [p["tokens_seen"] for p in odd] == [768, 1280]  # D - one batch < tokens_seen <= D


def test_history_reports_training_loss_every_k_steps(result):
    main = [h for h in result.history if h["branch"] == "main"]
    assert [h["step"] for h in main][:3] == [10, 20, 30]
    assert all(h["tokens"] == h["step"] * TPS for h in result.history)


def test_same_seed_is_bit_for_bit_repeatable(result):
    again = run()
    assert again.points == result.points
    assert again.history == result.history
    a, b = state(result.final_model), state(again.final_model)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert run(budgets=[1024], seed=2).points[0] != result.points[0]


def test_forking_does_not_disturb_the_main_run(result):
    alone = run(budgets=[BUDGETS[-1]])
    a, b = state(result.final_model), state(alone.final_model)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert alone.points[0]["val_loss"] == result.points[-1]["val_loss"]


def test_branch_equals_a_separate_run_when_warmup_does_not_depend_on_the_largest_budget():
    both = run(budgets=[2048, 4096], warmup_frac=0.0)
    alone = run(budgets=[2048], warmup_frac=0.0)
    assert both.points[0]["val_loss"] == alone.points[0]["val_loss"]
    assert both.points[0]["train_loss"] == alone.points[0]["train_loss"]


def test_evaluation_uses_a_fixed_window_set():
    model = TinyLM(CFG, seed=0)
    toks = VAL["toy"]
    np.random.seed(5)
    torch.manual_seed(5)
    first = evaluate_loss(model, toks, seq_len=SEQ, batch_size=4)
    np.random.seed(6)
    torch.manual_seed(6)
    assert evaluate_loss(model, toks, seq_len=SEQ, batch_size=4) == first
    starts = eval_window_starts(len(toks), SEQ)
    assert np.array_equal(starts, np.arange(len(starts)) * SEQ) and starts[-1] + SEQ < len(toks)
    capped = eval_window_starts(len(toks), SEQ, max_windows=5)
    assert len(capped) == 5 and capped[0] == 0 and capped[-1] == starts[-1]  # spread over the whole set


def test_batches_depend_only_on_seed_and_step():
    x1, y1 = sample_batch(TRAIN, step=7, seed=3, batch_size=4, seq_len=SEQ)
    x2, _ = sample_batch(TRAIN, step=7, seed=3, batch_size=4, seq_len=SEQ)
    x3, _ = sample_batch(TRAIN, step=8, seed=3, batch_size=4, seq_len=SEQ)
    assert torch.equal(x1, x2) and not torch.equal(x1, x3)
    assert torch.equal(x1[:, 1:], y1[:, :-1])  # targets are inputs shifted by one


def test_budget_below_one_batch_is_a_params_error():
    with pytest.raises(ParamsError, match="budgets"):
        run(budgets=[100, 4096])


def test_bad_token_data_is_a_data_error():
    with pytest.raises(DataError, match="train_tokens"):
        train_with_cooldowns(
            TinyLM(CFG), TRAIN[:10], budgets=[1024], val_sets=VAL, batch_size=BATCH, seq_len=SEQ, progress=False
        )
    with pytest.raises(DataError, match="val_sets\\['oov'\\]"):
        train_with_cooldowns(
            TinyLM(CFG),
            TRAIN,
            budgets=[1024],
            val_sets={"oov": np.full(100, 64, np.uint16)},
            batch_size=BATCH,
            seq_len=SEQ,
            progress=False,
        )


def test_thread_setting_is_restored():
    run(budgets=[1024], num_threads=2)
    assert torch.get_num_threads() == 1
