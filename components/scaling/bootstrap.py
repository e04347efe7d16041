"""Bootstrap uncertainty for an approach-3 fit: resample rows, refit, take percentiles.

Speed-ups, both exact reformulations or documented approximations:
- A resample drawn with replacement is represented by per-row counts, and its
  objective is the full data's Huber terms weighted by those counts (identical to
  fitting the duplicated rows). All resamples are then refitted together by the
  batched L-BFGS, one vectorised objective call per step.
- Each refit starts from the full-data optimum plus the ``extra_starts`` best
  distinct basins the full-data grid search found, not from the whole 4,500-point
  grid. A resample whose optimum lies in a basin none of those starts reaches
  would be missed; resamples of the same data rarely move the optimum that far.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from components.errors import ParamsError
from components.scaling.chinchilla import ScalingFit, check_grid, fit_problem, make_problem
from components.scaling.lbfgs_batch import minimize_batch

log = logging.getLogger(__name__)

PARAM_NAMES = ("A", "B", "E", "alpha", "beta")

# Upper bounds on a bootstrap, so a typo fails at once instead of exhausting memory:
# at most a million resamples (percentile CIs are stable long before), and at most
# 1e8 resample-row cells: the (n_boot, n_points) count matrix takes 8 bytes a cell,
# about four times that at its peak while drawn, so 1e8 cells is ~3 GB.
MAX_RESAMPLES = 1_000_000
MAX_BOOT_CELLS = 100_000_000


def check_n_boot(n_boot, n_points: int, name: str = "n_boot") -> int:
    """``n_boot`` as an int if it is a positive integer within the bounds above, else a ParamsError naming ``name``."""
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 1:
        raise ParamsError(f"{name}: must be a positive integer, got {n_boot!r}")
    if n_boot > MAX_RESAMPLES:
        raise ParamsError(f"{name}: {n_boot} resamples is above the limit of {MAX_RESAMPLES:,}")
    if n_boot * n_points > MAX_BOOT_CELLS:
        raise ParamsError(
            f"{name}: {n_boot} resamples of {n_points} rows is {n_boot * n_points:,} cells, above the "
            f"memory limit of {MAX_BOOT_CELLS:,} (use at most {MAX_BOOT_CELLS // max(n_points, 1):,})"
        )
    return int(n_boot)


@dataclass(frozen=True)
class BootstrapFits:
    """Refitted parameters of ``n_boot`` resamples and the full-data fit."""

    samples: np.ndarray  # (n_boot, 5): A, B, E, alpha, beta
    objectives: np.ndarray  # (n_boot,)
    full: ScalingFit
    seed: int

    def ci(self, level: float = 0.95) -> dict[str, tuple[float, float]]:
        """Percentile confidence interval for each parameter at ``level``."""
        if not 0 < level < 1:
            raise ParamsError(f"level: must be between 0 and 1, got {level!r}")
        tail = (1 - level) / 2
        with np.errstate(invalid="ignore"):  # inf samples (degenerate refits) give inf/nan bounds, not warnings
            lo, hi = np.quantile(self.samples, [tail, 1 - tail], axis=0)
        return {name: (float(lo[i]), float(hi[i])) for i, name in enumerate(PARAM_NAMES)}

    def std(self) -> dict[str, float]:
        """Bootstrap standard error of each parameter."""
        with np.errstate(invalid="ignore", over="ignore"):
            sd = self.samples.std(axis=0, ddof=1) if len(self.samples) > 1 else np.full(5, np.nan)
        return {name: float(sd[i]) for i, name in enumerate(PARAM_NAMES)}

    def to_dict(self, level: float = 0.95) -> dict:
        """Full fit, CIs and standard errors as plain Python values."""
        return {
            "n_boot": int(len(self.samples)),
            "seed": self.seed,
            "level": level,
            "full": self.full.to_dict(),
            "ci": {k: list(v) for k, v in self.ci(level).items()},
            "std": self.std(),
        }


def resample_counts(n_points: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n_points) counts of each row in ``n_boot`` resamples with replacement."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_points, size=(n_boot, n_points))
    flat = (np.arange(n_boot)[:, None] * n_points + draws).ravel()
    return np.bincount(flat, minlength=n_boot * n_points).reshape(n_boot, n_points).astype(float)


def bootstrap_fits(
    N,
    D,
    L,
    n_boot: int,
    seed: int,
    *,
    huber_delta: float = 1e-3,
    grid: np.ndarray | None = None,
    extra_starts: int = 8,
    max_iter: int = 3000,
    progress: bool = False,
) -> BootstrapFits:
    """Fit the full data (grid search), then refit ``n_boot`` resamples drawn with ``seed``.

    Bit-for-bit repeatable for a given seed. See the module docstring for the
    starting points each refit uses.
    """
    if extra_starts < 0:
        raise ParamsError(f"extra_starts: must be >= 0, got {extra_starts}")
    problem = make_problem(N, D, L, huber_delta)
    check_n_boot(n_boot, problem.n_points)
    full, basins = fit_problem(problem, check_grid(grid), progress=progress)
    starts = basins[: 1 + extra_starts]
    weights = resample_counts(problem.n_points, int(n_boot), seed)
    per = starts.shape[0]
    x0 = np.tile(starts, (int(n_boot), 1))

    def fun_grad(x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return problem.fun_grad(x, weights[rows // per])

    res = minimize_batch(fun_grad, x0, max_iter=max_iter, ftol=1e-10, f_floor=0.0, xtol=1e-12, progress=progress)
    f = res.fun.reshape(int(n_boot), per)
    best = np.argmin(f, axis=1)
    x_best = res.x.reshape(int(n_boot), per, 5)[np.arange(int(n_boot)), best]
    a, b, e, alpha, beta = problem.from_centred(x_best).T
    with np.errstate(over="ignore"):  # a degenerate refit's A or B is inf; its CI bound is then inf too
        samples = np.column_stack([np.exp(a), np.exp(b), np.exp(e), alpha, beta])
    log.info("bootstrap: %d refits from %d starts each, seed %d", n_boot, per, seed)
    return BootstrapFits(samples=samples, objectives=f[np.arange(int(n_boot)), best], full=full, seed=int(seed))
