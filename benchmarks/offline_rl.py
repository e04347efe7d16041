"""Offline RL throughput: gradient steps/s of IQL and ICQL, and retrieval latency per batch at 10k and 1M transitions.

Baselines measured in the same run: IQL (global MLP critic) for ICQL's step rate, and an
exact brute-force k-NN (numpy, chunked squared distances) for the scikit-learn index.

    .venv/bin/python benchmarks/offline_rl.py [--steps 50] [--batch 64] [--k 10] [--sizes 10000 1000000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from components.rl.agents import ICQL, IQL
from components.rl.retrieval import StateIndex


def fake_batch(b: int, k: int, obs: int = 8, act: int = 2, seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.rand(*s, generator=g)  # noqa: E731
    ctx = {
        "obs": r(b, k, obs),
        "act": r(b, k, act) * 2 - 1,
        "next_obs": r(b, k, obs),
        "next_act": r(b, k, act) * 2 - 1,
        "rew": (r(b, k) > 0.95).float(),
        "not_done": torch.ones(b, k),
    }
    return {
        "obs": r(b, obs),
        "act": r(b, act) * 2 - 1,
        "rew": (r(b) > 0.95).float(),
        "next_obs": r(b, obs),
        "next_act": r(b, act) * 2 - 1,
        "not_done": torch.ones(b),
        "ctx": ctx,
    }


def steps_per_second(agent, batch: dict, steps: int) -> float:
    for _ in range(3):  # warm-up
        agent.update(batch)
    t0 = time.perf_counter()
    for _ in range(steps):
        agent.update(batch)
    return steps / (time.perf_counter() - t0)


def brute_force_knn(states: np.ndarray, queries: np.ndarray, k: int, chunk: int = 200_000) -> np.ndarray:
    """Exact k-NN by chunked ||q||^2 - 2 q.s + ||s||^2 and argpartition (the baseline)."""
    best_d = np.full((len(queries), k), np.inf, dtype=np.float32)
    best_i = np.zeros((len(queries), k), dtype=np.int64)
    qn = (queries**2).sum(1, keepdims=True)
    for start in range(0, len(states), chunk):
        s = states[start : start + chunk]
        d = qn - 2 * queries @ s.T + (s**2).sum(1)[None]
        idx = np.argpartition(d, k - 1, axis=1)[:, :k]
        cand_d = np.concatenate([best_d, np.take_along_axis(d, idx, 1)], 1)
        cand_i = np.concatenate([best_i, idx + start], 1)
        keep = np.argsort(cand_d, 1)[:, :k]
        best_d, best_i = np.take_along_axis(cand_d, keep, 1), np.take_along_axis(cand_i, keep, 1)
    return best_i


def retrieval(n: int, batch: int, k: int, repeats: int = 5) -> dict:
    rng = np.random.default_rng(0)
    states = rng.random((n, 8), dtype=np.float32)
    states[:, 4:] = states[:, 4:] > 0.5  # subtask flags are binary, as in kitchen-lite
    queries = states[rng.integers(0, n, batch)] + rng.normal(0, 0.01, (batch, 8)).astype(np.float32)
    t0 = time.perf_counter()
    index = StateIndex(states)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(repeats):
        got = index.query(queries, k)
    tree = (time.perf_counter() - t0) / repeats
    t0 = time.perf_counter()
    want = brute_force_knn(states, queries, k)
    brute = time.perf_counter() - t0
    d = lambda i: ((states[i] - queries[:, None]) ** 2).sum(-1)  # noqa: E731
    exact = bool(np.allclose(np.sort(d(got), 1), np.sort(d(want), 1), atol=1e-5))
    return {"n": n, "build_s": build, "tree_ms": 1e3 * tree, "brute_ms": 1e3 * brute, "exact": exact}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 1_000_000])
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    batch = fake_batch(a.batch, a.k)
    iql = steps_per_second(IQL(8, 2, hidden=a.hidden), batch, a.steps)
    icql = steps_per_second(ICQL(8, 2, hidden=a.hidden, d=a.d, n_layers=4), batch, a.steps)
    print(f"gradient steps/s (batch {a.batch}, hidden {a.hidden}, {a.threads} thread(s)):")
    print(f"  IQL  {iql:8.1f}   (baseline)")
    print(f"  ICQL {icql:8.1f}   (k={a.k}, d={a.d}, L=4)  ratio ICQL/IQL = {icql / iql:.3f}")
    StateIndex(np.zeros((4, 8), dtype=np.float32))  # import scikit-learn outside the timings
    print(f"retrieval of k={a.k} nearest states for a batch of {a.batch} queries (8-D states):")
    for n in a.sizes:
        r = retrieval(n, a.batch, a.k)
        print(
            f"  n={n:>9,}: index build {r['build_s']:.2f} s, KD-tree {r['tree_ms']:.2f} ms/batch, brute force "
            f"{r['brute_ms']:.2f} ms/batch (baseline), speed-up x{r['brute_ms'] / r['tree_ms']:.1f}, "
            f"same neighbours: {r['exact']}"
        )


if __name__ == "__main__":
    main()
