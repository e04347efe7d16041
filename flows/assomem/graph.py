"""Stage ``graph``: clues per session (nearest keyphrase, merged), then the clue-utterance graph per memory unit.

Writes ``data/assomem/graphs/<unit>.npz`` (CSR adjacency + clue of each utterance +
the keyphrase representing each merged clue) and ``stats.json`` (clue accuracy
against the generator's truth, node and edge counts). Real sources have no clue
truth: their clue accuracy is null.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from components.io import read_json, write_json
from components.retrieval.assomem import clues, graph
from flows.assomem.common import load_base, load_embeddings, load_units, unit_view
from flows.assomem.params import Params
from flows.assomem.spec import EMBEDDINGS, GRAPHS, MEMORIES
from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")


def build_unit(p, base_mem, embs: dict, phrases: list[str] | None, unit: dict) -> tuple[dict, dict]:
    """Arrays and stats of one unit's graph (``phrases``: the generator's keyphrases, None for real sources)."""
    idx, mem = unit_view(base_mem, unit)
    u = embs["utterances"][idx]
    session_clue = clues.extract_clues(u, mem.sessions, embs["phrases"], pooling=p.graph.clue_pooling)
    canonical = clues.merge_clues(embs["phrases"], p.graph.merge_delta)
    utt_clue = clues.utterance_clues(mem.sessions, session_clue, canonical)
    n_clues = int(canonical.max()) + 1
    rep = np.array([int(np.flatnonzero(canonical == k)[0]) for k in range(n_clues)], dtype=np.int64)
    adj = graph.build_graph(
        u, utt_clue, n_clues, threshold=p.graph.threshold, max_neighbors=p.graph.max_neighbors, backend=p.graph.backend
    )
    truth = {x["session_id"]: x["clue_truth"] for x in mem.utterances}
    acc = (
        None
        if phrases is None
        else float(np.mean([phrases[k].removesuffix(" project") == truth[s] for s, k in session_clue.items()]))
    )
    stats = {
        "utterances": len(idx),
        "clues": n_clues,
        "sessions": len(session_clue),
        "clue_accuracy": acc,
        "edges": int(adj.nnz // 2),
        "sim_edges": int((adj.nnz - 2 * len(idx)) // 2),
    }
    return {"adj": adj, "utt_index": idx, "utt_clue": utt_clue, "clue_phrase": rep}, stats


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    mem_dir, emb_dir = ctx.input(MEMORIES), ctx.input(EMBEDDINGS)
    out = ctx.output_dir(GRAPHS)
    phrases = read_json(emb_dir / "meta.json")["phrases"]
    stats, cache = {}, {}
    for unit in load_units(mem_dir):
        if unit["base"] not in cache:
            mem = load_base(mem_dir, unit["base"])
            cache = {unit["base"]: (mem, load_embeddings(emb_dir, unit["base"], mem))}
        base_mem, embs = cache[unit["base"]]
        arrays, st = build_unit(p, base_mem, embs, phrases, unit)
        sp.save_npz(out / f"{unit['unit']}.adj.npz", arrays.pop("adj"))
        np.savez(out / f"{unit['unit']}.npz", **arrays)
        stats[unit["unit"]] = st
        log.log(logging.INFO if "projects" in unit else logging.DEBUG, "assomem: graph %s: %s", unit["unit"], st)
    write_json(out / "stats.json", stats)
    accs = [s["clue_accuracy"] for s in stats.values() if s["clue_accuracy"] is not None]
    return {"units": len(stats), "min_clue_accuracy": min(accs) if accs else None}
