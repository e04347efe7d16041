"""Small helpers the medgmae stages share."""

from __future__ import annotations

import logging

from components.medgmae.model import ModelConfig
from flows.runtime.tracking import Tensor

log = logging.getLogger("paperline")


def model_config(p) -> ModelConfig:
    """The encoder/decoder shape from ``medgmae.model`` and the crop size."""
    m = p.model
    return ModelConfig(size=p.data.size, patch=m.patch, dim=m.dim, depth=m.depth, heads=m.heads,
                       dec_dim=m.dec_dim, dec_depth=m.dec_depth, dec_heads=m.dec_heads,
                       n_gaussians=m.n_gaussians, gain=m.gain)  # fmt: skip


def volumes(size: int) -> Tensor:
    """The signature input: float32 volumes (B, 1, S, S, S) in [0, 1]."""
    return Tensor("volume", "float32", (-1, 1, size, size, size))


def voxels_out(size: int, channels: int = 1, name: str = "reconstruction") -> Tensor:
    return Tensor(name, "float32", (-1, channels, size, size, size))
