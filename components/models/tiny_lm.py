"""A tiny Llama-style causal language model, sized by non-embedding parameters.

Pre-norm RMSNorm blocks with rotary position embeddings (RoPE), causal
``scaled_dot_product_attention`` and a SwiGLU MLP; the LM head is tied to the
token embedding by default. The model is small enough to read in one sitting
(nanoGPT-sized) and general enough for any pipeline that needs a small LM.

Parameter counts follow Kaplan et al. (2020): *non-embedding* parameters exclude
the token embedding and the LM head (tied or not), since scaling laws are
cleaner in that count.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from components.errors import ParamsError
from components.models import checkpoint

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
MODEL_TYPE = "paperline-tiny-lm"


@dataclass
class TinyLMConfig:
    """Architecture of a :class:`TinyLM`; ``d_ff`` is the SwiGLU hidden width."""

    vocab_size: int
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 176
    max_seq_len: int = 256
    rope_theta: float = 10000.0
    tie_embeddings: bool = True
    dropout: float = 0.0

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "d_ff", "max_seq_len"):
            if int(getattr(self, name)) < 1:
                raise ParamsError(f"TinyLMConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ParamsError(
                f"TinyLMConfig.d_model ({self.d_model}) must split into n_heads ({self.n_heads}) "
                "heads of even size (RoPE)"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ParamsError(f"TinyLMConfig.dropout must be in [0, 1), got {self.dropout}")


class Attention(nn.Module):
    """Multi-head causal self-attention with rotary position embeddings."""

    def __init__(self, cfg: TinyLMConfig) -> None:
        super().__init__()
        self.n_heads = cfg.n_heads
        self.head_dim = cfg.d_model // cfg.n_heads
        self.dropout = cfg.dropout
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, cache: KVCache | None = None, layer: int = 0
    ) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = _apply_rope(q, cos, sin), _apply_rope(k, cos, sin)
        if cache is not None and cache.pos is not None:  # one new token per row, each at its own position
            y = F.scaled_dot_product_attention(q, *cache.put(layer, k, v), attn_mask=cache.visible())
            return self.proj(y.transpose(1, 2).reshape(b, t, d))
        if cache is not None:  # prefill: keep every position's keys and values
            cache.fill(layer, k, v)
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class KVCache:
    """Keys and values of every layer for incremental decoding (:meth:`TinyLM.prefill`, :meth:`TinyLM.step`).

    Rows may sit at different positions (prompts of different lengths in one right-padded buffer): a step writes
    row b's new key and value at ``pos[b]`` and lets it see keys ``0..pos[b]`` only, so padding and stale
    entries to the right stay invisible, exactly as under the causal mask of a full forward pass.
    """

    def __init__(self, n_layers: int, batch: int, n_heads: int, width: int, head_dim: int) -> None:
        self.k = torch.zeros(n_layers, batch, n_heads, width, head_dim)
        self.v = torch.zeros_like(self.k)
        self.pos: torch.Tensor | None = None  # (B,) positions of the tokens being decoded; None while prefilling

    def fill(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> None:
        self.k[layer, :, :, : k.shape[2]] = k
        self.v[layer, :, :, : v.shape[2]] = v

    def put(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = torch.arange(k.shape[0])
        self.k[layer, rows, :, self.pos] = k[:, :, 0]
        self.v[layer, rows, :, self.pos] = v[:, :, 0]
        return self.k[layer], self.v[layer]

    def visible(self) -> torch.Tensor:
        """(B, 1, 1, W) boolean: key j is visible to row b's query iff j <= pos[b]."""
        keys = torch.arange(self.k.shape[3])
        return (keys.unsqueeze(0) <= self.pos.unsqueeze(1))[:, None, None, :]


