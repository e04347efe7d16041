"""Stage ``evaluate``: every trained model on the benchmarks through a real index (sparse: the scipy-CSC inverted
index; dense: a faiss flat index): per-query nDCG@10, R@100 and MRR@10, active dimensions, index bytes,
single-thread latency, term grounding; the mass vs top-k pruning sweep of MILCO; BM25 and USE-multilingual.

Tasks: ``es-en`` (Spanish queries, English LibreOffice paragraphs), ``es-es`` (the Spanish paragraphs) and
``bible-es-en`` (Spanish verse spans, English verses). Seeds fan out through the kit's grid stage (``run_grid``).
The champion (the first seed's MILCO encoder with its ES->EN index, ``flows/milco/champion.py``) is saved under
``champion/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from components.data import validate as V
from components.inputs import load_npz
from components.io import read_jsonl, write_json, write_jsonl
from components.sparse_retrieval import index as IX
from components.sparse_retrieval.baselines import FlatIndex, bm25_search
from components.sparse_retrieval.lexicon import EnglishSpace, encode_batch, load_bpe
from components.sparse_retrieval.metrics import grounding, per_query
from components.sparse_retrieval.model import load_encoder
from components.sparse_retrieval.training import encode_all
from components.training.threads import set_threads
from flows.milco import champion
from flows.milco.common import ENGLISH, PAIRS, QUERIES, TASKS, TOKENIZER, USE_FILE, encoder_signature, log
from flows.milco.params import Params
from flows.milco.spec import DATA, EMBED, EVAL, MODELS
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext

METRIC_COLS = ("nDCG@10", "R@100", "MRR@10")


def split_bench(pairs: dict, queries: list[dict], split: str, side: str) -> dict:
    """One split's queries (qid, text, entity), its documents (pair id, ``side`` text) and their English texts."""
    qs = [q for q in queries if q["split"] == split]
    docs = [p for p in pairs.values() if p["split"] == split]
    return {
        "queries": qs,
        "doc_ids": [d["id"] for d in docs],
        "docs": [d[side] for d in docs],
        "english": [d["en"] for d in docs],
    }


def benchmark(data: Path) -> dict:
    """Per task: queries (qid, text, entity), the documents (pair id, text) and the aligned English texts."""
    pairs = {p["id"]: p for p in read_jsonl(data / PAIRS)}
    queries = read_jsonl(data / QUERIES)
    return {task: split_bench(pairs, queries, split, side) for task, (split, side) in TASKS.items()}


def rank(model, tok, p: Params, bench: dict, latency_sample: int = 200) -> tuple[list[np.ndarray], float]:
    """A trained model's top-k per query through its index (faiss flat for dense, the inverted index for sparse)."""
    if model.cfg.kind == "dense":
        q = encode_all(model, *encode_batch(tok, [x["text"] for x in bench["queries"]], p.model.query_len))["dense"]
        d = encode_all(model, *encode_batch(tok, bench["docs"], p.model.doc_len))["dense"]
        return FlatIndex(d).search_all(q, p.eval.k)
    qm, dm, _ = sparse_task(model, tok, model.cfg, p, bench)
    return IX.InvertedIndex(dm).search_all(qm, p.eval.k, latency_sample=latency_sample)


def score_rows(task: str, system: str, seed, bench: dict, ranked: list[np.ndarray]) -> list[dict]:
    qs, doc_ids = bench["queries"], bench["doc_ids"]
    run = {q["qid"]: [doc_ids[j] for j in r] for q, r in zip(qs, ranked)}
    pq = per_query({q["qid"]: [q["pair_id"]] for q in qs}, run)
    return [
        {"seed": seed, "system": system, "task": task, "qid": q["qid"], "entity": q["entity"], **pq[q["qid"]]}
        for q in qs
    ]


def summary_row(rows: list[dict], **info) -> dict:
    return {**info, **{m: float(np.mean([r[m] for r in rows])) for m in ("nDCG@10", "R@100", "MRR@10")}}


def sparse_task(model, tok, cfg, p: Params, bench: dict, queries=None) -> tuple:
    """A sparse model's query rows (``queries``: rows already encoded for the same queries), document rows and
    document encodings (the pivot feeds grounding)."""
    echo = cfg.echo
    if queries is None:
        q = encode_all(model, *encode_batch(tok, [x["text"] for x in bench["queries"]], p.model.query_len, echo=echo))
        queries = IX.to_csr(q, cfg.vocab_en, cfg.vocab_in, echo=echo)
    d = encode_all(model, *encode_batch(tok, bench["docs"], p.model.doc_len, echo=echo))
    return queries, IX.to_csr(d, cfg.vocab_en, cfg.vocab_in, echo=echo), d


