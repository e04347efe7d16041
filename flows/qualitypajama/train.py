"""Stage ``train``: the tiny-LM grid per intervention, one MLflow child run per model.

Each (intervention, N, seed) is one job of the kit's grid (``flows.runtime.grid.run_grid``): one
warmup-stable run to the largest budget with a cooldown branch at every budget (see
``components.training.lm_trainer``). Jobs are cached on the stage's fingerprint (token files, params, trainer
code) and the job, with persisted results, so a killed stage resumes without retraining finished models, and a
profile switch back reuses them.

The grid fans out through the chosen task runner (local, process pool, Dask or Ray). A job takes paths and
returns its points plus the path of the model folder it wrote in its job folder (under
``PAPERLINE_SHARED_DIR``, default ``.paperline/results``), never the weights; the stage copies the models out.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from components.data import validate as V
from components.inputs import load_npy
from components.io import read_json, write_json, write_jsonl
from flows.qualitypajama import champion
from flows.qualitypajama.params import Params
from flows.qualitypajama.spec import GRID, TOKENS
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext
from flows.runtime.tracking import LM_LOADER, NEXT_TOKEN, TOKEN_IDS


@dataclass(frozen=True)
class ModelSpec:
    """One grid job: an (intervention, size, seed) model, its token files and training settings (its cache key)."""

    intervention: str
    size: int
    seed: int
    tokens_path: str
    val_paths: dict[str, str]
    vocab_size: int
    budgets: list[int]
    training: dict  # TrainingParams' fields plus the threads


@dataclass
class TrainedModel:
    """What one job returns: the model's config and size, its points per budget and the folder it was saved in."""

    config: dict
    non_embedding_params: int
    points: list[dict]
    seconds: float
    model_dir: str
    worker: str  # which process trained it (fan-out checks)


def train_model(spec: ModelSpec, job_dir: Path) -> TrainedModel:
    """Train one model of ~``size`` non-embedding params; write it to ``job_dir/model``; return its points."""
    import torch

    from components.models.tiny_lm import TinyLM, config_for_params, save_model
    from components.training.lm_trainer import train_with_cooldowns

    size, seed, training = spec.size, spec.seed, spec.training
    torch.manual_seed(seed)
    cfg = config_for_params(size, vocab_size=spec.vocab_size, max_seq_len=training["seq_len"])
    model = TinyLM(cfg)
    result = train_with_cooldowns(
        model,
        load_npy(spec.tokens_path, mmap_mode="r"),
        budgets=spec.budgets,
        val_sets={name: load_npy(path) for name, path in spec.val_paths.items()},
        batch_size=training["batch_size"],
        seq_len=training["seq_len"],
        peak_lr=training["lr"],
        warmup_frac=training["warmup_frac"],
        cooldown_frac=training["cooldown_frac"],
        weight_decay=training["weight_decay"],
        grad_clip=training["grad_clip"],
        seed=seed,
        eval_tokens=training["eval_windows"] * (training["seq_len"] + 1),
        num_threads=training["threads"],
        progress=f"{spec.intervention} N~{size:,} seed {seed}",
    )
    save_model(result.final_model, job_dir / "model")
    return TrainedModel(
        config=dataclasses.asdict(cfg),
        non_embedding_params=result.non_embedding_params,
        points=result.points,
        seconds=result.train_seconds,
        model_dir=str(job_dir / "model"),
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )


def _rows(intervention: str, size: int, seed: int, run: TrainedModel, bpt: dict[str, float]) -> list[dict]:
    rows = []
    for pt in run.points:
        val = pt["val_loss"]
        rows.append(
            {
                "intervention": intervention,
                "size_target": size,
                "seed": seed,
                "N": run.non_embedding_params,
                "D": pt["tokens_seen"],
                "budget": pt["budget_tokens"],
                "flops": 6.0 * run.non_embedding_params * pt["tokens_seen"],
                "train_loss": pt["train_loss"],
                "loss": float(np.mean(list(val.values()))),
                **{f"loss_{k}": v for k, v in val.items()},
                **{f"bpb_{k}": v / math.log(2) / bpt[k] for k, v in val.items() if bpt.get(k)},
            }
        )
    return rows


