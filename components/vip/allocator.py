"""Minimise the summed per-prompt gradient variance under a rollout budget (VIP, step 4).

Per prompt, with w_i = p_i (1 - p_i) (sigma_Z^2 equal across prompts, so it drops out):
- Dr.GRPO: Var_i(n) = w_i (n - 1) / n^2;   - RLOO: Var_i(n) = w_i / (n - 1).
Minimise sum_i Var_i(n_i) s.t. sum_i n_i = C, L <= n_i <= U.

Continuous relaxation: each prompt's Lagrangian w_i f(n) + lam * n is minimised in closed form (RLOO:
n = 1 + sqrt(w / lam); Dr.GRPO: the root of w (n - 2) / n^3 = lam on n >= 3, found by a vectorised bisection,
compared against n = L because (n-1)/n^2 is concave below 3), and lam* is found by bisection so that the sum
is C. Integer solution: floor of the relaxation, greedy filling by the largest marginal decrease, then single-unit
exchanges until none improves (this repairs the non-convex step 2 -> 3 of the Dr.GRPO form). The unit tests
compare it with brute force and with scipy.optimize.
"""

from __future__ import annotations

import numpy as np

from components.errors import ParamsError

FORMS = ("drgrpo", "rloo")


def variance(n: np.ndarray, w: np.ndarray, form: str) -> np.ndarray:
    """Per-prompt variance (up to 4 sigma_Z^2) for group sizes n."""
    n = np.asarray(n, float)
    if form == "drgrpo":
        return w * (n - 1) / n**2
    if form == "rloo":
        return w / (n - 1)
    raise ParamsError(f"variance form {form!r} is not one of {FORMS}")


