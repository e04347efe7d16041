"""A tiny ViT (64x64 grey input, patch 8 -> 8x8 grid, d = 96, 6 pre-norm blocks) with adapter slots.

Hand-written rather than ``timm``'s ``VisionTransformer``: timm needs torchvision, which this offline
environment does not ship (installing it risks a CUDA torch). The module names follow timm's ViT
(``blocks.i.attn.qkv``, ``attn.proj``, ``mlp.fc1``, ``mlp.fc2``, ``norm1``, ``norm2``, ``head``), so the
same ``peft`` LoRA ``target_modules`` work on both. The ``full`` profile's timm ViT-B/16 sits behind config
(:mod:`components.dka.sources`).

Adapter slots per block (``None`` = absent): ``post`` after the block (DKA and the bottleneck adapter, as in
the official ``ViTWithAdapter``: ``x = adapter(block(x))``) and ``side_attn``/``side_mlp`` in parallel to
MHSA and MLP (Convpass: ``x + attn(n1(x)) + s * side(n1(x))``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from components.errors import ParamsError
from components.models import checkpoint
from components.models.vit_blocks import Attention, Block, Mlp  # noqa: F401  (shared with MedGMAE's 3-D ViT)

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
MODEL_TYPE = "paperline-dka-tiny-vit"


@dataclass
class ViTConfig:
    img_size: int = 64
    patch: int = 8
    in_chans: int = 1
    dim: int = 96
    depth: int = 6
    heads: int = 4
    mlp_ratio: float = 4.0
    n_classes: int = 10

    def __post_init__(self) -> None:
        if self.img_size % self.patch:
            raise ParamsError(f"ViTConfig.img_size {self.img_size} is not a multiple of patch {self.patch}")
        if self.dim % self.heads:
            raise ParamsError(f"ViTConfig.dim {self.dim} does not split into {self.heads} heads")
        for k in ("img_size", "patch", "in_chans", "dim", "depth", "heads", "n_classes"):
            if int(getattr(self, k)) < 1:
                raise ParamsError(f"ViTConfig.{k} must be >= 1")

    @property
    def grid(self) -> int:
        return self.img_size // self.patch


class TinyViT(nn.Module):
    """CLS-token ViT; ``tokens(x)`` gives the final normed tokens (CLS first), ``forward`` the head's logits."""

    def __init__(self, cfg: ViTConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        g = torch.Generator().manual_seed(seed)
        self.patch_embed = nn.Conv2d(cfg.in_chans, cfg.dim, cfg.patch, stride=cfg.patch)
        with torch.no_grad():  # Conv2d's own initialisation (Kaiming-uniform, a = sqrt(5)), from ``g``: the
            # default draws from torch's global generator, whose state at this point differs between processes, so
            # the same seed gave a different backbone in every run (DKA's verdicts changed between fresh clones)
            w, bias = self.patch_embed.weight, self.patch_embed.bias
            nn.init.kaiming_uniform_(w, a=math.sqrt(5), generator=g)
            bound = 1 / math.sqrt(w[0].numel())
            nn.init.uniform_(bias, -bound, bound, generator=g)
        self.cls_token = nn.Parameter(torch.randn(1, 1, cfg.dim, generator=g) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, cfg.grid**2 + 1, cfg.dim, generator=g) * 0.02)
        self.blocks = nn.ModuleList(Block(cfg.dim, cfg.heads, cfg.mlp_ratio) for _ in range(cfg.depth))
        self.norm = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.n_classes)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    m.weight.copy_(torch.randn(m.weight.shape, generator=g) * 0.02)
                    nn.init.zeros_(m.bias)

    def tokens(self, x: torch.Tensor) -> torch.Tensor:
        z = self.patch_embed(x).flatten(2).transpose(1, 2)
        z = torch.cat([self.cls_token.expand(z.shape[0], -1, -1), z], 1) + self.pos_embed
        for blk in self.blocks:
            z = blk(z)
        return self.norm(z)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.tokens(x)[:, 0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))

    @torch.no_grad()
    def pyfunc_predict(self, model_input) -> np.ndarray:
        """Class probabilities for float32 images (B, 1, H, W): what the logged MLflow model serves."""
        self.eval()
        return F.softmax(self(torch.as_tensor(np.asarray(model_input, np.float32))), -1).numpy()

    def reset_head(self, n_classes: int, seed: int) -> None:
        g = torch.Generator().manual_seed(seed)
        self.head = nn.Linear(self.config.dim, n_classes)
        with torch.no_grad():
            self.head.weight.copy_(torch.randn(self.head.weight.shape, generator=g) * 0.02)
            nn.init.zeros_(self.head.bias)


def upsample(x: np.ndarray | torch.Tensor, size: int = 64) -> torch.Tensor:
    """uint8 (B, h, w) images -> float (B, 1, size, size) in [-1, 1] (bilinear), the pretraining input."""
    t = torch.as_tensor(np.asarray(x), dtype=torch.float32)[:, None] / 255.0
    return (F.interpolate(t, size=(size, size), mode="bilinear", align_corners=False) - 0.5) / 0.5


def pretrain(
    model: TinyViT,
    x: np.ndarray,
    y: np.ndarray,
    *,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    progress: bool = False,
) -> list[float]:
    """Supervised pretraining on uint8 images (upsampled per batch; AdamW, one-cycle); returns every step's loss."""
    from tqdm import tqdm

    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    yt = torch.as_tensor(y, dtype=torch.long)
    model.train()
    losses = []
    for _ in tqdm(range(steps), desc="dka pretrain", disable=None if progress else True):
        idx = rng.integers(0, len(x), batch)
        loss = F.cross_entropy(model(upsample(x[idx], model.config.img_size)), yt[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses


def save_model(model: TinyViT, directory: str | os.PathLike) -> Path:
    """``config.json`` + ``model.safetensors`` (the backbone and its pretraining head), atomically."""
    return checkpoint.save(model, directory, MODEL_TYPE)


def load_model(directory: str | os.PathLike) -> TinyViT:
    """Rebuild a :class:`TinyViT` written by :func:`save_model` (eval mode); a wrong folder is a DataError."""
    return checkpoint.load(directory, TinyViT, ViTConfig, MODEL_TYPE)
