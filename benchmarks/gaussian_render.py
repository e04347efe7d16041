"""Benchmark: medgmae's dense Gaussian renderer, voxels per second, against the chunked direct evaluation.

    python benchmarks/gaussian_render.py [--size 32] [--gaussians 64] [--batch 8] [--repeats 3]

Both render the same random Gaussians (float32) onto the same grid, timed in the same run, forward and
forward + backward: :func:`components.medgmae.render.render` (the expanded quadratic form, one matrix product)
and :func:`components.medgmae.render.render_direct` (explicit x - mu differences in chunks of 4,096 voxels, the
reference). Prints voxels per second of each, the ratio dense / direct, and the maximum absolute difference
between their volumes (relative to the volume's maximum) against a float64 evaluation.
"""

from __future__ import annotations

import argparse
import time

import torch

from components.medgmae import render as R


def _params(b: int, k: int, dtype=torch.float32, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.rand(b, k, 3, generator=g, dtype=dtype),
        (0.03 + 0.2 * torch.rand(b, k, 3, generator=g, dtype=dtype)),
        torch.randn(b, k, 4, generator=g, dtype=dtype),
        torch.rand(b, k, generator=g, dtype=dtype),
    )


def _time(fn, args, shape, repeats: int, backward: bool) -> float:
    best = float("inf")
    for _ in range(repeats):
        ps = [a.clone().requires_grad_(backward) for a in args]
        start = time.perf_counter()
        vol = fn(*ps, shape, gain=0.1)
        if backward:
            vol.sum().backward()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--gaussians", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    shape = (args.size,) * 3
    params = _params(args.batch, args.gaussians)
    voxels = args.batch * args.size**3
    print(f"{args.batch} volumes of {args.size}^3, {args.gaussians} Gaussians, {args.threads} threads")
    for backward in (False, True):
        dense = _time(R.render, params, shape, args.repeats, backward)
        direct = _time(R.render_direct, params, shape, args.repeats, backward)
        what = "forward + backward" if backward else "forward"
        print(f"{what:>18}: dense {voxels / dense:,.0f} voxels/s, chunked direct {voxels / direct:,.0f} voxels/s, "
              f"ratio dense / direct {direct / dense:.2f}x")  # fmt: skip
    with torch.no_grad():
        ref = R.render_direct(*[p.double() for p in params], shape, gain=0.1)
        scale = float(ref.abs().max())
        for name, fn in (("dense", R.render), ("chunked direct", R.render_direct)):
            err = float((fn(*params, shape, gain=0.1).double() - ref).abs().max())
            print(f"max |error| vs float64, {name}: {err:.2e} ({err / scale:.2e} of the volume's max)")


if __name__ == "__main__":
    main()
