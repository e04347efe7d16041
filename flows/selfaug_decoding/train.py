"""Stage ``train``: the tiny VLM once per seed on the training QA and captions (the decoding methods then use it
as it is). Each model is logged in its own MLflow child run with its loss curve and a signature; the held-out
greedy QA accuracy per question type is written beside it (the plateau check reads the curve's last quarter)."""

from __future__ import annotations

import numpy as np

from components.inputs import load_npz
from components.io import read_jsonl, write_json
from components.selfaug_decoding import model as M
from components.selfaug_decoding.scenes import VOCAB
from components.training.threads import set_threads
from flows.runtime.stages import StageContext
from flows.runtime.tracking import Tensor
from flows.selfaug_decoding import champion
from flows.selfaug_decoding.params import Params
from flows.selfaug_decoding.spec import DATA, MODELS

LOADER = "components.selfaug_decoding.model:load_model"


def plateau(curve: list[tuple[int, float]]) -> dict:
    """The relative loss drop over the last quarter of training (small: at a plateau)."""
    losses = [v for _, v in curve]
    q = max(1, len(losses) // 4)
    last, before = float(np.mean(losses[-q:])), float(np.mean(losses[-2 * q : -q] or losses[:q]))
    return {"final_loss": last, "last_quarter_drop": (before - last) / max(before, 1e-9)}


def dev_check(model, data_dir, seed: int, batch: int) -> dict:
    """Greedy answers on the dev POPE questions: accuracy and yes-ratio (a blind VLM answers one word always).
    The learning-rate / step checks read this, never the test split."""
    from components.selfaug_decoding import decoding as D
    from components.selfaug_decoding.metrics import pope
    from flows.selfaug_decoding.decode import _run

    with load_npz(f"{data_dir}/dev_images.npz", keys=("images", "offset")) as z:
        images, offset = z["images"], int(z["offset"])
    q = [{**r, "qtype": "existence"} for r in read_jsonl(f"{data_dir}/pope_dev.jsonl")]
    dec = {"batch": batch, "sas_rules": {}, "crop_ratio": 2.0, "mask_ratio": 2.0, "noise_step": 500}
    ans = [bool(t) and VOCAB[t[0]] == "yes" for _, t, *_ in _run(model, images, offset, q, D.methods()["greedy"],
                                                                 dec, 1, seed, 3)]  # fmt: skip
    v = pope(ans, [r["label"] == "yes" for r in q])
    return {"dev_accuracy": v["accuracy"], "dev_yes_ratio": v["yes_ratio"], "dev_f1": v["f1"]}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    set_threads(p.resources.threads)
    with load_npz(ctx.input(f"{DATA}/train_images.npz"), keys=("images",)) as z:
        images = z["images"]
    examples = read_jsonl(ctx.input(f"{DATA}/train.jsonl"))
    config = M.VLMConfig(d=p.model.d, n_layers=p.model.n_layers, n_heads=p.model.n_heads, d_ff=2 * p.model.d,
                         img=p.data.size, encoder_norm=p.model.encoder_norm, emb_std=p.model.emb_std)  # fmt: skip
    out = ctx.output_dir(MODELS)
    summary, run_ids = {}, {}
    for seed in p.model.seeds:
        model, curve = M.train(images, examples, config, steps=p.model.steps, batch=p.model.batch, lr=p.model.lr,
                               seed=seed, yesno_share=p.model.yesno_share, loss_per=p.model.loss_per)  # fmt: skip
        model_dir = out / f"seed_{seed}"
        M.save_model(model, model_dir)
        info = {"seed": seed, **plateau(curve), **dev_check(model, ctx.input(DATA), seed, 250), "curve": curve}
        write_json(model_dir.with_suffix(".json"), info)
        run_ids[seed] = ctx.log_model(
            f"tiny-vlm-seed{seed}",
            {"model": p.model.model_dump(), "seed": seed},
            model_dir,
            loader=LOADER,
            inputs=Tensor("token_ids", "int64", (-1, -1)),
            outputs=Tensor("logits", "float32", (-1, -1, len(VOCAB))),
            metrics={k: info[k] for k in ("final_loss", "last_quarter_drop", "dev_accuracy", "dev_yes_ratio")},
            curves={"train_loss": curve},
        )
        summary[f"seed_{seed}_final_loss"] = info["final_loss"]
        summary[f"seed_{seed}_dev_accuracy"] = info["dev_accuracy"]
    seed = champion.choose(p)  # the first seed's VLM, re-evaluated on the held-out POPE questions
    summary["champion"] = champion.candidate(p, run_ids.get(seed), f"tiny-vlm-seed{seed}", out / f"seed_{seed}",
                                             ctx.paths.root, seed)  # fmt: skip
    return summary
