"""Chinchilla approach-3 scaling-law fit: L(N, D) = E + A / N^alpha + B / D^beta.

Hoffmann et al. (2022), as replicated by Besiroglu et al. (2024, Epoch AI): minimise
the sum of Huber(delta=1e-3) losses between log L and
LSE(a - alpha log N, b - beta log D, e) with L-BFGS from a grid of 4,500 starting
points, keep the best end point; A = exp(a), B = exp(b), E = exp(e).

The search is the same, only faster: every grid start is advanced at once by a
batched L-BFGS with analytic gradients (see ``lbfgs_batch``), then the best few
distinct end points are polished with SciPy's L-BFGS-B (analytic gradient, tight
tolerances), and the lowest objective wins. ``benchmarks/scaling_fit.py`` checks
the result against the one-start-at-a-time SciPy procedure.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import asdict, dataclass

import numpy as np
from scipy.optimize import minimize

from components.errors import DataError, ParamsError
from components.scaling.lbfgs_batch import minimize_batch
from components.scaling.objective import HuberProblem

log = logging.getLogger(__name__)

MIN_POINTS = 6  # one more than the five fitted parameters


@dataclass(frozen=True)
class ScalingFit:
    """A fitted L(N, D) = E + A / N^alpha + B / D^beta and the fit's objective value."""

    A: float
    B: float
    E: float
    alpha: float
    beta: float
    objective: float
    n_points: int

    def predict(self, N, D):
        """Predicted loss for parameter counts ``N`` and token counts ``D`` (broadcasts)."""
        n = np.asarray(N, dtype=float)
        d = np.asarray(D, dtype=float)
        out = self.E + self.A / n**self.alpha + self.B / d**self.beta
        return float(out) if np.ndim(out) == 0 else out

    def to_dict(self) -> dict[str, float | int]:
        """Plain floats, for JSON and MLflow."""
        return {k: (int(v) if k == "n_points" else float(v)) for k, v in asdict(self).items()}

    @property
    def params(self) -> np.ndarray:
        """(A, B, E, alpha, beta) as an array, the order bootstrap samples use."""
        return np.array([self.A, self.B, self.E, self.alpha, self.beta])


def default_grid() -> np.ndarray:
    """Epoch's (and Hoffmann et al.'s) 4,500 starts as rows (a, b, e, alpha, beta).

    alpha, beta in {0, 0.5, ..., 2}; e in {-1, -0.5, ..., 1}; a, b in {0, 5, ..., 25}
    (epoch-research/analyzing-chinchilla, data_analysis.ipynb), in their loop order.
    """
    alphas = betas = np.arange(0, 2.5, 0.5)
    es = np.arange(-1, 1.5, 0.5)
    as_ = bs = np.arange(0, 30, 5)
    rows = [(a, b, e, al, be) for al, be, e, a, b in itertools.product(alphas, betas, es, as_, bs)]
    return np.array(rows, dtype=float)


def validate_arrays(N, D, L) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return N, D, L as 1-D float arrays or raise ParamsError/DataError saying what is wrong."""
    arrays = {}
    for name, value in (("N", N), ("D", D), ("L", L)):
        arr = np.asarray(value, dtype=float)
        if arr.ndim != 1:
            raise ParamsError(f"{name}: expected a 1-D array, got shape {arr.shape}")
        arrays[name] = arr
    lengths = {name: arr.size for name, arr in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise ParamsError(f"N, D, L must have equal lengths, got {lengths}")
    for name, arr in arrays.items():
        bad = np.flatnonzero(~np.isfinite(arr) | (arr <= 0))
        if bad.size:
            i = int(bad[0])
            raise DataError(f"{name}[{i}] = {arr[i]!r}: values must be finite and > 0 ({bad.size} bad)")
    if lengths["N"] < MIN_POINTS:
        raise DataError(f"need at least {MIN_POINTS} points to fit 5 parameters, got {lengths['N']}")
    return arrays["N"], arrays["D"], arrays["L"]


def check_grid(grid) -> np.ndarray:
    """The default grid if ``grid`` is None, else ``grid`` checked to be finite rows of 5."""
    g = default_grid() if grid is None else np.asarray(grid, dtype=float)
    if g.ndim != 2 or g.shape[1] != 5 or g.shape[0] == 0:
        raise ParamsError(f"grid: expected rows (a, b, e, alpha, beta) of shape (k, 5), got {g.shape}")
    if not np.isfinite(g).all():
        raise ParamsError("grid: starting points must be finite")
    return g


def _distinct_best(x: np.ndarray, f: np.ndarray, k: int, margin: float = 1e-3, tol: float = 1e-2) -> np.ndarray:
    """Indices of up to ``k`` lowest-objective rows, pairwise more than ``tol`` apart,
    within a relative ``margin`` of the best (a worse basin cannot win after polishing)."""
    chosen: list[int] = []
    order = np.argsort(f, kind="stable")
    cutoff = np.inf if np.isinf(margin) else f[order[0]] + margin * abs(f[order[0]])
    for i in order:
        if not (np.isfinite(f[i]) and f[i] <= cutoff) or len(chosen) == k:
            break
        if not chosen or (np.abs(x[chosen] - x[i]).max(axis=1) > tol).all():
            chosen.append(int(i))
    return np.array(chosen, dtype=int)


def multistart(
    problem: HuberProblem, starts_c: np.ndarray, *, max_iter: int = 500, progress: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Run batched L-BFGS from every centred start on one problem; return (x_c, f).

    Stopping is scale-free (relative decrease 1e-7, no floor): SciPy's absolute floor
    of 1 would stop every start at once on near-noise-free data, whose objective is tiny.
    """
    res = minimize_batch(
        lambda x, rows: problem.fun_grad(x), starts_c, max_iter=max_iter, ftol=1e-7, f_floor=0.0, progress=progress
    )
    return res.x, res.fun


