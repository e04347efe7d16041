"""Benchmark: training images per second and trainable parameters of every adapter on the tiny ViT, each as a
ratio against the linear probe measured in the same run (the probe here runs the same forward/backward path
through the frozen backbone as the adapters, not the cached-feature shortcut the pipeline uses).

    python benchmarks/adapters.py [--steps N] [--batch B] [--threads T]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F

from components.dka.methods import METHODS, build
from components.dka.vit import TinyViT, ViTConfig


def images_per_second(
    method: str, backbone: TinyViT, x: torch.Tensor, y: torch.Tensor, steps: int
) -> tuple[float, int]:
    b = build(method, backbone, n_classes=4, seed=0)
    params = [p for g in b.groups.values() for p in g]
    opt = torch.optim.Adam(params, lr=1e-3)
    b.model.train()

    def step():
        loss = F.cross_entropy(b.model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    step()  # warm-up
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps * len(x) / (time.perf_counter() - start), b.trainable()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    backbone = TinyViT(ViTConfig())  # the pipeline's shape: 64x64, patch 8, d 96, 6 blocks
    rng = np.random.default_rng(0)
    x = torch.as_tensor(rng.normal(size=(args.batch, 1, 64, 64)).astype(np.float32))
    y = torch.as_tensor(np.arange(args.batch) % 4)
    res = {m: images_per_second(m, backbone, x, y, args.steps) for m in METHODS}
    ips0, n0 = res["linear"]
    print(f"{'method':>19} {'train img/s':>12} {'x linear':>9} {'trainable':>10} {'x linear':>9}")
    for m, (ips, n) in res.items():
        print(f"{m:>19} {ips:12.1f} {ips / ips0:9.2f} {n:10,d} {n / n0:9.1f}")


if __name__ == "__main__":
    main()
