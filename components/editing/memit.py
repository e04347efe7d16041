"""MEMIT's closed-form batch update at one layer (Meng et al., 2023), in the KV-database view.

With edited keys ``K1`` (n x d_in, one row per request), residuals ``R1 = V_hat - W K1`` (n x d_out) and
the second moment ``C0 = E[k k^T]`` of keys from generic text, MEMIT solves

    min_D ||(W + D) K1^T - V_hat^T||^2 + lam * tr(D C0 D^T)

whose solution is ``D = R1^T K1 (K1^T K1 + lam C0)^-1``. Then ``(W + D) k = W k + R1^T w`` with
``w = K1 (K1^T K1 + lam C0)^-1 k``: a *linear* query of the stored residuals, which is clean (near one-hot)
only while the edited keys are few and nearly orthogonal. ``lam`` is MEMIT's ``mom2_update_weight``.
"""

from __future__ import annotations

import torch

from components.errors import DataError, ParamsError


def second_moment(k0: torch.Tensor) -> torch.Tensor:
    """``C0 = K0^T K0 / n`` from generic keys (n x d_in), in float64."""
    if k0.ndim != 2 or k0.shape[0] < 1:
        raise DataError(f"generic keys: expected a non-empty (n, d) matrix, got shape {tuple(k0.shape)}")
    k0 = k0.double()
    return k0.T @ k0 / k0.shape[0]


def _check(keys: torch.Tensor, residuals: torch.Tensor, d_in: int) -> None:
    if keys.ndim != 2 or residuals.ndim != 2 or keys.shape[0] != residuals.shape[0] or keys.shape[0] == 0:
        raise DataError(f"keys {tuple(keys.shape)} and residuals {tuple(residuals.shape)}: need n >= 1 matching rows")
    if keys.shape[1] != d_in:
        raise DataError(f"keys have width {keys.shape[1]} but the covariance is {d_in} x {d_in}")


def memit_update(keys: torch.Tensor, residuals: torch.Tensor, cov: torch.Tensor, *, lam: float) -> torch.Tensor:
    """The weight change ``D`` (d_out x d_in) solving MEMIT's least-squares problem (float64 solve)."""
    if lam < 0:
        raise ParamsError(f"mom2_weight (lambda): must be >= 0, got {lam}")
    _check(keys, residuals, cov.shape[0])
    k1, r1 = keys.double(), residuals.double()
    a = k1.T @ k1 + lam * cov.double()
    # D A = R1^T K1  <=>  A^T D^T = K1^T R1 (A is symmetric)
    return torch.linalg.solve(a, k1.T @ r1).T
