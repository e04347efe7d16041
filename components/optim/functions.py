"""Test functions of the card (value and gradient, float64): robust nonconvex regression (synthetic and sklearn's
bundled diabetes data), the Carmon-Duchi-Hinder-Sidford hard chain, a one-hidden-layer tanh net on sklearn digits,
and a convex quadratic for unit tests. Each exposes ``grad``, ``value``, ``dim``, ``L1`` (gradient-Lipschitz
estimate used to scale step sizes) and ``x0(seed)`` (a seeded random start)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from components.errors import ParamsError

SQRT_E = float(np.sqrt(np.e))
SQRT_2PI = float(np.sqrt(2 * np.pi))


@dataclass
class TestFunction:
    name: str
    dim: int
    L1: float
    start_scale: float = 1.0

    def x0(self, seed: int) -> np.ndarray:
        return self.start_scale * np.random.default_rng(10_000 + seed).standard_normal(self.dim)


class Quadratic(TestFunction):
    """F(x) = x^T H x / 2 with H diagonal, eigenvalues evenly spaced in [mu, L]."""

    def __init__(self, dim: int = 20, mu: float = 0.1, L: float = 1.0):
        super().__init__("quadratic", dim, L)
        self.h = np.linspace(mu, L, dim)

    def value(self, x):
        return 0.5 * float(x @ (self.h * x))

    def grad(self, x):
        return self.h * x


class RobustRegression(TestFunction):
    """F(x) = mean_i rho(a_i^T x - b_i), rho(t) = t^2 / (1 + t^2) (nonconvex, Hessian-Lipschitz)."""

    def __init__(self, A: np.ndarray, b: np.ndarray, name: str):
        m, d = A.shape
        super().__init__(name, d, 2.0 * float(np.linalg.norm(A, 2)) ** 2 / m)
        self.A, self.b, self.m = A, b, m

    def value(self, x):
        r = self.A @ x - self.b
        return float(np.mean(r * r / (1 + r * r)))

    def grad(self, x):
        r = self.A @ x - self.b
        return self.A.T @ (2 * r / (1 + r * r) ** 2) / self.m


def robust_synthetic(m: int = 500, d: int = 100, seed: int = 0) -> RobustRegression:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d)) / np.sqrt(d)
    x_true = rng.standard_normal(d)
    b = A @ x_true + 0.1 * rng.standard_normal(m)
    out = rng.random(m) < 0.1  # 10% gross outliers: the robust loss ignores them
    b[out] += 5 * rng.standard_normal(out.sum())
    return RobustRegression(A, b, "robust-synthetic")


def robust_diabetes() -> RobustRegression:
    from sklearn.datasets import load_diabetes  # bundled with scikit-learn: offline

    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()
    return RobustRegression(np.hstack([X, np.ones((len(X), 1))]), y, "robust-diabetes")


def _psi_dpsi(t):
    """Psi(t) = exp(1 - 1/(2t - 1)^2) for t > 1/2, else 0, and its derivative, in one vectorised pass."""
    u = 2 * t - 1
    live = t > 0.5
    us = np.where(live, u, 1.0)  # 1 where Psi is 0: no division by zero in the dead branch
    e = np.where(live, np.exp(1 - 1 / us**2), 0.0)
    return e, np.where(live, e * 4 / us**3, 0.0)


class HardChain(TestFunction):
    """Carmon et al. (2019) chain: -Psi(1)Phi(x_1) + sum_{i>=2} [Psi(-x_{i-1})Phi(-x_i) - Psi(x_{i-1})Phi(x_i)].

    ||grad|| > 1 until the last coordinate exceeds 1: first-order methods must discover the chain one
    coordinate at a time. L1 ~ 152 (the paper's bound)."""

    def __init__(self, dim: int = 50):
        if dim < 2:
            raise ParamsError(f"chain dim: must be >= 2, got {dim}")
        super().__init__("hard-chain", dim, 152.0, start_scale=0.0)

    @staticmethod
    def _phi(t):
        return SQRT_E * SQRT_2PI * ndtr(t)

    @staticmethod
    def _dphi(t):
        return SQRT_E * np.exp(-0.5 * t * t)

    _P1 = float(_psi_dpsi(np.array([1.0]))[0][0])  # Psi(1) = exp(0) = 1; computed once, not per call

    @staticmethod
    def _psi_pair(a):
        """Psi and Psi' at -a and at a from one stacked evaluation (d is small, so numpy's per-call cost, not the
        arithmetic, dominates the optimiser's time)."""
        e, de = _psi_dpsi(np.concatenate((-a, a)))
        n = a.size
        return e[:n], e[n:], de[:n], de[n:]

    def value(self, x):
        a, b = x[:-1], x[1:]
        psi_m, psi_p, _, _ = self._psi_pair(a)
        return float(-self._P1 * self._phi(x[0]) + np.sum(psi_m * self._phi(-b) - psi_p * self._phi(b)))

    def grad(self, x):
        a, b = x[:-1], x[1:]
        n = b.size
        psi_m, psi_p, dpsi_m, dpsi_p = self._psi_pair(a)
        dphi = self._dphi(x)  # phi' is even: phi'(-b) == phi'(b) exactly ((-b)*(-b) == b*b)
        phi = self._phi(np.concatenate((-b, b)))
        g = np.zeros_like(x)
        g[0] -= self._P1 * dphi[0]
        g[1:] += -psi_m * dphi[1:] - psi_p * dphi[1:]
        g[:-1] += -dpsi_m * phi[:n] - dpsi_p * phi[n:]
        return g

    def x0(self, seed: int) -> np.ndarray:
        return 0.01 * np.random.default_rng(10_000 + seed).standard_normal(self.dim)


class TanhNet(TestFunction):
    """Mean squared error of a 1-hidden-layer tanh network regressing the digit label (scaled to [0, 1])."""

    def __init__(self, n: int = 200, hidden: int = 8, seed: int = 0):
        from sklearn.datasets import load_digits  # bundled with scikit-learn: offline

        X, y = load_digits(return_X_y=True)
        idx = np.random.default_rng(seed).permutation(len(X))[:n]
        self.X = X[idx] / 16.0
        self.y = y[idx] / 9.0
        self.h = hidden
        d_in = self.X.shape[1]
        self.shapes = [(hidden, d_in), (hidden,), (hidden,), (1,)]
        dim = sum(int(np.prod(s)) for s in self.shapes)
        super().__init__("tanh-digits", dim, 2.0 * (1 + float(np.linalg.norm(self.X, 2)) ** 2 / n), start_scale=0.3)

    def _unpack(self, x):
        out, i = [], 0
        for s in self.shapes:
            k = int(np.prod(s))
            out.append(x[i : i + k].reshape(s))
            i += k
        return out

    def value(self, x):
        W, b, v, c = self._unpack(x)
        r = np.tanh(self.X @ W.T + b) @ v + c[0] - self.y
        return float(0.5 * np.mean(r * r))

    def grad(self, x):
        W, b, v, c = self._unpack(x)
        H = np.tanh(self.X @ W.T + b)
        r = (H @ v + c[0] - self.y) / len(self.y)
        dpre = np.outer(r, v) * (1 - H * H)
        return np.concatenate([(dpre.T @ self.X).ravel(), dpre.sum(0), H.T @ r, [r.sum()]])


def make_function(
    name: str,
    *,
    chain_dim: int = 50,
    synthetic_m: int = 500,
    synthetic_d: int = 100,
    digits_n: int = 200,
    hidden: int = 8,
) -> TestFunction:
    if name == "robust-synthetic":
        return robust_synthetic(synthetic_m, synthetic_d)
    if name == "robust-diabetes":
        return robust_diabetes()
    if name == "hard-chain":
        return HardChain(chain_dim)
    if name == "tanh-digits":
        return TanhNet(digits_n, hidden)
    if name == "quadratic":
        return Quadratic()
    raise ParamsError(
        f"function: unknown test function {name!r}; "
        "use robust-synthetic, robust-diabetes, hard-chain, tanh-digits, quadratic"
    )


FUNCTIONS = ("robust-synthetic", "robust-diabetes", "hard-chain", "tanh-digits")
