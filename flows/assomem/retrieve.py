"""Stage ``retrieve``: every method's top-k ranking for every question of every memory unit.

AssoMem's CMI weights are fitted per unit on its calibration questions (30%)
and applied to all questions; the report scores the test questions only.
Writes ``data/assomem/runs/rankings.jsonl`` (one row per unit, method and
question) and ``weights.json`` (weights and CMI per unit, variant and type).
"""

from __future__ import annotations

import logging
import math

import numpy as np
import scipy.sparse as sp
from tqdm import tqdm

from components.io import write_json, write_jsonl
from components.retrieval import baselines
from components.retrieval.assomem import fusion
from components.retrieval.assomem.retriever import AssoMem, AssoMemConfig, rank
from flows.assomem.common import EMBEDDINGS, GRAPHS, MEMORIES, RUNS, load_base, load_units, unit_view
from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")
VARIANTS = {"assomem": ("R", "I", "T"), "assomem-no-I": ("R", "T"), "assomem-no-T": ("R", "I")}


def config(p) -> AssoMemConfig:
    a = p.method
    return AssoMemConfig(top_clues=a.top_clues, direct_top=a.direct_top, union_direct=a.union_direct,
                         damping=a.damping, taus=tuple(a.taus), temporal_mode=a.temporal_mode,
                         temporal_scale=a.temporal_scale, n_bins=a.n_bins)


def fit_weights(p, sigs, questions, pos_of) -> tuple[dict, dict]:
    """Per variant: weights per question type (CMI fitted on calibration questions) and the CMI values."""
    cal = [i for i, q in enumerate(questions) if q["split"] == "calibration"]
    rel = [np.isin(sigs[i].candidates, [pos_of[g] for g in questions[i]["gold"]]).astype(np.int64) for i in cal]
    types = [questions[i]["type"] for i in cal]
    weights, cmis = {"assomem-equal": {"*": fusion.equal_weights(("R", "I", "T"))}}, {}
    for name, signals in VARIANTS.items():
        bins = {d: [sigs[i].bins[d] for i in cal] for d in signals}
        weights[name], cmis[name] = fusion.cmi_weights(bins, rel, types, temperature=p.method.temperature,
                                                       normalise=p.method.normalise_cmi)
    return weights, cmis


def _weights_for(weights: dict, variant: str, qtype: str) -> dict:
    w = weights[variant]
    if "*" in w:
        return w["*"]
    signals = VARIANTS[variant]
    return w.get(qtype, fusion.equal_weights(signals))  # a type absent from calibration: equal weights


def rank_unit(p, mem, utt, q_embs, adj, utt_clue, clue_embs, unit) -> tuple[dict, dict]:
    """{method: [ranked utterance index arrays per question]} and the fitted weights for one unit."""
    k, qs = p.top_k, mem.questions
    times, qtimes, qtexts = mem.timestamps, [q["query_time"] for q in qs], [q["text"] for q in qs]
    out: dict[str, list] = {}
    wanted = set(p.methods)
    if "dense" in wanted:
        out["dense"] = list(baselines.dense_flat(q_embs, utt, k))
    if "bm25" in wanted:
        out["bm25"] = list(baselines.BM25(mem.texts, k1=p.baselines.bm25_k1, b=p.baselines.bm25_b).search(qtexts, k))
    if "recency" in wanted:
        out["recency"] = list(baselines.recency(times, qtimes, k))
    if "topic" in wanted:
        n_cl = p.baselines.topic_clusters or max(2, int(math.sqrt(len(utt))))
        tg = baselines.TopicGrouping(utt, n_clusters=n_cl, seed=p.seed + unit["seed"], top_clusters=p.baselines.topic_top_clusters)
        out["topic"] = list(tg.search(q_embs, k))
    am = AssoMem(utt, times, utt_clue, clue_embs, adj, config(p))
    sigs = am.signals(q_embs, qtimes, qtexts)
    pos_of = {uid: i for i, uid in enumerate(mem.ids)}
    weights, cmis = fit_weights(p, sigs, qs, pos_of)
    for variant in ("assomem", "assomem-equal", "assomem-no-I", "assomem-no-T"):
        if variant in wanted:
            out[variant] = [rank(s, _weights_for(weights, variant, q["type"]), k) for s, q in zip(sigs, qs)]
    info = {"weights": weights, "cmi": cmis, "mean_candidates": float(np.mean([len(s.candidates) for s in sigs]))}
    return out, info


def _track(ctx: StageContext, unit: dict, info: dict) -> None:
    """One MLflow child run per memory unit holding its fitted fusion weights (the only fitted "model")."""
    if ctx.tracker is None:
        return
    with ctx.tracker.child(f"assomem-{unit['unit']}", {"unit": unit["unit"], "size": unit["size"],
                                                        "seed": unit["seed"]}) as run_id:
        weights = {v: {("all" if t == "*" else t): w for t, w in per.items()} for v, per in info["weights"].items()}
        ctx.tracker.log_metrics({"weights": weights, "cmi": info["cmi"],
                                 "mean_candidates": info["mean_candidates"]}, run_id=run_id)


def run(ctx: StageContext) -> dict:
    p = ctx.params
    mem_dir, emb_dir, g_dir = ctx.input(MEMORIES), ctx.input(EMBEDDINGS), ctx.input(GRAPHS)
    out = ctx.output(RUNS)
    out.mkdir(parents=True, exist_ok=True)
    rows, infos, cache = [], {}, {}
    for unit in tqdm(load_units(mem_dir), desc="assomem retrieve", disable=not p.progress):
        if unit["base"] not in cache:
            cache = {unit["base"]: (load_base(mem_dir, unit["base"]), dict(np.load(emb_dir / f"{unit['base']}.npz")))}
        base_mem, embs = cache[unit["base"]]
        idx, mem = unit_view(base_mem, unit)
        qpos = {q["id"]: i for i, q in enumerate(base_mem.questions)}
        q_embs = embs["questions"][[qpos[q["id"]] for q in mem.questions]]
        g = np.load(g_dir / f"{unit['unit']}.npz")
        adj = sp.load_npz(g_dir / f"{unit['unit']}.adj.npz")
        ranked, info = rank_unit(p, mem, embs["utterances"][idx], q_embs, adj, g["utt_clue"],
                                 embs["phrases"][g["clue_phrase"]], unit)
        infos[unit["unit"]] = info
        _track(ctx, unit, info)
        ids = mem.ids
        for method, per_q in ranked.items():
            for q, r in zip(mem.questions, per_q):
                rows.append({"unit": unit["unit"], "seed": unit["seed"], "size": unit["size"], "method": method,
                             "qid": q["id"], "type": q["type"], "split": q["split"], "ranked": [ids[i] for i in r]})
    write_jsonl(out / "rankings.jsonl", rows)
    write_json(out / "weights.json", infos)
    return {"rankings": len(rows), "units": len(infos)}
