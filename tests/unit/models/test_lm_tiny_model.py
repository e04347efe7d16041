"""TinyLM: shapes, causality, parameter counts, sizing and save/load."""

import numpy as np
import pytest
import torch

from components.errors import DataError, ParamsError
from components.models.tiny_lm import (
    TinyLM,
    TinyLMConfig,
    config_for_params,
    load_model,
    non_embedding_params,
    save_model,
)


@pytest.fixture(autouse=True)
def _seed_inputs():
    torch.manual_seed(0)  # the random token inputs below; model weights have their own seed


CFG = TinyLMConfig(vocab_size=50, d_model=32, n_layers=2, n_heads=2, d_ff=96, max_seq_len=16)


def test_forward_shapes_and_initial_loss_near_uniform():
    model = TinyLM(CFG, seed=0)
    gen = torch.Generator().manual_seed(0)
    idx, targets = torch.randint(0, 50, (2, 3, 16), generator=gen)
    logits, loss = model(idx, targets)
    assert logits.shape == (3, 16, 50)
    assert loss.shape == ()
    assert abs(loss.item() - np.log(50)) < 0.3  # small init: predictions close to uniform
    assert model(idx)[1] is None


def test_future_tokens_do_not_change_earlier_logits():
    model = TinyLM(CFG, seed=0).eval()
    idx = torch.randint(0, 50, (2, 16))
    changed = idx.clone()
    changed[:, 10] = (idx[:, 10] + 1) % 50
    before, after = model(idx)[0], model(changed)[0]
    assert torch.allclose(before[:, :10], after[:, :10], atol=1e-6)
    assert not torch.allclose(before[:, 10:], after[:, 10:], atol=1e-4)


def test_cached_decoding_equals_the_full_forward_pass_with_rows_at_different_positions():
    model = TinyLM(CFG, seed=0).eval()
    idx = torch.randint(0, 50, (3, 12))
    full = model(idx)[0]
    lens = torch.tensor([3, 7, 5])  # each row's prompt length; the rest of the row is decoded one token a step
    logits, cache = model.prefill(idx[:, : int(lens.max())], 12)
    rows = torch.arange(3)
    assert torch.allclose(logits[rows, lens - 1], full[rows, lens - 1], atol=1e-5)
    for t in range(4):
        pos = lens + t
        step = model.step(idx[rows, pos], pos, cache)
        assert torch.allclose(step, full[rows, pos], atol=1e-5), t


def test_cached_step_must_not_see_the_padding_to_its_right():
    # sabotage check of the cache's mask: garbage in the prefilled buffer right of a row's position never shows
    model = TinyLM(CFG, seed=0).eval()
    idx = torch.randint(0, 50, (2, 10))
    noisy = idx.clone()
    noisy[0, 4:8] = torch.randint(0, 50, (4,))  # row 0's prompt is 4 long: positions 4-7 are padding to it
    _, cache = model.prefill(noisy[:, :8], 10)
    pos = torch.tensor([4, 8])
    step = model.step(idx[torch.arange(2), pos], pos, cache)
    assert torch.allclose(step[0], model(idx[:1, :5])[0][0, 4], atol=1e-5)


def test_cached_decoding_past_max_seq_len_is_a_params_error():
    with pytest.raises(ParamsError, match="max_seq_len"):
        TinyLM(CFG).prefill(torch.zeros(1, 4, dtype=torch.long), 17)


def test_sequence_longer_than_max_seq_len_is_a_params_error():
    with pytest.raises(ParamsError, match="max_seq_len"):
        TinyLM(CFG)(torch.zeros(1, 17, dtype=torch.long))


def test_non_embedding_params_matches_hand_count():
    # per layer: qkv 32*96 + proj 32*32 + gate/up/down 3*32*96 + two norms 2*32; plus final norm 32
    hand = 2 * (32 * 96 + 32 * 32 + 3 * 32 * 96 + 2 * 32) + 32
    assert non_embedding_params(CFG) == hand == 26784
    tied = TinyLM(CFG)
    assert non_embedding_params(tied) == sum(p.numel() for p in tied.parameters()) - 50 * 32
    untied = TinyLM(TinyLMConfig(**{**CFG.__dict__, "tie_embeddings": False}))
    assert non_embedding_params(untied) == sum(p.numel() for p in untied.parameters()) - 2 * 50 * 32


@pytest.mark.parametrize("target", [20_000, 50_000, 120_000, 300_000, 1_000_000, 3_000_000, 10_000_000])
def test_config_for_params_lands_within_25_percent(target):
    cfg = config_for_params(target, vocab_size=4096, max_seq_len=128)
    n = non_embedding_params(cfg)
    assert 0.75 * target <= n <= 1.25 * target
    assert cfg.d_model % cfg.n_heads == 0 and cfg.max_seq_len == 128 and cfg.vocab_size == 4096


def test_config_for_params_grows_with_target():
    sizes = [
        non_embedding_params(config_for_params(t, vocab_size=512, max_seq_len=64))
        for t in (20_000, 50_000, 120_000, 300_000)
    ]
    assert sizes == sorted(sizes) and len(set(sizes)) == 4


def test_seed_fixes_initial_weights():
    a, b, c = TinyLM(CFG, seed=1), TinyLM(CFG, seed=1), TinyLM(CFG, seed=2)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert not torch.equal(a.embed.weight, c.embed.weight)


@pytest.mark.parametrize("tie", [True, False])
def test_save_load_round_trip_gives_identical_logits(tmp_path, tie):
    model = TinyLM(TinyLMConfig(**{**CFG.__dict__, "tie_embeddings": tie}), seed=3).eval()
    out = save_model(model, tmp_path / "m")
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors"]
    loaded = load_model(out)
    idx = torch.randint(0, 50, (2, 16))
    assert torch.equal(model(idx)[0], loaded(idx)[0])
    assert loaded.config == model.config
    assert (loaded.head.weight is loaded.embed.weight) == tie
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_load_model_reports_missing_weights(tmp_path):
    save_model(TinyLM(CFG), tmp_path / "m")
    (tmp_path / "m" / "model.safetensors").unlink()
    with pytest.raises(DataError, match="model.safetensors"):
        load_model(tmp_path / "m")
    with pytest.raises(DataError, match="config.json"):
        load_model(tmp_path / "absent")


def test_bad_config_names_the_field():
    with pytest.raises(ParamsError, match="n_heads"):
        TinyLMConfig(vocab_size=10, d_model=30, n_heads=4)
