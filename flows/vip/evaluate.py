"""Stage ``evaluate``: the method and the baseline estimate the centre of every sample; one row per sample.

Seeds fan out through ``flows.runtime.runners.map_items``, so ``--runner process:N``, ``dask`` or ``ray`` reach
this stage (``resources.workers`` sets the default pool).
"""

from __future__ import annotations

from functools import partial

from components.vip.method import baseline, method
from components.io import read_jsonl, write_jsonl
from flows.vip.params import Params
from flows.vip.spec import DATA, RUNS
from flows.runtime import runners
from flows.runtime.stages import StageContext


def evaluate_seed(rows: list[dict], trim: float) -> list[dict]:
    """Absolute errors of both estimators on one seed's samples (module level: process runners pickle it)."""
    return [{"seed": r["seed"], "sample": r["sample"], "method_error": abs(method(r["values"], trim) - r["centre"]),
             "baseline_error": abs(baseline(r["values"]) - r["centre"])} for r in rows]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = read_jsonl(ctx.input(f"{DATA}/samples.jsonl"))
    by_seed = [[r for r in rows if r["seed"] == s] for s in p.data.seeds]
    results = runners.map_items(partial(evaluate_seed, trim=p.method.trim), by_seed, workers=p.resources.workers,
                                desc="vip seeds", progress=p.progress)
    out = ctx.output(RUNS)
    out.mkdir(parents=True, exist_ok=True)
    flat = [row for seed_rows in results for row in seed_rows]
    write_jsonl(out / "errors.jsonl", flat)
    return {"rows": len(flat)}
