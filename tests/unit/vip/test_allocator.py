"""The allocator against brute force (exact integer optimum) and scipy.optimize (continuous relaxation)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from components.errors import ParamsError
from components.vip.allocator import allocate, continuous, proportional, variance


def _brute(p, budget, lo, hi, form):
    w = p * (1 - p)
    best = np.inf
    for n in itertools.product(range(lo, hi + 1), repeat=len(p)):
        if sum(n) == budget:
            best = min(best, variance(np.array(n), w, form).sum())
    return best


@pytest.mark.parametrize("form", ["drgrpo", "rloo"])
def test_integer_allocation_is_optimal_on_small_instances(form):
    rng = np.random.default_rng(0)
    for trial in range(40):
        q = int(rng.integers(2, 5))
        lo, hi = 2, int(rng.integers(4, 9))
        budget = int(rng.integers(lo * q, hi * q + 1))
        p = rng.choice([rng.random(q), rng.beta(0.3, 0.3, q), np.round(rng.random(q), 1)])
        n = allocate(p, budget, lo, hi, form)
        assert n.sum() == budget and n.min() >= lo and n.max() <= hi
        got = variance(n, p * (1 - p), form).sum()
        assert got <= _brute(p, budget, lo, hi, form) + 1e-12, (trial, p, budget, lo, hi, n)


@pytest.mark.parametrize("form", ["drgrpo", "rloo"])
def test_continuous_relaxation_matches_scipy(form):
    from scipy.optimize import minimize

    rng = np.random.default_rng(1)
    q, lo, hi, budget = 24, 2, 24, 192
    p = rng.random(q)
    w = p * (1 - p)
    x = continuous(p, budget, lo, hi, form)
    assert x.sum() == pytest.approx(budget, abs=1e-6) and x.min() >= lo - 1e-9 and x.max() <= hi + 1e-9
    ours = variance(x, w, form).sum()
    best = np.inf
    for start in (np.full(q, budget / q), np.clip(x + rng.normal(0, 1, q), lo, hi)):
        start = start * budget / start.sum()
        res = minimize(
            lambda n: variance(n, w, form).sum(),
            start,
            method="SLSQP",
            bounds=[(lo, hi)] * q,
            constraints=[{"type": "eq", "fun": lambda n: n.sum() - budget}],
            options={"maxiter": 500, "ftol": 1e-14},
        )
        best = min(best, res.fun)
    assert ours <= best + 1e-7
    n = allocate(p, budget, lo, hi, form)
    assert ours <= variance(n, w, form).sum() + 1e-9  # the integer optimum cannot beat the relaxation
    assert variance(n, w, form).sum() <= ours * 1.02  # and rounding loses little


def test_equal_p_gives_uniform_and_bounds_budget_are_exact():
    assert allocate(np.full(16, 0.3), 128, 2, 24).tolist() == [8] * 16
    assert proportional(np.full(16, 0.21), 128, 2, 24).tolist() == [8] * 16
    n = allocate(np.r_[np.zeros(8), np.full(8, 0.5)], 128, 2, 24)
    assert n.sum() == 128 and n[:8].tolist() == [2] * 8  # solved or impossible prompts get the floor
    m = proportional(np.random.default_rng(2).random(1024), 8192, 2, 24)
    assert m.sum() == 8192 and m.min() >= 2 and m.max() <= 24


@pytest.mark.parametrize("bad", [dict(p=[0.5, 1.2]), dict(p=[]), dict(budget=3), dict(lo=1), dict(form="x")])
def test_bad_problems_are_refused(bad):
    kw = dict(p=[0.2, 0.5], budget=8, lo=2, hi=6, form="drgrpo") | bad
    with pytest.raises(ParamsError):
        allocate(np.asarray(kw.pop("p")), **kw)
