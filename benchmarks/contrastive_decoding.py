"""Benchmark: the cost of selfaug-decoding's contrastive decoding against greedy decoding, timed in one run.

    python benchmarks/contrastive_decoding.py [--rows N] [--tokens T] [--threads K]

Captions of ``T`` tokens for ``N`` random 64 x 64 images on an untrained tiny VLM (the cost does not depend on
the weights). Prints tokens per second for each method and the ratio to greedy: VCD and Self-Aug pay a second
forward pass per step (about 2x), VACoDe also one pass per menu augmentation before decoding. No key-value cache
is used by any method (each step re-reads the prefix and the text), so the ratio is the no-cache one; the
shared text cache the issue asks for is a known gap (flows/selfaug_decoding/README.md).
"""

from __future__ import annotations

import argparse
import time

import torch

from components.selfaug_decoding import decoding as D
from components.selfaug_decoding import model as M


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    vlm = M.TinyVLM(M.VLMConfig()).eval()
    x = torch.randn(args.rows, 3, 64, 64)
    prompt = torch.tensor([M.prompt_ids(["describe"])] * args.rows)
    rates = {}
    for name, meth in D.methods().items():
        start = time.perf_counter()
        res = D.generate(vlm.encode, vlm, x, prompt, meth, qtypes=["caption"] * args.rows, max_new=args.tokens)
        n = sum(len(t) + 1 for t in res.tokens)  # + the EOS step, when one was produced
        rates[name] = n / (time.perf_counter() - start)
    for name, r in rates.items():
        print(f"{name:>9}: {r:8.1f} tokens/s   cost ratio vs greedy {rates['greedy'] / r:.2f}")


if __name__ == "__main__":
    main()
