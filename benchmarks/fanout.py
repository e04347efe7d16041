"""Fan-out through Prefect task runners: the same 8-run grid on the local runner and on Dask with 2 workers.

Each grid run is a CPU-bound task of ``--work`` seconds (``flows.runtime.runners._probe``
with ``busy=True``, so the figure does not depend on a model's size). For each runner it
prints the grid's wall time and the per-task overhead (wall time of ``--overhead-tasks``
no-op tasks divided by their number), and the Dask/local ratios. The Dask cluster's
start-up is timed separately (a real cluster is started once and kept).

    .venv/bin/python benchmarks/fanout.py [--runs 8] [--work 2.0] [--workers 2]
    .venv/bin/python benchmarks/fanout.py --address tcp://127.0.0.1:8786   # an existing cluster
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from flows.runtime import prefect_server, runners  # noqa: E402
from flows.runtime.settings import Paths, apply_env_defaults  # noqa: E402


def timed_grid(spec: runners.RunnerSpec, calls: list[dict]) -> tuple[float, set[str]]:
    """Wall time of one flow run fanning ``calls`` out on ``spec``, and the processes that ran them."""
    from prefect import flow

    @flow(name="fanout-benchmark", persist_result=False)
    def grid() -> list[str]:
        return [state.result() for _, state in runners.fan_out(runners.probe_task(), calls, spec)]

    t0 = time.perf_counter()
    out = grid()
    return time.perf_counter() - t0, set(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8, help="grid size")
    parser.add_argument("--work", type=float, default=2.0, help="CPU seconds per grid run")
    parser.add_argument("--workers", type=int, default=2, help="Dask worker processes (local cluster)")
    parser.add_argument("--overhead-tasks", type=int, default=16, help="no-op tasks for the per-task overhead")
    parser.add_argument("--address", help="use this Dask scheduler instead of a local cluster")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="fanout-bench-"))
    (home / "params.yaml").write_text("profile: smoke\n")
    (home / "dvc.yaml").write_text("stages: {}\n")
    apply_env_defaults(home)
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "ERROR")
    server = None
    if not os.environ.get("PREFECT_API_URL"):
        t0 = time.perf_counter()
        server = Paths(home)
        os.environ["PREFECT_API_URL"] = prefect_server.start(server)
        print(f"prefect server start: {time.perf_counter() - t0:.1f} s")
    cluster = None
    try:
        address = args.address
        if not address:
            from distributed import LocalCluster

            t0 = time.perf_counter()
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
            address = cluster.scheduler_address
            print(f"dask local cluster start ({args.workers} processes): {time.perf_counter() - t0:.1f} s")
        grid = [{"seconds": args.work, "tag": i, "busy": True} for i in range(args.runs)]
        noop = [{"seconds": 0.0, "tag": i} for i in range(args.overhead_tasks)]
        rows = {}
        for name, spec in (("local", runners.parse("local")), ("dask", runners.parse(address))):
            timed_grid(spec, noop[:2])  # warm-up: imports, connections
            wall, procs = timed_grid(spec, grid)
            over, _ = timed_grid(spec, noop)
            rows[name] = (wall, over / len(noop), len(procs))
            print(
                f"{name:>5}: grid of {args.runs} x {args.work:.1f} s work: {wall:6.2f} s wall "
                f"in {len(procs)} process(es); "
                f"per-task overhead {1000 * over / len(noop):7.1f} ms"
            )
        ideal = args.runs * args.work
        print(f"serial work: {ideal:.1f} s")
        print(
            f"dask / local wall time: {rows['dask'][0] / rows['local'][0]:.2f}x "
            f"(speed-up {rows['local'][0] / rows['dask'][0]:.2f}x with {rows['dask'][2]} worker processes)"
        )
        print(f"dask / local per-task overhead: {rows['dask'][1] / max(rows['local'][1], 1e-9):.1f}x")
    finally:
        if cluster is not None:
            cluster.close()
        if server is not None:
            prefect_server.stop(server)


if __name__ == "__main__":
    main()
