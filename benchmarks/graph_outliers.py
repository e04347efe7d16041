"""Graph outlier detection benchmark: CER-GOD vs DOMINANT, training time per epoch and peak memory.

Attributed SBMs (5 blocks, mean degree about 10, 32-d features, 8% injected outliers) at 2k, 20k and 100k
nodes, all in one run. Both models run on sparse message passing (edge lists, scatter-add) and DOMINANT's
structure error is computed exactly through the Gram matrix, so neither forms an n x n matrix.
Time per epoch is the difference between a run of 2E and one of E epochs divided by E, after one untimed
warm-up run (this removes set-up and CER-GOD's one-off k-means initialisation); each (method, size) runs in a
fresh process so its peak resident memory (ru_maxrss) minus the resident memory before training is the training
peak. CPU time per epoch (process_time) is printed beside wall time because wall time on a shared machine mostly
measures the load.
CER-GOD: hid 32, MMD on 256 sampled nodes per cluster, all losses active (warm-up 1 epoch);
DOMINANT: PyGOD defaults (hid 64). Ratios are CER-GOD / DOMINANT, measured in this run.

    .venv/bin/python benchmarks/graph_outliers.py [--sizes 2000 20000 100000] [--epochs E] [--threads 1]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import time


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _graph(n: int, seed: int = 0):
    from components.graph.inject import inject
    from components.graph.sources import attributed_sbm

    block = n / 5
    g = attributed_sbm(n, 5, 8.0 / block, 2.0 / (n - block), 32, seed=seed)
    return inject(g, contextual_rate=0.03, structural_rate=0.03, trap_rate=0.02, clique_size=15, seed=1)


def _fit(method: str, g, p, epochs: int) -> tuple[float, float]:
    from components.graph.cergod import CerGodConfig, fit_cergod
    from components.graph.recon import TrainConfig, fit_dominant

    t0, c0 = time.perf_counter(), time.process_time()
    if method == "cer-god":
        fit_cergod(g, p, CerGodConfig(epochs=epochs + 1, warmup=1), seed=0)
    else:
        fit_dominant(p, TrainConfig(epochs=epochs), seed=0)
    return time.perf_counter() - t0, time.process_time() - c0


def worker(method: str, n: int, epochs: int, threads: int, queue) -> None:
    import torch

    from components.graph.recon import prepare

    torch.set_num_threads(threads)
    g = _graph(n)
    p = prepare(g, dense_max_nodes=0)
    before = _rss_mb()
    _fit(method, g, p, 1)  # untimed: first-call costs (lazy imports, allocator warm-up)
    t1 = _fit(method, g, p, epochs)
    t2 = _fit(method, g, p, 2 * epochs)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(
        {
            "method": method,
            "n": n,
            "edges": int(g.edge_index.shape[1] // 2),
            "s_per_epoch": (t2[0] - t1[0]) / epochs,
            "cpu_s_per_epoch": (t2[1] - t1[1]) / epochs,
            "peak_mb": peak - before,
        }
    )


def measure(method: str, n: int, epochs: int, threads: int) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=worker, args=(method, n, epochs, threads, queue))
    proc.start()
    while True:  # a child that dies (e.g. killed for memory) must not hang the run
        try:
            out = queue.get(timeout=5)
            break
        except Exception:  # queue.Empty
            if not proc.is_alive():
                return {
                    "method": method,
                    "n": n,
                    "edges": -1,
                    "s_per_epoch": float("nan"),
                    "cpu_s_per_epoch": float("nan"),
                    "peak_mb": float("nan"),
                    "error": f"exit {proc.exitcode}",
                }
    proc.join()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000, 100000])
    ap.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="E: time per epoch from runs of E and 2E epochs (default: max(2, 20000 // nodes))",
    )
    ap.add_argument("--threads", type=int, default=1, help="torch threads per measured process")
    args = ap.parse_args()
    print(f"{'nodes':>8} {'edges':>8} {'method':>9} {'wall s/ep':>10} {'cpu s/ep':>9} {'peak MB':>9}")
    for n in args.sizes:
        epochs = args.epochs or max(2, 20000 // n)
        res = {m: measure(m, n, epochs, args.threads) for m in ("dominant", "cer-god")}
        for m, r in res.items():
            print(
                f"{n:>8} {r['edges']:>8} {m:>9} {r['s_per_epoch']:>10.3f} {r['cpu_s_per_epoch']:>9.3f} "
                f"{r['peak_mb']:>9.1f}",
                flush=True,
            )
        d, c = res["dominant"], res["cer-god"]
        print(
            f"{n:>8} ratio cer-god/dominant: cpu time x{c['cpu_s_per_epoch'] / d['cpu_s_per_epoch']:.2f}, "
            f"peak memory x{c['peak_mb'] / max(d['peak_mb'], 1e-9):.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
