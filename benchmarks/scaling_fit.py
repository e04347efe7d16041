"""Benchmark: fast approach-3 fit vs the sequential SciPy reference procedure, same starts.

Baseline: Epoch's procedure, scipy.optimize.minimize(method="L-BFGS-B") with numerical
gradients from each grid start, one after another (components/scaling/reference.py).
Candidate: components.scaling.fit_chinchilla (batched L-BFGS over all starts, analytic
gradients, L-BFGS-B polish). Data: Chinchilla's extracted points, 5 highest losses dropped.

    .venv/bin/python benchmarks/scaling_fit.py               # 450 of the 4,500 starts, ~2 min
    .venv/bin/python benchmarks/scaling_fit.py --starts 4500  # the full grid (reference ~10 min)
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from components.scaling.chinchilla import ScalingFit, default_grid, fit_chinchilla
from components.scaling.reference import fit_chinchilla_reference
from components.scaling.table import load_scaling_table

DEFAULT_CSV = Path(__file__).resolve().parents[2] / "shared" / "reference" / "chinchilla_svg_extracted_data.csv"
TOLERANCE = 1e-3  # max |delta exponent| allowed between the two optima


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--starts", type=int, default=450, help="grid starts to use, of 4500 (default 450)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random subset of starts")
    p.add_argument("--repeats", type=int, default=3, help="timed runs of the fast fit (median reported)")
    p.add_argument("--csv", type=Path, default=DEFAULT_CSV, help="scaling table (Chinchilla's by default)")
    p.add_argument("--exclude", type=int, default=5, help="highest-loss rows to drop (default 5)")
    return p.parse_args()


def select_starts(n_starts: int, seed: int) -> tuple[np.ndarray, str]:
    grid = default_grid()
    if not 1 <= n_starts <= len(grid):
        raise SystemExit(f"--starts must be between 1 and {len(grid)}, got {n_starts}")
    if n_starts == len(grid):
        return grid, f"the full grid of {len(grid)} starts"
    rows = np.sort(np.random.default_rng(seed).choice(len(grid), n_starts, replace=False))
    return grid[rows], f"a random subset of {n_starts} of {len(grid)} starts (seed {seed}), the same for both"


def show(name: str, fit: ScalingFit) -> None:
    print(
        f"  {name:<10} A={fit.A:9.2f}  B={fit.B:10.2f}  E={fit.E:.4f}  alpha={fit.alpha:.5f}  "
        f"beta={fit.beta:.5f}  objective={fit.objective:.10g}"
    )


def main() -> int:
    args = parse_args()
    table = load_scaling_table(
        args.csv, n_column="Model Size", loss_column="loss", flops_column="Training FLOP", exclude_top_loss=args.exclude
    )
    grid, described = select_starts(args.starts, args.seed)
    print(f"data: {args.csv.name}, {len(table)} rows ({args.exclude} highest-loss excluded)")
    print(f"starts: {described}")

    times = []
    for _ in range(max(1, args.repeats)):
        t0 = time.perf_counter()
        fast = fit_chinchilla(table.N, table.D, table.L, grid=grid)
        times.append(time.perf_counter() - t0)
    t_fast = statistics.median(times)

    print("running the reference (sequential L-BFGS-B, numerical gradients) ...", flush=True)
    t0 = time.perf_counter()
    ref = fit_chinchilla_reference(table.N, table.D, table.L, grid=grid, progress=True)
    t_ref = time.perf_counter() - t0

    print("optima:")
    show("reference", ref)
    show("fast", fast)
    d_exp = max(abs(fast.alpha - ref.alpha), abs(fast.beta - ref.beta))
    print(f"max |delta exponent| = {d_exp:.2e} (must be < {TOLERANCE:g}): {'OK' if d_exp < TOLERANCE else 'FAIL'}")
    print(
        f"objective: fast - reference = {fast.objective - ref.objective:+.3e} "
        f"({'fast no worse' if fast.objective <= ref.objective * (1 + 1e-9) else 'fast WORSE'})"
    )
    print(
        f"wall time: reference {t_ref:.1f} s, fast {t_fast:.2f} s (median of {len(times)}: "
        f"{', '.join(f'{t:.2f}' for t in times)})"
    )
    print(f"speed ratio (reference / fast): {t_ref / t_fast:.0f}x")
    return 0 if d_exp < TOLERANCE else 1


if __name__ == "__main__":
    raise SystemExit(main())
