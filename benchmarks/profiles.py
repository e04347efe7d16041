"""What each paper's profiles cost: wall and CPU time per paper and stage, with the machine's load.

Runs ``paperline run <paper> --profile <profile>`` for each chosen paper and profile, one
at a time, each in a fresh scratch copy of this checkout (so your own data/ and reports/
are untouched and every stage really runs), and prints per paper and stage the wall time
and the CPU time (user + system of the whole process tree, which a shared machine
distorts less than wall time), with the 1-minute load average before and after. The
results go to a JSON file (``--out``) so two commits can be compared
(``--compare OLD.json`` prints the ratios new / old per paper).

    .venv/bin/python benchmarks/profiles.py                      # every paper, smoke then default
    .venv/bin/python benchmarks/profiles.py --papers ofmu icql --profiles smoke
    .venv/bin/python benchmarks/profiles.py --profiles smoke --compare before.json

The figures are only comparable on an otherwise idle machine: the load columns say how
idle it was. Hosts differ from day to day too, so the host's speed (``benchmarks/hostspeed.py``: three
fixed single-thread workloads against a reference host) is measured before the runs and stored with them;
the table's ``ref cpu s`` column is ``cpu s / factor``, an estimate of the CPU time on the reference host.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from benchmarks import hostspeed  # noqa: E402
from flows.registry import SHARED, papers  # noqa: E402
from flows.runtime import publish  # noqa: E402
from flows.runtime.gitinfo import git_state  # noqa: E402
from flows.runtime.settings import Paths  # noqa: E402
from flows.runtime.workspace import copy_project  # noqa: E402

BIN = Path(sys.executable).parent


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_profile(slug: str, profile: str, workdir: Path, timeout: int) -> dict:
    """One ``paperline run`` in a fresh copy: totals, per-stage wall/CPU from the stage markers, and the load."""
    commit = git_state(ROOT)["git_commit"]  # what is copied (the checkout may move on while a run goes)
    root = copy_project(ROOT, workdir / f"{slug}-{profile}")
    env = {**os.environ, "PYTHONPATH": str(root), "TQDM_DISABLE": "1", "PAPERLINE_ROOT": str(root)}
    load_start = os.getloadavg()[0]
    cpu0, t0 = _children_cpu(), time.perf_counter()
    try:
        proc = subprocess.run(
            [str(BIN / "paperline"), "run", slug, "--profile", profile],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        rc, tail = proc.returncode, (proc.stderr or proc.stdout).strip().splitlines()[-1:]
    except subprocess.TimeoutExpired:
        rc, tail = None, [f"timed out after {timeout} s"]
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    paths = Paths(root)
    owners = [SHARED, slug]
    stages = {}
    for owner in owners:
        for st in papers()[owner].stages if owner in papers() else ():
            record = publish.read_marker(paths, owner, st.name)
            if record and record.get("run_seconds") is not None:
                stages[f"{owner}:{st.name}"] = {"wall_s": record["run_seconds"], "cpu_s": record.get("cpu_seconds")}
    claims = root / "reports" / slug / "claims.json"
    verdicts = (
        {str(c["id"]): c["verdict"] for c in json.loads(claims.read_text()).get("claims", [])}
        if rc == 0 and claims.is_file()
        else {}
    )
    return {
        "paper": slug,
        "profile": profile,
        "commit": commit,
        "rc": rc,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "load_start": round(load_start, 2),
        "load_end": round(os.getloadavg()[0], 2),
        "stages": stages,
        "verdicts": verdicts,
        "last_line": tail[0] if tail else "",
    }


def verdict_changes(results: list[dict], root: Path = ROOT) -> list[str]:
    """Each default-profile run's verdicts against the recorded ones (``docs/verdicts/<paper>.json``): one line
    per paper, saying which claims moved (a speed change must not move a verdict unexplained)."""
    lines = []
    for r in results:
        record = root / "docs" / "verdicts" / f"{r['paper']}.json"
        if r["profile"] != "default" or not r.get("verdicts") or not record.is_file():
            continue
        doc = json.loads(record.read_text())
        before = {str(c["id"]): c["verdict"] for c in doc.get("claims", [])}
        moved = [f"{k}: {before.get(k, '-')} -> {v}" for k, v in sorted(r["verdicts"].items()) if before.get(k) != v]
        commit = str(doc.get("provenance", {}).get("git_commit", "?"))[:7]
        lines.append(f"{r['paper']}: " + ("; ".join(moved) if moved else f"every verdict as recorded ({commit})"))
    return lines


def _fmt(x) -> str:
    return "-" if x is None else f"{x:,.1f}"


def reference_cpu(cpu_s: float | None, host_factor: float | None) -> float | None:
    """``cpu_s`` scaled to the reference host of :mod:`benchmarks.hostspeed` (None without both figures)."""
    return None if cpu_s is None or not host_factor else cpu_s / host_factor


def print_table(results: list[dict], host_factor: float | None = None) -> None:
    print(
        f"{'paper':<18} {'profile':<8} {'wall s':>8} {'cpu s':>8} {'ref cpu s':>9} {'load':>11}  rc  "
        "stages (wall/cpu s)"
    )
    for r in results:
        stages = ", ".join(
            f"{k.split(':', 1)[1]} {_fmt(v['wall_s'])}/{_fmt(v['cpu_s'])}"
            for k, v in r["stages"].items()
            if not k.startswith(SHARED)
        )
        print(
            f"{r['paper']:<18} {r['profile']:<8} {_fmt(r['wall_s']):>8} {_fmt(r['cpu_s']):>8} "
            f"{_fmt(reference_cpu(r['cpu_s'], host_factor)):>9} "
            f"{r['load_start']:>5.2f}-{r['load_end']:<5.2f} {r['rc']!s:>3}  {stages}"
        )


def print_comparison(results: list[dict], old: dict, host_factor: float | None = None) -> None:
    """new / old per paper; with both files' host factors also the CPU ratio at reference-host speed."""
    before = {(r["paper"], r["profile"]): r for r in old.get("results", [])}
    old_factor = (old.get("host") or {}).get("factor")
    print(f"\nagainst {old.get('commit', '?')[:10]} ({old.get('date', '?')}): new / old")
    for r in results:
        o = before.get((r["paper"], r["profile"]))
        if o and o["wall_s"] and o["cpu_s"]:
            scaled = (
                f"  cpu at reference speed {(r['cpu_s'] / host_factor) / (o['cpu_s'] / old_factor):.2f}x"
                if host_factor and old_factor
                else ""
            )
            print(
                f"{r['paper']:<18} {r['profile']:<8} wall {r['wall_s'] / o['wall_s']:.2f}x  "
                f"cpu {r['cpu_s'] / o['cpu_s']:.2f}x{scaled}"
            )


