"""Stage ``curate``: exact dedup, MinHash-LSH dedup per threshold, heuristic filters.

Every curated dataset passes its Great Expectations suite before it is written:
ids unique, no empty text, no two documents with the same normalised text after
any dedup, and (filters) a junk share below ``curation.max_junk_after_filter``.
Precision/recall against the injected ground truth go to ``metrics.json``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from components.data import validate as V
from components.data.dedup import exact_dedup, minhash_dedup, normalize_text, score_dedup, write_dedup
from components.data.filters import apply_filters, get_rules, score_filters
from components.io import read_jsonl, write_json, write_jsonl
from flows.qualitypajama.common import is_curation, kind
from flows.qualitypajama.params import Params
from flows.qualitypajama.spec import CORPUS, CURATED
from flows.runtime.stages import StageContext

BASE_SUITE = [V.columns_present(["id", "text", "label"]), V.unique("id"), V.non_empty_text("text")]


def _bytes(docs: list[dict]) -> int:
    return sum(len(d["text"].encode()) for d in docs)


def _with_norm_hash(docs: list[dict]) -> list[dict]:
    return [{**d, "norm_hash": hashlib.md5(normalize_text(d["text"]).encode()).hexdigest()} for d in docs]


def _curate_one(name: str, docs: list[dict], ctx: StageContext[Params], out: Path) -> dict:
    c = ctx.params.curation
    k = kind(name)
    suite = list(BASE_SUITE)
    extra: dict = {}
    writers = []
    if k == "raw":
        kept = docs
        writers.append(lambda: write_jsonl(out / f"{name}.jsonl", kept))
    elif k in ("exact", "minhash"):
        if k == "exact":
            result = exact_dedup(docs)
        else:
            result = minhash_dedup(
                docs,
                threshold=float(name.split("-", 1)[1]),
                num_perm=c.num_perm,
                bands=c.bands,
                rows=c.rows,
                shingle_size=c.shingle_size,
                seed=ctx.params.seed + 1,
                backend=c.backend,
                progress=True,
            )
        writers.append(lambda: write_dedup(result, out / f"{name}.jsonl", out / f"{name}.clusters.json"))
        kept = result.kept
        extra = {**score_dedup(result, docs), **result.stats()}
        suite.append(V.unique("norm_hash"))
    else:  # gopher | c4
        rules = get_rules(c.filters if k == "gopher" else ["c4"])
        result = apply_filters(docs, rules, progress=True)
        writers.append(lambda: write_jsonl(out / f"{name}.dropped.jsonl", result.dropped))
        writers.append(lambda: write_jsonl(out / f"{name}.jsonl", result.kept))
        kept = result.kept
        extra = {**score_filters(result, docs), **result.stats(), "drop_reasons": result.counts}
        suite.append(V.proportion_where("label", "junk", c.max_junk_after_filter))
    checked = _with_norm_hash(kept) if k in ("exact", "minhash") else kept
    V.validate(checked, suite, name=f"qualitypajama/{name}", result_path=out / "_checks" / f"{name}.json")
    for write in writers:  # only a dataset that passed its suite is written
        write()
    return {"documents": len(kept), "retained_bytes_frac": _bytes(kept) / max(_bytes(docs), 1), **extra}


def run(ctx: StageContext[Params]) -> dict:
    docs = read_jsonl(ctx.input(f"{CORPUS}/pool.jsonl"), required=("id", "text", "label"))
    out = ctx.output_dir(CURATED)
    metrics = {}
    for name in (n for n in ctx.params.interventions if is_curation(n)):
        metrics[name] = _curate_one(name, docs, ctx, out)
    write_json(out / "metrics.json", metrics)
    return {"curation": {n: {k: v for k, v in m.items() if isinstance(v, (int, float))} for n, m in metrics.items()}}
