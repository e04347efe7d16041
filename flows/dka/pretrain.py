"""Stage ``pretrain``: the tiny ViT trained supervised on Fashion-MNIST once (natural images, out of domain for
the medical task), cached as safetensors and logged as an MLflow model; every seed of ``adapt`` starts from it.

Writes ``data/dka/pretrain/backbone/{config.json,model.safetensors}`` and ``pretrain.json``.
"""

from __future__ import annotations

import time

import numpy as np

from components.dka import sources, vit
from components.dka.train import predict_proba
from components.errors import ParamsError
from components.io import write_json
from components.training.threads import set_threads
from flows.dka.common import images, log, proba
from flows.dka.params import Params
from flows.dka.spec import PRETRAIN
from flows.runtime.stages import StageContext

LOADER = "components.dka.vit:load_model"


def _log(ctx, info: dict, model_dir) -> None:
    size = ctx.params.pretrain.img_size
    ctx.log_model(
        "backbone-fashion-mnist",
        {"pretrain": ctx.params.pretrain.model_dump()},
        model_dir,
        loader=LOADER,
        inputs=images(size),
        outputs=proba(10),
        metrics={"fashion_test_acc": info["fashion_test_acc"]},
        curves={"train_loss": [(i * 10, v) for i, v in enumerate(info["losses"][::10])]},
    )


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params.pretrain
    if p.hf_model:
        sources.load_timm_vit(p.hf_model)  # fails at once offline, naming the id
        raise ParamsError(
            "dka.pretrain.hf_model: adapting a timm ViT-B/16 is the full profile's path; its loader is "
            "tested, the training is not part of this offline build (see the README)"
        )
    set_threads(ctx.params.resources.threads)
    x, y = sources.load_fashion("train", ctx.params.data.fashion_dir)
    xt, yt = sources.load_fashion("test", ctx.params.data.fashion_dir)
    cfg = vit.ViTConfig(img_size=p.img_size, patch=p.patch, dim=p.dim, depth=p.depth, heads=p.heads, n_classes=10)
    model = vit.TinyViT(cfg, seed=p.seed)
    t0 = time.time()
    losses = vit.pretrain(model, x, y, steps=p.steps, batch=p.batch, lr=p.lr, seed=p.seed, progress=ctx.params.progress)
    n_eval = min(p.eval_images, len(yt))
    proba = predict_proba(model, vit.upsample(xt[:n_eval], p.img_size).numpy())
    info = {
        "steps": p.steps,
        "images_seen": p.steps * p.batch,
        "seconds": time.time() - t0,
        "final_loss": float(np.mean(losses[-20:])),
        "fashion_test_acc": float((proba.argmax(1) == yt[:n_eval]).mean()),
        "n_params": int(sum(q.numel() for q in model.parameters())),
    }
    log.info("dka pretrain: %s", info)
    out = ctx.output_dir(PRETRAIN)
    vit.save_model(model, out / "backbone")
    write_json(out / "pretrain.json", {**info, "losses": losses})
    _log(ctx, {**info, "losses": losses}, out / "backbone")
    return info
