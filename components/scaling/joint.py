"""Several approach-3 laws with one shared irreducible loss E, bootstrapped over training runs.

L_k(N, D) = E + A_k / N^alpha_k + B_k / D^beta_k for datasets k = 1..m. On a narrow grid
(about one decade in N and in D) E trades off against the exponents: fitted alone, each
dataset's E drifts to 0 or to an arbitrary value. Sharing E across datasets trained on
the same validation sets pools the evidence for the floor, and a profile over E shows
whether the data pin it down at all (``e_state``).

Fit: the profile first (for each E on a grid, every dataset's other four parameters
from a grid of starts by the batched L-BFGS with E held fixed; the datasets are
independent given E), then the best profile points are polished jointly with SciPy's
L-BFGS-B over all 1 + 4m parameters (E free). Bootstrap: training runs (a seed at a
size N, all its cooldown branches together) are drawn with replacement within each N,
the same runs for every dataset (paired by seed), and each resample is refitted jointly
from the full-data optimum and the profile's other optima.
"""

from __future__ import annotations

import functools
import itertools
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from components.errors import DataError, ParamsError
from components.scaling.bootstrap import check_n_boot
from components.scaling.chinchilla import ScalingFit, fit_from_centred, make_problem
from components.scaling.lbfgs_batch import minimize_batch
from components.scaling.objective import HuberProblem

try:  # installed with scikit-learn; without it BLAS keeps its own thread count
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None


