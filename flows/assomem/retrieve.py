"""Stage ``retrieve``: every method's top-k ranking for every question of every memory unit.

AssoMem's CMI weights are fitted per fitting group (a generator unit; all
memories of a real source, e.g. every LongMemEval haystack) on its calibration
questions (30%) and applied to all its questions; each question is retrieved
from its own unit's memory only. The report scores the test questions only.
Writes ``data/assomem/runs/rankings.jsonl`` (one row per unit, method and
question) and ``weights.json`` (weights and CMI per unit, variant and type).
"""

from __future__ import annotations

import logging
import math

import numpy as np
from tqdm import tqdm

from components.errors import DataError
from components.inputs import check_array, load_npz, load_sparse
from components.io import write_json, write_jsonl
from components.retrieval import baselines
from components.retrieval.assomem import fusion
from components.retrieval.assomem.retriever import AssoMem, AssoMemConfig, rank
from flows.assomem import champion
from flows.assomem.common import fit_group, load_base, load_embeddings, load_units, unit_view
from flows.assomem.params import Params
from flows.assomem.spec import EMBEDDINGS, GRAPHS, MEMORIES, RUNS
from flows.runtime.stages import StageContext
from flows.runtime.tracking import Tensor

log = logging.getLogger("paperline")
VARIANTS = {"assomem": ("R", "I", "T"), "assomem-no-I": ("R", "T"), "assomem-no-T": ("R", "I")}


def config(p) -> AssoMemConfig:
    a = p.method
    return AssoMemConfig(
        top_clues=a.top_clues,
        direct_top=a.direct_top,
        union_direct=a.union_direct,
        fusion=a.fusion,
        damping=a.damping,
        taus=tuple(a.taus),
        temporal_mode=a.temporal_mode,
        temporal_scale=a.temporal_scale,
        n_bins=a.n_bins,
    )


def relevance(sigs, questions, pos_of) -> list[np.ndarray]:
    """Per question: 1 for each candidate that is a gold utterance."""
    return [np.isin(s.candidates, [pos_of[g] for g in q["gold"]]).astype(np.int64) for s, q in zip(sigs, questions)]


def fit_weights(p, sigs, questions, rels) -> tuple[dict, dict]:
    """Per variant: weights per question type (CMI fitted on calibration questions) and the CMI values."""
    cal = [i for i, q in enumerate(questions) if q["split"] == "calibration"]
    rel = [rels[i] for i in cal]
    types = [questions[i]["type"] for i in cal]
    weights, cmis = {"assomem-equal": {"*": fusion.equal_weights(("R", "I", "T"))}}, {}
    for name, signals in VARIANTS.items():
        bins = fusion.calibration_bins(
            [sigs[i] for i in cal], signals, binning=p.method.binning, n_bins=p.method.n_bins
        )
        weights[name], cmis[name] = fusion.cmi_weights(
            bins, rel, types, temperature=p.method.temperature, normalise=p.method.normalise_cmi
        )
    return weights, cmis


def _weights_for(weights: dict, variant: str, qtype: str) -> dict:
    w = weights[variant]
    if "*" in w:
        return w["*"]
    signals = VARIANTS[variant]
    return w.get(qtype, fusion.equal_weights(signals))  # a type absent from calibration: equal weights


def baseline_rankings(p, mem, utt, q_embs, unit) -> dict[str, list]:
    """{method: [ranked utterance index arrays per question]} for the non-AssoMem methods of one unit."""
    k, qtexts = p.top_k, [q["text"] for q in mem.questions]
    out: dict[str, list] = {}
    wanted = set(p.methods)
    if "dense" in wanted:
        out["dense"] = list(baselines.dense_flat(q_embs, utt, k))
    if "bm25" in wanted:
        out["bm25"] = list(baselines.BM25(mem.texts, k1=p.baselines.bm25_k1, b=p.baselines.bm25_b).search(qtexts, k))
    if "recency" in wanted:
        out["recency"] = list(baselines.recency(mem.timestamps, [q["query_time"] for q in mem.questions], k))
    if "topic" in wanted:
        n_cl = p.baselines.topic_clusters or max(2, int(math.sqrt(len(utt))))
        n_cl = min(n_cl, len(utt))  # a small real haystack may hold fewer utterances than clusters
        tg = baselines.TopicGrouping(
            utt, n_clusters=n_cl, seed=p.seed + unit["seed"], top_clusters=p.baselines.topic_top_clusters
        )
        out["topic"] = list(tg.search(q_embs, k))
    return out


