"""Run one method on one function until the exact gradient norm of a candidate is <= eps, or a call budget.

Step sizes are given in scale-free units and turned into absolute ones per function:
lr = lr_mult / L1, eta = eta_mult / L1, D = radius_mult * ||grad F(x0)|| / L1.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from components.errors import ParamsError
from components.optim.baselines import GD, SGD, Adam
from components.optim.learners import check_positive
from components.optim.o2nc import KINDS, log_inner_steps, make_o2nc
from components.optim.oracle import Diverged, GradientOracle

METHODS = ("gd", "sgd", "adam", "o2nc-ogd", "cmo23", "cmo23-k2", "naive-hint", "odog", "odog-adaptive")
INNER_RULES = ("log", "fixed")


@dataclass
class RunResult:
    calls: int
    reached: bool
    diverged: bool
    grad_norm: float | None  # exact ||grad F|| of the last checked candidate (None if diverged before any)
    message: str
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def inner_steps_for(name: str, cfg: dict, eps_rel: float | None) -> int:
    """CMO23's K: for ``cmo23`` (the card's baseline) from eps under ``inner: log`` (the default), or
    ``inner_steps`` under ``inner: fixed``; for the variant ``cmo23-k2`` always the fixed ``inner_steps`` (2).
    The other O2NC methods have no inner loop (ODOG's hint is one extrapolated query): 1."""
    if name not in ("cmo23", "cmo23-k2"):
        return 1
    rule = cfg.get("inner", "log") if name == "cmo23" else "fixed"
    if rule not in INNER_RULES:
        raise ParamsError(f"inner: expected one of {INNER_RULES}, got {rule!r}")
    if rule == "fixed":
        return int(cfg.get("inner_steps", 2))
    if eps_rel is None:
        raise ParamsError(f"{name}: inner 'log' takes K from eps, so build_method needs eps_rel")
    return log_inner_steps(eps_rel, cfg.get("eta", 0.5))


def build_method(name: str, fn, g0: float, cfg: dict, *, eps_rel: float | None = None):
    """A method instance from scale-free settings ``cfg`` (keys: lr, adam_lr, eta, radius, episode, inner,
    inner_steps, gamma, restart). ``eps_rel`` (eps / ||grad F(x0)||) sets CMO23's K under ``inner: log``."""
    L = fn.L1
    if name in ("gd", "sgd"):
        return (GD if name == "gd" else SGD)(lr=check_positive("lr", cfg.get("lr", 1.0)) / L)
    if name == "adam":
        return Adam(lr=check_positive("adam_lr", cfg.get("adam_lr", 0.01)))
    if name in KINDS:
        return make_o2nc(
            name,
            radius=check_positive("radius", cfg.get("radius", 0.1)) * g0 / L,
            eta=check_positive("eta", cfg.get("eta", 0.5)) / L,
            episode=int(cfg.get("episode", 10)),
            inner_steps=inner_steps_for(name, cfg, eps_rel),
            gamma=cfg.get("gamma", 1.0),
            restart=bool(cfg.get("restart", True)),
        )
    raise ParamsError(f"method: unknown method {name!r}; use one of {', '.join(METHODS)}")


def run_method(
    method,
    fn,
    *,
    eps: float,
    x0: np.ndarray,
    budget: int,
    sigma: float = 0.0,
    seed: int = 0,
    shared_noise: bool = True,
    grad_fn=None,
    noise: str = "total",
) -> RunResult:
    """Calls used to reach ||grad F(candidate)|| <= eps (checked with the exact, uncounted gradient).

    Stops at ``budget`` counted calls (reached=False). A NaN/inf gradient or iterate stops the run with
    diverged=True and the oracle's message; it is never reported as reached.
    """
    eps = check_positive("eps", eps)
    if not isinstance(budget, int) or budget < 1:
        raise ParamsError(f"budget: must be an integer >= 1, got {budget!r}")
    oracle = GradientOracle(
        grad_fn or fn.grad, sigma=sigma, seed=seed, shared_noise=shared_noise, name=fn.name, noise=noise
    )
    t0 = time.perf_counter()
    last = None
    try:
        method.start(x0, oracle)
        while oracle.calls < budget:
            cand = method.step(oracle)
            if cand is None:
                continue
            if not np.all(np.isfinite(cand)):
                raise Diverged(f"{fn.name}: iterate became non-finite at call {oracle.calls}; run marked diverged")
            last = float(np.linalg.norm(oracle.exact_grad(cand)))
            if last <= eps:
                return RunResult(oracle.calls, True, False, last, "reached", time.perf_counter() - t0)
    except Diverged as exc:
        return RunResult(oracle.calls, False, True, last, str(exc), time.perf_counter() - t0)
    return RunResult(oracle.calls, False, False, last, f"budget of {budget} calls spent", time.perf_counter() - t0)
