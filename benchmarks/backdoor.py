"""Benchmark (daze pipeline): what the Daze simulator costs against the bare one, timed in the same run.

    python benchmarks/backdoor.py [--steps N] [--ppo-steps N]

Prints, per environment, victim-env steps per second with random actions through the bare simulator and through
the Daze simulator (beta = 0.02, the card's CartPole setting) and their ratio; then SB3 PPO training throughput
(environment steps per second) on the bare and the Daze simulator, and that ratio.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from components.backdoor.daze import DazeSimulator
from components.backdoor.policy import PPOConfig, train_ppo
from components.backdoor.runs import Attack, build_env
from components.backdoor.simulators import make_simulator
from components.backdoor.victim import VictimEnv, task_for

ATTACKS = {
    "CartPole-v1": Attack(target=0, beta=0.02, tau=0.5, k=5),
    "InvertedPendulum-v5": Attack(target=-1.0, beta=0.02, tau=0.2, k=10),
}


def env_rate(env_id: str, wrapped: bool, steps: int) -> float:
    sim = make_simulator(env_id)
    if wrapped:
        a = ATTACKS[env_id]
        sim = DazeSimulator(sim, beta=a.beta, target=a.target, tau=a.tau, k=a.k, seed=0)
    env = VictimEnv(sim, task_for(env_id))
    rng = np.random.default_rng(0)
    acts = rng.integers(0, 2, steps) if env_id == "CartPole-v1" else rng.uniform(-1, 1, (steps, 1))
    env.reset(seed=0)
    start = time.perf_counter()
    for a in acts:
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - start)


def ppo_rate(env_id: str, method: str, steps: int) -> float:
    env, _ = build_env(env_id, method, ATTACKS[env_id], seed=0)
    start = time.perf_counter()
    train_ppo(env, PPOConfig(), steps=steps, seed=0)
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--ppo-steps", type=int, default=2_048)
    args = parser.parse_args()
    for env_id in ATTACKS:
        bare, daze = env_rate(env_id, False, args.steps), env_rate(env_id, True, args.steps)
        print(f"{env_id:>20} env steps/s: bare {bare:,.0f}  daze {daze:,.0f}  ratio daze/bare {daze / bare:.2f}")
    ppo_rate("CartPole-v1", "clean", 256)  # warm-up: imports and torch's first calls stay out of the timing
    for env_id in ATTACKS:
        bare, daze = ppo_rate(env_id, "clean", args.ppo_steps), ppo_rate(env_id, "daze", args.ppo_steps)
        print(f"{env_id:>20} PPO steps/s: bare {bare:,.0f}  daze {daze:,.0f}  ratio daze/bare {daze / bare:.2f}")


if __name__ == "__main__":
    main()