def unit_signals(p, mem, utt, q_embs, adj, utt_clue, clue_embs) -> tuple[list, list[np.ndarray]]:
    """AssoMem's per-question signals over one unit's memory and the candidates' relevance labels."""
    am = AssoMem(utt, mem.timestamps, utt_clue, clue_embs, adj, config(p))
    sigs = am.signals(q_embs, [q["query_time"] for q in mem.questions], [q["text"] for q in mem.questions])
    return sigs, relevance(sigs, mem.questions, {uid: i for i, uid in enumerate(mem.ids)})


def rank_variants(p, sigs, questions, weights) -> dict[str, list]:
    """{AssoMem variant: [ranked utterance index arrays per question]} with the group's fitted weights."""
    wanted = set(p.methods)
    return {
        v: [rank(s, _weights_for(weights, v, q["type"]), p.top_k) for s, q in zip(sigs, questions)]
        for v in ("assomem", "assomem-equal", "assomem-no-I", "assomem-no-T")
        if v in wanted
    }


def _track(ctx: StageContext[Params], name: str, unit: dict, info: dict) -> None:
    """One MLflow child run per fitting group (a generator unit; a whole real source) with its fusion weights."""
    if ctx.tracker is None:
        return
    with ctx.tracker.child(f"assomem-{name}", {"unit": name, "size": unit["size"], "seed": unit["seed"]}) as run_id:
        weights = {v: {("all" if t == "*" else t): w for t, w in per.items()} for v, per in info["weights"].items()}
        ctx.tracker.log_metrics(
            {"weights": weights, "cmi": info["cmi"], "mean_candidates": info["mean_candidates"]}, run_id=run_id
        )


class _Loader:
    """Memories, embeddings and graphs of units, keeping the last base's memory and embeddings."""

    def __init__(self, mem_dir, emb_dir, g_dir) -> None:
        self.mem_dir, self.emb_dir, self.g_dir, self.cache = mem_dir, emb_dir, g_dir, {}

    def __call__(self, unit: dict) -> tuple:
        if unit["base"] not in self.cache:
            base_mem = load_base(self.mem_dir, unit["base"])
            self.cache = {unit["base"]: (base_mem, load_embeddings(self.emb_dir, unit["base"], base_mem))}
        base_mem, embs = self.cache[unit["base"]]
        idx, mem = unit_view(base_mem, unit)
        qpos = {q["id"]: i for i, q in enumerate(base_mem.questions)}
        q_embs = embs["questions"][[qpos[q["id"]] for q in mem.questions]]
        g_file = self.g_dir / f"{unit['unit']}.npz"
        g = load_npz(g_file, keys=("utt_clue", "clue_phrase"))
        check_array(g["utt_clue"], g_file, "utt_clue", ndim=1, rows=len(idx))
        cp = check_array(g["clue_phrase"], g_file, "clue_phrase", ndim=1)
        if cp.dtype.kind not in "iu" or (cp.size and (cp.min() < 0 or cp.max() >= len(embs["phrases"]))):
            raise DataError(f"{g_file}: array 'clue_phrase' holds indices outside the {len(embs['phrases'])} phrases")
        adj = load_sparse(self.g_dir / f"{unit['unit']}.adj.npz")
        return mem, embs["utterances"][idx], q_embs, adj, g["utt_clue"], embs["phrases"][g["clue_phrase"]]


