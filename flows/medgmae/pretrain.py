"""Stage ``pretrain``: MedGMAE (K Gaussian queries, the official heads, dense rendering) and voxel MAE, each on the
same 3-D ViT encoder, the same pool (unlabelled augmented MNI152 training crops mixed with ellipsoid phantoms),
the same steps, batch, learning rate and schedule; 75% of the tokens masked, the loss on masked voxels only.

For each objective and pretraining seed: the masked-voxel loss on held-out test crops of the untrained and of the
trained model (the same masks), saved as safetensors and logged as an MLflow model.
Writes ``data/medgmae/pretrain/<objective>-s<seed>/`` and ``pretrain.json``.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from components.io import write_json
from components.medgmae import model as M
from components.training.threads import set_threads
from flows.medgmae.common import log, model_config, volumes, voxels_out
from flows.medgmae.data import load
from flows.medgmae.params import Params
from flows.medgmae.spec import PRETRAIN
from flows.runtime.stages import StageContext

LOADER = "components.medgmae.model:load_model"
EVAL_MASK_SEED = 12345


def run_name(objective: str, seed: int) -> str:
    return f"{objective}-s{seed}"


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    pp = p.pretrain
    set_threads(p.resources.threads)
    pool = load(ctx)
    unlabelled = torch.as_tensor(np.concatenate([pool["train_x"], pool["phantoms"]]))
    held = torch.as_tensor(pool["test_x"][: pp.eval_volumes])
    cfg = model_config(p)
    out = ctx.output_dir(PRETRAIN)
    runs = []
    for objective in pp.objectives:
        for seed in pp.seeds:
            model = M.MaskedAutoencoder3D(cfg, objective, seed=seed)
            before = M.masked_loss(model, held, pp.mask_ratio, seed=EVAL_MASK_SEED)

            def sample(g: torch.Generator) -> torch.Tensor:
                x = unlabelled[torch.randint(len(unlabelled), (pp.batch,), generator=g)]
                for ax in (2, 3, 4):  # cheap on-the-fly flips on top of the stored augmentation
                    if bool(torch.rand(1, generator=g) < 0.5):
                        x = x.flip(ax)
                return x

            t0, c0 = time.time(), time.process_time()
            losses = M.pretrain(model, sample, steps=pp.steps, lr=pp.lr, ratio=pp.mask_ratio, seed=seed,
                                warmup=pp.warmup, progress=p.progress)  # fmt: skip
            after = M.masked_loss(model, held, pp.mask_ratio, seed=EVAL_MASK_SEED)
            name = run_name(objective, seed)
            info = {
                "objective": objective,
                "seed": seed,
                "steps": pp.steps,
                "seconds": time.time() - t0,
                "cpu_seconds": time.process_time() - c0,
                "masked_loss_untrained": before,
                "masked_loss_trained": after,
                "final_train_loss": float(np.mean(losses[-max(1, len(losses) // 10) :])),
                "plateau": _plateau(losses),
                "n_params": int(sum(q.numel() for q in model.parameters())),
            }
            log.info("medgmae pretrain %s: %s", name, info)
            M.save_model(model, out / name)
            ctx.log_model(
                f"pretrain-{name}",
                {"model": cfg.to_dict(), "pretrain": pp.model_dump()},
                out / name,
                loader=LOADER,
                inputs=volumes(cfg.size),
                outputs=voxels_out(cfg.size),
                metrics={k: info[k] for k in ("masked_loss_untrained", "masked_loss_trained", "final_train_loss")},
                curves={"train_loss": [(i, v) for i, v in enumerate(losses)][:: max(1, len(losses) // 200)]},
            )
            runs.append({**info, "losses": losses})
    write_json(out / "pretrain.json", {"runs": runs, "eval_volumes": len(held), "pool": len(unlabelled)})
    return {r["objective"] + f"-s{r['seed']}": round(r["masked_loss_trained"], 5) for r in runs}


def _plateau(losses: list[float]) -> float:
    """Relative change of the mean loss between the last two tenths of training (near 0: at a plateau)."""
    n = max(1, len(losses) // 10)
    a, b = float(np.mean(losses[-2 * n : -n] or losses[-n:])), float(np.mean(losses[-n:]))
    return (a - b) / max(abs(a), 1e-12)
