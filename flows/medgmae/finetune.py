"""Stage ``finetune``: segmentation (GM / WM / other) with a light UNETR-style decoder (MONAI blocks) on the 3-D
ViT encoder, from MedGMAE, voxel-MAE or a fresh initialisation, at every label fraction and seed.

Tuning effort is the same for every init: each tries every learning rate of ``finetune.lrs`` at the low fraction
on the dev crops (``sweep_steps`` steps, label draw ``sweep_seed``), and keeps the best mean Dice on dev for all
its runs. Each run (init, fraction, seed): label draw and decoder initialisation from the seed, end-to-end
fine-tuning, MONAI ``DiceMetric`` per test crop (foreground classes). Fine-tuning seed i starts from the
pretraining run ``pretrain.seeds[i mod n]``. Runs fan out through the kit's grid (cached, resumable).

Writes ``data/medgmae/finetune/runs.jsonl`` (per-crop Dice), ``sweep.jsonl`` and the champion's model folder.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from components.inputs import load_npz
from components.io import write_jsonl
from components.medgmae import segment as S
from components.medgmae.model import Encoder3D, ModelConfig, load_model
from components.medgmae.volumes import fraction_count
from components.training.threads import set_threads
from flows.medgmae import champion
from flows.medgmae.common import log, model_config, volumes, voxels_out
from flows.medgmae.params import Params
from flows.medgmae.pretrain import run_name
from flows.medgmae.spec import DATA, FINETUNE, PRETRAIN
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext

LOADER = "components.medgmae.segment:load_segmenter"


@lru_cache(maxsize=2)
def _pool(path: str) -> dict[str, np.ndarray]:
    with load_npz(path) as z:
        return {k: z[k] for k in z.files if not k.startswith("phantom")}


@dataclass(frozen=True)
class FineTuneJob:
    """One run of the sweep or of the grid (its fields are its cache key)."""

    pool: str
    encoder: str | None  # pretrained model folder (None: scratch)
    model: dict  # ModelConfig fields
    threads: int
    kind: str  # "sweep" | "run"
    init: str
    fraction: float
    seed: int
    draw: int
    steps: int
    batch: int
    lr: float
    feature_size: int
    eval_split: str
    save: bool = False


def draw_indices(n_pool: int, fraction: float, draw: int) -> np.ndarray:
    """The labelled subset of the training pool at ``fraction`` for label draw ``draw`` (nested: a larger fraction
    of the same draw holds the smaller one's crops)."""
    order = np.random.default_rng(draw).permutation(n_pool)
    return np.sort(order[: fraction_count(n_pool, fraction)])


def run_job(job: FineTuneJob, job_dir: Path | None = None) -> dict:
    set_threads(job.threads)
    pool = _pool(job.pool)
    n_classes = int(max(pool["train_y"].max(), pool["test_y"].max())) + 1
    cfg = ModelConfig(**job.model)
    if job.encoder:
        encoder = load_model(job.encoder).encoder
    else:  # scratch: a fresh encoder from the seed
        torch.manual_seed(10_000 + job.draw)
        encoder = Encoder3D(cfg)
    torch.manual_seed(job.draw)  # the same decoder initialisation for every init at this seed
    model = S.SegUNETR(cfg, n_classes, job.feature_size, encoder=encoder)
    idx = draw_indices(len(pool["train_x"]), job.fraction, job.draw)
    x, y = torch.as_tensor(pool["train_x"][idx]), torch.as_tensor(pool["train_y"][idx].astype(np.int64))
    t0, c0 = time.time(), time.process_time()
    losses = S.fine_tune(model, x, y, steps=job.steps, batch=job.batch, lr=job.lr, seed=job.draw)
    xs, ys = pool[f"{job.eval_split}_x"], pool[f"{job.eval_split}_y"].astype(np.int64)
    pred = S.predict(model, torch.as_tensor(xs))
    per_class = S.dice_per_volume(pred, torch.as_tensor(ys), n_classes)
    dice = S.mean_foreground_dice(per_class)
    out = {k: getattr(job, k) for k in ("kind", "init", "fraction", "seed", "lr", "steps")}
    out.update(
        n_train=int(len(idx)),
        dice=[float(v) for v in dice],
        mean_dice=float(dice.mean()),
        dice_per_class=np.nanmean(per_class, 0).tolist(),
        seconds=time.time() - t0,
        cpu_seconds=time.process_time() - c0,
        final_loss=float(np.mean(losses[-max(1, len(losses) // 10) :])),
        first_loss=float(np.mean(losses[: max(1, len(losses) // 10)])),
        losses=[float(v) for v in losses[:: max(1, len(losses) // 50)]],
    )
    if job.save and job_dir is not None:
        S.save_segmenter(model, job_dir / "model")
        out["model_dir"] = str(job_dir / "model")
    return out


def _base(ctx, p) -> dict:
    return {
        "pool": str(ctx.input(f"{DATA}/pool.npz")),
        "model": model_config(p).to_dict(),
        "threads": p.resources.threads,
        "batch": p.finetune.batch,
        "feature_size": p.finetune.feature_size,
    }


def encoder_dir(ctx, p, init: str, seed_index: int) -> str | None:
    if init == "scratch":
        return None
    seeds = p.pretrain.seeds
    return str(ctx.input(f"{PRETRAIN}/{run_name(init, seeds[seed_index % len(seeds)])}"))


def champion_choice(p) -> tuple[str, float, int]:
    """MedGMAE at the low fraction, first seed: the model claim 1 is about."""
    return "medgmae", float(p.claims.low_fraction), int(p.finetune.seeds[0])


def run(ctx: StageContext[Params]) -> dict:
    p, f = ctx.params, ctx.params.finetune
    base = _base(ctx, p)
    low = float(p.claims.low_fraction)
    sweep = [
        FineTuneJob(
            **base,
            encoder=encoder_dir(ctx, p, init, 0),
            kind="sweep",
            init=init,
            fraction=low,
            seed=-1,
            draw=f.sweep_seed,
            steps=f.sweep_steps,
            lr=lr,
            eval_split="dev",
        )  # fmt: skip
        for init in f.inits
        for lr in f.lrs
    ]
    swept = run_grid(ctx, run_job, sweep, desc="medgmae sweep", workers=p.resources.workers, progress=p.progress)
    best = {i: max((r for r in swept if r["init"] == i), key=lambda r: r["mean_dice"])["lr"] for i in f.inits}
    log.info("medgmae sweep: best lr per init %s", best)
    champ = champion_choice(p)
    jobs = [
        FineTuneJob(
            **base,
            encoder=encoder_dir(ctx, p, init, k),
            kind="run",
            init=init,
            fraction=fr,
            seed=s,
            draw=s,
            steps=f.steps,
            lr=best[init],
            eval_split="test",
            save=(init, fr, s) == champ,
        )  # fmt: skip
        for fr in f.fractions
        for init in f.inits
        for k, s in enumerate(f.seeds)
    ]
    runs = run_grid(ctx, run_job, jobs, desc="medgmae fine-tune", workers=p.resources.workers, files=True,
                    progress=p.progress)  # fmt: skip
    out = ctx.output_dir(FINETUNE)
    summary: dict = {}
    for r in runs:
        if r.get("model_dir"):
            shutil.copytree(r["model_dir"], out / "champion", dirs_exist_ok=True)
            r["model_dir"] = "champion"
            name = f"finetune-{r['init']}-f{r['fraction']:g}-s{r['seed']}"
            run_id = ctx.log_model(
                name,
                {"model": base["model"], "finetune": f.model_dump(), "lr": r["lr"]},
                out / "champion",
                loader=LOADER,
                inputs=volumes(p.data.size),
                outputs=voxels_out(p.data.size, 3, "proba"),
                metrics={"mean_dice": r["mean_dice"]},
                curves={"train_loss": list(enumerate(r["losses"]))},
            )
            summary["champion"] = champion.candidate(run_id, name, out / "champion", f"{DATA}/pool.npz",
                                                     ctx.paths.root)  # fmt: skip
    write_jsonl(out / "sweep.jsonl", swept)
    write_jsonl(out / "runs.jsonl", runs)
    means = {}
    for r in runs:
        means.setdefault(f"{r['init']}_f{r['fraction']:g}", []).append(r["mean_dice"])
    return summary | {k: round(float(np.mean(v)), 4) for k, v in means.items()} | {"best_lr": best}
