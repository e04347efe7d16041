"""Stage ``measure``: every method over the eps grid (sigma = 0) and ODOG/SGD over the sigma grid, all seeds.

Writes ``data/optimistic-o2nc/runs/runs.jsonl`` (one row per function, method, eps, sigma, seed: counted calls,
reached, diverged) and its GX check results under ``_checks/``, and the champion, ODOG's settings, under
``champion/`` (``flows/optimistic_o2nc/champion.py``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from components.data import validate as V
from components.io import write_json, write_jsonl
from components.optim.settings import PREDICT_KEYS
from flows.optimistic_o2nc import champion
from flows.optimistic_o2nc.params import Params
from flows.optimistic_o2nc.runs import RunTask, run_one
from flows.optimistic_o2nc.spec import RUNS
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext
from flows.runtime.tracking import Tensor

log = logging.getLogger("paperline")


def tasks(p) -> list[RunTask]:
    g = p.grid
    fparams = p.functions.model_dump()
    mparams = {m: (p.methods[m].model_dump() if m in p.methods else {}) for m in {*g.methods, *g.sigma_methods}}
    out = []
    for f in g.functions:
        for seed in g.seeds:
            noise_seed = p.seed * 1_000_003 + seed
            base = dict(
                function=f,
                seed=seed,
                fparams=fparams,
                shared_noise=g.shared_noise,
                noise_seed=noise_seed,
                noise=g.noise,
            )
            for m in g.methods:
                for e in g.eps:
                    out.append(
                        RunTask(
                            **base,
                            grid="det",
                            method=m,
                            eps_rel=e,
                            sigma_rel=0.0,
                            budget=g.budget_for(e),
                            mparams=mparams[m],
                        )
                    )
            for m in g.sigma_methods:
                for s in g.sigmas:
                    out.append(
                        RunTask(
                            **base,
                            grid="stoch",
                            method=m,
                            eps_rel=g.sigma_eps,
                            sigma_rel=s,
                            budget=g.stoch_budget,
                            mparams=mparams[m],
                        )
                    )
    return out


@dataclass(frozen=True)
class RunChunk:
    """One grid job: a chunk of cheap runs (a Prefect task each would cost more than the run)."""

    runs: tuple[RunTask, ...]


def run_chunk(chunk: RunChunk) -> list[dict]:
    """The rows of a chunk's runs, in order (module level: process runners pickle it)."""
    return [run_one(t) for t in chunk.runs]


SUITE = [
    V.columns_present(["id", "function", "method", "calls", "reached", "diverged"]),
    V.unique("id"),
    V.not_null("calls"),
    V.between("calls", min_value=0),
    V.in_set("reached", [True, False]),
    V.in_set("diverged", [True, False]),
    V.in_set("grid", ["det", "stoch"]),
    V.between("eps_rel", min_value=0, max_value=None),
    V.finite("eps_rel"),
    V.finite("sigma_rel"),
    V.finite("g0"),
    V.between("calls_per_iteration", min_value=1),
]


def check_rows(rows: list[dict], result_path=None) -> None:
    """GX suite plus the row-level rules GX cannot express on one column."""
    import pandas as pd

    df = pd.DataFrame(rows)
    df["calls_is_int"] = [isinstance(r["calls"], int) and not isinstance(r["calls"], bool) for r in rows]
    df["reached_and_diverged"] = [r["reached"] is True and r["diverged"] is True for r in rows]
    suite = [*SUITE, V.in_set("calls_is_int", [True]), V.in_set("reached_and_diverged", [False])]
    V.validate(df, suite, name="optimistic-o2nc/runs", result_path=result_path)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    todo = tasks(p)
    workers = p.resources.workers
    log.info("optimistic-o2nc: %d runs on %d worker(s)", len(todo), workers)
    chunk = max(8, len(todo) // (4 * workers))
    jobs = [RunChunk(tuple(todo[i : i + chunk])) for i in range(0, len(todo), chunk)]
    rows = [r for rs in run_grid(ctx, run_chunk, jobs, desc="optimistic-o2nc runs", workers=workers) for r in rs]
    out = ctx.output_dir(RUNS)
    check_rows(rows, result_path=out / "_checks" / "runs.json")
    write_jsonl(out / "runs.jsonl", rows)
    summary = {
        "runs": len(rows),
        "reached": sum(r["reached"] for r in rows),
        "diverged": sum(r["diverged"] for r in rows),
        "seconds": round(sum(r["seconds"] for r in rows), 2),
    }
    write_json(out / "summary.json", summary)
    folder = champion.save(p, out / "champion")
    return {**summary, "champion": champion.candidate(p, _log_champion(ctx, folder), champion.METHOD, folder)}


def _log_champion(ctx: StageContext, folder) -> str | None:
    """The champion's MLflow child run with its settings folder as the model (the allow-listed JSON loader):
    any float64 rows in, (eta, radius, episode) per row out."""
    return ctx.log_model(
        f"settings-{champion.METHOD}",
        {"method": champion.METHOD},
        folder,
        loader="components.optim.settings:load_settings",
        inputs=Tensor("rows", "float64", (-1, -1)),
        outputs=Tensor("eta_radius_episode", "float64", (-1, len(PREDICT_KEYS))),
    )
