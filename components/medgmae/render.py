"""Dense differentiable rendering of 3-D anisotropic Gaussians onto a voxel grid (exact, CPU).

    V(x) = gain * sum_k I_k exp(-1/2 (x - mu_k)^T Sigma_k^{-1} (x - mu_k)),   Sigma_k = R_k S_k S_k^T R_k^T

with ``x`` on the unit cube: voxel ``i`` of an axis of ``n`` voxels sits at ``i / (n - 1)`` (as the official
``create_grid_3d``: ``linspace(0, 1, n)`` per axis, axes in the volume's (d, h, w) order), ``mu`` in [0, 1]^3,
``S = diag(s)`` the per-axis standard deviations in the same unit, ``R`` the rotation of the unit quaternion
``q = (w, x, y, z)``. The official CUDA kernel culls Gaussians outside a radius around each voxel; we sum every
Gaussian at every voxel, which is exact (the card's choice for CPU).

:func:`render` expands the quadratic form, so the Mahalanobis distances of all voxels to all Gaussians are one
matrix product of 10 monomials of the voxel coordinates with 10 coefficients per Gaussian:
(x-mu)^T A (x-mu) = x^T A x - 2 x^T A mu + mu^T A mu, A = Sigma^{-1} = R S^{-2} R^T. :func:`render_direct`
evaluates the differences explicitly in voxel chunks (the reference and the benchmark's baseline).
"""

from __future__ import annotations

import functools

import torch


def quat_to_rotmat(q: torch.Tensor) -> torch.Tensor:
    """Rotation matrices (..., 3, 3) of quaternions (..., 4) in (w, x, y, z) order (normalised here)."""
    q = q / q.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    w, x, y, z = q.unbind(-1)
    rows = (
        (1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
        (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
        (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)),
    )
    return torch.stack([torch.stack(r, -1) for r in rows], -2)


def precision(scale: torch.Tensor, quat: torch.Tensor) -> torch.Tensor:
    """Sigma^{-1} = R diag(1/s^2) R^T, (..., 3, 3), for scales (..., 3) and quaternions (..., 4)."""
    r = quat_to_rotmat(quat)
    return (r * scale.clamp_min(1e-6).pow(-2).unsqueeze(-2)) @ r.transpose(-1, -2)


def covariance(scale: torch.Tensor, quat: torch.Tensor) -> torch.Tensor:
    """Sigma = R S S^T R^T, (..., 3, 3)."""
    r = quat_to_rotmat(quat)
    return (r * scale.pow(2).unsqueeze(-2)) @ r.transpose(-1, -2)


@functools.lru_cache(maxsize=16)
def _grid(shape: tuple[int, int, int], dtype: torch.dtype) -> torch.Tensor:
    axes = [torch.linspace(0, 1, n, dtype=dtype) if n > 1 else torch.zeros(1, dtype=dtype) for n in shape]
    return torch.stack(torch.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)


def grid(shape: tuple[int, int, int], dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Voxel centres (N, 3) on the unit cube, in (d, h, w) order, C order (the volume's flattening)."""
    return _grid(tuple(int(n) for n in shape), dtype).clone()


def _monomials(x: torch.Tensor) -> torch.Tensor:
    a, b, c = x.unbind(-1)
    one = torch.ones_like(a)
    return torch.stack([a * a, b * b, c * c, a * b, a * c, b * c, a, b, c, one], -1)  # (N, 10)


def _coefficients(mu: torch.Tensor, prec: torch.Tensor) -> torch.Tensor:
    """Per Gaussian, the 10 coefficients of (x - mu)^T A (x - mu) in the monomials of x: (..., K, 10)."""
    am = (prec @ mu.unsqueeze(-1)).squeeze(-1)  # A mu
    quad = [prec[..., 0, 0], prec[..., 1, 1], prec[..., 2, 2], 2 * prec[..., 0, 1], 2 * prec[..., 0, 2]]
    quad.append(2 * prec[..., 1, 2])
    lin = [-2 * am[..., 0], -2 * am[..., 1], -2 * am[..., 2]]
    const = (mu * am).sum(-1)
    return torch.stack([*quad, *lin, const], -1)


def _check(mu, scale, quat, intensity) -> None:
    if mu.shape[-1] != 3 or scale.shape[-1] != 3 or quat.shape[-1] != 4:
        raise ValueError(f"Gaussians: centre {tuple(mu.shape)}, scale {tuple(scale.shape)} need (..., K, 3) and "
                         f"quaternion {tuple(quat.shape)} (..., K, 4)")  # fmt: skip
    if intensity.shape != mu.shape[:-1]:
        raise ValueError(f"Gaussians: intensity {tuple(intensity.shape)} must be (..., K) = {tuple(mu.shape[:-1])}")


def render(
    mu: torch.Tensor,
    scale: torch.Tensor,
    quat: torch.Tensor,
    intensity: torch.Tensor,
    shape: tuple[int, int, int],
    gain: float = 1.0,
) -> torch.Tensor:
    """Volumes (B, *shape) from Gaussians (B, K, ...) by the expanded quadratic form (one matmul, dense)."""
    _check(mu, scale, quat, intensity)
    x = grid(shape, mu.dtype)
    coef = -0.5 * _coefficients(mu, precision(scale, quat))  # (B, K, 10), the -1/2 folded in
    # exponents (B, N, K); no clamp at 0: rounding can leave them ~1e-6 above 0 for a voxel on a centre, harmless
    vol = torch.exp(_monomials(x) @ coef.transpose(-1, -2)) @ intensity.unsqueeze(-1)  # (B, N, 1)
    return gain * vol.squeeze(-1).reshape(*mu.shape[:-2], *shape)


def render_direct(
    mu: torch.Tensor,
    scale: torch.Tensor,
    quat: torch.Tensor,
    intensity: torch.Tensor,
    shape: tuple[int, int, int],
    gain: float = 1.0,
    chunk: int = 4096,
) -> torch.Tensor:
    """The same volumes from explicit differences x - mu, in chunks of ``chunk`` voxels (reference, baseline)."""
    _check(mu, scale, quat, intensity)
    x = grid(shape, mu.dtype)
    prec = precision(scale, quat)  # (B, K, 3, 3)
    out = []
    for i in range(0, len(x), chunk):
        d = x[i : i + chunk, None, None, :] - mu[None]  # (n, B, K, 3)
        maha = torch.einsum("nbki,bkij,nbkj->nbk", d, prec, d)
        out.append((torch.exp(-0.5 * maha) * intensity[None]).sum(-1))  # (n, B)
    return gain * torch.cat(out, 0).transpose(0, 1).reshape(*mu.shape[:-2], *shape)


def psnr(pred: torch.Tensor, target: torch.Tensor, data_range: float = 1.0, dims=(-3, -2, -1)) -> torch.Tensor:
    """Peak signal-to-noise ratio in dB per volume: 10 log10(range^2 / MSE)."""
    mse = (pred - target).pow(2).mean(dim=dims).clamp_min(1e-12)
    return 10 * torch.log10(data_range**2 / mse)
