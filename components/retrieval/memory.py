"""Conversational memory: utterances grouped in timestamped sessions, and questions with gold utterances.

The in-memory form every retriever reads. Plain lists of dicts keep the format
close to the JSONL files the pipeline writes (one row per utterance / question).
:func:`validation_suite` holds the Great Expectations checks the card asks for:
every question has at least one gold utterance present in memory, timestamps are
ordered, no utterance is empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from components.data import validate as V
from components.errors import DataError

QUESTION_TYPES = ("single-session", "temporal", "aggregate", "knowledge-update")
UTTERANCE_FIELDS = ("id", "session_id", "clue_truth", "speaker", "text", "timestamp")
QUESTION_FIELDS = ("id", "type", "text", "query_time", "gold")


@dataclass
class Memory:
    """Utterances (sorted by time) and questions. ``timestamp``/``query_time`` are days (floats)."""

    utterances: list[dict]
    questions: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.utterances:
            raise DataError("memory: no utterances (an empty memory cannot be searched)")
        for i, u in enumerate(self.utterances):
            missing = [k for k in ("id", "session_id", "text", "timestamp") if k not in u]
            if missing:
                raise DataError(f"memory utterance {i} ({u.get('id', '?')}): missing field(s) {missing}")

    @property
    def ids(self) -> list[str]:
        return [u["id"] for u in self.utterances]

    @property
    def texts(self) -> list[str]:
        return [u["text"] for u in self.utterances]

    @property
    def timestamps(self) -> np.ndarray:
        return np.array([float(u["timestamp"]) for u in self.utterances])

    @property
    def sessions(self) -> list[str]:
        return [u["session_id"] for u in self.utterances]

    def subset(self, projects: Sequence[str]) -> Memory:
        """The memory restricted to the sessions of ``projects`` and the questions answerable there."""
        keep = set(projects)
        utts = [u for u in self.utterances if u["clue_truth"] in keep]
        qs = [q for q in self.questions if q.get("project") in keep]
        return Memory(utts, qs)


def utterance_frame(mem: Memory) -> pd.DataFrame:
    """One row per utterance plus ``ts_ordered`` (timestamp >= the previous one)."""
    df = pd.DataFrame.from_records(mem.utterances)
    ts = pd.to_numeric(df.get("timestamp"), errors="coerce") if "timestamp" in df else None
    if ts is not None:
        prev = ts.shift(1)
        df["ts_ordered"] = (prev.isna() | (ts >= prev)) & ts.notna()
    return df


def question_frame(mem: Memory) -> pd.DataFrame:
    """One row per question plus ``n_gold`` and ``gold_in_memory`` (every gold id is an utterance)."""
    times = {u["id"]: _number(u.get("timestamp")) for u in mem.utterances}
    rows = []
    for q in mem.questions:
        gold = list(q.get("gold") or [])
        known = bool(gold) and all(g in times for g in gold)
        asked = _number(q.get("query_time"))
        rows.append(
            {
                **q,
                "gold": ",".join(map(str, gold)),
                "n_gold": len(gold),
                "gold_in_memory": known,
                # a question is asked after what answers it (an impossible query_time fails here)
                "asked_after_gold": known and asked >= max(times[g] for g in gold),
            }
        )
    return pd.DataFrame.from_records(rows)


UTTERANCE_SUITE = [
    V.columns_present(["id", "session_id", "text", "timestamp"]),
    V.unique("id"),
    V.non_empty_text("text"),
    V.finite("timestamp"),
    V.in_set("ts_ordered", [True]),
]
QUESTION_SUITE = [
    V.columns_present(["id", "type", "text", "gold"]),
    V.unique("id"),
    V.non_empty_text("text"),
    V.in_set("type", list(QUESTION_TYPES)),
    V.between("n_gold", min_value=1),
    V.in_set("gold_in_memory", [True]),
    V.in_set("asked_after_gold", [True]),
]


def _number(value) -> float:
    """``value`` as a float; NaN when it is not a number (a check then fails on it)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def check_memory(mem: Memory, source: str) -> Memory:
    """The suites' rules, checked in plain Python where a stage reads a memory another stage wrote (GX runs where
    it is produced): unique ids, non-empty text, finite times, gold ids that exist, questions asked after their
    gold. A DataError names ``source`` and the first bad row."""
    times: dict = {}
    for u in mem.utterances:
        t = _number(u["timestamp"])
        if u["id"] in times:
            raise DataError(f"{source}: utterance id {_short_id(u['id'])} appears twice")
        if not isinstance(u["text"], str) or not u["text"].strip():
            raise DataError(f"{source}: utterance {_short_id(u['id'])} has empty text")
        if not np.isfinite(t):
            raise DataError(f"{source}: utterance {_short_id(u['id'])} has timestamp {_short_id(u['timestamp'])}")
        times[u["id"]] = t
    seen = set()
    for q in mem.questions:
        qid = _short_id(q.get("id"))
        if q.get("id") in seen:
            raise DataError(f"{source}: question id {qid} appears twice")
        seen.add(q.get("id"))
        gold = q.get("gold")
        if not isinstance(gold, list) or not gold:
            raise DataError(f"{source}: question {qid} has no gold utterance ids")
        missing = [g for g in gold if not isinstance(g, str) or g not in times]
        if missing:
            raise DataError(f"{source}: question {qid}: gold id {_short_id(missing[0])} is not an utterance")
        asked = _number(q.get("query_time"))
        if not np.isfinite(asked) or asked < max(times[g] for g in gold):
            raise DataError(f"{source}: question {qid}: query_time {_short_id(q.get('query_time'))} is before its gold")
    return mem


def _short_id(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def validate_memory(mem: Memory, *, name: str, result_dir=None) -> None:
    """Run both GX suites; raises ValidationFailed naming the expectation, column and sample rows."""
    u_path = None if result_dir is None else f"{result_dir}/{name.replace('/', '_')}_utterances.json"
    q_path = None if result_dir is None else f"{result_dir}/{name.replace('/', '_')}_questions.json"
    V.validate(utterance_frame(mem), UTTERANCE_SUITE, name=f"{name}/utterances", result_path=u_path)
    if mem.questions:
        V.validate(question_frame(mem), QUESTION_SUITE, name=f"{name}/questions", result_path=q_path)
