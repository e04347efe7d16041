"""The edit stage's shortcuts (issue 27) give the values of the plain computation: the LM head only where it is
read, a key-value cache in greedy generation, remembered encodings."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from components.editing.metrics import greedy_generate
from components.editing.model import cached_encoder, edit_site, encode_batch, logits_at, logits_of

PROMPTS = ["Bo Tarn", "Home of Cy Fenn", "Amy Rook", "Ida Moss was born in"]


def _plain_greedy(model, encode, decode, prompts, n_new, max_len):
    """Reference: every token from a full forward over the last ``max_len`` tokens, one prompt at a time."""
    out = []
    for p in prompts:
        ids = torch.tensor([encode(p)])
        for _ in range(n_new):
            window = ids if max_len is None else ids[:, -max_len:]
            ids = torch.cat([ids, logits_of(model, window)[:, -1].argmax(-1, keepdim=True)], dim=1)
        out.append(decode(ids[0, len(encode(p)) :].tolist()))
    return out


def _decode(ids):
    return "".join(chr(i) for i in ids)


@pytest.fixture
def lively(tiny_model):
    """The random TinyLM with an untied random head: its greedy text varies from token to token (with the tied
    head it repeats the last character, and a wrong cache position would go unnoticed)."""
    tiny_model.head.weight = nn.Parameter(torch.randn(128, 32, generator=torch.Generator().manual_seed(3)))
    return tiny_model


def test_greedy_generation_with_the_cache_equals_full_forwards(lively, encode):
    for max_len in (None, 14, 30):  # 14: the text outgrows the window, so the sliding-window path runs too
        got = greedy_generate(lively, encode, _decode, PROMPTS, max_new_tokens=12, max_len=max_len)
        assert got == _plain_greedy(lively, encode, _decode, PROMPTS, 12, max_len)
        assert all(len(t) == 12 and len(set(t)) > 6 for t in got)


def test_greedy_generation_with_the_cache_keeps_an_edit_hook(lively, encode):
    tiny_model = lively
    site = edit_site(tiny_model, 0)
    shift = torch.randn(site.weight.shape[0], generator=torch.Generator().manual_seed(1)) * 3
    before = greedy_generate(tiny_model, encode, _decode, PROMPTS, max_new_tokens=10, max_len=None)
    handle = site.module.register_forward_hook(lambda m, a, o: o + shift)  # an edit that acts at every position
    try:
        got = greedy_generate(tiny_model, encode, _decode, PROMPTS, max_new_tokens=10, max_len=None)
        want = _plain_greedy(tiny_model, encode, _decode, PROMPTS, 10, None)
    finally:
        handle.remove()
    assert got == want and got != before


def test_logits_at_equals_the_full_logits_at_those_positions(tiny_model, encode):
    enc = encode_batch(encode, PROMPTS)
    rows, last = torch.arange(len(PROMPTS)), enc.target_start - 1
    full = logits_of(tiny_model, enc.ids)
    assert torch.allclose(logits_at(tiny_model, enc.ids, rows, last), full[rows, last], atol=1e-5)
    pos = torch.tensor([[0, 1], [2, 3], [1, 0], [4, 5]])
    assert torch.allclose(logits_at(tiny_model, enc.ids, rows[:, None], pos), full[rows[:, None], pos], atol=1e-5)


def test_a_cached_encoder_encodes_each_text_once_and_hands_out_fresh_lists(encode):
    calls = []
    enc = cached_encoder(lambda t: calls.append(t) or encode(t))
    first = enc("Bo Tarn")
    first.append(999)  # a caller that changes its list changes no later result
    assert enc("Bo Tarn") == encode("Bo Tarn") and enc("Amy") == encode("Amy")
    assert calls == ["Bo Tarn", "Amy"]
