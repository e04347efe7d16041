"""Stage ``fit``: every detector on every injected graph over its seeds (a process pool), scores saved per run.

Writes ``data/cer-god/runs/``: ``runs.jsonl`` (one row per graph, method, seed: seconds, CER-GOD's minority
share, collapse flag, final losses, mean edge weight per edge type), ``scores.npz`` (scores and labels per
run) and ``edge_weights.npz`` (CER-GOD's learned weights, first seed, per graph). GX checks runs.jsonl. The champion,
CER-GOD on the first graph with the first seed, is also saved (``champion/``: config.json + model.safetensors) and
logged as the MLflow model of its own child run (``flows/cer_god/champion.py``).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np

from components.data import validate as V
from components.graph.cergod import CerGodConfig, export_detector, save_detector
from components.graph.detectors import CERGOD_VARIANTS, METHODS, edge_weight_summary, run_detector
from components.graph.graph import Graph
from components.graph.recon import TrainConfig, prepare
from components.io import write_json, write_jsonl
from components.training.threads import set_threads
from flows.cer_god import champion
from flows.cer_god.params import Params
from flows.cer_god.spec import GRAPHS, RUNS
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext
from flows.runtime.tracking import Tensor

log = logging.getLogger("paperline")
_CACHE: dict = {}


def seeds_for(p, method: str) -> list[int]:
    """CER-GOD and its no-diversity ablation run on the collapse seeds too (claim 3)."""
    if method in ("cer-god", "cer-god-nodiv"):
        return sorted(set(p.run.seeds) | set(p.run.collapse_seeds))
    return list(p.run.seeds)


@dataclass(frozen=True)
class FitJob:
    """One grid job: a (graph, method, seed) fit and its settings (the job's values are part of its cache key)."""

    graph: str
    path: str
    method: str
    seed: int
    run_seed: int
    first_seed: int
    cergod: dict  # CerGodConfig's fields
    baselines: dict[str, dict]  # method -> TrainConfig's fields
    threads: int
    dense_max_nodes: int
    champion: bool = False


@dataclass
class FitResult:
    """What one fit returns: its ``runs.jsonl`` row and its arrays (scores, labels, edge weights, champion)."""

    row: dict
    arrays: dict


def run_one(job: FitJob) -> FitResult:
    """One (graph, method, seed) fit; picklable for the process pool."""

    set_threads(job.threads)
    key = (job.path, job.dense_max_nodes)
    if key not in _CACHE:
        g = Graph.load(job.path)
        _CACHE.clear()
        _CACHE[key] = (g, prepare(g, job.dense_max_nodes))
    g, prep = _CACHE[key]
    baselines = {k: TrainConfig(**v) for k, v in job.baselines.items()}
    res = run_detector(job.method, g, prep, cergod=CerGodConfig(**job.cergod), baselines=baselines, seed=job.run_seed)
    row = {
        "id": f"{job.graph}/{job.method}/{job.seed}",
        "graph": job.graph,
        "method": job.method,
        "seed": job.seed,
        "seconds": float(res["seconds"]),
        "has_labels": "labels" in res,
    }
    if "minority_share" in res:
        row.update(
            minority_share=res["minority_share"],
            collapsed=bool(res["collapsed"]),
            final_losses=res["final_losses"],
            edge_weights=edge_weight_summary(g, res["edge_pairs"], res["edge_weights"]),
        )
    arrays = {"scores": res["scores"]}
    if "labels" in res:
        arrays["labels"] = res["labels"]
    if job.method == "cer-god" and job.seed == job.first_seed:
        arrays["edge_weights"], arrays["edge_pairs"] = res["edge_weights"], res["edge_pairs"]
    if job.champion:  # plain arrays + JSON back to the parent (no module crosses the pool)
        arrays["champion"] = export_detector(
            res["model"], res["config"], g, job.run_seed, method=job.method, pipeline_seed=job.seed
        )
    return FitResult(row, arrays)


def tasks(ctx: StageContext[Params]) -> list[FitJob]:
    p = ctx.params
    cergod = dataclasses.asdict(p.cergod.config(p.progress))
    baselines = {k: dataclasses.asdict(v.config(p.progress)) for k, v in p.baselines.items()}
    first = champion.choose(p)
    out = []
    for g in p.graphs:
        path = str(ctx.input(f"{GRAPHS}/{g.name}.npz"))
        for m in p.run.methods:
            for s in seeds_for(p, m):
                out.append(
                    FitJob(
                        graph=g.name,
                        path=path,
                        method=m,
                        seed=s,
                        run_seed=p.seed * 100_003 + s,
                        first_seed=min(p.run.seeds),
                        cergod=cergod,
                        baselines=baselines,
                        threads=p.resources.threads,
                        dense_max_nodes=p.run.dense_max_nodes,
                        champion=m == champion.METHOD and (g.name, s) == first,
                    )
                )
    return out


def check_rows(rows: list[dict], result_path, graphs: list[str] | None = None) -> None:
    """GX on the fit rows: unique ids, known methods, finite non-negative times and, given the run's ``graphs``,
    every row on one of them (referential integrity)."""
    import pandas as pd

    df = pd.DataFrame([{k: v for k, v in r.items() if k in ("id", "graph", "method", "seed", "seconds")} for r in rows])
    refs = [V.references("graph", graphs, "the run's graphs")] if graphs else []
    V.validate(
        df,
        [
            V.unique("id"),
            V.in_set("method", list(METHODS)),
            V.finite("seconds"),
            V.between("seconds", min_value=0),
            V.between("seed", min_value=0),
            *refs,
        ],
        name="cer-god/runs",
        result_path=result_path,
    )


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    todo = tasks(ctx)
    log.info("cer-god: %d fits on %d worker(s)", len(todo), p.resources.workers)
    results = run_grid(
        ctx, run_one, todo, desc="cer-god fits", workers=p.resources.workers, progress=p.progress, result=FitResult
    )
    out = ctx.output_dir(RUNS)
    rows = [r.row for r in results]
    check_rows(rows, out / "_checks" / "runs.json", [g.name for g in p.graphs])
    write_jsonl(out / "runs.jsonl", rows)
    np.savez_compressed(
        out / "scores.npz",
        **{f"{r.row['id']}/{k}": v for r in results for k, v in r.arrays.items() if k in ("scores", "labels")},
    )
    np.savez_compressed(
        out / "edge_weights.npz",
        **{f"{r.row['graph']}/{k}": v for r in results for k, v in r.arrays.items() if k.startswith("edge_")},
    )
    cg = [r for r in rows if r["method"] in CERGOD_VARIANTS]
    summary = {
        "fits": len(rows),
        "seconds": round(sum(r["seconds"] for r in rows), 1),
        "collapsed": sum(r.get("collapsed", False) for r in cg),
    }
    write_json(out / "summary.json", summary)
    chosen = next(((r.row, r.arrays["champion"]) for r in results if "champion" in r.arrays), None)
    if chosen is not None:
        row, state = chosen
        folder = save_detector(state, out / "champion")
        settings = champion.settings_for(p, row["graph"], state["config"]["seed"])
        summary["champion"] = champion.candidate(
            _log_champion(ctx, row, folder, state["config"]["in_dim"]), row["id"], folder, settings, ctx.paths.root
        )
    return summary


def _log_champion(ctx: StageContext, row: dict, folder, in_dim: int) -> str | None:
    """The champion's MLflow child run with its model (the allow-listed CER-GOD loader); its run id."""
    return ctx.log_model(
        f"champion-{row['id']}",
        {"graph": row["graph"], "method": row["method"], "seed": row["seed"]},
        folder,
        loader=champion.LOADER,
        inputs=Tensor("x", "float32", (-1, int(in_dim))),
        outputs=Tensor("score", "float64", (-1,)),
    )
