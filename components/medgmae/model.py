"""The 3-D ViT encoder, MedGMAE's Gaussian decoder, the voxel-MAE decoder and the masked objectives.

Encoder: a 3-D ViT (``Conv3d`` patch embedding, patch 8 on 32^3 -> 64 tokens, d = 96, 4 pre-norm blocks of
:mod:`components.models.vit_blocks`, a CLS token, learned position embeddings); it sees only the visible tokens.

Gaussian decoder (MedGMAE): tokens [CLS, K learnable Gaussian queries, visible tokens + decoder positions] through
``dec_depth`` blocks; on each query the official heads (``windrise/MedGMAE``, ``MedGaussianViTDecoder``): centre
``sigmoid`` (xavier weight, zero bias), scale ``sigmoid`` (weight N(0, 0.01), bias -1.386 so s ~ 0.2),
quaternion L2-normalised (xavier, zero bias), intensity ``sigmoid`` (xavier, bias -0.405 so I ~ 0.4); the Gaussians
are rendered densely (:func:`components.medgmae.render.render`) with the official ``0.1`` intensity gain.

Voxel-MAE decoder: visible tokens + a mask token at every masked position, decoder positions, ``dec_depth``
blocks, a linear head to the patch's voxels (plain intensities, no per-patch normalisation, as the Gaussian
target). Both objectives: MSE on the masked voxels only (:func:`masked_mse`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from components.errors import ParamsError
from components.medgmae import render as R
from components.models import checkpoint
from components.models.vit_blocks import Block

OBJECTIVES = ("medgmae", "voxel-mae")
SCALE_BIAS, INTENSITY_BIAS = -1.386, -0.405  # official head initialisation


@dataclass
class ModelConfig:
    size: int = 32
    patch: int = 8
    dim: int = 96
    depth: int = 4
    heads: int = 4
    mlp_ratio: float = 4.0
    dec_dim: int = 96
    dec_depth: int = 2
    dec_heads: int = 4
    n_gaussians: int = 64
    gain: float = 0.1
    objective: str = "medgmae"  # the pretraining decoder a saved MaskedAutoencoder3D carries

    def __post_init__(self) -> None:
        if self.size % self.patch:
            raise ParamsError(f"ModelConfig.size {self.size} is not a multiple of patch {self.patch}")
        for d, h in (("dim", "heads"), ("dec_dim", "dec_heads")):
            if getattr(self, d) % getattr(self, h):
                raise ParamsError(f"ModelConfig.{d} {getattr(self, d)} does not split into {getattr(self, h)} heads")
        for k in ("size", "patch", "dim", "depth", "heads", "dec_dim", "dec_depth", "dec_heads", "n_gaussians"):
            if int(getattr(self, k)) < 1:
                raise ParamsError(f"ModelConfig.{k} must be >= 1")

    @property
    def grid(self) -> int:
        return self.size // self.patch

    @property
    def n_tokens(self) -> int:
        return self.grid**3

    def to_dict(self) -> dict:
        return asdict(self)


def _init_linear(m: nn.Module) -> None:
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.LayerNorm):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)


class Encoder3D(nn.Module):
    """3-D ViT; ``forward(x, keep)`` encodes the visible tokens ``keep`` (B, n_keep) (None: all of them)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.patch_embed = nn.Conv3d(1, cfg.dim, cfg.patch, stride=cfg.patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, cfg.dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, cfg.n_tokens, cfg.dim) * 0.02)
        self.blocks = nn.ModuleList(Block(cfg.dim, cfg.heads, cfg.mlp_ratio) for _ in range(cfg.depth))
        self.norm = nn.LayerNorm(cfg.dim)
        self.blocks.apply(_init_linear)

    def forward(self, x: torch.Tensor, keep: torch.Tensor | None = None, hidden: bool = False):
        """Normed tokens (B, 1 + n_keep, d), CLS first; with ``hidden`` also every block's patch tokens."""
        z = self.patch_embed(x).flatten(2).transpose(1, 2) + self.pos_embed
        if keep is not None:
            z = torch.gather(z, 1, keep.unsqueeze(-1).expand(-1, -1, z.shape[-1]))
        z = torch.cat([self.cls_token.expand(z.shape[0], -1, -1), z], 1)
        states = []
        for blk in self.blocks:
            z = blk(z)
            states.append(z[:, 1:])
        z = self.norm(z)
        return (z, states) if hidden else z


def random_mask(b: int, n: int, ratio: float, generator: torch.Generator | None = None):
    """Per sample, ``round(ratio * n)`` masked tokens at random: (keep indices (B, n_keep) sorted, mask (B, n))."""
    n_mask = int(round(ratio * n))
    if not 0 <= n_mask < n:
        raise ParamsError(f"mask_ratio {ratio}: masks {n_mask} of {n} tokens (need at least one visible)")
    order = torch.rand(b, n, generator=generator).argsort(1)
    keep = order[:, n_mask:].sort(1).values
    mask = torch.ones(b, n, dtype=torch.bool)
    mask.scatter_(1, keep, False)
    return keep, mask


