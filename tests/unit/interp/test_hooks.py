"""Residual-stream hooks on a tiny HF Llama (built from a config, offline) and on TinyLM: exact equalities."""

from __future__ import annotations

import pytest
import torch

from components.errors import ParamsError
from components.interp.hooks import add_to_residual, n_residual_layers, read_residual
from components.interp.lm import Steer, SteerableLM
from components.models.tiny_lm import TinyLM, TinyLMConfig


@pytest.fixture(scope="module")
def hf_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)  # fmt: skip
    return LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def tiny_model():
    return TinyLM(
        TinyLMConfig(vocab_size=50, d_model=32, n_layers=3, n_heads=4, d_ff=64, max_seq_len=64), seed=1
    ).eval()


def _logits(model, ids):
    with torch.no_grad():
        if hasattr(model, "blocks"):
            return model(ids)[0]
        return model(input_ids=ids).logits


IDS = torch.tensor([[3, 7, 11, 2, 9, 4, 8], [5, 1, 6, 12, 13, 14, 2]])


@pytest.mark.parametrize("which", ["hf_model", "tiny_model"])
def test_zero_vector_leaves_logits_bit_identical(which, request):
    model = request.getfixturevalue(which)
    base = _logits(model, IDS)
    for layer in range(n_residual_layers(model)):
        with add_to_residual(model, layer, torch.zeros(32), [3, 5]):
            assert torch.equal(_logits(model, IDS), base)


@pytest.mark.parametrize("which", ["hf_model", "tiny_model"])
def test_adding_at_p_changes_nothing_before_p(which, request):
    model = request.getfixturevalue(which)
    base = _logits(model, IDS)
    vec = torch.randn(32, generator=torch.Generator().manual_seed(0)) * 5
    with add_to_residual(model, 1, vec, [3, 5]):
        out = _logits(model, IDS)
    assert torch.equal(out[0, :3], base[0, :3]) and torch.equal(out[1, :5], base[1, :5])
    assert not torch.allclose(out[0, 3], base[0, 3]) and not torch.allclose(out[1, 5], base[1, 5])
    # a row with position -1 is left alone
    with add_to_residual(model, 1, vec, [-1, 5]):
        out = _logits(model, IDS)
    assert torch.equal(out[0], base[0])


def test_read_equals_output_hidden_states(hf_model):
    with torch.no_grad():
        ref = hf_model(input_ids=IDS, output_hidden_states=True).hidden_states
    n = n_residual_layers(hf_model)
    with read_residual(hf_model, range(n)) as store, torch.no_grad():
        hf_model(input_ids=IDS)
    for layer in range(n - 1):  # HF's last entry is taken after the final norm
        assert torch.equal(store[layer], ref[layer])
    assert torch.allclose(hf_model.model.norm(store[n - 1]), ref[n - 1])
    with read_residual(hf_model, [2], positions=[4, 6]) as store, torch.no_grad():
        hf_model(input_ids=IDS)
    assert torch.equal(store[2], torch.stack([ref[2][0, 4], ref[2][1, 6]]))


def test_read_equals_manual_blocks_on_tiny(tiny_model):
    with read_residual(tiny_model, [0, 2]) as store, torch.no_grad():
        tiny_model(IDS)
        x = tiny_model.embed(IDS)
        t = IDS.shape[1]
        x0 = x.clone()
        for block in tiny_model.blocks[:2]:
            x = block(x, tiny_model.rope_cos[:t], tiny_model.rope_sin[:t])
    assert torch.equal(store[0], x0) and torch.allclose(store[2], x, atol=1e-6)


@pytest.mark.parametrize("which", ["hf_model", "tiny_model"])
def test_batched_padded_generation_and_reads_match_one_at_a_time(which, request):
    model = request.getfixturevalue(which)
    lm = SteerableLM(model, pad_id=0)
    prompts = [[3, 7, 11, 2], [5, 1, 6, 12, 13, 14], [9]]
    vec = torch.randn(32, generator=torch.Generator().manual_seed(1)) * 3
    steer = Steer(2, vec, [len(p) - 1 for p in prompts])
    batched = lm.generate(prompts, max_new_tokens=5, temperature=0.0, steer=steer)
    single = [lm.generate([p], max_new_tokens=5, temperature=0.0, steer=Steer(2, vec, [len(p) - 1]))[0]
              for p in prompts]  # fmt: skip
    assert batched == single
    # the cached decode equals a full forward's argmax (teacher-forced on the generated tokens)
    for p, new in zip(prompts, batched, strict=True):
        lp = lm.logprobs([p + new], Steer(2, vec, [len(p) - 1]))[0]
        assert lp[len(p) - 1 : len(p) - 1 + len(new)].argmax(-1).tolist() == new
    reads = lm.read(prompts, [1, 3], [len(p) - 1 for p in prompts])
    for b, p in enumerate(prompts):
        assert torch.allclose(reads[:, b], lm.read([p], [1, 3], [len(p) - 1])[:, 0], atol=1e-5)


def test_bad_layer_and_positions(tiny_model):
    with (
        pytest.raises(ParamsError, match="layer 9 out of range"),
        add_to_residual(tiny_model, 9, torch.zeros(32), [0, 0]),
    ):
        pass
    with pytest.raises(ParamsError, match="positions"), add_to_residual(tiny_model, 1, torch.zeros(32), [0]):
        _logits(tiny_model, IDS)