def rank_group(p, units: list[dict], load: _Loader) -> tuple[list[tuple], dict, dict]:
    """Rankings of every unit of one fitting group; the CMI weights are fitted on the group's calibration questions."""
    parts, all_sigs, all_qs, all_rels = [], [], [], []
    for unit in units:
        mem, utt, q_embs, adj, utt_clue, clue_embs = load(unit)
        ranked = baseline_rankings(p, mem, utt, q_embs, unit)
        sigs, rels = unit_signals(p, mem, utt, q_embs, adj, utt_clue, clue_embs)
        parts.append((unit, mem, ranked, sigs))
        all_sigs += sigs
        all_qs += mem.questions
        all_rels += rels
    weights, cmis = fit_weights(p, all_sigs, all_qs, all_rels)
    out, infos = [], {}
    for unit, mem, ranked, sigs in parts:
        ranked.update(rank_variants(p, sigs, mem.questions, weights))
        out.append((unit, mem, ranked))
        infos[unit["unit"]] = {
            "weights": weights,
            "cmi": cmis,
            "mean_candidates": float(np.mean([len(s.candidates) for s in sigs])),
        }
    group_info = {
        "weights": weights,
        "cmi": cmis,
        "mean_candidates": float(np.mean([len(s.candidates) for s in all_sigs])),
    }
    return out, infos, group_info


def _rows(unit: dict, mem, ranked: dict) -> list[dict]:
    ids, rows = mem.ids, []
    for method, per_q in ranked.items():
        for q, r in zip(mem.questions, per_q):
            row = {
                "unit": unit["unit"],
                "seed": unit["seed"],
                "size": unit["size"],
                "method": method,
                "qid": q["id"],
                "type": q["type"],
                "split": q["split"],
                "ranked": [ids[i] for i in r],
            }
            if "orig_type" in q:
                row["orig_type"] = q["orig_type"]
            rows.append(row)
    return rows


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    mem_dir = ctx.input(MEMORIES)
    load = _Loader(mem_dir, ctx.input(EMBEDDINGS), ctx.input(GRAPHS))
    out = ctx.output_dir(RUNS)
    groups: dict[str, list[dict]] = {}
    for unit in load_units(mem_dir):
        groups.setdefault(fit_group(unit), []).append(unit)
    rows, infos = [], {}
    for name, units in tqdm(groups.items(), desc="assomem retrieve", disable=None if p.progress else True):
        ranked, unit_infos, group_info = rank_group(p, units, load)
        infos.update(unit_infos)
        _track(ctx, name, units[0], group_info)
        for unit, mem, per_method in ranked:
            rows += _rows(unit, mem, per_method)
    write_jsonl(out / "rankings.jsonl", rows)
    write_json(out / "weights.json", infos)
    summary = {"rankings": len(rows), "units": len(infos)}
    if champion.METHOD in p.methods:
        n_test: dict[str, int] = {}
        for r in rows:
            if r["method"] == champion.METHOD and r["split"] == champion.SPLIT:
                n_test[r["unit"]] = n_test.get(r["unit"], 0) + 1
        unit = champion.choose(load_units(mem_dir), n_test)
        if unit is not None:
            summary["champion"] = _champion(ctx, load, unit, infos[unit["unit"]]["weights"][champion.METHOD], out)
    return summary


def _champion(ctx: StageContext[Params], load: _Loader, unit: dict, weights: dict, out) -> dict | None:
    """AssoMem's index of ``unit`` with its fitted weights, saved (``champion/``), logged and re-evaluated."""
    p = ctx.params
    mem, utt, _, adj, utt_clue, clue_embs = load(unit)
    name = f"{champion.METHOD}-{unit['unit']}"
    folder = champion.save(out / "champion", (utt, adj, utt_clue, clue_embs), mem, config(p), weights, p.top_k, unit)
    return champion.candidate(_log_champion(ctx, name, folder), name, folder, unit, ctx.paths.root)


def _log_champion(ctx: StageContext[Params], name: str, folder) -> str | None:
    """The champion's MLflow child run with its index folder (the allow-listed AssoMem loader); its run id."""
    return ctx.log_model(
        f"index-{name}",
        {"method": champion.METHOD, "unit": name},
        folder,
        loader=champion.LOADER,
        inputs=Tensor("type_time_embedding", "float64", (-1, -1)),
        outputs=Tensor("utterance_positions", "int64", (-1, -1)),
    )