def _one_blas_thread(fn):
    """These problems have at most a few dozen parameters: BLAS threads only contend (on a loaded 2-core box a
    joint fit took 13 s wall with one thread against 67 s with two)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(1) if threadpool_limits else nullcontext():
            return fn(*args, **kwargs)

    return wrapper


E_FRACTIONS = (
    1e-3,
    0.03,
    0.1,
    0.2,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    0.97,
)  # profile E values, as fractions of the lowest observed loss
# E is "not identified" when its CI reaches either end of this range (fractions of the lowest loss)
E_LOW, E_HIGH = 0.05, 0.95


def _four_param_starts() -> np.ndarray:
    """Starting rows (a, b, alpha, beta) for the fixed-E fits: a, b in 0-20, exponents 0.15-1.2 (225 rows)."""
    ab = np.arange(0, 25, 5.0)
    ex = (0.15, 0.5, 1.2)
    return np.array(list(itertools.product(ab, ab, ex, ex)), dtype=float)


@dataclass(frozen=True)
class JointProblem:
    """m Huber problems whose e (log E) is one shared parameter; x = [e, (u_k, v_k, alpha_k, beta_k) for k]."""

    problems: tuple[HuberProblem, ...]

    @property
    def dim(self) -> int:
        return 1 + 4 * len(self.problems)

    def split(self, x: np.ndarray, k: int) -> np.ndarray:
        """Rows (u, v, e, alpha, beta) of dataset ``k`` from joint rows ``x`` (n, dim)."""
        blk = x[:, 1 + 4 * k : 5 + 4 * k]
        return np.column_stack([blk[:, 0], blk[:, 1], x[:, 0], blk[:, 2], blk[:, 3]])

    def join(self, e: np.ndarray, per: list[np.ndarray]) -> np.ndarray:
        """Joint rows from e (n,) and each dataset's centred rows (n, 5) (their own e ignored)."""
        cols = [np.asarray(e, float)[:, None]] + [p[:, [0, 1, 3, 4]] for p in per]
        return np.hstack(cols)

    def fun_grad(self, x: np.ndarray, weights: list[np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        x = np.atleast_2d(x)
        f = np.zeros(x.shape[0])
        g = np.zeros(x.shape)
        for k, prob in enumerate(self.problems):
            fk, gk = prob.fun_grad(self.split(x, k), None if weights is None else weights[k])
            f += fk
            g[:, 0] += gk[:, 2]
            g[:, 1 + 4 * k : 5 + 4 * k] = gk[:, [0, 1, 3, 4]]
        bad = ~np.isfinite(f)
        f[bad], g[bad] = np.inf, 0.0
        return f, g

    def polish(self, x0: np.ndarray) -> tuple[np.ndarray, float]:
        f0 = float(self.fun_grad(x0[None])[0][0])
        scale = f0 if np.isfinite(f0) and f0 > 0 else 1.0

        def scaled(x):
            f, g = self.fun_grad(x[None])
            return float(f[0]) / scale, g[0] / scale

        res = minimize(
            scaled,
            x0,
            jac=True,
            method="L-BFGS-B",
            options={"ftol": 1e-13, "gtol": 1e-10, "maxiter": 5000, "maxcor": 10},
        )
        fp = float(self.fun_grad(res.x[None])[0][0])
        return (res.x, fp) if np.isfinite(fp) and fp <= f0 else (x0, f0)


@dataclass(frozen=True)
class JointFit:
    """The shared-E fit: one ScalingFit per dataset (all with the same E) and the profile over E."""

    names: tuple[str, ...]
    fits: dict[str, ScalingFit]
    E: float
    objective: float
    profile_E: np.ndarray  # E values of the profile
    profile_f: np.ndarray  # best joint objective with E held at each value
    x: np.ndarray = field(repr=False)  # centred joint optimum
    starts: np.ndarray = field(repr=False)  # joint starts for bootstrap refits (optimum first)


def _profile(prob: HuberProblem, e_values: np.ndarray, starts4: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each e: the best centred row with e held fixed, and its objective."""
    n_s = starts4.shape[0]
    rows = np.empty((e_values.size * n_s, 5))
    rows[:, [0, 1, 3, 4]] = np.tile(starts4, (e_values.size, 1))
    rows[:, 2] = np.repeat(e_values, n_s)
    x0 = prob.to_centred(rows)

    def fun_grad(x, _rows):
        f, g = prob.fun_grad(x)
        g[:, 2] = 0.0  # E held at its profile value
        return f, g

    res = minimize_batch(fun_grad, x0, max_iter=500, ftol=1e-8, f_floor=0.0)
    f = res.fun.reshape(e_values.size, n_s)
    best = np.argmin(f, axis=1)
    return res.x.reshape(e_values.size, n_s, 5)[np.arange(e_values.size), best], f[np.arange(e_values.size), best]


@_one_blas_thread
def fit_joint(data: dict[str, tuple], *, huber_delta: float = 1e-3, n_refit_starts: int = 2) -> JointFit:
    """Fit every dataset ``name -> (N, D, L)`` with one shared E; see the module docstring."""
    if len(data) < 1:
        raise ParamsError("fit_joint: give at least one dataset")
    names = tuple(data)
    problems = tuple(make_problem(*data[n], huber_delta) for n in names)
    joint = JointProblem(problems)
    min_loss = min(float(np.exp(p.y).min()) for p in problems)
    e_values = np.log(min_loss * np.asarray(E_FRACTIONS))
    starts4 = _four_param_starts()
    per = [_profile(p, e_values, starts4) for p in problems]
    prof_f = np.sum([f for _, f in per], axis=0)
    prof_x = joint.join(np.asarray(e_values), [x for x, _ in per])
    best_x, best_f = None, np.inf
    for i in np.argsort(prof_f)[:2]:
        if not np.isfinite(prof_f[i]):
            continue
        xp, fp = joint.polish(prof_x[i])
        if fp < best_f:
            best_x, best_f = xp, fp
    if best_x is None:
        raise DataError("fit_joint: the objective is not finite at any profile point; check N, D and L")
    fits = {
        n: fit_from_centred(p, joint.split(best_x[None], k)[0], best_f) for k, (n, p) in enumerate(zip(names, problems))
    }
    # refit starts: the optimum, then profile optima spread over E (a resample may move E)
    finite = np.flatnonzero(np.isfinite(prof_f))
    spread = finite[np.linspace(0, finite.size - 1, min(n_refit_starts, finite.size)).round().astype(int)]
    starts = np.vstack([best_x, prof_x[spread]])
    return JointFit(
        names=names,
        fits=fits,
        E=float(np.exp(best_x[0])),
        objective=float(best_f),
        profile_E=np.exp(e_values),
        profile_f=prof_f,
        x=best_x,
        starts=starts,
    )


def run_counts(strata, runs, n_boot: int, seed: int) -> tuple[np.ndarray, list]:
    """(n_boot, n_runs) counts: each resample draws, within each stratum, as many runs as it holds, with
    replacement. ``strata``/``runs`` label each unique run (e.g. N and seed); returns counts and run keys."""
    keys = sorted(set(zip(strata, runs)), key=lambda k: (str(k[0]), str(k[1])))
    rng = np.random.default_rng(seed)
    counts = np.zeros((n_boot, len(keys)))
    by_stratum: dict = {}
    for j, (s, _) in enumerate(keys):
        by_stratum.setdefault(s, []).append(j)
    for idx in by_stratum.values():
        draws = rng.integers(0, len(idx), size=(n_boot, len(idx)))
        for c in range(len(idx)):
            counts[:, idx[c]] = (draws == c).sum(axis=1)
    return counts, keys


@dataclass(frozen=True)
class JointBootstrap:
    full: JointFit
    samples: dict[str, np.ndarray]  # name -> (n_boot, 5): A, B, E, alpha, beta (E shared)
    n_runs: int
    seed: int


@_one_blas_thread
def bootstrap_joint(
    data: dict[str, tuple],
    runs: dict[str, tuple],
    n_boot: int,
    seed: int,
    *,
    huber_delta: float = 1e-3,
    max_iter: int = 2000,
) -> JointBootstrap:
    """Joint fit of ``data`` (name -> (N, D, L)) and ``n_boot`` refits of run-level resamples.

    ``runs`` gives, per dataset, (stratum, run) labels of each point (e.g. (N target, seed)): a drawn run
    brings all its points; the same draw applies to every dataset.
    """
    full = fit_joint(data, huber_delta=huber_delta)
    names = full.names
    labels = {n: list(zip(*runs[n])) for n in names}
    for n in names:
        if len(labels[n]) != len(data[n][0]):
            raise DataError(f"bootstrap_joint: {n}: {len(labels[n])} run labels for {len(data[n][0])} points")
    all_keys = sorted({k for n in names for k in labels[n]}, key=lambda k: (str(k[0]), str(k[1])))
    check_n_boot(n_boot, sum(len(labels[n]) for n in names))
    counts, keys = run_counts([k[0] for k in all_keys], [k[1] for k in all_keys], int(n_boot), seed)
    col = {k: j for j, k in enumerate(keys)}
    weights = [counts[:, [col[k] for k in labels[n]]] for n in names]
    joint = JointProblem(tuple(make_problem(*data[n], huber_delta) for n in names))
    per = full.starts.shape[0]
    x0 = np.tile(full.starts, (int(n_boot), 1))

    def fun_grad(x, rows):
        return joint.fun_grad(x, [w[rows // per] for w in weights])

    res = minimize_batch(fun_grad, x0, max_iter=max_iter, ftol=1e-9, f_floor=0.0, xtol=1e-10)
    f = res.fun.reshape(int(n_boot), per)
    best = np.argmin(f, axis=1)
    x_best = res.x.reshape(int(n_boot), per, joint.dim)[np.arange(int(n_boot)), best]
    samples = {}
    for k, (n, prob) in enumerate(zip(names, joint.problems)):
        a, b, e, alpha, beta = prob.from_centred(joint.split(x_best, k)).T
        with np.errstate(over="ignore"):
            samples[n] = np.column_stack([np.exp(a), np.exp(b), np.exp(e), alpha, beta])
    return JointBootstrap(full=full, samples=samples, n_runs=len(keys), seed=int(seed))


def e_state(E: float, ci: tuple[float, float], min_loss: float) -> dict:
    """Is the shared E identified? Not when its point or CI reaches E_LOW or E_HIGH x the lowest loss."""
    lo, hi = ci
    bounds = (E_LOW * min_loss, E_HIGH * min_loss)
    ok = all(np.isfinite([E, lo, hi])) and bounds[0] < lo and hi < bounds[1]
    if ok:
        why = f"E = {E:.3g}, 95% CI [{lo:.3g}, {hi:.3g}] inside ({bounds[0]:.3g}, {bounds[1]:.3g})"
    else:
        why = (
            f"E = {E:.3g}, 95% CI [{lo:.3g}, {hi:.3g}] reaches the edge of ({bounds[0]:.3g}, {bounds[1]:.3g}) "
            f"({E_LOW:g}-{E_HIGH:g} x the lowest loss {min_loss:.3g}): the grid does not pin the floor down"
        )
    return {
        "state": "identified" if ok else "not identified",
        "E": float(E),
        "ci": [float(lo), float(hi)],
        "bounds": [float(b) for b in bounds],
        "reason": why,
    }
