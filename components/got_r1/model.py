"""The chain-then-image decoder: :class:`~components.models.tiny_lm.TinyLM` plus a learned absolute position
embedding (Janus-style image tokens sit at fixed grid positions; the fixed sequence layout of
:mod:`components.got_r1.tokens` makes each position one image cell). Same ``forward``/``prefill``/``step``
interface, so :mod:`components.rl_text` samples it with the key-value cache."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from components.errors import ParamsError
from components.models import checkpoint
from components.models.tiny_lm import KVCache, TinyLM, TinyLMConfig

MODEL_TYPE = "paperline-got-r1-decoder"


@dataclass
class DecoderConfig(TinyLMConfig):
    pass


class ChainImageDecoder(TinyLM):
    def __init__(self, config: DecoderConfig, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.pos = nn.Embedding(config.max_seq_len, config.d_model)
        with torch.no_grad():
            self.pos.weight.copy_(
                torch.randn(self.pos.weight.shape, generator=torch.Generator().manual_seed(seed + 1)) * 0.02
            )

    def _embed(self, idx: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return self.embed(idx) + self.pos(positions)

    def forward(self, idx, targets=None):
        t = idx.shape[1]
        if t > self.config.max_seq_len:
            raise ParamsError(f"sequence length {t} exceeds max_seq_len={self.config.max_seq_len}")
        x = self.drop(self._embed(idx, torch.arange(t)))
        for block in self.blocks:
            x = block(x, self.rope_cos[:t], self.rope_sin[:t])
        logits = self.head(self.norm(x))
        loss = None
        if targets is not None:
            loss = nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100
            )
        return logits, loss

    @torch.no_grad()
    def prefill(self, idx: torch.Tensor, width: int) -> tuple[torch.Tensor, KVCache]:
        if width > self.config.max_seq_len:
            raise ParamsError(f"sequence length {width} exceeds max_seq_len={self.config.max_seq_len}")
        c = self.config
        cache = KVCache(c.n_layers, idx.shape[0], c.n_heads, width, c.d_model // c.n_heads)
        t = idx.shape[1]
        x = self._embed(idx, torch.arange(t))
        for i, block in enumerate(self.blocks):
            x = block(x, self.rope_cos[:t], self.rope_sin[:t], cache, i)
        return self.head(self.norm(x)), cache

    @torch.no_grad()
    def step(self, tokens: torch.Tensor, pos: torch.Tensor, cache: KVCache) -> torch.Tensor:
        cache.pos = pos
        cos, sin = self.rope_cos[pos][:, None, None, :], self.rope_sin[pos][:, None, None, :]
        x = self._embed(tokens.unsqueeze(1), pos.unsqueeze(1))
        for i, block in enumerate(self.blocks):
            x = block(x, cos, sin, cache, i)
        return self.head(self.norm(x))[:, 0]


def build(vocab_size: int, max_seq_len: int, *, d_model: int, n_layers: int, n_heads: int, seed: int):
    cfg = DecoderConfig(
        vocab_size=vocab_size,
        d_model=d_model,
        n_layers=n_layers,
        n_heads=n_heads,
        d_ff=(8 * d_model) // 3 // 16 * 16 + 16,
        max_seq_len=max_seq_len,
    )
    return ChainImageDecoder(cfg, seed=seed)


def save_model(model: ChainImageDecoder, directory: str | os.PathLike) -> Path:
    return checkpoint.save(model, directory, MODEL_TYPE)


def load_model(directory: str | os.PathLike) -> ChainImageDecoder:
    return checkpoint.load(
        directory,
        ChainImageDecoder,
        DecoderConfig,
        MODEL_TYPE,
        may_be_missing=lambda c: {"head.weight"} if c.tie_embeddings else set(),
    )
