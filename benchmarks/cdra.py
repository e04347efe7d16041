"""Benchmark: cdra's PRM scoring throughput, batched against one step at a time, and one RL step's wall time
split into sampling, scoring and update, all measured in the same run.

    python benchmarks/cdra.py [--steps N] [--rl-steps N]

Prints steps per second for Pers-GenPRM scoring (one batch of all steps vs a loop of single steps, the same
untrained PRM and the same steps: the outputs are compared), their ratio, and the seconds per RL step of the
CDRA arm by phase.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from components.cdra import cdpa as C
from components.cdra import prm as P
from components.cdra import task as T


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300, help="PRM steps to score")
    parser.add_argument("--rl-steps", type=int, default=10, help="RL steps of the CDRA arm to time")
    args = parser.parse_args()
    torch.set_num_threads(1)
    pairs = T.make_pairs(10, seed=0)
    rng = np.random.default_rng(0)
    queries = [q for p in pairs for q in P.queries_of(p, T.noisy_chain(p, rng, 0.4))][: args.steps]
    prm = P.new_backbone(64, 2, seed=0)
    start = time.perf_counter()
    batched = P.prm_scores(prm, queries)
    t_batch = time.perf_counter() - start
    start = time.perf_counter()
    single = [P.prm_scores(prm, [q])[0] for q in queries]
    t_single = time.perf_counter() - start
    assert batched == single, "batched and one-at-a-time scoring disagree"
    print(f"PRM scoring, batched:        {len(queries) / t_batch:9.1f} steps/s")
    print(f"PRM scoring, one at a time:  {len(queries) / t_single:9.1f} steps/s")
    print(f"ratio batched / one at a time: {t_single / t_batch:.1f}x")
    policy = C.new_policy(64, 2, seed=0)
    cfg = C.ArmConfig(steps=args.rl_steps)
    _, hist = C.rl_train(policy, pairs, "cdra", cfg, seed=0, scorer=P.model_scorer(prm))
    total = sum(hist.seconds.values())
    for phase, sec in hist.seconds.items():
        print(f"RL step {phase:>8}: {sec / args.rl_steps:.3f} s ({100 * sec / total:.0f}%)")


if __name__ == "__main__":
    main()
