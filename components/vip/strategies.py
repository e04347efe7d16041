"""Rollout-allocation strategies: how many rollouts each prompt of a step gets, and which predictor informs it.

- ``uniform``: C / Q each (GRPO / Dr.GRPO / RLOO as published);
- ``vip``: the variance-minimising allocation from a predictor's p (GP by default; Beta-Bernoulli in ``full``);
- ``heuristic``: n proportional to p(1-p) from per-prompt running means;
- ``dapo``: uniform, then DAPO's dynamic sampling drops zero-variance groups and draws fresh prompts until Q
  informative groups are kept; every rollout drawn counts against the budget (handled in ``rl_loop``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from components.errors import ParamsError
from components.vip import allocator
from components.vip.predictor import BetaBernoulli, GlobalMean, GPPredictor, RunningMean

ALLOCATIONS = ("uniform", "vip", "heuristic", "dapo")
PREDICTORS = ("gp", "beta", "running", "constant", "global")
FEATURES = ("minilm", "hashed")
USED = "p_used"  # the RL loop's predictions column holding the method's own p, exactly as the allocator got it


@dataclass(frozen=True)
class Method:
    name: str
    allocation: str = "uniform"
    advantage: str = "drgrpo"
    predictor: str | None = None
    features: str = "minilm"

    def __post_init__(self) -> None:
        if self.allocation not in ALLOCATIONS:
            raise ParamsError(f"method {self.name}: allocation {self.allocation!r} is not one of {ALLOCATIONS}")
        if self.predictor is not None and self.predictor not in PREDICTORS:
            raise ParamsError(f"method {self.name}: predictor {self.predictor!r} is not one of {PREDICTORS}")
        if self.allocation in ("vip", "heuristic") and self.predictor is None:
            raise ParamsError(f"method {self.name}: allocation {self.allocation!r} needs a predictor")
        if self.features not in FEATURES:
            raise ParamsError(f"method {self.name}: features {self.features!r} is not one of {FEATURES}")


class Constant(GlobalMean):
    """p = 0.5 for every prompt, always (the equal-p case of the uniform-equivalence test)."""

    def predict(self, ids) -> np.ndarray:
        return np.full(len(ids), 0.5)


def make_predictor(kind: str, n_prompts: int, feats: dict[str, np.ndarray], features: str, gp_kw: dict):
    if kind == "gp":
        if features not in feats:
            raise ParamsError(f"predictor gp: features {features!r} were not computed (have {sorted(feats)})")
        return GPPredictor(feats[features], **gp_kw)
    return {"beta": BetaBernoulli, "running": RunningMean, "global": GlobalMean, "constant": Constant}[kind](n_prompts)


def group_sizes(method: Method, p_hat: np.ndarray | None, q: int, budget: int, lo: int, hi: int) -> np.ndarray:
    if method.allocation in ("uniform", "dapo") or p_hat is None:
        base, extra = divmod(budget, q)
        return np.array([base + (i < extra) for i in range(q)], dtype=int)
    if method.allocation == "vip":
        return allocator.allocate(
            p_hat, budget, lo, hi, form=method.advantage if method.advantage == "rloo" else "drgrpo"
        )
    return allocator.proportional(p_hat * (1 - p_hat), budget, lo, hi)
