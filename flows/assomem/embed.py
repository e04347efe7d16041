"""Stage ``embed``: sentence embeddings of every utterance, question and clue keyphrase (cached as a DVC output).

One ``<seed>.npz`` per generator seed (units are subsets of it). Templated memories
repeat many texts, within and across seeds, so every distinct text is embedded once
(an embedding depends on the text alone). TF-IDF is fitted on the utterances of all
seeds together; MiniLM is pretrained. Real sources: one npz per memory, each with
its own session keyphrases (``clues.json``) as the clue candidates.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from components.io import write_json
from components.retrieval.embed import make_embedder
from components.retrieval.generator import PROJECTS
from flows.assomem.common import base_name, base_phrases, load_base, load_units, unit_bases
from flows.assomem.params import Params
from flows.assomem.spec import EMBEDDINGS, MEMORIES
from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")


def clue_phrases() -> list[str]:
    """The candidate keyphrases the offline clue tagger chooses from (every known project)."""
    return [f"{p} project" for p in PROJECTS]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    mem_dir = ctx.input(MEMORIES)
    out = ctx.output_dir(EMBEDDINGS)
    embedder = make_embedder(p.embedding.model, batch_size=p.embedding.batch_size, progress=p.progress)
    phrases = clue_phrases()
    bases = [base_name(s) for s in p.data.seeds] if p.data.source == "generator" else unit_bases(load_units(mem_dir))
    mems = {b: load_base(mem_dir, b) for b in bases}
    own = {b: base_phrases(mem_dir, b) or phrases for b in bases}
    t0 = time.perf_counter()
    embedder.fit([t for m in mems.values() for t in m.texts])
    texts = list(
        dict.fromkeys(
            [
                *(t for ph in own.values() for t in ph),
                *(t for m in mems.values() for t in m.texts),
                *(q["text"] for m in mems.values() for q in m.questions),
            ]
        )
    )
    table = embedder.encode(texts).astype(np.float32)
    row = {t: i for i, t in enumerate(texts)}
    seconds = round(time.perf_counter() - t0, 2)
    log.info("assomem: embedded %d distinct texts in %.1f s", len(texts), seconds)
    for base, mem in mems.items():
        np.savez(
            out / f"{base}.npz",
            utterances=table[[row[t] for t in mem.texts]],
            questions=table[[row[q["text"]] for q in mem.questions]],
            phrases=table[[row[t] for t in own[base]]],
        )
    n_utts = sum(len(m.utterances) for m in mems.values())
    write_json(
        out / "meta.json",
        {
            "model": p.embedding.model,
            "phrases": phrases if p.data.source == "generator" else None,
            "seconds": seconds,
            "distinct_texts": len(texts),
            "utterances": n_utts,
            "dim": int(table.shape[1]),
        },
    )
    return {"model": p.embedding.model, "seconds": seconds, "distinct_texts": len(texts), "utterances": n_utts}
