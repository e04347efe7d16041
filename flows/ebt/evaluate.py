"""Stage ``evaluate``: every trained model on every evaluation set, one row per (width, seed, set, window).

EBT: the NLL of softmax(y_i) after each inference step i = 0..max(think_steps) of one trajectory, and the NLL
of best-of-N minimum-energy selection (N candidates optimised for M_train steps) for every N in ``best_of``.
Transformer++: the NLL of the equal-steps and equal-FLOPs models on the same windows. (width, seed) jobs run on
the kit's grid stage (``flows.runtime.grid.run_grid``: a killed stage resumes from the jobs that finished).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from components.data import validate as V
from components.inputs import load_npy
from components.io import read_jsonl, write_jsonl
from components.training.threads import set_threads
from flows.ebt.common import model_name, set_names
from flows.ebt.params import Params
from flows.ebt.spec import DATA, EVAL, MODELS
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext


@dataclass(frozen=True)
class EvalJob:
    """One (width, seed) of the grid: where the data and models are, the sets, and the evaluation's settings."""

    data: str
    models: str
    sets: list[str]
    eval: dict
    m_train: int
    init_scale: float
    threads: int
    tpp_kinds: list[str]
    width: int
    seed: int


def evaluate_job(job: EvalJob) -> list[dict]:
    """Rows of one (width, seed): all sets, all windows (module level: process runners pickle it)."""
    import torch

    from components.ebt.energy_model import load_model as load_ebt
    from components.ebt.inference import best_of_n, lm_window_nll, think_curve
    from components.models.tiny_lm import load_model as load_tpp

    set_threads(job.threads)
    width, seed, e = job.width, job.seed, job.eval
    models = Path(job.models)
    ebt = load_ebt(models / model_name("ebt", width, seed))
    tpps = {k: load_tpp(models / model_name(k, width, seed)) for k in job.tpp_kinds}
    rows = []
    for si, name in enumerate(job.sets):
        win = torch.from_numpy(load_npy(Path(job.data) / "sets" / f"{name}.npy"))
        eval_seed = seed * 100 + si  # the initial logits differ per set and seed, fixed across reruns
        nll, energy = think_curve(
            ebt,
            win,
            max_steps=max(e["think_steps"]),
            seed=eval_seed,
            batch_size=e["batch_size"],
            init_scale=job.init_scale,
        )
        bon = best_of_n(
            ebt,
            win,
            ns=e["best_of"],
            steps=job.m_train,
            seed=eval_seed + 50,
            noise_std=e["best_of_noise"],
            batch_size=e["batch_size"],
            init_scale=job.init_scale,
        )
        lm = {k: lm_window_nll(m, win, e["batch_size"]) for k, m in tpps.items()}
        for w in range(len(win)):
            row = {"width": width, "seed": seed, "set": name, "window": w}
            row.update({f"ebt_m{i}": float(nll[w, i]) for i in range(nll.shape[1])})
            row.update({f"energy_m{i}": float(energy[w, i]) for i in range(energy.shape[1])})
            row.update({f"bon_{n}": float(v[w]) for n, v in bon.items()})
            row.update({k: float(v[w]) for k, v in lm.items()})
            rows.append(row)
    return rows


def eval_suite(cols: list[str], sets: list[str]) -> list:
    """The per-window NLL table's checks: every value finite and >= 0; each column's mean (ebt_m0, the untrained
    start, aside) below log(1e6) nats, since a mean perplexity above a million is a broken model. The bound is on
    the mean, not on every window: extra thinking steps can overshoot on one window (14.4 nats on 1 of 7,488 in a
    default run) without the model being broken."""
    hi = math.log(1e6)
    return [
        V.columns_present(["width", "seed", "set", "window", *cols]),
        V.in_set("set", sets),
        *[V.finite(c) for c in cols],
        *[V.between(c, 0.0, None) for c in cols],
        *[V.mean_between(c, None, hi) for c in cols if c != "ebt_m0"],
    ]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    kinds = ["tpp", *(["tppflops"] if p.training.equal_flops else [])]
    base = {
        "data": str(ctx.input(DATA)),
        "models": str(ctx.input(MODELS)),
        "sets": set_names(p),
        "eval": p.eval.model_dump(),
        "m_train": p.energy.mcmc_steps,
        "init_scale": p.energy.init_scale,
        "threads": p.resources.threads,
        "tpp_kinds": kinds,
    }
    jobs = [EvalJob(**base, width=w, seed=s) for w in p.model.widths for s in p.training.seeds]
    results = run_grid(ctx, evaluate_job, jobs, desc="ebt evaluate", workers=p.resources.workers, progress=p.progress)
    rows = [r for job_rows in results for r in job_rows]
    models = {r["name"] for r in read_jsonl(ctx.input(f"{MODELS}/models.jsonl"))}
    missing = [model_name("ebt", j.width, j.seed) for j in jobs if model_name("ebt", j.width, j.seed) not in models]
    cols = [f"ebt_m{i}" for i in range(max(p.eval.think_steps) + 1)] + [f"bon_{n}" for n in p.eval.best_of] + kinds
    suite = eval_suite(cols, set_names(p))
    out = ctx.output(EVAL)
    V.validate(rows, suite, name="ebt/eval", result_path=Path(out) / "_checks" / "eval.json")
    write_jsonl(Path(out) / "windows.jsonl", rows)
    return {"rows": len(rows), "missing_models": missing}