def _log_model(
    ctx: StageContext, name: str, run: TrainedModel, rows: list[dict], model_dir: Path, params: dict
) -> str | None:
    """Log one grid model as an MLflow child run with its curves (one point per budget D) and model; returns the
    run id."""
    keys = sorted({k for row in rows for k in row if k.startswith(("loss", "bpb", "train_loss"))})
    return ctx.log_model(
        name,
        {**params, "config": run.config, "N": run.non_embedding_params},
        model_dir,
        loader=LM_LOADER,
        inputs=TOKEN_IDS,
        outputs=NEXT_TOKEN,
        curves={k: [(int(row["D"]), row[k]) for row in rows if isinstance(row.get(k), (int, float))] for k in keys},
    )


def _champion(best: tuple | None, p: Any, val_paths: dict[str, str], root: Path) -> dict | None:
    """The lowest-loss grid model, registered as ``qualitypajama@champion`` once the whole run passes."""
    if best is None:
        return None
    row, run_id, name = best
    return champion.candidate(run_id, name, row, p.training.seq_len, p.training.eval_windows, val_paths, root)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    tokens = ctx.input(TOKENS)
    stats = read_json(tokens / "stats.json")
    bpt = {r["dataset"]: r["bytes_per_token"] for r in stats["datasets"] if r["kind"] == "validation"}
    val_paths = {name: str(tokens / f"val-{name}.npy") for name in p.corpus.heldout}
    # what a model depends on (in its job, so in its cache key)
    training = {**p.training.model_dump(), "threads": p.resources.threads}
    out = Path(ctx.output(GRID))
    rows: list[dict] = []
    specs = [
        ModelSpec(
            intervention=intervention,
            size=size,
            seed=seed,
            tokens_path=str(tokens / f"{intervention}.npy"),
            val_paths=val_paths,
            vocab_size=stats["vocab_size"],
            budgets=p.grid.budgets,
            training=training,
        )
        for intervention in p.interventions
        for size in p.grid.sizes
        for seed in [*p.grid.seeds, *(p.grid.extra_seeds if size in (min(p.grid.sizes), max(p.grid.sizes)) else [])]
    ]
    done: dict[str, int] = {}
    results = run_grid(
        ctx,
        train_model,
        specs,
        desc="qualitypajama grid",
        workers=p.resources.workers,
        files=True,
        stats=done,
        result=TrainedModel,
    )
    processes: set[str] = set()
    best = None
    for spec, run_result in zip(specs, results, strict=True):
        processes.add(run_result.worker)
        name = f"{spec.intervention}-N{spec.size}-s{spec.seed}"
        model_dir = out / "models" / name
        shutil.copytree(run_result.model_dir, model_dir)
        new_rows = _rows(spec.intervention, spec.size, spec.seed, run_result, bpt)
        rows.extend(new_rows)
        run_id = _log_model(
            ctx,
            name,
            run_result,
            new_rows,
            model_dir,
            {"intervention": spec.intervention, "size": spec.size, "seed": spec.seed} | training,
        )
        final = new_rows[-1]
        if best is None or final["loss"] < best[0]["loss"]:
            best = (final, run_id, name)
    suite = [V.finite("loss"), V.between("loss", 0.0, math.log(stats["vocab_size"]) + 2.0), V.between("N", min_value=1)]
    V.validate(rows, suite, name="qualitypajama/grid", result_path=out / "_checks" / "grid.json")
    write_jsonl(out / "results.jsonl", rows)
    summary = {"models": len(rows) // max(len(p.grid.budgets), 1), "cached_models": done["cached"], "points": len(rows)}
    write_json(out / "summary.json", summary)
    # Which processes trained the grid varies run to run: reported to MLflow, kept out of the DVC output.
    return {**summary, "worker_processes": len(processes), "champion": _champion(best, p, val_paths, ctx.paths.root)}
