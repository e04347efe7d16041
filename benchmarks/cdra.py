"""Benchmark: cdra's method against its baseline on the same samples, timed in the same run.

    python benchmarks/cdra.py [--samples N]

Prints seconds per 1,000 samples for each estimator and the ratio method / baseline.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from components.cdra.method import baseline, method


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    samples = [rng.normal(0, 1, 30) for _ in range(args.samples)]
    times = {}
    for name, fn in (("baseline", baseline), ("method", lambda x: method(x, 0.2))):
        start = time.perf_counter()
        for x in samples:
            fn(x)
        times[name] = (time.perf_counter() - start) * 1000 / args.samples
        print(f"{name:>9}: {times[name]:.4f} s per 1,000 samples")
    print(f"ratio method / baseline: {times['method'] / times['baseline']:.2f}")


if __name__ == "__main__":
    main()
