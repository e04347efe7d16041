"""CounterFact and ZsRE edit sets (the MEMIT/ROME data release formats) as edit requests.

Both files are JSON lists. CounterFact rows hold ``requested_rewrite`` {prompt with "{}", subject,
target_new.str, target_true.str}, ``paraphrase_prompts`` and ``neighborhood_prompts``. ZsRE rows
(``zsre_mem_eval.json``) hold ``subject``, ``src`` (question), ``rephrase``, ``alt`` (new answer),
``answers`` (true answers) and ``loc``/``loc_ans`` (an unrelated question for locality). Both map to the
request dict of :func:`components.editing.facts.build_edit_requests`, so every method and metric runs on
them unchanged. Files are read from a local path (offline); the ``full`` profile points at the release.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from components.errors import DataError


def _read(path: str | os.PathLike, limit: int | None) -> list[dict]:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: edit dataset not found")
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(rows, list) or not rows:
        raise DataError(f"{path}: expected a non-empty JSON list of records")
    return rows[:limit] if limit else rows


def _field(row: dict, path: str, where: str):
    node = row
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise DataError(f"{where}: missing field {path!r}")
        node = node[part]
    return node


def load_counterfact(path: str | os.PathLike, limit: int | None = None) -> list[dict]:
    """CounterFact records as edit requests (the rewrite prompt is the only prompt, as in MEMIT)."""
    out = []
    for i, row in enumerate(_read(path, limit)):
        where = f"{path} record {i}"
        rw = _field(row, "requested_rewrite", where)
        subj = _field(rw, "subject", where)
        prompt = _field(rw, "prompt", where)
        if "{}" not in prompt:
            raise DataError(f"{where}: requested_rewrite.prompt has no '{{}}' slot for the subject")
        out.append(
            {
                "id": str(row.get("case_id", i)),
                "subject": subj,
                "relation": rw.get("relation_id", ""),
                "target_true": _field(rw, "target_true.str", where),
                "target_new": _field(rw, "target_new.str", where),
                "prompts": [prompt.format(subj)],
                "paraphrase_prompts": list(row.get("paraphrase_prompts", [])),
                "neighborhood_prompts": list(row.get("neighborhood_prompts", [])),
            }
        )
    return out


def load_zsre(path: str | os.PathLike, limit: int | None = None) -> list[dict]:
    """ZsRE records as edit requests; locality uses the record's unrelated question and its answer.

    ZsRE's locality question has its own answer, not the edited one, so ``neighborhood_prompts`` stays
    empty (specificity is undefined) and ``loc``/``loc_ans`` are kept for a top-1 accuracy check.
    """
    out = []
    for i, row in enumerate(_read(path, limit)):
        where = f"{path} record {i}"
        subj, src = _field(row, "subject", where), _field(row, "src", where)
        if subj not in src:
            raise DataError(f"{where}: subject {subj!r} is not in the question {src!r}")
        answers = _field(row, "answers", where)
        out.append(
            {
                "id": str(row.get("case_id", i)),
                "subject": subj,
                "relation": "zsre",
                "target_true": answers[0] if answers else "",
                "target_new": _field(row, "alt", where),
                "prompts": [src],
                "paraphrase_prompts": [row["rephrase"]] if row.get("rephrase") else [],
                "neighborhood_prompts": [],
                "loc": row.get("loc", ""),
                "loc_ans": row.get("loc_ans", ""),
            }
        )
    return out
