"""Stage ``corpus``: the raw pool with labelled near-copies and junk, plus held-out validation sets."""

from __future__ import annotations

from pathlib import Path

from components.data import validate as V
from components.data.corpus import build_pool, inject_noise, stream_hf_text
from components.io import write_json, write_jsonl
from flows.qualitypajama.params import Params
from flows.qualitypajama.spec import CORPUS
from flows.runtime.paths import check_names, safe_join
from flows.runtime.stages import StageContext

POOL_SUITE = [
    V.columns_present(["id", "source", "text", "label", "dup_of", "junk_kind"]),
    V.unique("id"),
    V.non_empty_text("text"),
    V.in_set("label", ["natural", "near_dup", "junk"]),
]
HELDOUT_SUITE = [V.columns_present(["id", "source", "text"]), V.unique("id"), V.non_empty_text("text")]


def _hf_pool(dataset_id: str, budget_bytes: int) -> list[dict]:
    """Stream documents from a Hugging Face dataset (online only) until the byte budget is reached."""
    docs, size = [], 0
    for doc in stream_hf_text(dataset_id):
        docs.append(doc)
        size += len(doc["text"].encode())
        if size >= budget_bytes:
            break
    return docs


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    c = p.corpus
    budget = int(c.pool_mb * 1_000_000)
    if c.hf_dataset:  # fail fast when offline, before reading anything else
        hf_docs = _hf_pool(c.hf_dataset, budget)
    # names become path parts: plain names only (params already restrict them to the known sources)
    sources = check_names(c.sources, "qualitypajama.corpus.sources")
    names = sorted(set(sources) | set(check_names(c.heldout, "qualitypajama.corpus.heldout")))
    files = {name: ctx.input(f"data/sources/{name}.jsonl") for name in names}
    # Size-proportional shares of the pool sources (as the card samples); held-out-only sources give none.
    weights = {name: (float(files[name].stat().st_size) if name in c.sources else 0.0) for name in names}
    pool, heldout = build_pool(
        files,
        budget_bytes=budget,
        weights=weights,
        holdout={name: c.heldout_frac for name in c.heldout},
        seed=p.seed,
    )
    if c.hf_dataset:  # the hub pool replaces the offline one; validation stays on the offline hold-outs
        pool = hf_docs
    docs = inject_noise(pool, near_dup_frac=c.near_dup_frac, junk_frac=c.junk_frac, seed=p.seed, edit_rate=c.edit_rate)
    out = ctx.output(CORPUS)
    checks = Path(out) / "_checks"
    # referential integrity: a near-duplicate's original is a document of the pool
    suite = [*POOL_SUITE, V.references("dup_of", [d["id"] for d in docs], "the pool")] if docs else POOL_SUITE
    V.validate(docs, suite, name="qualitypajama/pool", result_path=checks / "pool.json")
    write_jsonl(Path(out) / "pool.jsonl", docs)
    sizes = {}
    for name, val_docs in sorted(heldout.items()):
        val_docs = val_docs[: c.heldout_max_docs]
        V.validate(
            val_docs,
            HELDOUT_SUITE,
            name=f"qualitypajama/heldout-{name}",
            result_path=safe_join(checks, f"heldout-{name}.json"),
        )
        write_jsonl(safe_join(Path(out), "heldout", f"{name}.jsonl"), val_docs)
        sizes[name] = len(val_docs)
    labels = {lab: sum(d["label"] == lab for d in docs) for lab in ("natural", "near_dup", "junk")}
    summary = {"documents": len(docs), "bytes": sum(len(d["text"].encode()) for d in docs), **labels, "heldout": sizes}
    write_json(Path(out) / "summary.json", summary)
    return summary
