"""What one recurring evaluation of every champion costs, against retraining the same papers.

In a fresh scratch copy of this checkout: for each paper, ``paperline run <paper> --profile smoke`` (timed:
the baseline, what a retrain at that scale costs), then its champion candidate is promoted by hand, as a
passing default run would register it (``flows.runtime.tracking.register_champion``). Then the recurring
evaluation (``flows.recurring.flow.run``) re-evaluates all of them in one fresh process, timed (wall and
CPU, imports included: what a scheduled run pays), with each paper's own seconds from the flow's results.

    .venv/bin/python benchmarks/recurring_eval.py                     # every implemented paper
    .venv/bin/python benchmarks/recurring_eval.py --papers vip daze   # a few

The champions are smoke-scale models, so the per-paper figures are for smoke-sized evaluation data; a default
run's champion is evaluated on the default data (see each pipeline README's "Champion" section).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from flows.registry import SHARED, papers  # noqa: E402
from flows.runtime.workspace import copy_project  # noqa: E402

BIN = Path(sys.executable).parent
EVALUATE = """
import json, resource, sys, time
t0 = time.perf_counter()
from flows.recurring.flow import run
res = run(sys.argv[1], {})
u = resource.getrusage(resource.RUSAGE_SELF)
papers = {k: {"seconds": v.get("seconds"), "regressions": v["regressions"]} for k, v in res.items()}
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": u.ru_utime + u.ru_stime, "papers": papers}))
"""


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def promote(root: Path, slug: str) -> None:
    """Register the smoke run's candidate (artifact champion/<slug>.json) as ``slug@champion``."""
    from types import SimpleNamespace

    import mlflow
    from mlflow import MlflowClient

    from flows.runtime.tracking import register_champion

    client = MlflowClient()
    exp = client.get_experiment_by_name(slug)
    parents = [
        r
        for r in client.search_runs([exp.experiment_id])
        if "mlflow.parentRunId" not in r.data.tags and r.data.tags.get(f"champion.{slug}") == "not moved: smoke profile"
    ]
    if not parents:
        raise SystemExit(f"{slug}: the smoke run proposed no champion")
    with tempfile.TemporaryDirectory() as tmp:
        local = client.download_artifacts(parents[0].info.run_id, f"champion/{slug}.json", tmp)
        candidate = json.loads(Path(local).read_text())
    register_champion(SimpleNamespace(client=client, _mlflow=mlflow), slug, candidate)


def main(argv: list[str] | None = None) -> int:
    implemented = sorted(s for s, spec in papers().items() if spec.implemented and s != SHARED)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", nargs="+", default=implemented, choices=implemented, metavar="PAPER")
    ap.add_argument("--workdir", type=Path, default=None, help="scratch folder (default: a temporary one)")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="paperline-recurring-") as tmp:
        root = copy_project(ROOT, (args.workdir or Path(tmp)) / "project")
        env = {
            **os.environ,
            "PYTHONPATH": str(root),
            "TQDM_DISABLE": "1",
            "PAPERLINE_ROOT": str(root),
            "MLFLOW_TRACKING_URI": f"sqlite:///{root / '.paperline' / 'mlflow.db'}",
        }
        os.environ["MLFLOW_TRACKING_URI"] = env["MLFLOW_TRACKING_URI"]
        retrain = {}
        for slug in args.papers:
            cpu0, t0 = _children_cpu(), time.perf_counter()
            proc = subprocess.run(
                [str(BIN / "paperline"), "run", slug, "--profile", "smoke"],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
            )
            retrain[slug] = {"wall": time.perf_counter() - t0, "cpu": _children_cpu() - cpu0}
            if proc.returncode != 0:
                print(proc.stderr[-2000:], file=sys.stderr)
                raise SystemExit(f"{slug}: smoke run failed (exit {proc.returncode})")
            promote(root, slug)
            print(f"{slug}: smoke run {retrain[slug]['wall']:.1f} s, champion registered", flush=True)
        load0 = os.getloadavg()[0]
        proc = subprocess.run(
            [sys.executable, "-c", EVALUATE, str(root)], cwd=root, env=env, capture_output=True, text=True
        )
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"recurring evaluation failed (exit {proc.returncode})")
        ev = json.loads(proc.stdout.strip().splitlines()[-1])
    total = sum(r["wall"] for r in retrain.values())
    print(
        f"\nrecurring evaluation of {len(args.papers)} champions in one process: {ev['wall']:.1f} s wall, "
        f"{ev['cpu']:.1f} s CPU (load {load0:.2f} before), imports included"
    )
    print(f"baseline, rerunning the same papers' smoke pipelines: {total:.1f} s wall; ratio {ev['wall'] / total:.3f}")
    print(f"{'paper':<18}{'re-evaluate s':>14}{'smoke run s':>13}{'ratio':>8}  regressions")
    for slug in args.papers:
        s = ev["papers"][slug]
        print(
            f"{slug:<18}{s['seconds']:>14.2f}{retrain[slug]['wall']:>13.1f}{s['seconds'] / retrain[slug]['wall']:>8.3f}"
            f"  {len(s['regressions'])}"
        )
    if args.out:
        args.out.write_text(json.dumps({"evaluation": ev, "retrain": retrain, "load_before": load0}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