def main(argv: list[str] | None = None) -> int:
    implemented = [s for s, p in papers().items() if p.implemented and s != SHARED]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", nargs="+", default=implemented, choices=implemented, metavar="PAPER")
    parser.add_argument("--profiles", nargs="+", default=["smoke", "default"], choices=["smoke", "default", "full"])
    parser.add_argument("--out", type=Path, default=ROOT / ".paperline" / "benchmarks" / "profiles.json")
    parser.add_argument("--compare", type=Path, help="an earlier --out file to compare with")
    parser.add_argument("--timeout", type=int, default=3 * 3600, help="seconds per run before it is stopped")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="make the scratch copies under DIR (new or empty) and keep them: their claims, "
        "reports and models stay for a look after the run",
    )
    args = parser.parse_args(argv)
    results, commit = [], git_state(ROOT)["git_commit"]
    host = hostspeed.measure()
    print(f"host speed: {host} (factor > 1: slower than the reference host)", file=sys.stderr, flush=True)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    scratch = nullcontext(str(args.keep)) if args.keep else tempfile.TemporaryDirectory(prefix="paperline-profiles-")
    with scratch as tmp:
        for profile in args.profiles:
            for slug in args.papers:
                print(f"running {slug} --profile {profile} ...", file=sys.stderr, flush=True)
                results.append(run_profile(slug, profile, Path(tmp), args.timeout))
    doc = {
        "commit": commit,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "host": host,
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = args.out.with_name(args.out.name + ".tmp")
    tmp_out.write_text(json.dumps(doc, indent=2))
    tmp_out.replace(args.out)
    print_table(results, host["factor"])
    for line in verdict_changes(results):
        print(line)
    if args.compare:
        print_comparison(results, json.loads(args.compare.read_text()), host["factor"])
    print(f"\nwrote {args.out}")
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
