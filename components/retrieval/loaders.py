"""Loaders for released benchmark formats, converted to :class:`Memory`.

LongMemEval (``xiaowu0162/longmemeval``, JSON list): every entry has its own
haystack (``haystack_sessions``: lists of turns with ``role``, ``content`` and
``has_answer``; ``haystack_dates``; ``haystack_session_ids``) and one question
(``question_id``, ``question_type``, ``question``, ``question_date``). Gold
utterances are the turns with ``has_answer``; entries with none (some
preference questions) use every turn of ``answer_session_ids``. Abstention
entries (``question_id`` ending in ``_abs``: the answer is not in the haystack)
have nothing to retrieve and are skipped, as in LongMemEval's retrieval metrics.
The MeetingQA loader lives in :mod:`components.retrieval.meetingqa`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from pathlib import Path
from typing import Any

from components.errors import DataError, OfflineError
from components.retrieval.memory import Memory
from components.retrieval.temporal_epoch import EPOCH

log = logging.getLogger(__name__)
LME_TYPES = {
    "single-session-user": "single-session",
    "single-session-assistant": "single-session",
    "single-session-preference": "aggregate",
    "multi-session": "aggregate",
    "temporal-reasoning": "temporal",
    "knowledge-update": "knowledge-update",
}
_REQUIRED = (
    "question_id",
    "question_type",
    "question",
    "question_date",
    "haystack_sessions",
    "haystack_dates",
    "haystack_session_ids",
)


def parse_lme_date(text: str, where: str) -> float:
    """'2023/05/20 (Sat) 02:21' -> days since the memory epoch."""
    try:
        when = dt.datetime.strptime(text.split(" (")[0] + " " + text.rsplit(" ", 1)[-1], "%Y/%m/%d %H:%M")
    except (ValueError, IndexError, AttributeError):
        raise DataError(f"{where}: unreadable date {text!r} (expected 'YYYY/MM/DD (Day) HH:MM')") from None
    return (when - EPOCH).total_seconds() / 86400.0


def _check_entry(entry: Any, where: str) -> None:
    if not isinstance(entry, dict):
        raise DataError(f"{where}: expected an object, got {type(entry).__name__}")
    missing = [k for k in _REQUIRED if k not in entry]
    if missing:
        raise DataError(f"{where}: missing field(s) {missing}")
    if entry["question_type"] not in LME_TYPES:
        raise DataError(f"{where}.question_type: unknown {entry['question_type']!r}; known: {sorted(LME_TYPES)}")
    lengths = {
        k: len(entry[k]) if isinstance(entry[k], list) else -1
        for k in ("haystack_session_ids", "haystack_dates", "haystack_sessions")
    }
    if min(lengths.values()) < 0 or len(set(lengths.values())) != 1:
        raise DataError(
            f"{where}: haystack_session_ids, haystack_dates and haystack_sessions must be lists of "
            f"the same length, got {lengths}"
        )
    if not any(entry["haystack_sessions"]):
        raise DataError(f"{where}.haystack_sessions: empty haystack (no turns to search)")


def _haystack(entry: dict, where: str) -> tuple[list[dict], list[str]]:
    """(utterances, ids of the turns marked has_answer) of one entry's haystack."""
    utts, gold = [], []
    for j, (sid, date, turns) in enumerate(
        zip(entry["haystack_session_ids"], entry["haystack_dates"], entry["haystack_sessions"])
    ):
        t0 = parse_lme_date(date, f"{where}.haystack_dates[{j}]")
        for k, turn in enumerate(turns):
            if not isinstance(turn, dict) or "content" not in turn:
                raise DataError(f"{where}.haystack_sessions[{j}][{k}]: a turn needs a 'content' field")
            uid = f"{sid}-u{k:03d}"
            utts.append(
                {
                    "id": uid,
                    "session_id": str(sid),
                    "clue_truth": str(sid),
                    "speaker": turn.get("role", ""),
                    "text": turn["content"],
                    "timestamp": t0 + k / (24 * 60),
                }
            )
            if turn.get("has_answer"):
                gold.append(uid)
    return utts, gold


def lme_entry_to_memory(entry: dict, where: str = "entry") -> Memory:
    """One LongMemEval entry -> a Memory with its haystack and its one question (type mapped, original kept)."""
    _check_entry(entry, where)
    utts, gold = _haystack(entry, where)
    if not gold:
        answer_sessions = {str(s) for s in entry.get("answer_session_ids") or []}
        gold = [u["id"] for u in utts if u["session_id"] in answer_sessions]
    if not gold:
        raise DataError(
            f"{where}: question {entry['question_id']!r} has no gold turn (no turn with has_answer and "
            "no turn in answer_session_ids)"
        )
    utts.sort(key=lambda u: u["timestamp"])
    q = {
        "id": str(entry["question_id"]),
        "type": LME_TYPES[entry["question_type"]],
        "orig_type": entry["question_type"],
        "text": entry["question"],
        "query_time": parse_lme_date(entry["question_date"], f"{where}.question_date"),
        "gold": gold,
        "project": None,
    }
    return Memory(utts, [q])


def read_json_file(path: str | os.PathLike, what: str) -> Any:
    """The parsed JSON of ``path``; a missing or malformed file is a DataError naming it."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: {what} file not found")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{p}: not valid JSON ({exc})") from None


def load_longmemeval(
    path: str | os.PathLike | None = None, *, hf_id: str | None = None, limit: int | None = None
) -> list[Memory]:
    """One Memory per entry, from a local LongMemEval JSON file or (online only) the HF dataset ``hf_id``."""
    if path is None:
        if os.environ.get("PAPERLINE_ONLINE", "").lower() not in {"1", "true", "yes"}:
            raise OfflineError(f"data.hf_id {hf_id!r}: downloading needs PAPERLINE_ONLINE=1 (or give data.path)")
        from huggingface_hub import hf_hub_download

        path = hf_hub_download(hf_id, "longmemeval_s.json", repo_type="dataset")
    p = Path(path)
    entries = read_json_file(p, "LongMemEval")
    if not isinstance(entries, list):
        raise DataError(f"{p}: expected a JSON list of entries")
    kept = [
        (i, e)
        for i, e in enumerate(entries)
        if not (isinstance(e, dict) and str(e.get("question_id", "")).endswith("_abs"))
    ]
    if len(kept) < len(entries):
        log.info("longmemeval: skipped %d abstention entries (_abs)", len(entries) - len(kept))
    mems = [lme_entry_to_memory(e, f"{p.name}[{i}]") for i, e in kept[:limit]]
    if not mems:
        raise DataError(f"{p}: no entries with a question to retrieve for")
    return mems
