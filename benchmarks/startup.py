"""Start-up of `paperline run`: a run with nothing to do, and how soon a real run reaches its first stage.

In a scratch copy of this checkout at the smoke profile (no server running, none recorded), in one run:

1. a real run as the first command of the day: it starts the shared Prefect server (``PAPERLINE_SERVER_IDLE``);
2. the same run again with ``--force``: the server is reused;
3. the baseline the shared server replaces: ``--force`` with ``PAPERLINE_SERVER_IDLE=0`` (a temporary server per
   command, as before);
4. ``paperline run`` with nothing to do (twice);
5. ``dvc repro <the paper's stages>`` with nothing to do in the same checkout: the anchor.

For each: wall time, CPU time (user + system of the command and its children), the time to the first line the
command prints and to the first stage's "running" line, and the stage work (the stage runner's own ``run_seconds``).
The load average is printed before and after: compare figures of one run only, on an idle machine.

    .venv/bin/python benchmarks/startup.py [--paper optimistic-o2nc]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from flows.registry import get_paper  # noqa: E402
from flows.runtime import prefect_server  # noqa: E402
from flows.runtime.repro import dvc_targets  # noqa: E402
from flows.runtime.settings import Paths  # noqa: E402
from flows.runtime.workspace import copy_project, set_profile  # noqa: E402

BIN = Path(sys.executable).parent


def _cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def timed(cmd: list[str], cwd: Path, env: dict, stage_mark: str | None = None) -> dict:
    """Wall and CPU seconds of ``cmd``, and seconds to its first output line and to the line holding
    ``stage_mark``."""
    t0, c0 = time.perf_counter(), _cpu()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    marks: dict[str, float] = {}
    lines: list[str] = []

    def read(stream) -> None:
        for line in stream:
            now = time.perf_counter() - t0
            lines.append(line)
            marks.setdefault("first_line", now)
            if stage_mark and stage_mark in line:
                marks.setdefault("first_stage", now)

    readers = [threading.Thread(target=read, args=(s,)) for s in (proc.stdout, proc.stderr)]
    for r in readers:
        r.start()
    proc.wait()
    for r in readers:
        r.join()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{''.join(lines)[-3000:]}")
    return {"wall": time.perf_counter() - t0, "cpu": _cpu() - c0, **marks}


def stage_work(root: Path, slug: str) -> float:
    markers = (root / ".paperline/stages" / slug).glob("*.json")
    return sum(json.loads(m.read_text()).get("run_seconds") or 0.0 for m in markers)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paper", default="optimistic-o2nc")
    args = ap.parse_args()
    slug = get_paper(args.paper).slug
    first = get_paper(slug).stages[0].name
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="paperline-startup-") as tmp:
        root = copy_project(ROOT, Path(tmp) / "proj")
        set_profile(root, "smoke")
        env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", prefect_server.IDLE_ENV)}
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        run = [str(BIN / "paperline"), "run", slug]
        mark = f"{slug}:{first} running"
        rows = []
        try:
            rows.append(("first run, starts the shared server", timed(run, root, env, mark), True))
            rows.append(("--force, server reused", timed([*run, "--force"], root, env, mark), True))
            temp_env = {**env, prefect_server.IDLE_ENV: "0"}
            rows.append(("--force, temporary server (baseline)", timed([*run, "--force"], root, temp_env, mark), True))
            for n in (1, 2):
                rows.append((f"nothing to do ({n})", timed(run, root, env), False))
            dvc = [str(BIN / "dvc"), "repro", *dvc_targets(slug)]  # this paper's stages (and what they read)
            rows.append(("dvc repro, nothing to do (anchor)", timed(dvc, root, env), False))
            work = stage_work(root, slug)
        finally:
            prefect_server.stop(Paths(root))
    anchor = rows[-1][1]["wall"]
    print(f"paperline run {slug} (smoke); load average before {load0[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    print(f"stage work of one real run (the stages' own run_seconds): {work:.1f} s")
    head = f"{'command':<40} {'wall s':>7} {'cpu s':>6} {'first line s':>12} {'first stage s':>13} {'/ dvc no-op':>11}"
    print(head)
    for name, r, real in rows:
        stage = f"{r['first_stage']:.2f}" if real and "first_stage" in r else "-"
        print(
            f"{name:<40} {r['wall']:>7.2f} {r['cpu']:>6.2f} {r.get('first_line', float('nan')):>12.2f} {stage:>13} "
            f"{r['wall'] / anchor:>10.1f}x"
        )


if __name__ == "__main__":
    main()
