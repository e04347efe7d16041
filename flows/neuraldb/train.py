"""Stage ``train``: the tiny LM that knows the synthetic facts, logged to MLflow as a child run with its model."""

from __future__ import annotations

import logging

from components.editing.train_lm import train_fact_lm
from components.inputs import load_npy
from components.io import write_json
from components.models.tiny_lm import TinyLMConfig, save_model
from components.training.tokenizer import load_bpe
from flows.neuraldb.params import Params
from flows.neuraldb.spec import DATA, MODEL
from flows.runtime.stages import StageContext
from flows.runtime.tracking import LM_LOADER, NEXT_TOKEN, TOKEN_IDS

log = logging.getLogger("paperline")


def _log_model(ctx: StageContext, model_dir, params: dict, summary: dict) -> None:
    ctx.log_model("base-lm", params, model_dir, loader=LM_LOADER, inputs=TOKEN_IDS, outputs=NEXT_TOKEN, metrics=summary)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    if p.model.base != "tiny":
        out = ctx.output_dir(MODEL)
        write_json(out / "pretrained.json", {"base": p.model.base})  # the edit stage loads it by id
        return {"base": p.model.base}
    data = ctx.input(DATA)
    vocab = load_bpe(data / "tokenizer.json").get_vocab_size()
    m, t = p.model, p.training
    cfg = TinyLMConfig(
        vocab_size=vocab,
        d_model=m.d_model,
        n_layers=m.n_layers,
        n_heads=m.n_heads,
        d_ff=m.d_ff,
        max_seq_len=max(m.seq_len, 128),
    )
    model, summary = train_fact_lm(
        cfg,
        load_npy(data / "fact_tokens.npy"),
        load_npy(data / "filler_tokens.npy"),
        steps=t.steps,
        batch_size=t.batch_size,
        seq_len=m.seq_len,
        lr=t.lr,
        warmup_frac=t.warmup_frac,
        weight_decay=t.weight_decay,
        fact_frac=t.fact_frac,
        seed=p.seed,
        threads=p.resources.threads,
        progress=True,
    )
    out = ctx.output(MODEL)
    save_model(model, out)
    write_json(out / "train_summary.json", summary)
    _log_model(ctx, out, {"model": p.model.model_dump(), "training": t.model_dump()}, summary)
    return summary
