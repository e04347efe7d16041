"""Small shared objects for the editing tests: a random TinyLM and a character-level encoder."""

from __future__ import annotations

import pytest
import torch

from components.models.tiny_lm import TinyLM, TinyLMConfig


def char_encode(text: str) -> list[int]:
    """A toy tokenizer: one token per character (ids 1..127), leading spaces dropped; merges never happen."""
    return [min(ord(c), 127) for c in text.lstrip()]


@pytest.fixture
def tiny_model() -> TinyLM:
    torch.manual_seed(0)
    cfg = TinyLMConfig(vocab_size=128, d_model=32, n_layers=2, n_heads=2, d_ff=64, max_seq_len=128)
    return TinyLM(cfg, seed=0).eval()


@pytest.fixture
def confident_model(tiny_model) -> TinyLM:
    """The random TinyLM with a 50x (tied) embedding, so that it can express confident predictions."""
    with torch.no_grad():
        tiny_model.embed.weight.mul_(50.0)
    return tiny_model


@pytest.fixture
def encode():
    return char_encode


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny tensors: one thread is faster, and on a shared machine two threads thrash."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