def pruning_sweep(p: Params, seed, bench: dict, qm, dm, dense_bytes: int | None) -> tuple[list[dict], list[dict]]:
    """MILCO's documents pruned by top-k and by mass over the grids, plus the claim points: top-k at
    ``target_dims`` against mass calibrated to the same average, and mass at the dense index's bytes."""
    sweep, claim_rows, done = [], [], {}

    def point(method, param, system=None):
        """Prune, index, search and score once per (method, param): top-k at ``target_dims`` is also a grid
        point, and its rows are reused rather than recomputed."""
        if (method, param) not in done:
            pruned = IX.topk_prune(dm, param) if method == "topk" else IX.mass_prune(dm, param)
            ix = IX.InvertedIndex(pruned)
            ranked, lat = ix.search_all(qm, p.eval.k)
            rows = score_rows("es-en", "", seed, bench, ranked)
            done[method, param] = (
                rows,
                summary_row(
                    rows,
                    seed=seed,
                    method=method,
                    param=float(param),
                    latency_ms=lat,
                    avg_doc_dims=float(IX.active_dims(pruned).mean()),
                    index_bytes=ix.index_bytes,
                ),
            )
        rows, summary = done[method, param]
        sweep.append(summary)
        name = system or f"milco-{method}"
        if system:
            claim_rows.extend({**r, "system": name} for r in rows)
        return summary

    for k in p.eval.topk_grid:
        point("topk", k)
    for f in p.eval.mass_grid:
        point("mass", f)
    top = point("topk", int(round(p.eval.target_dims)), "milco-topk@target")
    point("mass", IX.calibrate_mass(dm, top["avg_doc_dims"]), "milco-mass@target")
    if dense_bytes is not None:
        per_doc = dense_bytes / dm.shape[0] / IX.POSTING_BYTES
        point("mass", IX.calibrate_mass(dm, per_doc), "milco-mass@dense-bytes")
    return sweep, claim_rows


@dataclass(frozen=True)
class EvalJob:
    """One job of the evaluate grid: a seed's models (``params``, ``models``), or, ``seed`` None, the baselines."""

    seed: int | None
    data: str
    params: dict | None = None
    models: str | None = None
    embed: str | None = None
    k: int | None = None


@dataclass
class EvalResult:
    """What one job returns: per-query rows and system rows; a seed also its grounding, its pruning sweep and
    (the first seed) the champion's index (CSR arrays and document ids)."""

    rows: list[dict]
    systems: list[dict]
    grounding: list[dict] = field(default_factory=list)
    sweep: list[dict] = field(default_factory=list)
    champion: dict | None = None


def eval_seed(job: EvalJob) -> EvalResult:
    """One seed's models on every task (module level: process runners pickle it)."""
    p = Params.model_validate(job.params)
    set_threads(p.resources.threads)
    data, seed = Path(job.data), job.seed
    tok, space = load_bpe(data / TOKENIZER), EnglishSpace.load(data / ENGLISH)
    bench = benchmark(data)
    folder = Path(job.models) / f"seed_{seed}"
    rows, systems, ground, sweep = [], [], [], []
    dense_bytes, chosen = None, None
    if "dense" in p.train.variants:
        model = load_encoder(folder / "dense")
        encoded = {}  # split -> query embeddings: es-en and es-es ask the same benchmark queries
        for task, b in bench.items():
            split = TASKS[task][0]
            if split not in encoded:
                texts = [x["text"] for x in b["queries"]]
                encoded[split] = encode_all(model, *encode_batch(tok, texts, p.model.query_len))["dense"]
            q = encoded[split]
            d = encode_all(model, *encode_batch(tok, b["docs"], p.model.doc_len))["dense"]
            ix = FlatIndex(d)
            ranked, lat = ix.search_all(q, p.eval.k)
            r = score_rows(task, "dense", seed, b, ranked)
            rows += r
            systems.append(
                summary_row(
                    r,
                    seed=seed,
                    system="dense",
                    task=task,
                    q_dims=q.shape[1],
                    d_dims=d.shape[1],
                    index_bytes=ix.index_bytes,
                    latency_ms=lat,
                )
            )
            dense_bytes = ix.index_bytes if task == "es-en" else dense_bytes
    for variant in [v for v in p.train.variants if v != "dense"]:
        model = load_encoder(folder / variant)
        encoded = {}  # split -> query rows, encoded once per model
        for task, b in bench.items():
            qm, dm, d = sparse_task(model, tok, model.cfg, p, b, encoded.get(TASKS[task][0]))
            encoded[TASKS[task][0]] = qm
            ix = IX.InvertedIndex(dm)
            ranked, lat = ix.search_all(qm, p.eval.k)
            r = score_rows(task, variant, seed, b, ranked)
            rows += r
            systems.append(
                summary_row(
                    r,
                    seed=seed,
                    system=variant,
                    task=task,
                    latency_ms=lat,
                    q_dims=float(IX.active_dims(qm).mean()),
                    d_dims=float(IX.active_dims(dm).mean()),
                    index_bytes=ix.index_bytes,
                )
            )
            if task == "es-es":  # Spanish documents' top-10 pivot terms against their English translations
                g = grounding(d["pivot"], b["english"], space.terms)
                ground += [{"seed": seed, "system": variant, "doc": i, "grounding": float(x)} for i, x in enumerate(g)]
            if task == "es-en" and variant == "milco":
                s, claim_rows = pruning_sweep(p, seed, b, qm, dm, dense_bytes)
                sweep += s
                rows += claim_rows
                if seed == p.train.seeds[0]:  # the champion's index: the documents this system was scored on
                    chosen = {"docs": (dm.data, dm.indices, dm.indptr, dm.shape), "doc_ids": b["doc_ids"]}
    return EvalResult(rows, systems, ground, sweep, chosen)