def check_problem(p, budget: int, lo: int, hi: int, form: str) -> np.ndarray:
    p = np.asarray(p, float)
    if p.ndim != 1 or p.size == 0:
        raise ParamsError(f"allocate: p must be a non-empty 1-D array, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ParamsError("allocate: every predicted success probability p must be in [0, 1]")
    if form not in FORMS:
        raise ParamsError(f"allocate: form {form!r} is not one of {FORMS}")
    if lo < 2 or hi < lo:
        raise ParamsError(f"allocate: bounds need 2 <= L <= U, got L={lo}, U={hi}")
    if not lo * p.size <= budget <= hi * p.size:
        raise ParamsError(f"allocate: budget {budget} is outside [L*Q, U*Q] = [{lo * p.size}, {hi * p.size}]")
    return p


def _argmin_lagrangian(w: np.ndarray, lam: float, lo: int, hi: int, form: str) -> np.ndarray:
    """Per prompt: argmin over n in [lo, hi] of w f(n) + lam n (continuous)."""
    if form == "rloo":
        n = 1 + np.sqrt(w / max(lam, 1e-300))
        return np.clip(n, lo, hi)
    # Dr.GRPO: stationary points solve w (n-2)/n^3 = lam; g(n) = (n-2)/n^3 rises to 1/27 at n=3, then falls.
    a, b = np.full_like(w, max(3.0, lo)), np.full_like(w, float(hi))
    target = lam / np.maximum(w, 1e-300)
    for _ in range(45):  # bisection on the decreasing branch n >= 3
        m = 0.5 * (a + b)
        go_right = (m - 2) / m**3 > target
        a, b = np.where(go_right, m, a), np.where(go_right, b, m)
    n = 0.5 * (a + b)
    lag = lambda x: variance(x, w, form) + lam * x  # noqa: E731
    n = np.where(lag(n) < lag(np.full_like(w, float(lo))), n, float(lo))
    return np.clip(n, lo, hi)


def continuous(p, budget: int, lo: int, hi: int, form: str = "drgrpo", iters: int = 64) -> np.ndarray:
    """The continuous relaxation by bisection on the multiplier (in log space)."""
    p = check_problem(p, budget, lo, hi, form)
    w = p * (1 - p)
    if np.all(w <= 0):
        return np.full(p.size, budget / p.size)
    lo_l, hi_l = -60.0, 10.0  # log lam
    for _ in range(iters):
        mid = 0.5 * (lo_l + hi_l)
        total = _argmin_lagrangian(w, np.exp(mid), lo, hi, form).sum()
        lo_l, hi_l = (mid, hi_l) if total > budget else (lo_l, mid)
    return _argmin_lagrangian(w, np.exp(hi_l), lo, hi, form)


def _gain_up(n, w, hi, form):
    g = variance(n, w, form) - variance(n + 1, w, form)
    return np.where(n < hi, g, -np.inf)


def _loss_down(n, w, lo, form):
    with np.errstate(divide="ignore", invalid="ignore"):
        g = variance(n - 1, w, form) - variance(n, w, form)
    return np.where(n > lo, g, np.inf)


def _best_move(up: np.ndarray, down: np.ndarray) -> tuple[int, int]:
    """The pair (j, i), j != i, maximising up[j] - down[i] (separable, so two candidates suffice)."""
    order_up, order_down = np.argsort(-up, kind="stable")[:2], np.argsort(down, kind="stable")[:2]
    best, pair = -np.inf, (int(order_up[0]), int(order_down[0]))
    for j in order_up:
        for i in order_down:
            if i != j and up[j] - down[i] > best:
                best, pair = up[j] - down[i], (int(j), int(i))
    return pair


def allocate(p, budget: int, lo: int, hi: int, form: str = "drgrpo") -> np.ndarray:
    """Integer group sizes: sum exactly ``budget``, each in [lo, hi]. Equal p gives the uniform allocation."""
    p = check_problem(p, budget, lo, hi, form)
    q = p.size
    w = p * (1 - p)
    if np.allclose(w, w[0]):
        base, extra = divmod(budget, q)  # all prompts alike: as uniform as integers allow, extras to the first
        return np.array([base + (i < extra) for i in range(q)], dtype=int)
    n = np.clip(np.floor(continuous(p, budget, lo, hi, form) + 1e-9), lo, hi).astype(int)
    while n.sum() > budget:  # cannot happen for an exact relaxation; guards rounding of the bisection
        i = int(np.argmin(_loss_down(n, w, lo, form)))
        n[i] -= 1
    while n.sum() < budget:
        i = int(np.argmax(_gain_up(n, w, hi, form)))
        n[i] += 1
    for _ in range(4 * budget):  # single-unit exchanges: move one rollout from i to j while it lowers the sum
        up, down = _gain_up(n, w, hi, form), _loss_down(n, w, lo, form)
        j, i = _best_move(up, down)
        if not up[j] - down[i] > 1e-15:
            break
        n[j] += 1
        n[i] -= 1
    return n


def proportional(weights, budget: int, lo: int, hi: int) -> np.ndarray:
    """n_i proportional to ``weights`` within bounds (the p(1-p) heuristic): bisection on the scale, then
    largest remainders. Equal weights give the uniform allocation."""
    w = np.asarray(weights, float)
    check_problem(np.full(w.size, 0.5), budget, lo, hi, "drgrpo")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ParamsError("proportional: weights must be finite and >= 0")
    if np.allclose(w, w[0]):
        base, extra = divmod(budget, w.size)
        return np.array([base + (i < extra) for i in range(w.size)], dtype=int)
    a, b = 0.0, budget / max(w.max(), 1e-12) + hi
    for _ in range(200):
        m = 0.5 * (a + b)
        a, b = (m, b) if np.clip(m * w, lo, hi).sum() < budget else (a, m)
    x = np.clip(b * w, lo, hi)
    n = np.floor(x).astype(int)
    order = np.argsort(-(x - n), kind="stable")
    k = 0
    while n.sum() < budget:
        i = order[k % w.size]
        if n[i] < hi:
            n[i] += 1
        k += 1
    while n.sum() > budget:
        i = int(np.argmax(np.where(n > lo, n - x, -np.inf)))
        n[i] -= 1
    return n
