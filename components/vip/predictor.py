"""Per-prompt success predictors: VIP's GP classifier (Laplace, sliding window), a Beta-Bernoulli per-prompt
posterior, running means (for the p(1-p) heuristic) and a global mean (the trivial reference).

GP: latent f ~ GP(m, k) with an RBF kernel k(x, x') = s^2 exp(-|x - x'|^2 / (2 l^2)), l by the median
heuristic over the window, m = logit of the window's success rate (our choice: the card names no prior mean;
a zero mean would pull every unseen prompt to p = 0.5). Each window entry is one visit of a prompt: k successes
out of n rollouts, a binomial likelihood with a sigmoid link. The posterior mode is Newton's method (Rasmussen &
Williams 2006, Algorithm 3.1, stable form with B = I + W^1/2 K W^1/2); the predictive p = E[sigmoid(f*)] by the
probit approximation sigmoid(mu / sqrt(1 + pi s2 / 8)). Written out rather than scikit-learn's
GaussianProcessClassifier because that one takes 0/1 labels only (no binomial counts, no prior mean) and refits
its kernel; a unit test checks our posterior against it where both apply.

The moment-matching option (``inference="ep"``) is expectation propagation (R&W Algorithm 3.5, stable form; Minka
2001) with one Gaussian site per visit. The binomial-logistic tilted moments have no closed form, so each is
integrated numerically on a grid centred on the tilted mode; the sites are updated in parallel with damping (the
likelihood is log-concave, so site precisions stay >= 0). Both inferences end in the same stored form
(W^1/2, chol(I + W^1/2 K W^1/2), alpha), so prediction is shared. GPy and GPflow have EP, but neither for a
binomial likelihood with a fixed kernel in a few lines, and neither is a dependency here.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit, log_expit, logit

from components.errors import ParamsError


def sq_dists(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances by |a|^2 + |b|^2 - 2ab (no (n, m, d) intermediate)."""
    d2 = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.maximum(d2, 0.0)


def median_lengthscale(x: np.ndarray) -> float:
    d2 = sq_dists(x, x)
    iu = np.triu_indices(len(x), 1)
    med = float(np.median(np.sqrt(d2[iu]))) if len(iu[0]) else 1.0
    return med if med > 1e-8 else 1.0


def rbf(a: np.ndarray, b: np.ndarray, length: float, amp: float) -> np.ndarray:
    d2 = sq_dists(a, b)
    return amp * np.exp(-0.5 * d2 / length**2)


def laplace_mode(K: np.ndarray, k: np.ndarray, n: np.ndarray, mean: float, iters: int = 50, tol: float = 1e-10):
    """Posterior mode of f - mean under a binomial likelihood (R&W Alg. 3.1); returns (f, W, L factor, grad)."""
    f = np.zeros(len(k))
    for _ in range(iters):
        pi = expit(f + mean)
        W = n * pi * (1 - pi)
        grad = k - n * pi
        sw = np.sqrt(W)
        B = np.eye(len(k)) + sw[:, None] * K * sw[None, :]
        cf = cho_factor(B, lower=True)
        b = W * f + grad
        a = b - sw * cho_solve(cf, sw * (K @ b))
        f_new = K @ a
        if np.max(np.abs(f_new - f)) < tol:
            f = f_new
            break
        f = f_new
    pi = expit(f + mean)
    W = n * pi * (1 - pi)
    sw = np.sqrt(W)
    cf = cho_factor(np.eye(len(k)) + sw[:, None] * K * sw[None, :], lower=True)
    return f, sw, cf, k - n * pi


_GRID = np.linspace(-12.0, 12.0, 241)  # tilted-density grid in units of its curvature's sd (trapezoid)


def tilted_moments(m: np.ndarray, v: np.ndarray, k: np.ndarray, n: np.ndarray, mean: float):
    """Mean and variance of N(f; m, v) x sigmoid(f + mean)^k (1 - sigmoid(f + mean))^(n - k), per site (vectors).

    The density is log-concave: its mode comes from safeguarded Newton steps, and the moments from a uniform grid
    of +-12 curvature sds around the mode (the trapezoid rule is exact to float precision for such smooth, fast
    decaying integrands)."""
    f = m.copy()
    for _ in range(50):
        pi = expit(f + mean)
        g = -(f - m) / v + k - n * pi
        h = 1.0 / v + n * pi * (1 - pi)
        step = np.clip(g / h, -2.0 * np.sqrt(v), 2.0 * np.sqrt(v))
        f = f + step
        if np.max(np.abs(step)) < 1e-12:
            break
    pi = expit(f + mean)
    sd = 1.0 / np.sqrt(1.0 / v + n * pi * (1 - pi))
    x = f[:, None] + sd[:, None] * _GRID[None, :]
    logp = (
        -0.5 * (x - m[:, None]) ** 2 / v[:, None]
        + k[:, None] * log_expit(x + mean)
        + (n - k)[:, None] * log_expit(-(x + mean))
    )
    w = np.exp(logp - logp.max(1, keepdims=True))
    z = w.sum(1)
    mu = (w * x).sum(1) / z
    var = (w * (x - mu[:, None]) ** 2).sum(1) / z
    return mu, var


