"""Pre-norm transformer blocks with timm's ViT module names (``attn.qkv``, ``attn.proj``, ``mlp.fc1``,
``mlp.fc2``, ``norm1``, ``norm2``), so ``peft`` LoRA ``target_modules`` work on them. Shared by DKA's 2-D tiny ViT
(which fills the adapter slots of :class:`Block`) and MedGMAE's 3-D ViT and decoders (which leave them empty).

Adapter slots per block (``None`` = absent): ``post`` after the block (``x = adapter(block(x))``) and
``side_attn``/``side_mlp`` in parallel to MHSA and MLP (Convpass: ``x + attn(n1(x)) + s * side(n1(x))``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(b, n, d))


class Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    """Pre-norm transformer block with optional adapter slots (see the module doc)."""

    def __init__(self, dim: int, heads: int, mlp_ratio: float):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), Attention(dim, heads)
        self.norm2, self.mlp = nn.LayerNorm(dim), Mlp(dim, int(dim * mlp_ratio))
        self.post: nn.Module | None = None
        self.side_attn: nn.Module | None = None
        self.side_mlp: nn.Module | None = None
        self.side_scale = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h) + (self.side_scale * self.side_attn(h) if self.side_attn is not None else 0.0)
        h = self.norm2(x)
        x = x + self.mlp(h) + (self.side_scale * self.side_mlp(h) if self.side_mlp is not None else 0.0)
        return self.post(x) if self.post is not None else x
