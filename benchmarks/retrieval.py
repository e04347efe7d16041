"""Index build time, query latency (p50/p95) and memory: AssoMem vs flat dense retrieval, same memories, one run.

Embeddings are synthetic (unit vectors around shared template centres, so the
memory is similarity-dense like the card's generator) because the point is the
cost of the index and the query, not of the embedding model. AssoMem's index =
clue assignment + the clue-utterance graph (cos >= 0.75 edges, blocked
brute force); its query = similarities, personalised PageRank over the whole
graph, candidates, fusion. Flat dense: the embedding matrix and one product.

    .venv/bin/python benchmarks/retrieval.py                    # 10k and 100k utterances
    .venv/bin/python benchmarks/retrieval.py --sizes 10000 --queries 50
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from components.retrieval import baselines
from components.retrieval.assomem import fusion
from components.retrieval.assomem.graph import build_graph
from components.retrieval.assomem.retriever import AssoMem, AssoMemConfig, rank


def synthetic_memory(n: int, dim: int, seed: int, n_templates: int = 60, n_clues: int = 26, session: int = 15):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_templates, dim))
    x = centres[rng.integers(0, n_templates, n)] + 0.5 * rng.normal(size=(n, dim))
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    clue = (np.arange(n) // session) % n_clues
    clue_embs = rng.normal(size=(n_clues, dim)).astype(np.float32)
    clue_embs /= np.linalg.norm(clue_embs, axis=1, keepdims=True)
    times = np.arange(n, dtype=float) / (24 * 60)  # days: one utterance a minute
    return x, clue.astype(np.int64), clue_embs, times


def measured(fn):
    """(result, seconds, peak traced MiB) of fn()."""
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    sec = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, sec, peak


def latencies(fn, queries: np.ndarray) -> np.ndarray:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q[None, :])
        out.append((time.perf_counter() - t0) * 1000)
    return np.array(out)


def bench(n: int, dim: int, n_queries: int, seed: int, backend: str) -> list[dict]:
    x, clue, clue_embs, times = synthetic_memory(n, dim, seed)
    rng = np.random.default_rng(seed + 1)
    queries = x[rng.integers(0, n, n_queries)] + 0.1 * rng.normal(size=(n_queries, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    qt = float(times[-1] + 1)

    dense_index, d_sec, d_mem = measured(lambda: np.ascontiguousarray(x))
    d_lat = latencies(lambda q: baselines.dense_flat(q, dense_index, 10), queries)

    adj, a_sec, a_mem = measured(
        lambda: build_graph(x, clue, len(clue_embs), threshold=0.75, max_neighbors=20, backend=backend)
    )
    am = AssoMem(x, times, clue, clue_embs, adj, AssoMemConfig(query_block=1))
    w = fusion.equal_weights(("R", "I", "T"))
    a_lat = latencies(lambda q: rank(am.signals(q, [qt])[0], w, 10), queries)
    index_mib = (x.nbytes + adj.data.nbytes + adj.indices.nbytes + adj.indptr.nbytes) / 2**20
    return [
        {
            "method": "dense",
            "n": n,
            "build_s": d_sec,
            "p50_ms": np.percentile(d_lat, 50),
            "p95_ms": np.percentile(d_lat, 95),
            "index_mib": x.nbytes / 2**20,
            "peak_build_mib": d_mem,
            "edges": 0,
        },
        {
            "method": "assomem",
            "n": n,
            "build_s": a_sec,
            "p50_ms": np.percentile(a_lat, 50),
            "p95_ms": np.percentile(a_lat, 95),
            "index_mib": index_mib,
            "peak_build_mib": a_mem,
            "edges": adj.nnz // 2,
        },
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--dim", type=int, default=384, help="embedding dimension (MiniLM: 384)")
    ap.add_argument("--queries", type=int, default=20, help="single queries timed per size and method")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", choices=["numpy", "faiss"], default="faiss", help="exact kNN for the graph edges")
    args = ap.parse_args()
    print(
        f"{'method':8s} {'n':>7s} {'build s':>8s} {'p50 ms':>8s} {'p95 ms':>8s} {'index MiB':>9s} "
        f"{'peak build MiB':>14s} {'edges':>9s}"
    )
    for n in args.sizes:
        rows = bench(n, args.dim, args.queries, args.seed, args.backend)
        for r in rows:
            print(
                f"{r['method']:8s} {r['n']:7d} {r['build_s']:8.2f} {r['p50_ms']:8.2f} {r['p95_ms']:8.2f} "
                f"{r['index_mib']:9.1f} {r['peak_build_mib']:14.1f} {r['edges']:9d}"
            )
        d, a = rows
        print(
            f"  ratios at n={n} (assomem / dense): build {a['build_s']:.1f} s vs none (dense has no index), "
            f"p50 latency x{a['p50_ms'] / d['p50_ms']:.1f}, p95 latency x{a['p95_ms'] / d['p95_ms']:.1f}, "
            f"index memory x{a['index_mib'] / d['index_mib']:.2f}"
        )


if __name__ == "__main__":
    main()
