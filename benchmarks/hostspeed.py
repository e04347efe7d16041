"""How fast this host is, so CPU times measured on different days (different hosts) can be compared.

The machines of this project differ from day to day: the same ICQL train stage took 1,399 CPU-s on
2026-12-03 and 599 CPU-s on 2026-12-04 with no code change. Three fixed single-thread workloads, each
the kind of work the pipelines do, are timed here (best of ``repeats``, so a burst of load hurts less):

- ``python``: a pure-Python loop (environment rollouts, data generation, bookkeeping);
- ``small_ops``: Adam steps of a 2 x 64 MLP on batches of 64 (overhead-bound training: the RL agents);
- ``gemm``: 512 x 512 float32 matrix products (compute-bound training: the LMs and detectors).

``factor`` is the geometric mean over the three of (seconds here / seconds on the reference host):
above 1 means slower than the reference, and ``cpu_s / factor`` estimates a run's CPU seconds on the
reference host. The reference is the host of 2026-12-04 on which the recent times in docs/run-times.md were measured
(``REFERENCE``, measured idle with this script). A single factor is approximate: workloads scale
differently across CPUs, which is why the three parts are kept.

    .venv/bin/python benchmarks/hostspeed.py            # prints the three times and the factor
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

# Seconds of each workload (best of 3) on the reference host: 2026-12-04, idle (load < 0.3).
REFERENCE = {"python": 0.120, "small_ops": 0.262, "gemm": 0.485}


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _python_loop() -> None:
    acc = 0
    for i in range(3_000_000):
        acc += i * i % 7
    if acc < 0:  # keeps the loop from being optimised away by a future interpreter
        raise AssertionError


def _small_ops():
    import torch

    gen = torch.Generator().manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)
    )
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x, y = torch.randn(64, 32, generator=gen), torch.randn(64, 1, generator=gen)

    def run() -> None:
        for _ in range(1_000):
            loss = (net(x) - y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()

    return run


def _gemm():
    import torch

    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(512, 512, generator=gen), torch.randn(512, 512, generator=gen)

    def run() -> None:
        for _ in range(200):
            torch.mm(a, b)

    return run


def measure(repeats: int = 3) -> dict:
    """The three workloads' best times (s) at one thread, the factor against ``REFERENCE`` and the thread count
    torch had before (restored)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        times = {
            "python": _best(_python_loop, repeats),
            "small_ops": _best(_small_ops(), repeats),
            "gemm": _best(_gemm(), repeats),
        }
    finally:
        torch.set_num_threads(threads)
    return {**{k: round(v, 4) for k, v in times.items()}, "factor": factor(times)}


def factor(times: dict, reference: dict = REFERENCE) -> float | None:
    """Geometric mean of times / reference over the workloads both have (None without a usable reference)."""
    ratios = [times[k] / reference[k] for k in reference if reference.get(k) and times.get(k)]
    if not ratios:
        return None
    return round(math.exp(sum(math.log(r) for r in ratios) / len(ratios)), 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="timings per workload; the best counts")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    res = measure(args.repeats)
    if args.json:
        print(json.dumps(res))
    else:
        for k in REFERENCE:
            ref = REFERENCE[k]
            print(f"{k:<10} {res[k]:8.4f} s" + (f"   reference {ref:.4f} s   ratio {res[k] / ref:.2f}" if ref else ""))
        print(f"factor     {res['factor']}  (> 1: slower than the reference host; cpu_s / factor ~ reference CPU-s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
