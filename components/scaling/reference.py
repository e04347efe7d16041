"""The reference approach-3 procedure, one start at a time, as Epoch's notebook runs it.

For each grid start, ``scipy.optimize.minimize(method="L-BFGS-B")`` with SciPy's
default finite-difference gradient on the plain Huber objective in the original
(a, b, e, alpha, beta) coordinates; keep the best successful end point. It is slow
(minutes on the full grid) and exists to check :func:`fit_chinchilla` against.
"""

from __future__ import annotations

import logging

import numpy as np
from scipy.optimize import minimize
from scipy.special import huber, logsumexp
from tqdm.auto import tqdm

from components.errors import DataError
from components.scaling.chinchilla import ScalingFit, check_grid, validate_arrays

log = logging.getLogger(__name__)


def huber_objective(
    params: np.ndarray, log_n: np.ndarray, log_d: np.ndarray, log_l: np.ndarray, delta: float = 1e-3
) -> float:
    """Sum of Huber(delta) between log L and LSE(a - alpha log N, b - beta log D, e)."""
    a, b, e, alpha, beta = params
    terms = np.stack([a - alpha * log_n, b - beta * log_d, np.full_like(log_n, e)])
    return float(np.sum(huber(delta, log_l - logsumexp(terms, axis=0))))


def fit_chinchilla_reference(
    N,
    D,
    L,
    *,
    grid: np.ndarray | None = None,
    huber_delta: float = 1e-3,
    progress: bool = False,
) -> ScalingFit:
    """Best of sequential L-BFGS-B runs (numerical gradients) from every grid start."""
    n, d, loss = validate_arrays(N, D, L)
    starts = check_grid(grid)
    args = (np.log(n), np.log(d), np.log(loss), huber_delta)
    best_x, best_f = None, np.inf
    for x0 in tqdm(starts, disable=None if progress else True, desc="reference L-BFGS-B", leave=False):
        res = minimize(huber_objective, x0, args=args, method="L-BFGS-B")
        if res.success and res.fun < best_f:
            best_x, best_f = res.x, float(res.fun)
    if best_x is None:
        raise DataError("reference fit: no start converged; check N, D and L")
    a, b, e, alpha, beta = best_x
    return ScalingFit(
        A=float(np.exp(a)),
        B=float(np.exp(b)),
        E=float(np.exp(e)),
        alpha=float(alpha),
        beta=float(beta),
        objective=best_f,
        n_points=int(n.size),
    )
