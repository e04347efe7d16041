"""Benchmark (anthrobench): target tokens per second of SmolLM2-135M-Instruct answering 5-turn dialogues,
batched generation (all dialogues of a turn at once) against one dialogue at a time, in the same run.

    python benchmarks/dialogues.py [--dialogues 8] [--turns 2] [--threads 1] [--max-new-tokens 48]

Prints tokens/s (and CPU seconds) for each mode and the ratio batched / one at a time. One thread is the
pipeline's setting: on a loaded machine two OpenMP threads spin (a SmolLM2 forward pass cost 16x the CPU).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from components.anthrobench.dialogue import ChatLM, run_dialogues
from components.anthrobench.first_turns import generate_first_turns, stratified_sample
from components.models.causal_lm import load_causal_lm
from components.training.threads import set_threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dialogues", type=int, default=8)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--cache-dir", default=os.environ.get("PAPERLINE_CACHE_DIR", ".paperline/cache") + "/models")
    args = parser.parse_args()
    set_threads(args.threads)
    model, tok = load_causal_lm("smollm2-135m-instruct", cache_dir=Path(args.cache_dir))
    turns = stratified_sample(generate_first_turns(), args.dialogues, seed=0)
    rates = {}
    for name, batch in (("one at a time", 1), ("batched", args.dialogues)):
        lm = ChatLM(model, tok, "smollm2", seed=0, max_new_tokens=args.max_new_tokens)
        start, cpu = time.perf_counter(), time.process_time()
        run_dialogues(lm, turns, seed=0, n_turns=args.turns, batch_size=batch)
        wall = time.perf_counter() - start
        rates[name] = lm.generated_tokens / wall
        print(
            f"{name:>14}: {lm.generated_tokens} tokens in {wall:.1f} s wall ({time.process_time() - cpu:.1f} s CPU)"
            f" = {rates[name]:.1f} tokens/s"
        )
    print(f"ratio batched / one at a time: {rates['batched'] / rates['one at a time']:.2f}")


if __name__ == "__main__":
    main()
