"""Stage ``train``: the base LM (forget + retain + world facts) and the Retrain LM (retain + world facts).

Both start from the same initial weights and see the same number of steps.
Writes ``data/ofmu/models/{base,retain}/`` (TinyLM folders) and ``train.json``;
each model is an MLflow child run with its loss curve and the logged model.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from components.errors import ParamsError
from components.io import read_jsonl, write_json
from components.models.tiny_lm import TinyLM, TinyLMConfig, save_model
from components.training.qa_lm import encode_pairs, train_lm
from components.training.threads import set_threads
from components.training.tokenizer import eos_id, load_bpe
from components.unlearning.base import Timer
from flows.ofmu.common import log
from flows.ofmu.params import Params
from flows.ofmu.spec import DATA, MODELS
from flows.runtime.stages import StageContext
from flows.runtime.tracking import LM_LOADER, NEXT_TOKEN, TOKEN_IDS


def train_one(p, tok, rows: list[dict], name: str) -> tuple[TinyLM, dict]:
    m = p.model
    cfg = TinyLMConfig(
        vocab_size=tok.get_vocab_size(),
        d_model=m.d_model,
        n_layers=m.n_layers,
        n_heads=m.n_heads,
        d_ff=m.d_ff,
        max_seq_len=m.max_seq_len,
    )
    model = TinyLM(cfg, seed=m.seed)
    items = encode_pairs(tok, [r["question"] for r in rows], [r["answer"] for r in rows], eos_id(tok))
    longest = max(len(ids) for ids, _ in items)
    if longest > m.max_seq_len:
        raise ParamsError(f"ofmu.model.max_seq_len: {m.max_seq_len} is below the longest example ({longest} tokens)")
    timer = Timer()
    losses = train_lm(
        model, items, steps=m.train_steps, batch_size=m.batch_size, lr=m.lr, seed=m.seed, progress=ctx_progress(p)
    )
    info = {
        "name": name,
        "examples": len(items),
        "final_loss": float(np.mean(losses[-20:])),
        "seconds": timer.seconds(),
        "config": dataclasses.asdict(cfg),
    }
    log.info("ofmu train %s: %s", name, {k: v for k, v in info.items() if k != "config"})
    return model, {**info, "losses": losses}


def ctx_progress(p) -> bool:
    return bool(p.progress)


def _log(ctx: StageContext, name: str, info: dict, model_dir) -> None:
    params = {"model": ctx.params.model.model_dump(), "examples": info["examples"]}
    rid = ctx.log_model(f"lm-{name}", params, model_dir, loader=LM_LOADER, inputs=TOKEN_IDS, outputs=NEXT_TOKEN)
    if rid is not None:  # the loss curve, every 10 steps
        for i in range(0, len(info["losses"]), 10):
            ctx.tracker.log_metrics({"train_loss": info["losses"][i]}, step=i, run_id=rid)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    if p.model.hf_model:
        raise ParamsError(
            "ofmu.model.hf_model: fine-tuning a Hugging Face model is the full profile's path; "
            "it is validated but not implemented in this offline build (see the README)"
        )
    set_threads(p.resources.threads)
    rows = read_jsonl(ctx.input(f"{DATA}/qa.jsonl"))
    tok = load_bpe(ctx.input(f"{DATA}/tokenizer.json"))
    out = ctx.output_dir(MODELS)
    summary = {}
    for name, keep in (("base", ("forget", "retain", "general")), ("retain", ("retain", "general"))):
        model, info = train_one(p, tok, [r for r in rows if r["split"] in keep], name)
        save_model(model, out / name)
        _log(ctx, name, info, out / name)
        summary[name] = {k: v for k, v in info.items() if k not in ("losses", "config")}
    write_json(out / "train.json", summary)
    return summary
