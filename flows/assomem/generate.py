"""Stage ``generate``: the card's meeting memories (one per seed), their size units, the calibration split.

Writes ``data/assomem/memories/<seed>/{utterances,questions}.jsonl``, ``units.json``
(one unit per seed and memory size: the leading projects holding that many
utterances) and GX results under ``_checks/`` for every memory unit.
"""

from __future__ import annotations

import logging

import numpy as np

from components.errors import ParamsError
from components.io import write_json, write_jsonl
from components.retrieval.generator import generate_memory, projects_for_size
from components.retrieval.loaders import load_longmemeval
from components.retrieval.memory import QUESTION_TYPES, validate_memory
from flows.assomem.common import MEMORIES, base_name
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


def run(ctx: StageContext) -> dict:
    p = ctx.params
    d = p.data
    if d.source == "longmemeval":
        mems = load_longmemeval(d.path, hf_id=d.hf_id)  # checks the format; see README for what is wired
        raise ParamsError(f"data.source=longmemeval: loaded {len(mems)} entries, but per-question haystacks are "
                          "not wired into the retrieve stage yet; use data.source=generator")
    out = ctx.output(MEMORIES)
    out.mkdir(parents=True, exist_ok=True)
    units, summary = [], {}
    for seed in d.seeds:
        mem = generate_memory(n_projects=d.n_projects, weeks=d.weeks, seed=seed, min_utterances=d.min_utterances,
                              max_utterances=d.max_utterances, max_facts_per_project=d.max_facts_per_project,
                              temporal_weeks=d.temporal_weeks)
        assign_split(mem.questions, p.method.calibration_frac, p.seed * 1009 + seed)
        base = base_name(seed)
        for size in d.sizes:
            projects = projects_for_size(mem, size)
            sub = mem.subset(projects)
            if len(sub.utterances) < size:
                log.warning("assomem: seed %d holds %d utterances < size %d", seed, len(sub.utterances), size)
            unit = f"{base}-n{size}"
            validate_memory(sub, name=f"assomem/{unit}", result_dir=out / "_checks")
            units.append({"unit": unit, "base": base, "seed": seed, "size": size, "projects": projects,
                          "n_utterances": len(sub.utterances), "n_questions": len(sub.questions)})
        write_jsonl(out / base / "utterances.jsonl", mem.utterances)
        write_jsonl(out / base / "questions.jsonl", mem.questions)
        summary[base] = {"utterances": len(mem.utterances), "questions": len(mem.questions)}
    write_json(out / "units.json", units)
    return {"units": len(units), **{f"{k}_utterances": v["utterances"] for k, v in summary.items()}}
