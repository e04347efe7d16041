"""One measured run (function, method, eps, sigma, seed): shared by the measure stage and the champion's
re-evaluation (``flows/optimistic_o2nc/champion.py``), which must count calls exactly as the stage does."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from components.optim.functions import make_function
from components.optim.runner import build_method, run_method

_CACHE: dict = {}


def _function(name: str, fparams: dict):
    key = (name, tuple(sorted(fparams.items())))
    if key not in _CACHE:
        _CACHE[key] = make_function(name, **fparams)
    return _CACHE[key]


@dataclass(frozen=True)
class RunTask:
    """One measured run: a function, a method with its settings, eps and sigma (relative to ||grad F(x0)||), a seed."""

    grid: str  # "det" (the eps grid, sigma 0) or "stoch" (the sigma grid)
    function: str
    fparams: dict
    method: str
    mparams: dict
    eps_rel: float
    sigma_rel: float
    budget: int
    seed: int
    noise_seed: int
    shared_noise: bool
    noise: str


def run_one(task: RunTask) -> dict:
    """One (function, method, eps, sigma, seed) run; picklable for the process pool."""
    fn = _function(task.function, task.fparams)
    x0 = fn.x0(task.seed)
    g0 = float(np.linalg.norm(fn.grad(x0)))  # setup, not counted: defines the relative eps and sigma
    method = build_method(task.method, fn, g0, task.mparams, eps_rel=task.eps_rel)
    res = run_method(
        method,
        fn,
        eps=task.eps_rel * g0,
        x0=x0,
        budget=task.budget,
        sigma=task.sigma_rel * g0,
        seed=task.noise_seed,
        shared_noise=task.shared_noise,
        noise=task.noise,
    )
    keys = ("grid", "function", "method", "eps_rel", "sigma_rel", "seed")
    # counted queries per outer iteration (CMO23: its K + 1); 1 for GD/SGD/Adam
    per_iter = getattr(method, "calls_per_iteration", 1)
    return {
        "id": "/".join(str(getattr(task, k)) for k in keys),
        **{k: getattr(task, k) for k in keys},
        "g0": g0,
        "calls_per_iteration": per_iter,
        **res.to_dict(),
    }