def polish(problem: HuberProblem, x_c: np.ndarray) -> tuple[np.ndarray, float]:
    """Refine one centred end point with SciPy L-BFGS-B (analytic gradient, tight tolerances).

    The objective is divided by its starting value so SciPy's absolute tolerances
    act as relative ones whatever the objective's scale.
    """
    f0 = problem.scalar_fun_grad(x_c)[0]
    scale = f0 if np.isfinite(f0) and f0 > 0 else 1.0

    def scaled(x: np.ndarray) -> tuple[float, np.ndarray]:
        f, g = problem.scalar_fun_grad(x)
        return f / scale, g / scale

    res = minimize(
        scaled, x_c, jac=True, method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20000, "maxcor": 20}
    )
    if np.isfinite(res.fun) and res.fun * scale <= f0:
        return res.x, problem.scalar_fun_grad(res.x)[0]
    return x_c, f0


def fit_from_centred(problem: HuberProblem, x_c: np.ndarray, objective: float) -> ScalingFit:
    """Turn a centred optimum into a ScalingFit (A = exp(a), B = exp(b), E = exp(e))."""
    a, b, e, alpha, beta = problem.from_centred(x_c)
    with np.errstate(over="ignore"):  # a degenerate fit's A or B is honestly inf; fit() says so in one line
        A, B, E = np.exp(a), np.exp(b), np.exp(e)
    return ScalingFit(
        A=float(A),
        B=float(B),
        E=float(E),
        alpha=float(alpha),
        beta=float(beta),
        objective=float(objective),
        n_points=problem.n_points,
    )


def fit_problem(
    problem: HuberProblem, starts: np.ndarray, *, polish_top: int = 8, max_iter: int = 500, progress: bool = False
) -> tuple[ScalingFit, np.ndarray]:
    """Multistart search, then polish; return the fit and distinct basin end points (centred, best first).

    The end points let a bootstrap restart each resample from the basins the
    full-data search found instead of from the whole grid.
    """
    x_c, f = multistart(problem, problem.to_centred(starts), max_iter=max_iter, progress=progress)
    best_x, best_f = None, np.inf
    for i in _distinct_best(x_c, f, polish_top):
        xp, fp = polish(problem, x_c[i])
        if fp < best_f:
            best_x, best_f = xp, fp
    if best_x is None:
        raise DataError("fit_chinchilla: the objective is not finite at any end point; check N, D and L")
    basins = x_c[_distinct_best(x_c, f, 32, margin=np.inf)]
    others = basins[np.abs(basins - best_x).max(axis=1) > 1e-2]  # the best basin is best_x itself
    return fit_from_centred(problem, best_x, best_f), np.vstack([best_x, others])


def fit_chinchilla(
    N,
    D,
    L,
    *,
    grid: np.ndarray | None = None,
    huber_delta: float = 1e-3,
    polish_top: int = 8,
    max_iter: int = 500,
    progress: bool = False,
) -> ScalingFit:
    """Fit L(N, D) = E + A / N^alpha + B / D^beta by approach 3 (Huber on log L, grid of starts).

    ``grid`` holds starting rows (a, b, e, alpha, beta), default :func:`default_grid`.
    ``polish_top`` distinct best end points of the batched search are refined with
    L-BFGS-B; the lowest objective is returned. Deterministic: no random choices.
    """
    problem = make_problem(N, D, L, huber_delta)
    if polish_top < 1:
        raise ParamsError(f"polish_top: must be >= 1, got {polish_top}")
    fit, _ = fit_problem(problem, check_grid(grid), polish_top=polish_top, max_iter=max_iter, progress=progress)
    overflow = [name for name in ("A", "B", "E") if not np.isfinite(getattr(fit, name))]
    if overflow:
        log.warning(
            "chinchilla fit on %d points is degenerate: %s overflow (alpha=%.3g, beta=%.3g); the points do "
            "not constrain that term",
            fit.n_points,
            ", ".join(overflow),
            fit.alpha,
            fit.beta,
        )
    else:
        log.info("chinchilla fit on %d points: %s", fit.n_points, fit.to_dict())
    return fit


def make_problem(N, D, L, huber_delta: float) -> HuberProblem:
    """Validate the data and delta and build the centred Huber problem."""
    n, d, loss = validate_arrays(N, D, L)
    if not (np.isfinite(huber_delta) and huber_delta > 0):
        raise ParamsError(f"huber_delta: must be a positive number, got {huber_delta!r}")
    return HuberProblem.from_data(n, d, loss, huber_delta)
