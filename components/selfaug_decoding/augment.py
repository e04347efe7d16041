"""The card's visual augmentations v -> v', on normalised image tensors (B, 3, H, W), as the official
``eunwooim/selfaug`` ``ModelWrapper.apply_augmentation`` does them:

- ``horizontal_flip`` / ``vertical_flip``: torchvision's flips;
- ``color_inversion``: un-normalise, clamp to [0, 1], ``1 - x``, normalise again (``invert_color``);
- ``random_crop``: a square crop of side ``min(H, W) // crop_ratio`` at a random place, resized back (the
  official POPE script uses crop_ratio 2.0);
- ``random_mask``: a square of side ``min(H, W) // mask_ratio`` (2: half size) set to 0 in normalised space;
- ``noise``: VCD's forward diffusion ``q(x_t | x_0)`` at ``noise_step`` (500) of a 1000-step schedule with
  ``betas = sigmoid(linspace(-6, 6, 1000)) * (5e-3 - 1e-5) + 1e-5`` (``add_diffusion_noise``).

``identity`` leaves the image unchanged: it is not on the menu; tests use it as a sabotage.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from components.errors import ParamsError

MEAN, STD = 0.5, 0.25  # the tiny VLM's input normalisation
MENU = ("random_crop", "color_inversion", "horizontal_flip", "vertical_flip", "random_mask", "noise")
NOISE_STEPS = 1000


def normalise(images01: torch.Tensor) -> torch.Tensor:
    return (images01 - MEAN) / STD


def alpha_bar(step: int) -> float:
    """The cumulative product of (1 - beta_t) up to ``step`` under VCD's schedule."""
    betas = torch.sigmoid(torch.linspace(-6, 6, NOISE_STEPS)) * (0.5e-2 - 1e-5) + 1e-5
    return float(torch.cumprod(1 - betas, 0)[step])


def diffusion_noise(x: torch.Tensor, step: int, g: torch.Generator) -> torch.Tensor:
    if not 0 <= step < NOISE_STEPS:
        raise ParamsError(f"noise_step: {step} is outside [0, {NOISE_STEPS - 1}]")
    ab = alpha_bar(step)
    eps = torch.randn(x.shape, generator=g, dtype=x.dtype)
    return ab**0.5 * x + (1 - ab) ** 0.5 * eps


def _squares(n: int, h: int, w: int, side: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    top = torch.randint(0, h - side + 1, (n,), generator=g)
    left = torch.randint(0, w - side + 1, (n,), generator=g)
    return top, left


def augment(
    name: str,
    x: torch.Tensor,
    g: torch.Generator,
    *,
    crop_ratio: float = 2.0,
    mask_ratio: float = 2.0,
    noise_step: int = 500,
) -> torch.Tensor:
    """``x`` (B, 3, H, W, normalised) under augmentation ``name``; random parts drawn from ``g`` per image."""
    b, _, h, w = x.shape
    if name == "identity":
        return x.clone()
    if name == "horizontal_flip":
        return torch.flip(x, dims=(3,))
    if name == "vertical_flip":
        return torch.flip(x, dims=(2,))
    if name == "color_inversion":
        return normalise(1.0 - torch.clamp(x * STD + MEAN, 0, 1))
    if name == "random_mask":
        side = int(min(h, w) // mask_ratio)
        out = x.clone()
        top, left = _squares(b, h, w, side, g)
        for i in range(b):
            out[i, :, top[i] : top[i] + side, left[i] : left[i] + side] = 0.0
        return out
    if name == "random_crop":
        side = int(min(h, w) // crop_ratio)
        top, left = _squares(b, h, w, side, g)
        crops = [x[i : i + 1, :, top[i] : top[i] + side, left[i] : left[i] + side] for i in range(b)]
        return torch.cat([F.interpolate(c, size=(h, w), mode="bilinear", align_corners=False, antialias=True)
                          for c in crops])  # fmt: skip
    if name == "noise":
        return diffusion_noise(x, noise_step, g)
    raise ParamsError(f"augmentation {name!r}: use one of {MENU}")
