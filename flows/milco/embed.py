"""Stage ``embed``: USE-multilingual embeddings, computed once: the stage-2 training queries and their English and
Spanish paragraphs (the KL teacher's scores), and the benchmark queries and corpora (the USE baseline)."""

from __future__ import annotations

import numpy as np

from components.data import validate as V
from components.io import read_jsonl
from components.sparse_retrieval.baselines import use_encode
from flows.milco.common import PAIRS, QUERIES, USE_FILE, log
from flows.milco.params import Params
from flows.milco.spec import DATA, EMBED
from flows.runtime.stages import StageContext


def texts_to_embed(pairs: list[dict], queries: list[dict], *, teacher: bool) -> dict[str, list[str]]:
    """Named text lists, in the order every later stage reads them (queries by split; docs by their pair); the
    stage-2 training texts only when the KL teacher is on."""
    by_id = {p["id"]: p for p in pairs}
    out = {}
    for split in (("train",) if teacher else ()) + ("bench", "bible"):
        qs = [q for q in queries if q["split"] == split]
        out[f"{split}_q"] = [q["text"] for q in qs]
        out[f"{split}_en"] = [by_id[q["pair_id"]]["en"] for q in qs]
        out[f"{split}_es"] = [by_id[q["pair_id"]]["es"] for q in qs]
    return out


def run(ctx: StageContext[Params]) -> dict:
    pairs = read_jsonl(ctx.input(f"{DATA}/{PAIRS}"))
    queries = read_jsonl(ctx.input(f"{DATA}/{QUERIES}"))
    arrays = {
        name: use_encode(texts)
        for name, texts in texts_to_embed(pairs, queries, teacher=ctx.params.train.kl_weight > 0).items()
    }
    table = [
        {"id": f"{name}:{i}", "norm": float(np.linalg.norm(v))} for name, a in arrays.items() for i, v in enumerate(a)
    ]
    out = ctx.output_dir(EMBED)
    V.validate(
        table,
        [V.unique("id"), V.finite("norm"), V.between("norm", 0.98, 1.02)],
        name="use embeddings",
        result_path=out / "_checks" / "use.json",
    )
    np.savez(out / USE_FILE, **arrays)
    summary = {name: list(a.shape) for name, a in arrays.items()}
    log.info("milco embed: %s", summary)
    return summary
