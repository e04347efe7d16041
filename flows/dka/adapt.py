"""Stage ``adapt``: the learning-rate sweep on the dev split, then every method x label fraction x seed.

1. Sweep: each method trains at the low fraction (label draw ``sweep_seed``, not an evaluation seed) for every
   combination of ``adapter_lrs`` x ``head_lrs`` it has (the linear probe: head rates only; full fine-tuning:
   the backbone takes the adapter rate) and is scored on the dev images (train slices, own draw). The best dev
   accuracy picks the pair used at every fraction: the same grid, so the same tuning effort, for every method.
2. Runs: a seed fixes the class-stratified label draw and the adapter/head initialisation. Each run records
   test accuracy, macro-F1, one-vs-rest AUC, per-item correctness (for the claims' paired bootstrap), the loss
   curve's plateau, trainable parameters and the ERF on ``erf_images`` test images at each threshold.

Sweep and runs are grids of the kit (``flows.runtime.grid.run_grid``: ``--runner``/``resources.workers``, each job
cached, so a killed stage resumes); a saved model is written in its job's folder and copied to ``models/``.
Writes ``data/dka/adapt/{sweep.jsonl,runs.jsonl,erf_maps.npz,models/}``; one MLflow child run per trained model.
"""

from __future__ import annotations

import itertools
import shutil
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from components.data import validate as V
from components.dka import erf as E
from components.dka.methods import AdapterConfig, build, save_adapted
from components.dka.mni import fraction_indices
from components.dka.train import fit, predict_proba, scores
from components.dka.vit import load_model
from components.inputs import load_npz
from components.io import write_jsonl
from components.training.curves import plateau
from components.training.threads import set_threads
from flows.dka import champion
from flows.dka.common import images, log, proba
from flows.dka.params import Params, seeds_of
from flows.dka.spec import ADAPT, DATA, PRETRAIN
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext


@lru_cache(maxsize=2)
def _pool(path: str) -> dict[str, np.ndarray]:
    with load_npz(path) as z:
        return {k: z[k] for k in z.files}


@lru_cache(maxsize=2)
def _backbone(path: str):
    return load_model(path)


@dataclass(frozen=True)
class AdaptJob:
    """One grid job: a (method, fraction, seed, lrs) training run of the sweep or of the runs (its cache key)."""

    pool: str
    backbone: str
    threads: int
    batch: int
    erf_images: int
    thresholds: list[float]
    adapter_cfg: dict  # AdapterConfig's fields
    kind: str  # "sweep" or "run"
    method: str
    fraction: float
    seed: int
    draw: int  # the label draw's and the initialisation's seed
    steps: int
    lr_adapter: float
    lr_head: float
    eval_split: str  # "dev" or "test"
    save: bool = False  # a run that writes its model to job_dir/model


