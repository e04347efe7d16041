"""Stage ``generate``: the card's meeting memories (one per seed), their size units, the calibration split.

Writes ``data/assomem/memories/<seed>/{utterances,questions}.jsonl``, ``units.json``
(one unit per seed and memory size: the leading projects holding that many
utterances) and GX results under ``_checks/`` for every memory unit.

Real sources (``data.source``): LongMemEval gives one memory (base and unit) per
question, its own haystack; MeetingQA one memory of every meeting. Their units
carry ``fit_group`` (the CMI weights are fitted over the calibration questions of
the whole group), one nominal ``size`` (no size axis) and a ``clues.json`` of
session keyphrases per base.
"""

from __future__ import annotations

import logging

import numpy as np

from components.io import write_json, write_jsonl
from components.retrieval.generator import generate_memory, projects_for_size
from components.retrieval.loaders import load_longmemeval
from components.retrieval.meetingqa import load_meetingqa, load_meetingqa_topics
from components.retrieval.memory import QUESTION_TYPES, Memory, validate_memory
from components.retrieval.sources import session_keyphrases, validate_many
from flows.assomem.common import base_name
from flows.assomem.params import Params
from flows.assomem.spec import MEMORIES
from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")


def assign_split(questions: list[dict], frac: float, seed: int) -> None:
    """Mark ``frac`` of each question type as ``calibration`` (CMI fitting), the rest ``test``; seeded."""
    rng = np.random.default_rng(seed)
    for qtype in QUESTION_TYPES:
        ids = [i for i, q in enumerate(questions) if q["type"] == qtype]
        n_cal = int(round(frac * len(ids)))
        cal = set(rng.permutation(ids)[:n_cal].tolist()) if ids else set()
        for i in ids:
            questions[i]["split"] = "calibration" if i in cal else "test"


def load_source(d) -> tuple[dict[str, Memory], dict[str, list[str]]]:
    """{base: Memory} and {base: session keyphrases} of a real source, bases in file order."""
    if d.source == "meetingqa":
        topics = load_meetingqa_topics(d.topics_path) if d.topics_path else None
        mems = {"meetingqa": load_meetingqa(d.path)}
        return mems, {"meetingqa": session_keyphrases(mems["meetingqa"], topics)}
    entries = load_longmemeval(d.path, hf_id=d.hf_id, limit=d.limit)
    mems = {f"lme{i:04d}": m for i, m in enumerate(entries)}
    return mems, {b: session_keyphrases(m) for b, m in mems.items()}


def run_real(ctx: StageContext[Params]) -> dict:
    """Memories, units and the calibration split (over all questions of the source) of a real data source."""
    p, d = ctx.params, ctx.params.data
    mems, phrases = load_source(d)
    assign_split([q for m in mems.values() for q in m.questions], p.method.calibration_frac, p.seed * 1009)
    out = ctx.output_dir(MEMORIES)
    validate_many(mems, name=f"assomem/{d.source}", result_dir=out / "_checks")
    size = int(round(sum(len(m.utterances) for m in mems.values()) / len(mems)))  # nominal: mean memory size
    units = []
    for base, mem in mems.items():
        write_jsonl(out / base / "utterances.jsonl", mem.utterances)
        write_jsonl(out / base / "questions.jsonl", mem.questions)
        write_json(out / base / "clues.json", phrases[base])
        units.append(
            {
                "unit": base,
                "base": base,
                "seed": 0,
                "size": size,
                "fit_group": d.source,
                "n_utterances": len(mem.utterances),
                "n_questions": len(mem.questions),
            }
        )
    write_json(out / "units.json", units)
    n_q = sum(u["n_questions"] for u in units)
    log.info("assomem: %s: %d memories, %d questions, mean memory %d utterances", d.source, len(units), n_q, size)
    return {"units": len(units), "questions": n_q, "mean_utterances": size}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    d = p.data
    if d.source != "generator":
        return run_real(ctx)
    out = ctx.output_dir(MEMORIES)
    units, summary = [], {}
    for seed in d.seeds:
        mem = generate_memory(
            n_projects=d.n_projects,
            weeks=d.weeks,
            seed=seed,
            min_utterances=d.min_utterances,
            max_utterances=d.max_utterances,
            max_facts_per_project=d.max_facts_per_project,
            temporal_weeks=d.temporal_weeks,
        )
        assign_split(mem.questions, p.method.calibration_frac, p.seed * 1009 + seed)
        base = base_name(seed)
        for size in d.sizes:
            projects = projects_for_size(mem, size)
            sub = mem.subset(projects)
            if len(sub.utterances) < size:
                log.warning("assomem: seed %d holds %d utterances < size %d", seed, len(sub.utterances), size)
            unit = f"{base}-n{size}"
            validate_memory(sub, name=f"assomem/{unit}", result_dir=out / "_checks")
            units.append(
                {
                    "unit": unit,
                    "base": base,
                    "seed": seed,
                    "size": size,
                    "projects": projects,
                    "n_utterances": len(sub.utterances),
                    "n_questions": len(sub.questions),
                }
            )
        write_jsonl(out / base / "utterances.jsonl", mem.utterances)
        write_jsonl(out / base / "questions.jsonl", mem.questions)
        summary[base] = {"utterances": len(mem.utterances), "questions": len(mem.questions)}
    write_json(out / "units.json", units)
    return {"units": len(units), **{f"{k}_utterances": v["utterances"] for k, v in summary.items()}}
