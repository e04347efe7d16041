"""Stage ``train``: per seed, Sparse Alignment Pretraining against the lexical teacher, then stage 2 (in-batch
InfoNCE + FLOPS + KL to USE-multilingual) for MILCO (SAP + LexEcho), MILCO without SAP, MILCO without LexEcho,
and the dense bi-encoder on the same backbone. Each model is saved as config + safetensors and logged to MLflow as
a child run (loss curves in batches, the model with its signature).

Seeds fan out through the kit's grid stage (``flows.runtime.grid.run_grid``: ``--runner``/``resources.workers``
reach it; a killed stage resumes from the finished jobs). Each job writes its model into its own job folder; the
stage copies the models it keeps into ``models/``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from components.inputs import load_npz
from components.io import read_jsonl, write_json
from components.sparse_retrieval.lexicon import EnglishSpace, encode_batch, load_bpe, term_tokens
from components.sparse_retrieval.model import EncoderConfig, MilcoEncoder, init_lexical_head, save_encoder
from components.sparse_retrieval.training import Stage2Config, contrastive_train, sap_pretrain
from components.training.curves import plateau  # relative change of the mean loss over the last 20%
from components.training.threads import set_threads
from flows.milco.common import (
    ENCODER_LOADER,
    ENGLISH,
    PAIRS,
    QUERIES,
    TOKENIZER,
    USE_FILE,
    encoder_signature,
    log,
)
from flows.milco.params import Params
from flows.milco.spec import DATA, EMBED, MODELS
from flows.runtime.grid import publish, run_grid
from flows.runtime.stages import StageContext


def encoder_config(p: Params, tok, space: EnglishSpace, variant: str) -> EncoderConfig:
    m = p.model
    return EncoderConfig(
        vocab_in=tok.get_vocab_size(),
        vocab_en=len(space),
        kind="dense" if variant == "dense" else "sparse",
        echo=variant in ("milco", "no_sap"),
        d_model=m.d_model,
        n_layers=m.n_layers,
        n_heads=m.n_heads,
        d_ff=m.d_ff,
        d_en=m.d_en,
        max_len=max(m.query_len, m.doc_len),
    )


SAP_VARIANTS = ("milco", "no_echo")
HEAD_TEXTS = 3_000  # English texts whose token states initialise the lexical head


@dataclass(frozen=True)
class TrainJob:
    """One job of the train grid: a seed's SAP (``kind`` "sap") or a stage-2 run ("stage2": ``variant`` at ``lr``,
    from ``sap``, the seed's SAP job folder, for the SAP variants); ``params`` is the params' ``model_dump``."""

    kind: str
    seed: int
    params: dict
    data: str
    embed: str
    variant: str | None = None
    lr: float | None = None
    sap: str | None = None


@lru_cache(maxsize=2)
def load_inputs(data: str, embed: str) -> dict:
    """Everything a training job reads, once per process (process runners reuse their workers)."""
    from flows.milco.evaluate import split_bench

    data, embed = Path(data), Path(embed)
    pairs = read_jsonl(data / PAIRS)
    all_queries = read_jsonl(data / QUERIES)
    queries = [q for q in all_queries if q["split"] == "train"]
    by_id = {x["id"]: x for x in pairs}
    use = load_npz(embed / USE_FILE)
    return {
        "sap": [x for x in pairs if x["split"] == "sap"],
        "queries": queries,
        "docs_en": [by_id[q["pair_id"]]["en"] for q in queries],
        "docs_es": [by_id[q["pair_id"]]["es"] for q in queries],
        "dev": split_bench(by_id, all_queries, "dev", "en"),
        "use": {k: use[k] for k in ("train_q", "train_en", "train_es") if k in use},
        "tok": load_bpe(data / TOKENIZER),
        "space": EnglishSpace.load(data / ENGLISH),
    }


def fresh_model(p: Params, inp: dict, variant: str, seed: int, head: bool = True) -> MilcoEncoder:
    """The seed's initial model; every sparse model's MLM head starts as the English lexical head
    (``init_lexical_head``), so MILCO, no-SAP and no-LexEcho share the same start, as they share SPLADE's head in the
    paper. The SAP base is built with the milco config (LexEcho on), so no-SAP starts from exactly its weights.
    ``head=False`` skips the head's start for a model whose weights are all loaded next (from its SAP checkpoint):
    the start uses no randomness, so the loaded model is the same."""
    import torch

    torch.manual_seed(seed)
    model = MilcoEncoder(encoder_config(p, inp["tok"], inp["space"], "milco" if variant == "sap" else variant))
    if model.cfg.kind == "sparse" and head:
        english = encode_batch(inp["tok"], [x["en"] for x in inp["sap"][:HEAD_TEXTS]], p.model.doc_len)
        init_lexical_head(model, english, term_tokens(inp["tok"], inp["space"].terms), bias=p.train.head_bias)
    return model


def sap_seed(job: TrainJob, job_dir: Path) -> dict:
    """Stage 1 for one seed: SAP of the lexical-head-initialised model, saved in ``job_dir`` (published under
    ``seed_<s>/sap``)."""
    p = Params.model_validate(job.params)
    set_threads(p.resources.threads)
    inp = load_inputs(job.data, job.embed)
    t, tok, space, dl = p.train, inp["tok"], inp["space"], p.model.doc_len
    model = fresh_model(p, inp, "sap", job.seed)
    start = time.perf_counter()
    sap = inp["sap"]
    losses = sap_pretrain(
        model,
        encode_batch(tok, [x["es"] for x in sap], dl),
        encode_batch(tok, [x["en"] for x in sap], dl),
        space.teacher_csr([x["en"] for x in sap]),
        steps=t.sap_steps,
        batch=t.sap_batch,
        lr=t.sap_lr,
        seed=job.seed,
        floor=t.teacher_floor,
    )
    save_encoder(model, job_dir)
    return {"seed": job.seed, "folder": str(job_dir), "losses": losses, "seconds": time.perf_counter() - start}


def dev_ndcg(model, inp: dict, p: Params) -> float:
    """nDCG@10 of ES->EN retrieval on the dev split (the tuning split; never the benchmark)."""
    from flows.milco.evaluate import rank, score_rows

    ranked, _ = rank(model, inp["tok"], p, inp["dev"], latency_sample=0)
    return float(np.mean([r["nDCG@10"] for r in score_rows("dev", "", None, inp["dev"], ranked)]))


def stage2_job(job: TrainJob, job_dir: Path) -> dict:
    """Stage 2 of one (seed, variant, lr): from the seed's SAP weights (milco, no_echo; ``job.sap``, the SAP
    job's folder) or its fresh start (no_sap, dense); the model is saved to ``job_dir`` and scored on the dev split
    (module level: process runners pickle it)."""
    from safetensors.torch import load_file

    p = Params.model_validate(job.params)
    set_threads(p.resources.threads)
    inp = load_inputs(job.data, job.embed)
    t, tok, variant, seed = p.train, inp["tok"], job.variant, job.seed
    ql, dl = p.model.query_len, p.model.doc_len
    model = fresh_model(p, inp, variant, seed, head=variant not in SAP_VARIANTS)
    if variant in SAP_VARIANTS:
        missing, _ = model.load_state_dict(load_file(str(Path(job.sap) / "model.safetensors")), strict=False)
        if missing:
            raise RuntimeError(f"{job.sap}: the SAP checkpoint lacks {missing[:3]}")
    echo = model.cfg.kind == "sparse" and model.cfg.echo
    cfg2 = Stage2Config(
        steps=t.steps,
        batch=t.batch,
        lr=job.lr,
        lambda_q=t.lambda_q,
        lambda_d=t.lambda_d,
        reg=t.reg,
        kl_weight=t.kl_weight,
        kl_temperature=t.kl_temperature,
        seed=seed,
    )
    use = inp["use"]
    teacher = [(use["train_q"], use["train_en"]), (use["train_q"], use["train_es"])] if t.kl_weight > 0 else None
    start = time.perf_counter()
    hist = contrastive_train(
        model,
        encode_batch(tok, [q["text"] for q in inp["queries"]], ql, echo=echo),
        [encode_batch(tok, inp["docs_en"], dl, echo=echo), encode_batch(tok, inp["docs_es"], dl, echo=echo)],
        cfg2,
        teacher,
    )
    seconds = time.perf_counter() - start
    save_encoder(model, job_dir)
    losses = [h["loss"] for h in hist]
    return {
        "seed": seed,
        "variant": variant,
        "lr": job.lr,
        "folder": str(job_dir),
        "history": hist,
        "seconds": seconds,
        "dev_ndcg": dev_ndcg(model, inp, p),
        "plateau": plateau(losses),
        "final_loss": float(np.mean(losses[-10:])),
    }


def choose(results: list[dict]) -> dict[str, float]:
    """Per variant, the learning rate with the best dev nDCG@10 (ties: the smaller rate)."""
    best: dict[str, dict] = {}
    for r in sorted(results, key=lambda r: r["lr"]):
        if r["variant"] not in best or r["dev_ndcg"] > best[r["variant"]]["dev_ndcg"]:
            best[r["variant"]] = r
    return {v: r["lr"] for v, r in best.items()}


def _log(ctx: StageContext, sap: dict, results: list[dict], sweep: list[dict]) -> None:
    """A child run per final model: its SAP and stage-2 curves (batches), its dev scores of the sweep, the model."""
    if ctx.tracker is None:
        return
    for r in results:
        variant, seed = r["variant"], r["seed"]
        with ctx.tracker.child(
            f"{variant}-seed{seed}",
            {
                "variant": variant,
                "seed": seed,
                "lr": r["lr"],
                "train": ctx.params.train.model_dump(),
                "model": ctx.params.model.model_dump(),
            },
        ) as rid:
            if variant in SAP_VARIANTS and seed in sap:
                for i, loss in enumerate(sap[seed]["losses"]):
                    if i % 5 == 0:
                        ctx.tracker.log_metrics({"sap_loss": loss}, step=i, run_id=rid)
            for h in r["history"][::5]:
                ctx.tracker.log_metrics({k: v for k, v in h.items() if k != "step"}, step=h["step"], run_id=rid)
            tried = {f"dev_ndcg_lr_{x['lr']:g}": x["dev_ndcg"] for x in sweep if x["variant"] == variant}
            ctx.tracker.log_metrics(
                {
                    "final_loss": r["final_loss"],
                    "train_seconds": r["seconds"],
                    "dev_ndcg": r["dev_ndcg"],
                    "plateau": r["plateau"],
                    **tried,
                },
                run_id=rid,
            )
            folder = Path(r["folder"])
            ctx.tracker.log_state_dict_model(rid, folder, loader=ENCODER_LOADER, signature=encoder_signature(folder))


def train_job(job: TrainJob, job_dir: Path) -> dict:
    """One job of the stage's grid: a seed's SAP or one stage-2 run (module level: process runners pickle it). The
    two return different records, in one fan-out, so the results stay dicts."""
    return sap_seed(job, job_dir) if job.kind == "sap" else stage2_job(job, job_dir)


def run(ctx: StageContext[Params]) -> dict:
    """SAP per seed; then on the first seed every model tries every ``lr_grid`` rate (the blind dev sweep: same
    trials for every system) and keeps its best by dev nDCG@10; the other seeds train each model at its chosen rate.

    Three fan-outs, so no worker waits on work it does not need: (1) SAP of every seed beside the first seed's
    trials of the models that start without SAP (no-SAP, dense); (2) the first seed's trials of the SAP models
    beside the other seeds of no-SAP and dense at their chosen rates; (3) the other seeds of the SAP models. Every
    run seeds itself, so the models are those of running the jobs one after another."""
    p = ctx.params
    t = p.train
    out = ctx.output_dir(MODELS)
    base = {"params": p.model_dump(mode="json"), "data": str(ctx.input(DATA)), "embed": str(ctx.input(EMBED))}

    def go(jobs: list, desc: str) -> list:
        if not jobs:
            return []
        return run_grid(ctx, train_job, jobs, desc=desc, workers=p.resources.workers, files=True, progress=p.progress)

    def keep(r: dict, *parts: str) -> dict:  # a job's model, copied from its job folder into the output
        return {**r, "folder": str(publish(r["folder"], out.joinpath(*parts)))}

    first, rest = t.seeds[0], t.seeds[1:]
    sweeping = len(t.lr_grid) > 1
    tied = [v for v in t.variants if v in SAP_VARIANTS]  # start from the seed's SAP checkpoint
    free = [v for v in t.variants if v not in SAP_VARIANTS]
    sap: dict = {}

    def job(seed, variant, lr):
        sap_dir = sap[seed]["folder"] if variant in SAP_VARIANTS else None
        return TrainJob(kind="stage2", seed=seed, variant=variant, lr=lr, sap=sap_dir, **base)

    def trials(variants):  # the first seed: every rate (with one rate, that run is the final model)
        return [job(first, v, lr) for v in variants for lr in t.lr_grid]

    def finals(variants, chosen):
        return [job(s, v, chosen[v]) for s in rest for v in variants]

    sap_jobs = [TrainJob(kind="sap", seed=s, **base) for s in (t.seeds if tied else [])]
    done = go(sap_jobs + trials(free), "milco SAP + stage 2 of the first seed")
    sap.update((r["seed"], r) for r in done[: len(sap_jobs)])
    for s, r in sap.items():
        keep(r, f"seed_{s}", "sap")
    tried = done[len(sap_jobs) :]
    chosen = choose(tried)
    done = go(trials(tied) + finals(free, chosen), "milco stage 2")
    tried += done[: len(tied) * len(t.lr_grid)]
    chosen = {v: choose(tried)[v] for v in t.variants}
    results = done[len(tied) * len(t.lr_grid) :] + go(finals(tied, chosen), "milco stage 2 (SAP models)")
    results = [keep(r, f"seed_{r['seed']}", r["variant"]) for r in results]
    results += [keep(r, f"seed_{first}", r["variant"]) for r in tried if r["lr"] == chosen[r["variant"]]]
    order = {(s, v): i for i, (s, v) in enumerate((s, v) for s in t.seeds for v in t.variants)}
    results.sort(key=lambda r: order[r["seed"], r["variant"]])
    sweep = sorted(tried, key=lambda r: (t.variants.index(r["variant"]), r["lr"])) if sweeping else []
    _log(ctx, sap, results, sweep)
    summary = {
        f"seed_{s}": {
            r["variant"]: {
                "final_loss": r["final_loss"],
                "lr": r["lr"],
                "dev_ndcg": r["dev_ndcg"],
                "plateau": r["plateau"],
                "seconds": round(r["seconds"], 1),
                "d_len": r["history"][-1].get("d_len"),
                "q_len": r["history"][-1].get("q_len"),
                "nce_first": r["history"][0]["nce"],
                "nce_last10": float(np.mean([h["nce"] for h in r["history"][-10:]])),
            }
            for r in results
            if r["seed"] == s
        }
        for s in t.seeds
    }
    write_json(
        out / "train.json",
        {
            **summary,
            "chosen_lr": chosen,
            "sweep": [{k: r[k] for k in ("variant", "lr", "dev_ndcg", "plateau", "final_loss")} for r in sweep],
            "sap_seconds": {f"seed_{s}": round(r["seconds"], 1) for s, r in sap.items()},
            "histories": {
                f"seed_{s}": {
                    r["variant"]: {
                        "stage2": r["history"],
                        "sap": sap[s]["losses"] if r["variant"] in SAP_VARIANTS and s in sap else [],
                    }
                    for r in results
                    if r["seed"] == s
                }
                for s in t.seeds
            },
        },
    )
    log.info("milco train: chosen lr %s; %s", chosen, summary)
    return {"chosen_lr": chosen, **summary}
