"""Stage ``train``: the tiny VLM once per seed on the training QA and captions (the decoding methods then use it
as it is). Each model is logged in its own MLflow child run with its loss curve and a signature; the held-out
greedy QA accuracy per question type is written beside it (the plateau check reads the curve's last quarter)."""

from __future__ import annotations

import numpy as np

from components.io import read_jsonl, write_json
from components.selfaug_decoding import model as M
from components.selfaug_decoding.scenes import VOCAB
from components.training.threads import set_threads
from flows.runtime.stages import StageContext
from flows.runtime.tracking import Tensor
from flows.selfaug_decoding.params import Params
from flows.selfaug_decoding.spec import DATA, MODELS

LOADER = "components.selfaug_decoding.model:load_model"


def plateau(curve: list[tuple[int, float]]) -> dict:
    """The relative loss drop over the last quarter of training (small: at a plateau)."""
    losses = [v for _, v in curve]
    q = max(1, len(losses) // 4)
    last, before = float(np.mean(losses[-q:])), float(np.mean(losses[-2 * q : -q] or losses[:q]))
    return {"final_loss": last, "last_quarter_drop": (before - last) / max(before, 1e-9)}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    set_threads(p.resources.threads)
    images = np.load(ctx.input(f"{DATA}/train_images.npz"))["images"]
    examples = read_jsonl(ctx.input(f"{DATA}/train.jsonl"))
    config = M.VLMConfig(d=p.model.d, n_layers=p.model.n_layers, n_heads=p.model.n_heads, d_ff=2 * p.model.d,
                         img=p.data.size)  # fmt: skip
    out = ctx.output_dir(MODELS)
    summary = {}
    for seed in p.model.seeds:
        model, curve = M.train(images, examples, config, steps=p.model.steps, batch=p.model.batch, lr=p.model.lr,
                               seed=seed)  # fmt: skip
        model_dir = out / f"seed_{seed}"
        M.save_model(model, model_dir)
        info = {"seed": seed, **plateau(curve), "curve": curve}
        write_json(model_dir.with_suffix(".json"), info)
        ctx.log_model(
            f"tiny-vlm-seed{seed}",
            {"model": p.model.model_dump(), "seed": seed},
            model_dir,
            loader=LOADER,
            inputs=Tensor("token_ids", "int64", (-1, -1)),
            outputs=Tensor("logits", "float32", (-1, -1, len(VOCAB))),
            metrics={"final_loss": info["final_loss"], "last_quarter_drop": info["last_quarter_drop"]},
            curves={"train_loss": curve},
        )
        summary[f"seed_{seed}_final_loss"] = info["final_loss"]
    return summary
