"""Fitting Gaussians to one volume by gradient descent on the raw (pre-activation) parameters: the reconstruction-
convergence proxy (card, claim 3) starts it from the pretrained decoder's prediction or from a random draw of the
untrained heads' distribution, and counts the iterations until the PSNR reaches a target."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from components.medgmae import render as R
from components.medgmae.model import INTENSITY_BIAS, SCALE_BIAS, activate


@dataclass
class FitResult:
    iters_to_target: int | None  # None: not reached within the budget (censored)
    psnr: list[float]  # PSNR after each iteration (index 0: at the start)
    final_psnr: float


def random_raw(k: int, generator: torch.Generator, scale_sd: float = 0.5) -> dict[str, torch.Tensor]:
    """Raw parameters drawn like an untrained decoder's heads: centres uniform in the cube, scales around
    sigmoid(-1.386) = 0.2, random unit quaternions, intensities sigmoid(-0.405) = 0.4."""
    u = torch.rand(k, 3, generator=generator).clamp(1e-3, 1 - 1e-3)
    return {
        "mu": torch.log(u / (1 - u)),
        "scale": SCALE_BIAS + scale_sd * torch.randn(k, 3, generator=generator),
        "quat": torch.randn(k, 4, generator=generator),
        "intensity": torch.full((k, 1), INTENSITY_BIAS),
    }


def render_raw(raw: dict[str, torch.Tensor], shape: tuple[int, int, int], gain: float) -> torch.Tensor:
    g = activate({k: v[None] for k, v in raw.items()})
    return R.render(g["mu"], g["scale"], g["quat"], g["intensity"], shape, gain=gain)[0]


def fit(
    target: torch.Tensor,
    raw: dict[str, torch.Tensor],
    *,
    iters: int,
    lr: float,
    gain: float,
    target_psnr: float | None = None,
) -> FitResult:
    """Adam on the raw parameters against the MSE to ``target`` (S, S, S); stops once ``target_psnr`` is reached."""
    params = {k: v.detach().clone().requires_grad_(True) for k, v in raw.items()}
    opt = torch.optim.Adam(params.values(), lr=lr)
    shape = tuple(target.shape)
    curve, hit = [], None
    for it in range(iters + 1):
        pred = render_raw(params, shape, gain)
        mse = (pred - target).pow(2).mean()
        p = float(10 * torch.log10(1.0 / mse.detach().clamp_min(1e-12)))
        curve.append(p)
        if target_psnr is not None and p >= target_psnr:
            hit = it
            break
        if it == iters:
            break
        opt.zero_grad(set_to_none=True)
        mse.backward()
        opt.step()
    return FitResult(hit, curve, curve[-1])


def iterations_summary(results: list[FitResult], cap: int) -> dict:
    """Median iterations (censored at ``cap``) and the share that reached the target."""
    its = np.array([r.iters_to_target if r.iters_to_target is not None else cap for r in results], float)
    reached = float(np.mean([r.iters_to_target is not None for r in results])) if results else 0.0
    return {"median_iters": float(np.median(its)) if len(its) else None, "reached": reached}
