"""Effective receptive field (Luo et al. 2016): the gradient of the centre output unit w.r.t. the input pixels.

``erf_maps(fn, x)`` backpropagates half the squared norm of the centre output position of ``fn(x)`` (a grid of
shape (B, C, H, W), or ViT patch tokens (B, 1 + H*W, C) with the CLS token first) to every input pixel; the
map of an image is |grad| summed over input channels. (The plain sum over channels would be degenerate here:
after a LayerNorm without affine shift the channels of a token sum to a constant, so its gradient is 0.)
``erf_area(maps, t)`` is the share of pixels whose map, normalised by that image's maximum, is >= t; the card
reports t in {0.05, 0.2}.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from components.errors import DataError


def _centre(out: torch.Tensor, tokens: bool) -> torch.Tensor:
    if tokens:
        n = out.shape[1] - 1
        side = int(round(n**0.5))
        if side * side != n:
            raise DataError(f"erf: {n} patch tokens do not form a square grid")
        return out[:, 1 + (side // 2) * side + side // 2, :]
    return out[:, :, out.shape[2] // 2, out.shape[3] // 2]


def erf_maps(
    fn: Callable[[torch.Tensor], torch.Tensor], x: np.ndarray | torch.Tensor, *, tokens: bool, batch: int = 64
) -> np.ndarray:
    """Per-image ERF maps (B, H, W) of ``fn`` at ``x`` (B, C, H, W)."""
    xt = torch.as_tensor(np.asarray(x, dtype=np.float32))
    maps = []
    for i in range(0, len(xt), batch):
        xb = xt[i : i + batch].clone().requires_grad_(True)
        (0.5 * _centre(fn(xb), tokens).pow(2).sum()).backward()
        maps.append(xb.grad.abs().sum(1).numpy())
    return np.concatenate(maps)


def erf_area(maps: np.ndarray, t: float) -> np.ndarray:
    """Per-image share of pixels with normalised |grad| >= t (an image with an all-zero map has area 0)."""
    flat = maps.reshape(len(maps), -1)
    top = flat.max(1, keepdims=True)
    norm = np.divide(flat, top, out=np.zeros_like(flat), where=top > 0)
    return (norm >= t).mean(1) * (top[:, 0] > 0)


def mean_map(maps: np.ndarray) -> np.ndarray:
    """The average of the per-image maps, each normalised to max 1 (for plots)."""
    top = maps.reshape(len(maps), -1).max(1)[:, None, None]
    return np.divide(maps, top, out=np.zeros_like(maps), where=top > 0).mean(0)
