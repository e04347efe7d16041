"""Loaders for released benchmark formats, converted to :class:`Memory`.

LongMemEval (``xiaowu0162/longmemeval``, JSON list): every entry has its own
haystack (``haystack_sessions``: lists of turns with ``role``, ``content`` and
``has_answer``; ``haystack_dates``; ``haystack_session_ids``) and one question
(``question_id``, ``question_type``, ``question``, ``question_date``). Gold
utterances are the turns with ``has_answer``; entries with none (some
preference questions) use every turn of ``answer_session_ids``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from components.errors import DataError, OfflineError
from components.retrieval.memory import Memory
from components.retrieval.temporal_epoch import EPOCH

LME_TYPES = {"single-session-user": "single-session", "single-session-assistant": "single-session",
             "single-session-preference": "aggregate", "multi-session": "aggregate",
             "temporal-reasoning": "temporal", "knowledge-update": "knowledge-update"}
_REQUIRED = ("question_id", "question_type", "question", "question_date", "haystack_sessions", "haystack_dates",
             "haystack_session_ids")


def parse_lme_date(text: str, where: str) -> float:
    """'2023/05/20 (Sat) 02:21' -> days since the memory epoch."""
    try:
        when = dt.datetime.strptime(text.split(" (")[0] + " " + text.rsplit(" ", 1)[-1], "%Y/%m/%d %H:%M")
    except (ValueError, IndexError):
        raise DataError(f"{where}: unreadable date {text!r} (expected 'YYYY/MM/DD (Day) HH:MM')") from None
    return (when - EPOCH).total_seconds() / 86400.0


def lme_entry_to_memory(entry: dict, where: str = "entry") -> Memory:
    """One LongMemEval entry -> a Memory with its haystack and its one question."""
    missing = [k for k in _REQUIRED if k not in entry]
    if missing:
        raise DataError(f"{where}: missing field(s) {missing}")
    if entry["question_type"] not in LME_TYPES:
        raise DataError(f"{where}.question_type: unknown {entry['question_type']!r}; known: {sorted(LME_TYPES)}")
    utts, gold, answer_sessions = [], [], set(entry.get("answer_session_ids") or [])
    for sid, date, turns in zip(entry["haystack_session_ids"], entry["haystack_dates"], entry["haystack_sessions"]):
        t0 = parse_lme_date(date, f"{where}.haystack_dates")
        for k, turn in enumerate(turns):
            uid = f"{sid}-u{k:03d}"
            utts.append({"id": uid, "session_id": sid, "clue_truth": sid, "speaker": turn.get("role", ""),
                         "text": turn.get("content", ""), "timestamp": t0 + k / (24 * 60)})
            if turn.get("has_answer"):
                gold.append(uid)
    if not gold:
        gold = [u["id"] for u in utts if u["session_id"] in answer_sessions]
    utts.sort(key=lambda u: u["timestamp"])
    q = {"id": str(entry["question_id"]), "type": LME_TYPES[entry["question_type"]], "text": entry["question"],
         "query_time": parse_lme_date(entry["question_date"], f"{where}.question_date"), "gold": gold,
         "project": None}
    return Memory(utts, [q])


def load_longmemeval(path: str | os.PathLike | None = None, *, hf_id: str | None = None, limit: int | None = None) -> list[Memory]:
    """Memories from a local LongMemEval JSON file, or (online only) the HF dataset ``hf_id``."""
    if path is None:
        if os.environ.get("PAPERLINE_ONLINE", "").lower() not in {"1", "true", "yes"}:
            raise OfflineError(f"data.hf_id {hf_id!r}: downloading needs PAPERLINE_ONLINE=1 (or give data.path)")
        from huggingface_hub import hf_hub_download

        path = hf_hub_download(hf_id, "longmemeval_s.json", repo_type="dataset")
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: LongMemEval file not found")
    try:
        entries = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(entries, list):
        raise DataError(f"{p}: expected a JSON list of entries")
    return [lme_entry_to_memory(e, f"{p.name}[{i}]") for i, e in enumerate(entries[:limit])]