def voxel_mask(mask: torch.Tensor, grid: int, patch: int) -> torch.Tensor:
    """Token mask (B, grid^3) -> voxel mask (B, 1, S, S, S), S = grid * patch (token order = C order of the grid)."""
    m = mask.view(-1, 1, grid, grid, grid).float()
    return m.repeat_interleave(patch, 2).repeat_interleave(patch, 3).repeat_interleave(patch, 4)


def masked_mse(pred: torch.Tensor, target: torch.Tensor, vmask: torch.Tensor) -> torch.Tensor:
    """Mean squared error over the voxels where ``vmask`` is 1 (the masked ones)."""
    return ((pred - target).pow(2) * vmask).sum() / vmask.sum().clamp_min(1.0)


class GaussianHeads(nn.Module):
    """The official heads: centre, scale, quaternion, intensity from each query token."""

    def __init__(self, dim: int):
        super().__init__()
        self.position, self.scale = nn.Linear(dim, 3), nn.Linear(dim, 3)
        self.rotation, self.intensity = nn.Linear(dim, 4), nn.Linear(dim, 1)
        nn.init.xavier_uniform_(self.position.weight)
        nn.init.zeros_(self.position.bias)
        nn.init.normal_(self.scale.weight, 0.0, 0.01)
        nn.init.constant_(self.scale.bias, SCALE_BIAS)
        nn.init.xavier_uniform_(self.rotation.weight)
        nn.init.zeros_(self.rotation.bias)
        nn.init.xavier_uniform_(self.intensity.weight)
        nn.init.constant_(self.intensity.bias, INTENSITY_BIAS)

    def raw(self, h: torch.Tensor) -> dict[str, torch.Tensor]:
        """Pre-activation outputs (the reconstruction fit optimises these)."""
        return {
            "mu": self.position(h),
            "scale": self.scale(h),
            "quat": self.rotation(h),
            "intensity": self.intensity(h),
        }

    def forward(self, h: torch.Tensor) -> dict[str, torch.Tensor]:
        return activate(self.raw(h))