def run_job(job: AdaptJob, job_dir: Path | None = None) -> dict:
    """Train one (method, fraction, seed, lrs) and score it (module level: process runners pickle it); a run
    with ``save`` writes its model to ``job_dir/model``."""
    set_threads(job.threads)
    pool, backbone = _pool(job.pool), _backbone(job.backbone)
    n_classes = int(pool["train_y"].max()) + 1
    idx = fraction_indices(pool["train_y"], job.fraction, job.draw)
    cfg = AdapterConfig(**job.adapter_cfg)
    t0 = time.time()
    built = build(job.method, backbone, n_classes=n_classes, seed=job.draw, cfg=cfg)
    losses = fit(
        built,
        pool["train_x"][idx],
        pool["train_y"][idx],
        steps=job.steps,
        batch=job.batch,
        lr_adapter=job.lr_adapter,
        lr_head=job.lr_head,
        seed=job.draw,
        linear_probe=job.method == "linear",
    )
    seconds = time.time() - t0
    split = job.eval_split
    x, y = pool[f"{split}_x"], pool[f"{split}_y"]
    proba = predict_proba(built.model, x)
    out = {k: getattr(job, k) for k in ("kind", "method", "fraction", "seed", "lr_adapter", "lr_head", "steps")}
    out.update(
        scores(y, proba),
        n_classes=n_classes,
        n_train=int(len(idx)),
        trainable=built.trainable(),
        seconds=seconds,
        final_loss=float(np.mean(losses[-max(1, len(losses) // 10) :])),
        plateau=plateau(losses),
        losses=[float(v) for v in losses[:: max(1, len(losses) // 50)]],
    )
    if job.kind == "run":
        out["correct"] = (proba.argmax(1) == y).astype(int).tolist()
        maps = E.erf_maps(built.model.tokens, x[: job.erf_images], tokens=True)
        out["erf"] = {str(t): E.erf_area(maps, t).tolist() for t in job.thresholds}
        out["erf_map"] = E.mean_map(maps).tolist()
        if job.save:
            save_adapted(built, job.method, n_classes, cfg, job_dir / "model")
            out["model_dir"] = str(job_dir / "model")
    return out


def _pairs(method: str, a) -> list[tuple[float, float]]:
    if method == "linear":  # one rate: as many of them as the others' (adapter, head) pairs
        return [(0.0, h) for h in a.linear_grid()]
    return list(itertools.product(a.adapter_lrs, a.head_lrs))


def _base_job(ctx, p) -> dict:
    """The fields of ``AdaptJob`` that every job of the stage shares."""
    a = p.adapt
    return {
        "pool": str(ctx.input(f"{DATA}/pool.npz")),
        "backbone": str(ctx.input(f"{PRETRAIN}/backbone")),
        "threads": p.resources.threads,
        "erf_images": a.erf_images,
        "thresholds": list(p.claims.thresholds),
        "adapter_cfg": {"mid": a.mid, "k_large": a.k_large, "k_small": a.k_small},
    }


def check_fractions(p, y: np.ndarray, result_path: Path) -> None:
    """GX: every (fraction, seed) label draw is class-balanced (counts within one of each other)."""
    rows = []
    for r in p.adapt.regimes:
        for s in sorted({*r.seeds, p.adapt.sweep_seed}):
            counts = np.bincount(y[fraction_indices(y, r.fraction, s)], minlength=int(y.max()) + 1)
            rows.append(
                {"fraction": r.fraction, "seed": s, "spread": int(counts.max() - counts.min()), "n": int(counts.sum())}
            )
    V.validate(
        pd.DataFrame(rows),
        [V.between("spread", 0, 1), V.between("n", 1, None)],
        name="dka/fractions",
        result_path=result_path,
        id_column=None,
    )


def sweep(ctx, p, base: dict) -> tuple[list[dict], dict[str, tuple[float, float]]]:
    a = p.adapt
    low = next(r for r in a.regimes if r.fraction == p.claims.low_fraction)
    jobs = [
        AdaptJob(
            **base,
            batch=low.batch or a.batch,
            kind="sweep",
            method=m,
            fraction=low.fraction,
            seed=a.sweep_seed,
            draw=a.sweep_seed,
            steps=a.sweep_steps,
            lr_adapter=la,
            lr_head=lh,
            eval_split="dev",
        )
        for m in a.methods
        for la, lh in _pairs(m, a)
    ]
    rows = run_grid(ctx, run_job, jobs, desc="dka sweep", workers=p.resources.workers, progress=p.progress)
    best = {}
    for m in a.methods:
        mine = [r for r in rows if r["method"] == m]
        top = max(mine, key=lambda r: r["acc"])  # first of equals: the order of the grid
        best[m] = (top["lr_adapter"], top["lr_head"])
    return rows, best


def _log(ctx, runs: list[dict], sweep_rows: list[dict]) -> dict[str, str]:
    """Sweep metrics on the parent run, a child run per trained model; returns ``{run name: child run id}``."""
    if ctx.tracker is None:
        return {}
    size = ctx.params.pretrain.img_size
    ids = {}
    ctx.tracker.log_metrics(
        {f"sweep/{r['method']}/{r['lr_adapter']:g}/{r['lr_head']:g}/dev_acc": r["acc"] for r in sweep_rows}
    )
    for r in runs:
        name = f"{r['method']}-f{r['fraction']:g}-s{r['seed']}"
        every = max(1, r["steps"] // 50)
        ids[name] = ctx.log_model(
            name,
            {k: r[k] for k in ("method", "fraction", "seed", "lr_adapter", "lr_head", "steps", "n_train", "trainable")},
            Path(r["model_dir"]) if r.get("model_dir") else None,
            loader=champion.LOADER,
            inputs=images(size),
            outputs=proba(4),
            metrics={k: r[k] for k in ("acc", "macro_f1", "auc", "seconds", "plateau")}
            | {f"erf_area_t{k}": float(np.mean(v)) for k, v in r["erf"].items()},
            curves={"train_loss": [(i * every, v) for i, v in enumerate(r["losses"])]},
        )
    return ids


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    a = p.adapt
    base = _base_job(ctx, p)
    pool = _pool(base["pool"])
    out = ctx.output_dir(ADAPT)
    check_fractions(p, pool["train_y"], out / "_checks" / "fractions.json")
    sweep_rows, best = sweep(ctx, p, base)
    log.info("dka sweep: chosen (adapter lr, head lr) %s", best)
    jobs = []
    for r in a.regimes:
        for m in a.methods_at(r):
            for s in seeds_of(p, r, m):
                jobs.append(
                    AdaptJob(
                        **base,
                        kind="run",
                        method=m,
                        fraction=r.fraction,
                        seed=s,
                        draw=s,
                        steps=r.steps,
                        batch=r.batch or a.batch,
                        lr_adapter=best[m][0],
                        lr_head=best[m][1],
                        eval_split="test",
                        save=s == r.seeds[0],
                    )
                )
    runs = run_grid(ctx, run_job, jobs, desc="dka runs", workers=p.resources.workers, files=True, progress=p.progress)
    for r in runs:  # publish each saved model from its job folder
        if r.get("model_dir"):
            dest = out / "models" / f"{r['method']}-f{r['fraction']:g}"
            shutil.copytree(r["model_dir"], dest)
            r["model_dir"] = str(dest)
    maps = {f"{r['method']}|{r['fraction']:g}|{r['seed']}": np.asarray(r.pop("erf_map"), np.float32) for r in runs}
    np.savez_compressed(out / "erf_maps.npz", **maps)
    V.validate(
        pd.DataFrame([{k: r[k] for k in ("acc", "macro_f1", "trainable", "final_loss")} for r in runs]),
        [V.between("acc", 0, 1), V.between("macro_f1", 0, 1), V.finite("final_loss"), V.between("trainable", 1, None)],
        name="dka/runs",
        result_path=out / "_checks" / "runs.json",
        id_column=None,
    )
    run_ids = _log(ctx, runs, sweep_rows)
    for r in runs:  # the staging folder's name is random: keep the model's name under models/
        if r.get("model_dir"):
            r["model_dir"] = f"models/{Path(r['model_dir']).name}"
    write_jsonl(out / "sweep.jsonl", sweep_rows)
    write_jsonl(out / "runs.jsonl", runs)
    summary = {"runs": len(runs), "sweep_runs": len(sweep_rows), "chosen_lrs": {m: list(v) for m, v in best.items()}}
    fraction, _, name = champion.choose(p)  # DKA at the claims' low fraction, first seed: its saved model
    folder = out / "models" / f"{champion.METHOD}-f{fraction:g}"
    summary["champion"] = champion.candidate(run_ids.get(name), name, folder, f"{DATA}/pool.npz", ctx.paths.root)
    log.info("dka adapt: %s", {(r["method"], r["fraction"]): round(r["acc"], 3) for r in runs if r["seed"] == 0})
    return summary
