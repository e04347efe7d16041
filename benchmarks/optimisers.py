"""Per-method overhead per gradient evaluation, excluding the oracle, in one run (pipeline optimistic-o2nc).

Each method runs a fixed number of counted calls on the synthetic robust regression (d = --dim). Time spent
inside the oracle (the function's gradient, noise, finiteness check) is measured and subtracted, so what is
left is the method's own step arithmetic (projections, hints, averaging). Methods alternate over --repeats
rounds and the best round of each is kept. Printed: microseconds per gradient evaluation and the ratio to GD.

    .venv/bin/python benchmarks/optimisers.py [--calls 20000] [--dim 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from components.optim.functions import robust_synthetic
from components.optim.oracle import GradientOracle
from components.optim.runner import METHODS, build_method


class TimedOracle(GradientOracle):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.inside = 0.0

    def grad(self, x, *, reuse_noise=False):
        t = time.perf_counter()
        try:
            return super().grad(x, reuse_noise=reuse_noise)
        finally:
            self.inside += time.perf_counter() - t


def overhead(name: str, fn, calls: int) -> float:
    x0 = fn.x0(0)
    g0 = float(np.linalg.norm(fn.grad(x0)))
    # cmo23 takes its K from eps (here 1e-3: K = ceil(log(1e3) / log(2 / 0.5)) = 5); cmo23-k2 has K = 2
    method = build_method(
        name, fn, g0, {"episode": 10, "inner_steps": 2, "lr": 0.5, "eta": 0.5, "radius": 1.0}, eps_rel=1e-3
    )
    oracle = TimedOracle(fn.grad)
    method.start(x0, oracle)
    t = time.perf_counter()
    while oracle.calls < calls:
        method.step(oracle)
    total = time.perf_counter() - t
    return (total - oracle.inside) / oracle.calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    fn = robust_synthetic(m=5 * a.dim, d=a.dim)
    best = {m: float("inf") for m in METHODS}
    for _ in range(a.repeats):
        for m in METHODS:
            best[m] = min(best[m], overhead(m, fn, a.calls))
    print(
        f"method overhead per gradient evaluation, excluding the oracle "
        f"(d={a.dim}, {a.calls} calls, best of {a.repeats})"
    )
    for m in METHODS:
        print(f"{m:14s} {best[m] * 1e6:8.2f} us   x{best[m] / best['gd']:.2f} vs gd")


if __name__ == "__main__":
    main()
