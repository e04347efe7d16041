"""MeetingQA (the AssoMem paper's dataset, ``facebookresearch/AssoMem``, CC-BY-NC; only its format is reused).

``dataset/MeetingQA/meeting_qa_raw.json`` is an object whose ``entries`` list
holds one utterance each: ``session_id`` (``meeting_<project>_<n>_<hash>``),
``entry_id``, ``speaker_id``, ``transcript_message`` and, on the utterances that
answer a question, ``qa_pairs`` (``[{"question", "answer"}]``). The entry that
carries a question is its gold utterance; a question text carried by several
entries has all of them as gold. ``reformatted_meetingqa_with_topics.json`` is a
list of sessions (``session_id``, ``message``, ``topic``); only its ``topic``
(one summary per session) is used, as the session's clue keyphrase.

The files hold no dates or question types. Our choices: meeting ``n`` of a
project is held in week ``n`` (``timestamp = 7 n`` days, sessions of the same
week in 6-hour slots, utterances 15 s apart); every question is asked one day
after the last meeting; a question whose gold lies in one session is
``single-session``, one whose gold spans sessions is ``aggregate``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from components.errors import DataError
from components.retrieval.loaders import read_json_file
from components.retrieval.memory import Memory

_SESSION = re.compile(r"^meeting_(?P<project>[^_]+)_(?P<n>\d+)_")
_FIELDS = ("session_id", "entry_id", "speaker_id", "transcript_message")


def _entries(data: Any, name: str) -> list[dict]:
    if isinstance(data, list) and data and isinstance(data[0], dict) and "topic" in data[0]:
        raise DataError(
            f"{name}: this is the sessions-with-topics file; give meeting_qa_raw.json as data.path "
            "and this one as data.topics_path"
        )
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise DataError(f"{name}: expected an object with an 'entries' list (meeting_qa_raw.json format)")
    if not data["entries"]:
        raise DataError(f"{name}.entries: empty haystack (no utterances)")
    for i, e in enumerate(data["entries"]):
        if not isinstance(e, dict):
            raise DataError(f"{name}.entries[{i}]: expected an object, got {type(e).__name__}")
        missing = [k for k in _FIELDS if k not in e]
        if missing:
            raise DataError(f"{name}.entries[{i}]: missing field(s) {missing}")
    return data["entries"]


def _session_times(entries: list[dict]) -> dict[str, tuple[str, float]]:
    """session id -> (project, start day): week n of the id, 6-hour slots for sessions of the same week."""
    out: dict[str, tuple[str, float]] = {}
    slots: dict[int, int] = {}
    for e in entries:
        sid = str(e["session_id"])
        if sid in out:
            continue
        m = _SESSION.match(sid)
        project, week = (m["project"], int(m["n"])) if m else (sid, len(out))
        slot = slots[week] = slots.get(week, -1) + 1
        out[sid] = (project, 7.0 * week + slot / 4.0)
    return out


def _utterances(entries: list[dict], name: str) -> list[dict]:
    starts, seen, position = _session_times(entries), set(), {}
    utts = []
    for i, e in enumerate(entries):
        uid, sid = str(e["entry_id"]), str(e["session_id"])
        if uid in seen:
            raise DataError(f"{name}.entries[{i}].entry_id: duplicate {uid!r}")
        seen.add(uid)
        k = position[sid] = position.get(sid, -1) + 1
        project, start = starts[sid]
        utts.append(
            {
                "id": uid,
                "session_id": sid,
                "clue_truth": project,
                "speaker": str(e["speaker_id"]),
                "text": str(e["transcript_message"]),
                "timestamp": start + k / (24 * 60 * 4),
            }
        )
    return sorted(utts, key=lambda u: u["timestamp"])


def _questions(entries: list[dict], name: str, query_time: float) -> list[dict]:
    gold: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        pairs = e.get("qa_pairs") or []
        if not isinstance(pairs, list):
            raise DataError(f"{name}.entries[{i}].qa_pairs: expected a list of {{question, answer}}")
        for j, qa in enumerate(pairs):
            if not isinstance(qa, dict) or not str(qa.get("question", "")).strip():
                raise DataError(f"{name}.entries[{i}].qa_pairs[{j}]: missing field 'question'")
            gold.setdefault(str(qa["question"]).strip(), []).append(i)
    if not gold:
        raise DataError(f"{name}: no question (no entry has qa_pairs)")
    out = []
    for n, (text, rows) in enumerate(gold.items()):
        sessions = {str(entries[i]["session_id"]) for i in rows}
        answers = [qa.get("answer") for i in rows for qa in entries[i]["qa_pairs"] if qa["question"].strip() == text]
        out.append(
            {
                "id": f"mqa-{n:04d}",
                "type": "single-session" if len(sessions) == 1 else "aggregate",
                "orig_type": "meetingqa",
                "text": text,
                "answer": answers[0],
                "query_time": query_time,
                "gold": [str(entries[i]["entry_id"]) for i in rows],
                "project": None,
            }
        )
    return out


def load_meetingqa(path: str | os.PathLike) -> Memory:
    """The whole MeetingQA memory (every meeting) and its questions, from ``meeting_qa_raw.json``."""
    name = Path(path).name
    entries = _entries(read_json_file(path, "MeetingQA"), name)
    utts = _utterances(entries, name)
    return Memory(utts, _questions(entries, name, query_time=float(utts[-1]["timestamp"]) + 1.0))


def load_meetingqa_topics(path: str | os.PathLike) -> dict[str, str]:
    """session id -> topic summary, from ``reformatted_meetingqa_with_topics.json``."""
    name = Path(path).name
    data = read_json_file(path, "MeetingQA topics")
    if not isinstance(data, list):
        raise DataError(f"{name}: expected a JSON list of sessions with 'session_id' and 'topic'")
    out = {}
    for i, s in enumerate(data):
        if not isinstance(s, dict) or "session_id" not in s or not str(s.get("topic", "")).strip():
            raise DataError(f"{name}[{i}]: missing field 'session_id' or 'topic'")
        out[str(s["session_id"])] = str(s["topic"])
    return out
