"""Compute-optimal allocation under C = 6 N D for a fitted L(N, D) = E + A / N^alpha + B / D^beta.

Derivation. With K = C / 6 the budget fixes D = K / N, so the reducible loss is
    f(N) = A N^-alpha + B (K / N)^-beta = A N^-alpha + B K^-beta N^beta.
Setting f'(N) = -alpha A N^(-alpha-1) + beta B K^-beta N^(beta-1) = 0 gives
    alpha A N^-alpha = beta B K^-beta N^beta  =>  N^(alpha+beta) = (alpha A / (beta B)) K^beta,
    N_opt = G K^(beta/(alpha+beta)),  G = (alpha A / (beta B))^(1/(alpha+beta)),
    D_opt = K / N_opt = K^(alpha/(alpha+beta)) / G.
In u = log N, f = A e^(-alpha u) + B K^-beta e^(beta u) is a sum of convex functions,
so this stationary point is the unique minimum (for A, B, alpha, beta > 0).
Only (A, alpha) for N and (B, beta) for D are used, whatever the fit's source.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from scipy.optimize import brentq

from components.errors import ParamsError

FLOPS_PER_PARAM_TOKEN = 6.0


class LawParams(Protocol):
    """Anything with Chinchilla-convention parameters (e.g. a ScalingFit)."""

    A: float
    B: float
    E: float
    alpha: float
    beta: float


def _check(fit: LawParams, C) -> np.ndarray:
    for name in ("A", "B", "alpha", "beta"):
        value = getattr(fit, name)
        if not (np.isfinite(value) and value > 0):
            raise ParamsError(f"fit.{name}: must be finite and > 0 for a compute-optimal allocation, got {value!r}")
    c = np.asarray(C, dtype=float)
    if not (np.isfinite(c).all() and (c > 0).all()):
        raise ParamsError(f"C: compute budgets must be finite and > 0, got {C!r}")
    return c


def _out(x: np.ndarray):
    return float(x) if np.ndim(x) == 0 else x


def compute_optimal(fit: LawParams, C) -> tuple:
    """(N_opt, D_opt) minimising the fitted loss at budget ``C`` FLOPs (scalar or array)."""
    c = _check(fit, C)
    k = c / FLOPS_PER_PARAM_TOKEN
    s = fit.alpha + fit.beta
    g = (fit.alpha * fit.A / (fit.beta * fit.B)) ** (1.0 / s)
    n_opt = g * k ** (fit.beta / s)
    return _out(n_opt), _out(k / n_opt)


def optimal_loss(fit: LawParams, C):
    """Predicted loss at the compute-optimal (N, D) for budget ``C``."""
    n_opt, d_opt = compute_optimal(fit, C)
    loss = fit.E + fit.A / np.asarray(n_opt) ** fit.alpha + fit.B / np.asarray(d_opt) ** fit.beta
    return _out(loss)


def tokens_per_param(fit: LawParams, C):
    """Compute-optimal D / N at budget ``C`` (Chinchilla's ~20 at its budgets)."""
    n_opt, d_opt = compute_optimal(fit, C)
    return _out(np.asarray(d_opt) / np.asarray(n_opt))


def crossing_compute(
    fit_a: LawParams, fit_b: LawParams, c_lo: float, c_hi: float, *, n_scan: int = 512
) -> float | None:
    """Lowest compute in [c_lo, c_hi] where the two compute-optimal loss curves cross.

    The difference of optimal losses is scanned on ``n_scan`` log-spaced budgets; the
    first sign change is refined with Brent's method in log C. None if the sign never
    changes in the range (no crossing there, identical curves, or a touch without crossing).
    """
    if not (0 < c_lo < c_hi and np.isfinite(c_hi)):
        raise ParamsError(f"c_lo, c_hi: need 0 < c_lo < c_hi, got {c_lo!r}, {c_hi!r}")
    if n_scan < 2:
        raise ParamsError(f"n_scan: must be >= 2, got {n_scan}")

    def diff(log_c):
        c = np.exp(log_c)
        return np.asarray(optimal_loss(fit_a, c)) - np.asarray(optimal_loss(fit_b, c))

    grid = np.linspace(np.log(c_lo), np.log(c_hi), n_scan)
    values = diff(grid)
    nonzero = np.flatnonzero(values != 0)
    flips = np.flatnonzero(np.sign(values[nonzero[:-1]]) != np.sign(values[nonzero[1:]]))
    if not flips.size:
        return None
    i, j = int(nonzero[flips[0]]), int(nonzero[flips[0] + 1])
    if j > i + 1:  # the difference is exactly zero at the budgets between them
        return float(np.exp(grid[i + 1]))
    root = brentq(lambda x: float(diff(x)), grid[i], grid[j], xtol=1e-12, rtol=1e-14)
    return float(np.exp(root))
