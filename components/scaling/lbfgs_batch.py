"""L-BFGS run on many independent small problems at once, in lock-step.

SciPy's optimisers minimise one problem per call; a 4,500-start search then pays
Python and SciPy overhead 4,500 times over. This minimiser holds every start's
state in (starts x params) arrays and advances all unconverged starts one
L-BFGS iteration per step (two-loop recursion, Armijo backtracking), so each
step costs one vectorised objective call. No maintained library offers a batched
L-BFGS over NumPy arrays, hence this small hand-written one; it is only used to
find the basins, and the best few end points are polished with SciPy's L-BFGS-B.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

log = logging.getLogger(__name__)

# fun_grad(x (k, p), rows (k,) indices of the problems those x belong to) -> (f (k,), g (k, p))
FunGrad = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class BatchResult:
    """End points of a batched minimisation (one row per start)."""

    x: np.ndarray
    fun: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray  # stopped by ftol/gtol (False: line search failed or max_iter)


@dataclass
class _Memory:
    """Each row's last ``m`` (step, gradient change) pairs in a ring shared by all rows.

    Every row writes a slot every iteration; a rejected pair is stored with rho = 0,
    which makes it inert in the two-loop recursion.
    """

    s: np.ndarray  # (k, m, p)
    y: np.ndarray  # (k, m, p)
    rho: np.ndarray  # (k, m)
    gamma: np.ndarray  # (k,) initial inverse-Hessian scale s'y / y'y
    pos: int = 0  # next slot to write

    @classmethod
    def empty(cls, k: int, m: int, p: int) -> _Memory:
        return cls(np.zeros((k, m, p)), np.zeros((k, m, p)), np.zeros((k, m)), np.ones(k))

    def direction(self, g: np.ndarray) -> np.ndarray:
        """-H g by the two-loop recursion; rows where that is not a descent direction are
        reset to steepest descent (and forget their pairs)."""
        m = self.s.shape[1]
        newest_first = [(self.pos - 1 - j) % m for j in range(m)]
        q = g.copy()
        coef = np.empty((g.shape[0], m))
        for i in newest_first:
            coef[:, i] = self.rho[:, i] * np.einsum("kp,kp->k", self.s[:, i], q)
            q -= coef[:, i, None] * self.y[:, i]
        r = self.gamma[:, None] * q
        for i in reversed(newest_first):
            b = self.rho[:, i] * np.einsum("kp,kp->k", self.y[:, i], r)
            r += self.s[:, i] * (coef[:, i] - b)[:, None]
        d = -r
        bad = ~(np.einsum("kp,kp->k", g, d) < 0)
        if bad.any():
            d[bad] = -g[bad]
            self.rho[bad] = 0.0
            self.gamma[bad] = 1.0
        return d

    def push(self, step: np.ndarray, dy: np.ndarray, ok: np.ndarray) -> None:
        """Store this iteration's pairs; keep only those with positive curvature."""
        sy = np.einsum("kp,kp->k", step, dy)
        yy = np.einsum("kp,kp->k", dy, dy)
        good = ok & (sy > np.finfo(float).eps * yy) & (yy > 0)
        self.s[:, self.pos] = np.where(good[:, None], step, 0.0)
        self.y[:, self.pos] = np.where(good[:, None], dy, 0.0)
        self.rho[:, self.pos] = np.where(good, 1.0 / np.where(good, sy, 1.0), 0.0)
        self.gamma[good] = sy[good] / yy[good]
        self.pos = (self.pos + 1) % self.s.shape[1]

    def take(self, keep: np.ndarray) -> _Memory:
        return _Memory(self.s[keep], self.y[keep], self.rho[keep], self.gamma[keep], self.pos)


def _line_search(fun_grad: FunGrad, rows, x, f, g, d, t, c1: float, max_backtracks: int):
    """Armijo backtracking for every row at once; returns (x_new, f_new, g_new, ok)."""
    gd = np.einsum("kp,kp->k", g, d)
    xn = x + t[:, None] * d
    fn, gn = fun_grad(xn, rows)
    pending = ~(fn <= f + c1 * t * gd)
    for _ in range(max_backtracks):
        if not pending.any():
            break
        idx = np.flatnonzero(pending)
        t[idx] *= 0.5
        xn[idx] = x[idx] + t[idx, None] * d[idx]
        fn[idx], gn[idx] = fun_grad(xn[idx], rows[idx])
        pending[idx] = ~(fn[idx] <= f[idx] + c1 * t[idx] * gd[idx])
    return xn, fn, gn, ~pending


def minimize_batch(
    fun_grad: FunGrad,
    x0: np.ndarray,
    *,
    memory: int = 10,
    max_iter: int = 2000,
    ftol: float = 2.2e-9,
    f_floor: float = 1.0,
    gtol: float = 1e-10,
    xtol: float = 0.0,
    c1: float = 1e-4,
    max_backtracks: int = 50,
    progress: bool = False,
) -> BatchResult:
    """Minimise every row of ``x0`` as its own problem; stop each row on its own criteria.

    A row stops when its decrease (f_old - f_new) <= ftol * max(|f_old|, |f_new|, f_floor)
    (SciPy L-BFGS-B's rule and defaults; ``f_floor=0`` makes it purely relative), when
    its largest gradient entry is <= gtol, when its step is <= xtol * (1 + max|x|),
    or when its line search fails. Finished rows leave the working set, so late
    iterations cost only what the remaining rows need.
    """
    x_out = np.array(x0, dtype=float, copy=True)
    n_starts, p = x_out.shape
    f_out, g = fun_grad(x_out, np.arange(n_starts))
    n_iter = np.zeros(n_starts, dtype=int)
    converged = np.isfinite(f_out) & (np.abs(g).max(axis=1) <= gtol)
    keep = np.isfinite(f_out) & ~converged
    rows, x, f, g = np.flatnonzero(keep), x_out[keep], f_out[keep], g[keep]
    mem = _Memory.empty(rows.size, memory, p)
    bar = tqdm(total=max_iter, disable=None if progress else True, desc="batched L-BFGS", leave=False)
    for it in range(max_iter):
        if rows.size == 0:
            break
        d = mem.direction(g)
        t = np.ones(rows.size) if it else np.minimum(1.0, 1.0 / np.linalg.norm(g, axis=1))
        xn, fn, gn, ok = _line_search(fun_grad, rows, x, f, g, d, t, c1, max_backtracks)
        step = xn - x
        mem.push(step, gn - g, ok)
        done = ok & (
            ((f - fn) <= ftol * np.maximum(np.maximum(np.abs(f), np.abs(fn)), f_floor))
            | (np.abs(gn).max(axis=1) <= gtol)
            | (np.abs(step).max(axis=1) <= xtol * (1 + np.abs(xn).max(axis=1)))
        )
        x[ok], f[ok], g[ok] = xn[ok], fn[ok], gn[ok]
        n_iter[rows] += 1
        stop = done | ~ok
        if stop.any():
            x_out[rows[stop]], f_out[rows[stop]] = x[stop], f[stop]
            converged[rows[done]] = True
            keep = ~stop
            rows, x, f, g, mem = rows[keep], x[keep], f[keep], g[keep], mem.take(keep)
        bar.update(1)
        bar.set_postfix(active=int(rows.size))
    bar.close()
    x_out[rows], f_out[rows] = x, f  # rows still running at max_iter
    log.debug("batched L-BFGS: %d starts, %d converged, max %d iterations", n_starts, converged.sum(), n_iter.max())
    return BatchResult(x=x_out, fun=f_out, n_iter=n_iter, converged=converged)
