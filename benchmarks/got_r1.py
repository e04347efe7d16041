"""Benchmark: got-r1's rollouts (chain + picture) per second with the decoder's key-value cache against a full
forward pass per token (the named baseline, as a model without ``prefill``/``step`` is sampled), and the rule
reward's cost per picture; both timed in the same run.

    python benchmarks/got_r1.py [--size 8] [--d-model 64] [--layers 2] [--rollouts 64]

Prints rollouts per second for each sampler with their ratio, and milliseconds per picture for the full reward
(detector + checker + the four terms).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn

from components.got_r1 import model as M
from components.got_r1 import rewards as R
from components.got_r1 import world as W
from components.got_r1.planner import plan
from components.got_r1.render import render
from components.got_r1.tokens import Vocab
from components.rl_text.sampling import sample


class NoCache(nn.Module):
    """The same decoder seen without ``prefill``/``step``: the sampler rereads the whole buffer each token."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--rollouts", type=int, default=64)
    parser.add_argument("--pictures", type=int, default=500)
    args = parser.parse_args()
    torch.set_num_threads(1)
    v = Vocab(args.size)
    model = M.build(len(v), v.seq_len(True), d_model=args.d_model, n_layers=args.layers, n_heads=4, seed=0)
    held = W.held_out_combos(0)
    specs = W.sample_prompts(args.rollouts, 0, held=held, split="train")
    prompts = [v.encode_prompt(s["prompt"]) for s in specs]
    rates = {}
    for name, m in (("kv-cache", model), ("full-forward", NoCache(model))):
        start = time.perf_counter()
        ro = sample(m, prompts, [1] * len(prompts), max_new=v.completion_len(True), eos=v.eos, pad=v.pad,
                    generator=torch.Generator().manual_seed(0))  # fmt: skip
        rates[name] = ro.completions.shape[0] / (time.perf_counter() - start)
        print(f"{name:>13}: {rates[name]:8.1f} rollouts/s ({v.completion_len(True)} tokens each)")
    print(f"ratio kv-cache / full-forward: {rates['kv-cache'] / rates['full-forward']:.2f}")
    rng = np.random.default_rng(0)
    pics = W.sample_prompts(args.pictures, 1, held=held, split="train")
    planned = [plan(s, args.size, rng, held=held) for s in pics]
    images = [render(o, args.size) for o in planned]
    start = time.perf_counter()
    for s, o, img in zip(pics, planned, images):
        R.rewards(s, o, img)
    print(f"reward: {(time.perf_counter() - start) * 1000 / len(pics):.3f} ms per picture ({args.size}x{args.size})")


if __name__ == "__main__":
    main()