def ep_sites(
    K: np.ndarray, k: np.ndarray, n: np.ndarray, mean: float, sweeps: int = 100, damping: float = 0.5, tol: float = 1e-8
):
    """EP for f - mean ~ N(0, K) with binomial-logistic sites; returns (W^1/2, chol factor, alpha) with
    W = the site precisions and alpha such that the latent predictive mean is mean + k*^T alpha (R&W Alg. 3.5/3.6)."""
    m = len(k)
    tau, nu = np.zeros(m), np.zeros(m)
    sigma, mu = K.copy(), np.zeros(m)
    for _ in range(sweeps):
        d = np.diag(sigma)
        tau_c = np.maximum(1.0 / d - tau, 1e-12)  # cavity precision
        nu_c = mu / d - nu
        mu_h, var_h = tilted_moments(nu_c / tau_c, 1.0 / tau_c, k, n, mean)
        tau_new = np.maximum(1.0 / var_h - tau_c, 0.0)
        nu_new = mu_h / var_h - nu_c
        tau_next = (1 - damping) * tau + damping * tau_new
        nu_next = (1 - damping) * nu + damping * nu_new
        change = max(np.max(np.abs(tau_next - tau)), np.max(np.abs(nu_next - nu)))
        tau, nu = tau_next, nu_next
        sw = np.sqrt(tau)
        cf = cho_factor(np.eye(m) + sw[:, None] * K * sw[None, :], lower=True)
        V = cho_solve(cf, sw[:, None] * K)  # B^-1 S^1/2 K
        sigma = K - (sw[:, None] * K).T @ V
        mu = sigma @ nu
        if change < tol:
            break
    z = sw * cho_solve(cf, sw * (K @ nu))
    return sw, cf, nu - z


INFERENCES = ("laplace", "ep")


class GPPredictor:
    """GP classification over prompt features, refit by Laplace (or EP) on a sliding window of recent visits."""

    def __init__(
        self,
        features: np.ndarray,
        *,
        window: int = 256,
        amplitude: float = 2.0,
        lengthscale: float | None = None,
        prior_mean: bool = True,
        inference: str = "laplace",
    ) -> None:
        if window < 2:
            raise ParamsError(f"GP window must be >= 2, got {window}")
        if inference not in INFERENCES:
            raise ParamsError(f"GP inference: expected one of {INFERENCES}, got {inference!r}")
        self.x = np.asarray(features, float)
        self.inference = inference
        self.window, self.amp, self.fixed_length, self.prior_mean = window, amplitude, lengthscale, prior_mean
        self.obs: deque[tuple[int, float, float]] = deque(maxlen=window)  # (prompt id, successes, trials)
        self._fit = None

    def update(self, ids, successes, trials) -> None:
        for i, s, t in zip(ids, successes, trials):
            if t > 0:
                self.obs.append((int(i), float(s), float(t)))
        self._fit = None

    def _refit(self):
        ids = np.array([o[0] for o in self.obs])
        k = np.array([o[1] for o in self.obs])
        n = np.array([o[2] for o in self.obs])
        xs = self.x[ids]
        length = self.fixed_length or median_lengthscale(xs)
        rate = np.clip(k.sum() / n.sum(), 1e-3, 1 - 1e-3)
        mean = float(logit(rate)) if self.prior_mean else 0.0
        K = rbf(xs, xs, length, self.amp) + 1e-8 * np.eye(len(ids))
        if self.inference == "ep":
            sw, cf, alpha = ep_sites(K, k, n, mean)
        else:
            _, sw, cf, alpha = laplace_mode(K, k, n, mean)  # at the mode, alpha = the likelihood's gradient
        self._fit = (xs, length, mean, sw, cf, alpha)

    def latent(self, ids) -> tuple[np.ndarray, np.ndarray]:
        """Predictive mean and variance of the latent f at prompts ``ids``."""
        xq = self.x[np.asarray(ids, int)]
        if not self.obs:
            return np.zeros(len(xq)), np.full(len(xq), self.amp)
        if self._fit is None:
            self._refit()
        xs, length, mean, sw, cf, alpha = self._fit
        ks = rbf(xs, xq, length, self.amp)
        mu = mean + ks.T @ alpha
        v = cho_solve(cf, sw[:, None] * ks)
        var = self.amp - np.einsum("ij,ij->j", sw[:, None] * ks, v)
        return mu, np.maximum(var, 1e-12)

    def predict(self, ids) -> np.ndarray:
        mu, var = self.latent(ids)
        return expit(mu / np.sqrt(1 + np.pi * var / 8))


class BetaBernoulli:
    """Independent Beta(a0, b0) posterior per prompt: no sharing across prompts."""

    def __init__(self, n_prompts: int, a0: float = 1.0, b0: float = 1.0) -> None:
        self.a = np.full(n_prompts, a0, float)
        self.b = np.full(n_prompts, b0, float)

    def update(self, ids, successes, trials) -> None:
        for i, s, t in zip(ids, successes, trials):
            self.a[int(i)] += s
            self.b[int(i)] += t - s

    def predict(self, ids) -> np.ndarray:
        ids = np.asarray(ids, int)
        return self.a[ids] / (self.a[ids] + self.b[ids])


class RunningMean:
    """Per-prompt running success rate; unseen prompts get the global running rate (the p(1-p) heuristic)."""

    def __init__(self, n_prompts: int) -> None:
        self.s = np.zeros(n_prompts)
        self.t = np.zeros(n_prompts)

    def update(self, ids, successes, trials) -> None:
        np.add.at(self.s, np.asarray(ids, int), successes)
        np.add.at(self.t, np.asarray(ids, int), trials)

    def predict(self, ids) -> np.ndarray:
        ids = np.asarray(ids, int)
        glob = (self.s.sum() + 1) / (self.t.sum() + 2)
        return np.where(self.t[ids] > 0, self.s[ids] / np.maximum(self.t[ids], 1), glob)


class GlobalMean(RunningMean):
    """Every prompt gets the global running success rate (the trivial predictor of claim 3)."""

    def predict(self, ids) -> np.ndarray:
        return np.full(len(ids), (self.s.sum() + 1) / (self.t.sum() + 2))