def activate(raw: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Raw head outputs -> Gaussians: sigmoid centre and scale, unit quaternion, sigmoid intensity (K,)."""
    return {
        "mu": torch.sigmoid(raw["mu"]),
        "scale": torch.sigmoid(raw["scale"]),
        "quat": F.normalize(raw["quat"], dim=-1),
        "intensity": torch.sigmoid(raw["intensity"]).squeeze(-1),
    }


class GaussianDecoder(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.embed = nn.Linear(cfg.dim, cfg.dec_dim)
        self.queries = nn.Parameter(torch.randn(1, cfg.n_gaussians, cfg.dec_dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, cfg.n_tokens, cfg.dec_dim) * 0.02)
        self.blocks = nn.ModuleList(Block(cfg.dec_dim, cfg.dec_heads, cfg.mlp_ratio) for _ in range(cfg.dec_depth))
        self.norm = nn.LayerNorm(cfg.dec_dim)
        self.embed.apply(_init_linear)
        self.blocks.apply(_init_linear)
        self.heads = GaussianHeads(cfg.dec_dim)

    def query_tokens(self, z: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The K query tokens after the decoder blocks (B, K, dec_dim)."""
        e = self.embed(z)
        pos = torch.gather(self.pos_embed.expand(len(z), -1, -1), 1, keep.unsqueeze(-1).expand(-1, -1, e.shape[-1]))
        k = self.config.n_gaussians
        h = torch.cat([e[:, :1], self.queries.expand(len(z), -1, -1), e[:, 1:] + pos], 1)
        for blk in self.blocks:
            h = blk(h)
        return self.norm(h)[:, 1 : 1 + k]

    def forward(self, z: torch.Tensor, keep: torch.Tensor) -> dict[str, torch.Tensor]:
        return self.heads(self.query_tokens(z, keep))

    def render(self, g: dict[str, torch.Tensor]) -> torch.Tensor:
        s = self.config.size
        return R.render(g["mu"], g["scale"], g["quat"], g["intensity"], (s, s, s), gain=self.config.gain)[:, None]


class VoxelDecoder(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.embed = nn.Linear(cfg.dim, cfg.dec_dim)
        self.mask_token = nn.Parameter(torch.randn(1, 1, cfg.dec_dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, cfg.n_tokens, cfg.dec_dim) * 0.02)
        self.blocks = nn.ModuleList(Block(cfg.dec_dim, cfg.dec_heads, cfg.mlp_ratio) for _ in range(cfg.dec_depth))
        self.norm = nn.LayerNorm(cfg.dec_dim)
        self.pred = nn.Linear(cfg.dec_dim, cfg.patch**3)
        self.apply(_init_linear)

    def forward(self, z: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        c = self.config
        e = self.embed(z)
        full = self.mask_token.expand(len(z), c.n_tokens, -1).clone()
        full.scatter_(1, keep.unsqueeze(-1).expand(-1, -1, e.shape[-1]), e[:, 1:])
        h = torch.cat([e[:, :1], full + self.pos_embed], 1)
        for blk in self.blocks:
            h = blk(h)
        p = self.pred(self.norm(h)[:, 1:])  # (B, n, patch^3)
        g, q = c.grid, c.patch
        return p.view(-1, g, g, g, q, q, q).permute(0, 1, 4, 2, 5, 3, 6).reshape(-1, 1, c.size, c.size, c.size)


class MaskedAutoencoder3D(nn.Module):
    """One encoder and the decoder of ``objective`` ('medgmae': Gaussians, 'voxel-mae': voxels)."""

    def __init__(self, cfg: ModelConfig, objective: str | None = None, seed: int = 0):
        super().__init__()
        objective = cfg.objective if objective is None else objective
        if objective not in OBJECTIVES:
            raise ParamsError(f"objective {objective!r}: use one of {list(OBJECTIVES)}")
        torch.manual_seed(seed)
        self.config, self.objective = replace(cfg, objective=objective), objective
        self.encoder = Encoder3D(cfg)
        self.decoder = GaussianDecoder(cfg) if objective == "medgmae" else VoxelDecoder(cfg)

    def reconstruct(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The full volume predicted from the visible tokens ``keep``."""
        z = self.encoder(x, keep)
        if self.objective == "medgmae":
            return self.decoder.render(self.decoder(z, keep))
        return self.decoder(z, keep)

    def loss(self, x: torch.Tensor, ratio: float, generator: torch.Generator | None = None):
        """Masked-voxel MSE of one batch (the visible voxels never count)."""
        c = self.config
        keep, mask = random_mask(len(x), c.n_tokens, ratio, generator)
        vm = voxel_mask(mask, c.grid, c.patch)
        pred = self.reconstruct(x, keep)
        return masked_mse(pred, x, vm)

    @torch.no_grad()
    def pyfunc_predict(self, model_input) -> np.ndarray:
        """The reconstruction of float32 volumes (B, 1, S, S, S) from all their tokens: what the MLflow model serves."""
        self.eval()
        x = torch.as_tensor(np.asarray(model_input, np.float32))
        keep = torch.arange(self.config.n_tokens).expand(len(x), -1)
        return self.reconstruct(x, keep).numpy()


MODEL_TYPE = "paperline-medgmae-mae3d"


def save_model(model: MaskedAutoencoder3D, directory) -> Path:
    """``config.json`` (with the objective) + ``model.safetensors``, atomically."""
    return checkpoint.save(model, directory, MODEL_TYPE)


def load_model(directory) -> MaskedAutoencoder3D:
    """Rebuild a :class:`MaskedAutoencoder3D` written by :func:`save_model` (eval mode); a wrong folder: DataError."""
    return checkpoint.load(directory, MaskedAutoencoder3D, ModelConfig, MODEL_TYPE)


def pretrain(
    model: MaskedAutoencoder3D,
    sample,
    *,
    steps: int,
    lr: float,
    ratio: float,
    seed: int,
    warmup: int = 0,
    progress: bool = False,
) -> list[float]:
    """AdamW (weight decay 0.05, betas 0.9/0.95 as MAE) with linear warm-up and cosine decay; ``sample(rng)``
    gives one batch (B, 1, S, S, S). Returns every step's masked-voxel loss."""
    from tqdm import tqdm

    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05, betas=(0.9, 0.95))

    def factor(t: int) -> float:
        if t < warmup:
            return (t + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (t - warmup) / max(1, steps - warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    model.train()
    losses = []
    for _ in tqdm(range(steps), desc=f"pretrain {model.objective}", disable=None if progress else True):
        loss = model.loss(sample(g), ratio, g)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.item()))
    return losses


@torch.no_grad()
def masked_loss(model: MaskedAutoencoder3D, x: torch.Tensor, ratio: float, seed: int, batch: int = 16) -> float:
    """The mean masked-voxel MSE on the volumes ``x`` under masks drawn by ``seed`` (evaluation)."""
    model.eval()
    g = torch.Generator().manual_seed(seed)
    tot, n = 0.0, 0
    for i in range(0, len(x), batch):
        xb = x[i : i + batch]
        tot += float(model.loss(xb, ratio, g)) * len(xb)
        n += len(xb)
    return tot / max(1, n)
