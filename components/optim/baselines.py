"""Reference methods: gradient descent, SGD (constant step) and Adam. Each step's iterate is the candidate."""

from __future__ import annotations

import numpy as np

from components.optim.learners import check_positive
from components.optim.oracle import GradientOracle


class GD:
    """x <- x - lr g (SGD when the oracle is noisy: the same update on stochastic gradients)."""

    def __init__(self, *, lr: float, name: str = "gd"):
        self.lr = check_positive("lr", lr)
        self.name = name

    def start(self, x0: np.ndarray, oracle: GradientOracle) -> None:
        self.x = np.array(x0, dtype=np.float64)

    def step(self, oracle: GradientOracle) -> np.ndarray:
        self.x = self.x - self.lr * oracle.grad(self.x)
        return self.x


def SGD(*, lr: float) -> GD:
    return GD(lr=lr, name="sgd")


class Adam:
    """Adam (Kingma & Ba) with bias correction."""

    def __init__(self, *, lr: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8, name: str = "adam"):
        self.lr = check_positive("lr", lr)
        self.beta1, self.beta2, self.eps = beta1, beta2, check_positive("eps", eps)
        self.name = name

    def start(self, x0: np.ndarray, oracle: GradientOracle) -> None:
        self.x = np.array(x0, dtype=np.float64)
        self.m = np.zeros_like(self.x)
        self.v = np.zeros_like(self.x)
        self.t = 0

    def step(self, oracle: GradientOracle) -> np.ndarray:
        g = oracle.grad(self.x)
        self.t += 1
        self.m = self.beta1 * self.m + (1 - self.beta1) * g
        self.v = self.beta2 * self.v + (1 - self.beta2) * g * g
        mhat = self.m / (1 - self.beta1**self.t)
        vhat = self.v / (1 - self.beta2**self.t)
        self.x = self.x - self.lr * mhat / (np.sqrt(vhat) + self.eps)
        return self.x
