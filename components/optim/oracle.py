"""The gradient oracle every method must go through: it counts calls, adds Gaussian noise and rejects NaN/inf."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from components.errors import PaperlineError, ParamsError

NOISE_SCALES = ("total", "per-coordinate")


class Diverged(PaperlineError):
    """A gradient (or an iterate) became NaN or infinite: the run is reported as diverged, never as a success."""


class GradientOracle:
    """Counted access to ``grad_fn``; methods only ever see this object, never the function itself.

    ``sigma`` sets the isotropic Gaussian noise added to each counted query. With ``noise="total"`` (default)
    sigma bounds the noise vector's variance, E||xi||^2 = sigma^2 (per-coordinate std sigma / sqrt(d)), the
    bounded-variance assumption of the paper's stochastic rate; ``noise="per-coordinate"`` gives each coordinate
    std sigma (E||xi||^2 = d sigma^2). With ``shared_noise`` a query made with ``reuse_noise=True`` reuses the
    previous query's sample (ODOG's two queries per iteration share one xi_n by default).
    """

    def __init__(
        self,
        grad_fn: Callable[[np.ndarray], np.ndarray],
        *,
        sigma: float = 0.0,
        seed: int = 0,
        shared_noise: bool = True,
        name: str = "function",
        noise: str = "total",
    ):
        if not np.isfinite(sigma) or sigma < 0:
            raise ParamsError(f"sigma: must be a finite number >= 0, got {sigma}")
        if noise not in NOISE_SCALES:
            raise ParamsError(f"noise: expected one of {NOISE_SCALES}, got {noise!r}")
        self.noise = noise
        self._grad_fn = grad_fn
        self.sigma = float(sigma)
        self.shared_noise = shared_noise
        self.name = name
        self._rng = np.random.default_rng(seed)
        self._last_noise: np.ndarray | None = None
        self.calls = 0  # counted (method) queries
        self.checks = 0  # uncounted exact queries made by the runner's stopping test

    def _checked(self, g: np.ndarray, x: np.ndarray, what: str) -> np.ndarray:
        g = np.asarray(g, dtype=np.float64)
        if not np.all(np.isfinite(g)):
            bad = "NaN" if np.isnan(g).any() else "inf"
            xbad = "" if np.all(np.isfinite(x)) else " (the iterate itself is not finite)"
            raise Diverged(f"{self.name}: {what} returned {bad} at call {self.calls}{xbad}; run marked diverged")
        return g

    def grad(self, x: np.ndarray, *, reuse_noise: bool = False) -> np.ndarray:
        """One counted (possibly noisy) gradient query."""
        self.calls += 1
        x = np.asarray(x, dtype=np.float64)
        g = self._checked(self._grad_fn(x), x, "gradient")
        if self.sigma > 0:
            if not (reuse_noise and self.shared_noise and self._last_noise is not None):
                self._last_noise = self._rng.standard_normal(g.shape)
            scale = self.sigma / np.sqrt(g.size) if self.noise == "total" else self.sigma
            g = g + scale * self._last_noise
        return g

    def exact_grad(self, x: np.ndarray) -> np.ndarray:
        """The exact, uncounted gradient used only by the runner's stopping test (the card's metric)."""
        self.checks += 1
        x = np.asarray(x, dtype=np.float64)
        return self._checked(self._grad_fn(x), x, "gradient (check)")
