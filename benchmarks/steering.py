"""Benchmark: steered generation (implicit-planning) with the residual hook against the same generation without
it (hook overhead ratio), and batched against one prompt at a time (batching speed-up), timed in the same run.

    python benchmarks/steering.py [--prompts N] [--model control|smollm2-135m-instruct]

Uses a randomly initialised 4-layer d=128 control transformer by default (no training needed; speed does not
depend on the weights), or the offline SmolLM2-135M with ``--model smollm2-135m-instruct``.
"""

from __future__ import annotations

import argparse
import time

import torch

from components.implicit_planning.couplets import CoupletLanguage, control_config
from components.implicit_planning.tasks import control_task
from components.interp.lm import Steer, SteerableLM
from components.models.tiny_lm import TinyLM


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--new", type=int, default=12)
    parser.add_argument("--model", default="control")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.model == "control":
        lang = CoupletLanguage()
        lm = SteerableLM(TinyLM(control_config(lang), seed=0))
        task = control_task(lang)
        import random

        prompts = [task.prompt_ids(x) for x in lang.first_lines("ight", args.prompts, random.Random(0))]
        d, stops = 128, task.stop_ids
    else:
        from components.models.causal_lm import load_causal_lm

        model, tok = load_causal_lm(args.model, cache_dir=".paperline/cache/models", offline=True)
        lm = SteerableLM(model, pad_id=tok.eos_token_id)
        prompts = [tok(f"A rhyming couplet:\nThe stars are shining in the night number {i}\n")["input_ids"]
                   for i in range(args.prompts)]  # fmt: skip
        d, stops = model.config.hidden_size, ()
    vec = torch.randn(d, generator=torch.Generator().manual_seed(0))
    steer = Steer(1, vec, [len(p) - 1 for p in prompts])

    def gen(ps, st):
        return lm.generate(ps, max_new_tokens=args.new, stop_ids=stops, steer=st, temperature=1.0,
                           generator=torch.Generator().manual_seed(0))  # fmt: skip

    gen(prompts[:2], None)  # warm-up
    plain = _timed(lambda: gen(prompts, None))
    hooked = _timed(lambda: gen(prompts, steer))
    single = _timed(lambda: [gen([p], Steer(1, vec, [len(p) - 1])) for p in prompts])
    n = len(prompts)
    print(f"unsteered batched : {n / plain:8.1f} generations/s")
    print(f"steered batched   : {n / hooked:8.1f} generations/s")
    print(f"steered one by one: {n / single:8.1f} generations/s")
    print(f"hook overhead ratio (steered / unsteered time): {hooked / plain:.2f}")
    print(f"batching speed-up (one by one / batched time): {single / hooked:.2f}")


if __name__ == "__main__":
    main()
