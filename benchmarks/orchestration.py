"""Orchestration overhead of one smoke pipeline: stage processes vs the work inside them.

In a scratch copy of this checkout at the smoke profile, it
1. starts one local Prefect server (as `paperline repro` does) and times it;
2. runs the pipeline once with `dvc repro` (warm-up; builds every input);
3. reruns each stage as its own process (`paperline stage ... --force`, as DVC
   would) and compares the process's wall time with the time spent inside the
   stage's components (recorded by the stage runner);
4. reruns one stage with no shared server (each process starts a temporary one:
   the baseline the shared server removes);
5. times a no-op `dvc repro`.

    .venv/bin/python benchmarks/orchestration.py [--stages curate,fit]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from flows.registry import get_paper  # noqa: E402
from flows.runtime import prefect_server  # noqa: E402
from flows.runtime.settings import Paths  # noqa: E402
from flows.runtime.workspace import copy_project, set_profile  # noqa: E402

BIN = Path(sys.executable).parent


def run(cmd: list[str], cwd: Path, env: dict) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def inside(root: Path, owner: str, stage: str) -> float:
    return json.loads((root / ".paperline/stages" / owner / f"{stage}.json").read_text())["run_seconds"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paper", default="qualitypajama")
    ap.add_argument("--stages", default="", help="comma-separated stages to time (default: all of the paper's)")
    args = ap.parse_args()
    stages = [s for s in args.stages.split(",") if s] or [s.name for s in get_paper(args.paper).stages]

    with tempfile.TemporaryDirectory(prefix="paperline-bench-") as tmp:
        root = copy_project(ROOT, Path(tmp) / "proj")
        set_profile(root, "smoke")
        env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        paths = Paths(root)
        paths.state.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        url = prefect_server.start(paths)
        server_start = time.perf_counter() - t0
        shared = {**env, "PREFECT_API_URL": url}
        try:
            warm = run([str(BIN / "dvc"), "repro"], root, shared)
            rows = []
            for stage in stages:
                wall = run([str(BIN / "paperline"), "stage", args.paper, stage, "--force"], root, shared)
                rows.append((stage, wall, inside(root, args.paper, stage)))
            noop = run([str(BIN / "dvc"), "repro"], root, shared)
        finally:
            prefect_server.stop(paths)
        base_stage = stages[0]
        ephemeral = run([str(BIN / "paperline"), "stage", args.paper, base_stage, "--force"], root, env)
        ephemeral_inside = inside(root, args.paper, base_stage)

    print(f"smoke pipeline of {args.paper}: first `dvc repro` {warm:.1f} s; Prefect server start {server_start:.1f} s")
    print(f"{'stage':<10} {'process wall s':>15} {'inside s':>9} {'overhead s':>11} {'overhead/wall':>14}")
    for stage, wall, work in rows:
        print(f"{stage:<10} {wall:>15.2f} {work:>9.2f} {wall - work:>11.2f} {(wall - work) / wall:>14.0%}")
    total_wall = sum(r[1] for r in rows)
    total_work = sum(r[2] for r in rows)
    mean_over = (total_wall - total_work) / len(rows)
    print(
        f"{'all':<10} {total_wall:>15.2f} {total_work:>9.2f} {total_wall - total_work:>11.2f} "
        f"{(total_wall - total_work) / total_wall:>14.0%}"
    )
    print(f"mean orchestration overhead per stage process (shared server): {mean_over:.2f} s")
    eph_over = ephemeral - ephemeral_inside
    shared_over = next(r[1] - r[2] for r in rows if r[0] == base_stage)
    print(
        f"baseline, no shared server ({base_stage}): wall {ephemeral:.2f} s, overhead {eph_over:.2f} s "
        f"-> the shared server cuts this stage's overhead {eph_over / max(shared_over, 1e-9):.1f}x"
    )
    print(f"no-op `dvc repro`: {noop:.2f} s")


if __name__ == "__main__":
    main()
