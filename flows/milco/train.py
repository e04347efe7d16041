"""Stage ``train``: per seed, Sparse Alignment Pretraining against the lexical teacher, then stage 2 (in-batch
InfoNCE + FLOPS + KL to USE-multilingual) for MILCO (SAP + LexEcho), MILCO without SAP, MILCO without LexEcho,
and the dense bi-encoder on the same backbone. Each model is saved as config + safetensors and logged to MLflow as
a child run (loss curves in batches, the model with its signature).

Seeds fan out through ``flows.runtime.runners.map_items`` (``--runner``/``resources.workers`` reach it).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from components.io import read_jsonl, write_json
from components.sparse_retrieval.lexicon import EnglishSpace, encode_batch, load_bpe
from components.sparse_retrieval.model import EncoderConfig, MilcoEncoder, save_encoder
from components.sparse_retrieval.training import Stage2Config, contrastive_train, sap_pretrain
from flows.milco.common import ENGLISH, PAIRS, QUERIES, TOKENIZER, USE_FILE, log, set_threads
from flows.milco.params import Params
from flows.milco.spec import DATA, EMBED, MODELS
from flows.runtime import runners
from flows.runtime.stages import StageContext


def encoder_config(p: Params, tok, space: EnglishSpace, variant: str) -> EncoderConfig:
    m = p.model
    return EncoderConfig(vocab_in=tok.get_vocab_size(), vocab_en=len(space), kind="dense" if variant == "dense" else
                         "sparse", echo=variant in ("milco", "no_sap"), d_model=m.d_model, n_layers=m.n_layers,
                         n_heads=m.n_heads, d_ff=m.d_ff, d_en=m.d_en, max_len=max(m.query_len, m.doc_len))


def load_inputs(data: Path, embed: Path) -> dict:
    pairs = read_jsonl(data / PAIRS)
    queries = [q for q in read_jsonl(data / QUERIES) if q["split"] == "train"]
    by_id = {x["id"]: x for x in pairs}
    use = np.load(embed / USE_FILE)
    return {"sap": [x for x in pairs if x["split"] == "sap"], "queries": queries,
            "docs_en": [by_id[q["pair_id"]]["en"] for q in queries], "docs_es": [by_id[q["pair_id"]]["es"] for q in queries],
            "use": {k: use[k] for k in ("train_q", "train_en", "train_es") if k in use},
            "tok": load_bpe(data / TOKENIZER), "space": EnglishSpace.load(data / ENGLISH)}


def train_seed(job: dict) -> dict:
    """One seed: SAP once, then every variant's stage 2; models under ``<out>/seed_<s>/<variant>`` (module level:
    process runners pickle it)."""
    from safetensors.torch import load_file  # noqa: F401 - imported here so a worker fails early without it

    p = Params.model_validate(job["params"])
    set_threads(p.resources.threads)
    inp = load_inputs(Path(job["data"]), Path(job["embed"]))
    tok, space, t = inp["tok"], inp["space"], p.train
    seed, out = job["seed"], Path(job["out"]) / f"seed_{job['seed']}"
    ql, dl = p.model.query_len, p.model.doc_len
    result = {"seed": seed, "models": {}}
    sap_state, sap_losses, sap_s = None, [], 0.0
    if {"milco", "no_echo"} & set(t.variants):
        import torch

        torch.manual_seed(seed)
        model = MilcoEncoder(encoder_config(p, tok, space, "milco"))
        start = time.perf_counter()
        sap = inp["sap"]
        sap_losses = sap_pretrain(model, encode_batch(tok, [x["es"] for x in sap], dl),
                                  encode_batch(tok, [x["en"] for x in sap], dl), space.teacher([x["en"] for x in sap]),
                                  steps=t.sap_steps, batch=t.sap_batch, lr=t.sap_lr, seed=seed)
        sap_s = time.perf_counter() - start
        sap_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    cfg2 = Stage2Config(steps=t.steps, batch=t.batch, lr=t.lr, lambda_q=t.lambda_q, lambda_d=t.lambda_d, reg=t.reg,
                        kl_weight=t.kl_weight, kl_temperature=t.kl_temperature, seed=seed)
    use = inp["use"]
    teacher = [(use["train_q"], use["train_en"]), (use["train_q"], use["train_es"])] if t.kl_weight > 0 else None
    for variant in t.variants:
        import torch

        echo = variant in ("milco", "no_sap")
        torch.manual_seed(seed)
        model = MilcoEncoder(encoder_config(p, tok, space, variant))
        if variant in ("milco", "no_echo"):
            model.load_state_dict(sap_state, strict=False)  # SAP weights; the echo head (if any) stays fresh
        start = time.perf_counter()
        hist = contrastive_train(model, encode_batch(tok, [q["text"] for q in inp["queries"]], ql, echo=echo),
                                 [encode_batch(tok, inp["docs_en"], dl, echo=echo),
                                  encode_batch(tok, inp["docs_es"], dl, echo=echo)], replace(cfg2), teacher)
        folder = out / variant
        save_encoder(model, folder)
        result["models"][variant] = {
            "folder": str(folder), "history": hist, "seconds": time.perf_counter() - start + (
                sap_s if variant in ("milco", "no_echo") else 0.0),
            "sap_losses": sap_losses if variant in ("milco", "no_echo") else [],
            "final_loss": float(np.mean([h["loss"] for h in hist[-10:]]))}
    return result


def _log(ctx: StageContext, results: list[dict]) -> None:
    if ctx.tracker is None:
        return
    from flows.milco.mlflow_model import log_encoder

    for res in results:
        for variant, info in res["models"].items():
            name = f"{variant}-seed{res['seed']}"
            with ctx.tracker.child(name, {"variant": variant, "seed": res["seed"], "train": ctx.params.train.model_dump(),
                                          "model": ctx.params.model.model_dump()}) as rid:
                for i, loss in enumerate(info["sap_losses"]):
                    if i % 5 == 0:
                        ctx.tracker.log_metrics({"sap_loss": loss}, step=i, run_id=rid)
                for h in info["history"][::5]:
                    ctx.tracker.log_metrics({k: v for k, v in h.items() if k != "step"}, step=h["step"], run_id=rid)
                ctx.tracker.log_metrics({"final_loss": info["final_loss"], "train_seconds": info["seconds"]}, run_id=rid)
                log_encoder(rid, Path(info["folder"]))


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    out = ctx.output(MODELS)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [{"seed": s, "params": p.model_dump(mode="json"), "data": str(ctx.input(DATA)), "embed": str(ctx.input(EMBED)),
             "out": str(out)} for s in p.train.seeds]
    results = runners.map_items(train_seed, jobs, workers=p.resources.workers, desc="milco seeds", progress=p.progress)
    _log(ctx, results)
    summary = {f"seed_{r['seed']}": {v: {"final_loss": i["final_loss"], "seconds": round(i["seconds"], 1),
                                         "d_len": i["history"][-1].get("d_len"), "q_len": i["history"][-1].get("q_len")}
                                     for v, i in r["models"].items()} for r in results}
    write_json(out / "train.json", {**summary, "histories": {f"seed_{r['seed']}": {
        v: {"stage2": i["history"], "sap": i["sap_losses"]} for v, i in r["models"].items()} for r in results}})
    log.info("milco train: %s", summary)
    return summary
