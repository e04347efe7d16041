"""Online linear learners on the ball ||Delta|| <= D: online gradient descent and optimistic OGD with a hint."""

from __future__ import annotations

import numpy as np

from components.errors import ParamsError


def project_ball(v: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto {||v|| <= radius}."""
    n = float(np.linalg.norm(v))
    return v if n <= radius else v * (radius / n)


def check_positive(name: str, value: float) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.number))
        or not np.isfinite(value)
        or value <= 0
    ):
        raise ParamsError(f"{name}: must be a finite number > 0, got {value!r}")
    return float(value)


class OGD:
    """Projected online gradient descent: Delta <- Pi(Delta - eta g)."""

    def __init__(self, dim: int, *, radius: float, eta: float):
        self.radius = check_positive("radius", radius)
        self.eta = check_positive("eta", eta)
        self.delta = np.zeros(dim)

    def play(self, hint: np.ndarray | None = None) -> np.ndarray:
        return self.delta

    def update(self, g: np.ndarray) -> None:
        self.delta = project_ball(self.delta - self.eta * g, self.radius)

    def reset(self) -> None:
        self.delta = np.zeros_like(self.delta)


class OptimisticOGD:
    """Single-projection optimistic OGD: Delta_{n+1} = Pi(Delta_n - eta h_{n+1} - eta (g_n - h_n)).

    ``play(h)`` returns the next decision given its hint; ``update(g)`` records the loss vector of the
    round just played. With ``adaptive`` the step is eta_n = gamma D / sqrt(alpha + sum ||g_i - h_i||^2)
    (the sum is reset by :meth:`reset`, i.e. every episode).
    """

    def __init__(
        self, dim: int, *, radius: float, eta: float, adaptive: bool = False, gamma: float = 1.0, alpha: float = 1e-12
    ):
        self.radius = check_positive("radius", radius)
        self.eta0 = check_positive("eta", eta)
        self.adaptive = adaptive
        self.gamma = check_positive("gamma", gamma)
        self.alpha = check_positive("alpha", alpha)
        self.dim = dim
        self.reset()

    def reset(self) -> None:
        self.delta = np.zeros(self.dim)
        self.prev_g = np.zeros(self.dim)
        self.prev_h = np.zeros(self.dim)
        self.sq_sum = 0.0

    @property
    def eta(self) -> float:
        if not self.adaptive:
            return self.eta0
        return min(self.eta0, self.gamma * self.radius / np.sqrt(self.alpha + self.sq_sum))

    def propose(self, hint: np.ndarray) -> np.ndarray:
        """The decision the hint would give, without committing (used by fixed-point inner loops)."""
        return project_ball(self.delta - self.eta * hint - self.eta * (self.prev_g - self.prev_h), self.radius)

    def play(self, hint: np.ndarray) -> np.ndarray:
        self.delta = self.propose(hint)
        self.prev_h = np.asarray(hint, dtype=np.float64)
        return self.delta

    def update(self, g: np.ndarray) -> None:
        self.prev_g = np.asarray(g, dtype=np.float64)
        self.sq_sum += float(np.sum((self.prev_g - self.prev_h) ** 2))
