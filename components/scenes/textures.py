"""Ground and bark textures from scikit-image's bundled images (offline), coloured and shaded."""

from __future__ import annotations

import functools

import numpy as np
from skimage import data as skdata
from skimage.transform import resize

TEXTURES = ("grass", "gravel", "brick")
# base RGB tints in [0, 1] per texture (jittered per scene)
TINTS = {"grass": (0.36, 0.42, 0.22), "gravel": (0.47, 0.42, 0.36), "brick": (0.62, 0.36, 0.28)}


@functools.cache
def _gray(name: str) -> np.ndarray:
    if name not in TEXTURES:
        raise ValueError(f"unknown texture {name!r}; use one of {TEXTURES}")
    img = getattr(skdata, name)().astype(np.float32) / 255.0
    return (img - img.mean()) / (img.std() + 1e-6)


def smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cells: int) -> np.ndarray:
    """Low-frequency noise in [0, 1]: a ``cells`` x ``cells`` random grid upsampled bicubically."""
    grid = rng.random((cells, cells)).astype(np.float32)
    out = resize(grid, shape, order=3, mode="reflect", anti_aliasing=False)
    lo, hi = out.min(), out.max()
    return (out - lo) / (hi - lo + 1e-6)


def ground(rng: np.random.Generator, name: str, size: int, *, contrast: float = 0.18) -> np.ndarray:
    """A ``size`` x ``size`` x 3 float image: a random crop of the texture (zoom 1-3x), tinted with jitter."""
    g = _gray(name)
    crop = int(rng.integers(max(size, 96), 480))
    y, x = rng.integers(0, g.shape[0] - crop + 1), rng.integers(0, g.shape[1] - crop + 1)
    patch = resize(g[y : y + crop, x : x + crop], (size, size), order=1, anti_aliasing=True)
    tint = np.clip(np.asarray(TINTS[name]) + rng.normal(0, 0.05, 3), 0.05, 0.95)
    return np.clip(tint[None, None, :] * (1.0 + contrast * patch[..., None]), 0, 1).astype(np.float32)


def flat(rng: np.random.Generator, size: int) -> np.ndarray:
    """A flat urban background (pavement / wall) with a faint gradient."""
    base = rng.uniform(0.35, 0.8) * np.ones(3) + rng.normal(0, 0.04, 3)
    grad = np.linspace(-0.05, 0.05, size)[:, None, None]
    return np.clip(base[None, None, :] + grad + rng.normal(0, 0.01, (size, size, 3)), 0, 1).astype(np.float32)


def canopy_shadow(rng: np.random.Generator, size: int, strength: float) -> np.ndarray:
    """Multiplicative light map in [1 - strength, 1] (sun flecks under a canopy)."""
    return (1.0 - strength * smooth_noise(rng, (size, size), int(rng.integers(3, 8)))).astype(np.float32)