def eval_job(job: EvalJob) -> EvalResult:
    """One job of the stage's fan-out: a seed's models, or (``seed`` None) the seedless baselines, which then run
    beside the seeds instead of after them."""
    if job.seed is None:
        rows, systems = baselines(Path(job.data), Path(job.embed), job.k)
        return EvalResult(rows, systems)
    return eval_seed(job)


def baselines(data: Path, embed: Path, k: int) -> tuple[list[dict], list[dict]]:
    """Seedless baselines: BM25 (Spanish stop words; ES->ES is the card's monolingual baseline, ES->EN a lexical
    floor) and USE-multilingual through a faiss flat index."""
    bench = benchmark(data)
    use = load_npz(embed / USE_FILE)
    rows, systems = [], []
    for task, b in bench.items():
        ranked = bm25_search(
            b["docs"], [q["text"] for q in b["queries"]], k, stopwords="es" if task == "es-es" else "en"
        )
        r = score_rows(task, "bm25", None, b, ranked)
        rows += r
        systems.append(summary_row(r, seed=None, system="bm25", task=task))
        split, side = TASKS[task]
        ix = FlatIndex(use[f"{split}_{side}"])
        ranked, lat = ix.search_all(use[f"{split}_q"], k)
        r = score_rows(task, "use", None, b, ranked)
        rows += r
        systems.append(summary_row(r, seed=None, system="use", task=task, index_bytes=ix.index_bytes, latency_ms=lat))
    return rows, systems


def check(rows: list[dict], out: Path) -> None:
    """GX on the per-query table the report reads: one row per (seed, system, task, query), metrics in [0, 1]."""
    table = [
        {"id": f"{r['seed']}|{r['system']}|{r['task']}|{r['qid']}", **{m: r[m] for m in METRIC_COLS}} for r in rows
    ]
    V.validate(
        table,
        [V.unique("id"), *(V.between(m, 0.0, 1.0) for m in METRIC_COLS), V.row_count_between(1, None)],
        name="per-query metrics",
        result_path=out / "_checks" / "per_query.json",
    )


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    data, embed = ctx.input(DATA), ctx.input(EMBED)
    jobs = [
        EvalJob(seed=s, data=str(data), params=p.model_dump(mode="json"), models=str(ctx.input(MODELS)))
        for s in p.train.seeds
    ] + [EvalJob(seed=None, data=str(data), embed=str(embed), k=p.eval.k)]
    *results, base = run_grid(
        ctx, eval_job, jobs, desc="milco eval", workers=p.resources.workers, progress=p.progress, result=EvalResult
    )
    rows, systems = base.rows, base.systems
    for r in results:
        rows += r.rows
        systems += r.systems
    out = ctx.output_dir(EVAL)
    check(rows, out)
    write_jsonl(out / "per_query.jsonl", rows)
    write_jsonl(out / "grounding.jsonl", [g for r in results for g in r.grounding])
    write_jsonl(out / "sweep.jsonl", [s for r in results for s in r.sweep])
    write_json(out / "systems.json", systems)
    log.info("milco evaluate: %d per-query rows, %d systems", len(rows), len(systems))
    summary = {"rows": len(rows), "systems": len(systems)}
    chosen = next((r.champion for r in results if r.champion is not None), None)
    if chosen is not None:
        seed = p.train.seeds[0]
        name = f"{champion.VARIANT}-seed{seed}"
        data, indices, indptr, shape = chosen["docs"]  # the index's CSR arrays (grid results are plain data)
        docs = sp.csr_matrix((data, indices, indptr), shape=shape)
        folder = champion.save(ctx.input(MODELS), seed, docs, chosen["doc_ids"], out / "champion")
        summary["champion"] = champion.candidate(p, _log_champion(ctx, name, folder), name, folder, ctx.paths.root)
    return summary


def _log_champion(ctx: StageContext, name: str, folder: Path) -> str | None:
    """The champion's MLflow child run with its model: the encoder and its index (the allow-listed retriever
    loader; the signature of a logged MILCO encoder)."""
    if ctx.tracker is None:
        return None
    with ctx.tracker.child(f"champion-{name}", {"variant": champion.VARIANT, "task": champion.TASK}) as rid:
        ctx.tracker.log_state_dict_model(rid, folder, loader=champion.LOADER, signature=encoder_signature(folder))
    return rid
