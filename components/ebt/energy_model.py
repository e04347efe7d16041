"""The energy transformer E_theta(x, y_hat): one scalar energy per position for a candidate next-token distribution.

Follows ``model/nlp/ebt.py`` and ``model/ar_ebt_default.py`` of alexiglad/EBT (``ebt_type="default"``):
- the candidate logits y_hat (B, S, V) enter as predicted embeddings ``vocab_to_embed(softmax(y_hat))``
  (``normalize_initial_condition=True``, ``vocab_to_embed`` a bias-free Linear V -> D);
- the real context embeddings form a causal stream (positions 0..S-1), unchanged by y_hat;
- the predicted embedding at index i (the candidate for token i+1) sits at RoPE position i+1 and attends to the
  real tokens 0..i and to itself only, never to other predictions (the repo's superdiagonal construction);
- the energy is ``Linear(D -> 1)`` on the final-normed predicted stream.

Difference from the repo (recorded in flows/ebt/README.md): the real stream's keys and values are computed once per
context and reused by every optimisation step (the repo recomputes the concatenated 2S sequence each step); the
result is identical because the real stream never sees a prediction. Blocks are Llama-style (RMSNorm, RoPE, SwiGLU)
with the tiny LM's SwiGLU and RoPE tables, so EBT and the Transformer++ baseline differ only where the paper does.
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
from components.models.tiny_lm import SwiGLU, TinyLMConfig, _apply_rope, _rope_tables

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
MODEL_TYPE = "paperline-ebt-nlp"


@dataclass
class EBTConfig:
    """Architecture of an :class:`EnergyTransformer` (same fields as the Transformer++ for equal depth/width)."""

    vocab_size: int
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 176
    max_seq_len: int = 64
    rope_theta: float = 10000.0
    step_size: float = 500.0  # alpha at initialisation (mcmc_step_size; 500 in the minimal loop)
    step_size_learnable: bool = True
    infer_steps: int = 2  # steps the served predictor (load_predictor) takes; the pipeline sets M_train

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "d_ff", "max_seq_len"):
            if int(getattr(self, name)) < 1:
                raise ParamsError(f"EBTConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ParamsError(
                f"EBTConfig.d_model ({self.d_model}) must split into n_heads ({self.n_heads}) heads of even size (RoPE)"
            )
        if not self.step_size > 0:
            raise ParamsError(f"EBTConfig.step_size must be > 0, got {self.step_size}")


@dataclass
class Context:
    """The real stream of one batch of contexts: per layer the rotated keys and the values, (B, H, S, hd)."""

    keys: list[torch.Tensor]
    values: list[torch.Tensor]

    def repeat(self, n: int) -> Context:
        """Each context ``n`` times in a row (candidates of one context stay adjacent: index b * n + g)."""
        return Context([k.repeat_interleave(n, 0) for k in self.keys], [v.repeat_interleave(n, 0) for v in self.values])


class EBTBlock(nn.Module):
    """A pre-norm block run on two streams: the causal real stream and the predicted stream."""

    def __init__(self, cfg: EBTConfig) -> None:
        super().__init__()
        self.n_heads, self.head_dim = cfg.n_heads, cfg.d_model // cfg.n_heads
        self.attn_norm = nn.RMSNorm(cfg.d_model, eps=1e-5)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.mlp_norm = nn.RMSNorm(cfg.d_model, eps=1e-5)
        self.mlp = SwiGLU(TinyLMConfig(vocab_size=1, d_model=cfg.d_model, n_heads=cfg.n_heads, d_ff=cfg.d_ff))

    def _qkv(self, h: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        b, t, d = h.shape
        q, k, v = self.qkv(self.attn_norm(h)).view(b, t, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        return _apply_rope(q, cos, sin), _apply_rope(k, cos, sin), v

    def _out(self, h: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        b, _, t, _ = y.shape
        h = h + self.proj(y.transpose(1, 2).reshape(b, t, -1))
        return h + self.mlp(self.mlp_norm(h))

    def real(self, h: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        """Causal self-attention over the real tokens; returns the new stream and this layer's keys/values."""
        q, k, v = self._qkv(h, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self._out(h, y), k, v

    def pred(self, p: torch.Tensor, k_o: torch.Tensor, v_o: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        """Prediction i attends to real tokens 0..i and to itself (explicit softmax: twice differentiable)."""
        q, k, v = self._qkv(p, cos, sin)
        s = p.shape[1]
        scale = 1.0 / math.sqrt(self.head_dim)
        scores = torch.matmul(q, k_o.transpose(-1, -2)) * scale  # (B, H, S, S): pred i vs real j
        allowed = torch.ones(s, s, dtype=torch.bool, device=p.device).tril()  # j <= i
        scores = scores.masked_fill(~allowed, float("-inf"))
        self_score = (q * k).sum(-1, keepdim=True) * scale  # (B, H, S, 1): pred i vs itself
        w = torch.softmax(torch.cat([scores, self_score], dim=-1), dim=-1)
        y = torch.matmul(w[..., :s], v_o) + w[..., s:] * v
        return self._out(p, y)


class EnergyTransformer(nn.Module):
    """E_theta(x, y_hat) with a learnable step size ``alpha`` (the repo's ``self.alpha``)."""

    def __init__(self, config: EBTConfig, *, seed: int = 0) -> None:
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.vocab_to_embed = nn.Linear(config.vocab_size, config.d_model, bias=False)
        self.blocks = nn.ModuleList(EBTBlock(config) for _ in range(config.n_layers))
        self.norm = nn.RMSNorm(config.d_model, eps=1e-5)
        self.energy_head = nn.Linear(config.d_model, 1, bias=False)
        self.alpha = nn.Parameter(torch.tensor(float(config.step_size)), requires_grad=config.step_size_learnable)
        cos, sin = _rope_tables(config.d_model // config.n_heads, config.max_seq_len + 1, config.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self._init_weights(seed)

    def _init_weights(self, seed: int) -> None:
        # Same scheme as the Transformer++ (TinyLM): N(0, 0.02), residual projections scaled by 1/sqrt(2L).
        gen = torch.Generator().manual_seed(int(seed))
        resid_std = 0.02 / math.sqrt(2 * self.config.n_layers)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() < 2:
                    continue
                std = resid_std if name.endswith(("proj.weight", "down.weight")) else 0.02
                p.copy_(torch.randn(p.shape, generator=gen) * std)

    def step_size(self) -> torch.Tensor:
        """alpha clamped at 1e-4 as in the repo (``torch.clamp(self.alpha, min=0.0001)``)."""
        return torch.clamp(self.alpha, min=1e-4)

    def context(self, idx: torch.Tensor) -> Context:
        """Run the real stream once for contexts ``idx`` (B, S)."""
        s = idx.shape[1]
        if s > self.config.max_seq_len:
            raise ParamsError(f"sequence length {s} exceeds EBTConfig.max_seq_len={self.config.max_seq_len}")
        h = self.embed(idx)
        keys, values = [], []
        cos, sin = self.rope_cos[:s], self.rope_sin[:s]
        for block in self.blocks:
            h, k, v = block.real(h, cos, sin)
            keys.append(k)
            values.append(v)
        return Context(keys, values)

    def energy(self, ctx: Context, y_hat: torch.Tensor) -> torch.Tensor:
        """Energies (B, S) of candidate logits ``y_hat`` (B, S, V) given the real stream ``ctx``."""
        s = y_hat.shape[1]
        p = self.vocab_to_embed(torch.softmax(y_hat, dim=-1))
        cos, sin = self.rope_cos[1 : s + 1], self.rope_sin[1 : s + 1]  # prediction i sits at position i + 1
        for block, k, v in zip(self.blocks, ctx.keys, ctx.values):
            p = block.pred(p, k, v, cos, sin)
        return self.energy_head(self.norm(p)).squeeze(-1)

    def forward(self, idx: torch.Tensor, y_hat: torch.Tensor) -> torch.Tensor:
        """E(x, y_hat): energies (B, S)."""
        return self.energy(self.context(idx), y_hat)


def non_embedding_params(model: EnergyTransformer) -> int:
    """Parameters except the token embedding and vocab_to_embed (the Transformer++ count leaves out its tied head)."""
    skip = {id(model.embed.weight), id(model.vocab_to_embed.weight), id(model.alpha)}
    return sum(p.numel() for p in model.parameters() if id(p) not in skip)


def save_model(model: EnergyTransformer, directory: str | os.PathLike) -> Path:
    """Write ``config.json`` and ``model.safetensors`` (alpha included) into ``directory`` atomically."""
    return checkpoint.save(model, directory, MODEL_TYPE)


def load_model(directory: str | os.PathLike) -> EnergyTransformer:
    """Rebuild an :class:`EnergyTransformer` written by :func:`save_model` (eval mode)."""
    return checkpoint.load(directory, EnergyTransformer, EBTConfig, MODEL_TYPE)