class SwiGLU(nn.Module):
    """Gated MLP: ``down(silu(gate(x)) * up(x))`` (Shazeer 2020, as in Llama)."""

    def __init__(self, cfg: TinyLMConfig) -> None:
        super().__init__()
        self.gate = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.up = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.down = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    """Pre-norm transformer block: ``x + attn(norm(x))`` then ``x + mlp(norm(x))``."""

    def __init__(self, cfg: TinyLMConfig) -> None:
        super().__init__()
        self.attn_norm = nn.RMSNorm(cfg.d_model, eps=1e-5)
        self.attn = Attention(cfg)
        self.mlp_norm = nn.RMSNorm(cfg.d_model, eps=1e-5)
        self.mlp = SwiGLU(cfg)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, cache: KVCache | None = None, layer: int = 0
    ) -> torch.Tensor:
        x = x + self.drop(self.attn(self.attn_norm(x), cos, sin, cache, layer))
        return x + self.drop(self.mlp(self.mlp_norm(x)))


def _rope_tables(head_dim: int, max_seq_len: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = torch.outer(torch.arange(max_seq_len, dtype=torch.float64), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)  # rotate-half layout, as in HF Llama
    return angles.cos().float(), angles.sin().float()


def _apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class TinyLM(nn.Module):
    """Llama-style decoder-only LM; ``seed`` makes the initial weights repeatable.

    Weights are drawn from a private generator, so building a model never moves
    the global torch RNG.
    """

    def __init__(self, config: TinyLMConfig, *, seed: int = 0) -> None:
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.norm = nn.RMSNorm(config.d_model, eps=1e-5)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        if config.tie_embeddings:
            self.head.weight = self.embed.weight
        cos, sin = _rope_tables(config.d_model // config.n_heads, config.max_seq_len, config.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self._init_weights(seed)

    def _init_weights(self, seed: int) -> None:
        # GPT-2 style: N(0, 0.02), residual output projections scaled by 1/sqrt(2L).
        gen = torch.Generator().manual_seed(int(seed))
        resid_std = 0.02 / math.sqrt(2 * self.config.n_layers)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() < 2:
                    continue  # RMSNorm weights stay at 1
                std = resid_std if name.endswith(("proj.weight", "down.weight")) else 0.02
                p.copy_(torch.randn(p.shape, generator=gen) * std)

    def forward(
        self, idx: torch.Tensor, targets: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Return ``(logits, loss)``: logits ``(B, T, vocab)``; mean token cross-entropy (nats) if ``targets``."""
        t = idx.shape[1]
        if t > self.config.max_seq_len:
            raise ParamsError(f"sequence length {t} exceeds TinyLMConfig.max_seq_len={self.config.max_seq_len}")
        cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        x = self.drop(self.embed(idx))
        for block in self.blocks:
            x = block(x, cos, sin)
        logits = self.head(self.norm(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss

    @torch.no_grad()
    def prefill(self, idx: torch.Tensor, width: int) -> tuple[torch.Tensor, KVCache]:
        """Logits ``(B, T, vocab)`` of ``idx`` and a cache of ``width`` positions holding its keys and values."""
        if width > self.config.max_seq_len:
            raise ParamsError(f"sequence length {width} exceeds TinyLMConfig.max_seq_len={self.config.max_seq_len}")
        c = self.config
        cache = KVCache(c.n_layers, idx.shape[0], c.n_heads, width, c.d_model // c.n_heads)
        t = idx.shape[1]
        x = self.embed(idx)
        for i, block in enumerate(self.blocks):
            x = block(x, self.rope_cos[:t], self.rope_sin[:t], cache, i)
        return self.head(self.norm(x)), cache

    @torch.no_grad()
    def step(self, tokens: torch.Tensor, pos: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """Logits ``(B, vocab)`` after feeding ``tokens[b]`` at position ``pos[b]``; the cache takes its keys and
        values. Equal, up to float rounding, to a full forward pass's logits at those positions."""
        cache.pos = pos
        cos, sin = self.rope_cos[pos][:, None, None, :], self.rope_sin[pos][:, None, None, :]
        x = self.embed(tokens.unsqueeze(1))
        for i, block in enumerate(self.blocks):
            x = block(x, cos, sin, cache, i)
        return self.head(self.norm(x))[:, 0]


def non_embedding_params(model_or_config: TinyLM | TinyLMConfig) -> int:
    """Parameters excluding the token embedding and the LM head (Kaplan et al. 2020's N)."""
    cfg = model_or_config.config if isinstance(model_or_config, TinyLM) else model_or_config
    d, f = cfg.d_model, cfg.d_ff
    per_layer = 4 * d * d + 3 * d * f + 2 * d  # qkv + proj, gate/up/down, two RMSNorms
    return cfg.n_layers * per_layer + d  # + final RMSNorm


def swiglu_width(d_model: int, multiple: int = 16) -> int:
    """Llama's SwiGLU hidden width: 8/3 of d_model, rounded up to ``multiple``."""
    return multiple * math.ceil(8 * d_model / 3 / multiple)


def _heads_for(d_model: int) -> int:
    """Most heads whose (even) width is at least 16 below d_model 128, 32 up to 256, else 64."""
    min_head = 16 if d_model < 128 else 32 if d_model <= 256 else 64
    return max(
        h
        for h in range(1, d_model + 1)
        if d_model % h == 0 and (d_model // h) % 2 == 0 and (d_model // h >= min_head or h == 1)
    )


def config_for_params(
    target_non_embedding: int,
    *,
    vocab_size: int,
    max_seq_len: int,
    aspect_ratio: float = 16.0,
    rope_theta: float = 10000.0,
    tie_embeddings: bool = True,
    dropout: float = 0.0,
) -> TinyLMConfig:
    """Pick ``(d_model, n_layers, n_heads, d_ff)`` whose non-embedding count is close to the target.

    Searches d_model (multiples of 4 below 128, of 8 above) and 1-32 layers,
    scoring each shape by ``|log(N / target)| + 0.2 * |log((d_model / n_layers) / aspect_ratio)|``:
    the count dominates, and among near-equal counts the width/depth ratio
    closest to ``aspect_ratio`` wins (Kaplan et al. find loss flat over a wide
    range of ratios; small models such as Pythia-14M sit near 16-20).
    """
    if target_non_embedding < 1000:
        raise ParamsError(f"target_non_embedding must be >= 1000, got {target_non_embedding}")
    best: tuple[float, TinyLMConfig] | None = None
    for d_model in [*range(16, 128, 4), *range(128, 2049, 8)]:
        n_heads = _heads_for(d_model)
        for n_layers in range(1, 33):
            cfg = TinyLMConfig(
                vocab_size=vocab_size,
                d_model=d_model,
                n_layers=n_layers,
                n_heads=n_heads,
                d_ff=swiglu_width(d_model),
                max_seq_len=max_seq_len,
                rope_theta=rope_theta,
                tie_embeddings=tie_embeddings,
                dropout=dropout,
            )
            score = abs(math.log(non_embedding_params(cfg) / target_non_embedding))
            score += 0.2 * abs(math.log(d_model / n_layers / aspect_ratio))
            if best is None or score < best[0]:
                best = (score, cfg)
    assert best is not None
    return best[1]


def save_model(model: TinyLM, directory: str | os.PathLike) -> Path:
    """Write ``config.json`` and ``model.safetensors`` into ``directory`` atomically (the tied head once)."""
    return checkpoint.save(model, directory, MODEL_TYPE)


def load_model(directory: str | os.PathLike) -> TinyLM:
    """Rebuild a :class:`TinyLM` written by :func:`save_model` (in eval mode)."""
    return checkpoint.load(
        directory,
        TinyLM,
        TinyLMConfig,
        MODEL_TYPE,
        may_be_missing=lambda c: {"head.weight"} if c.tie_embeddings else set(),
    )
