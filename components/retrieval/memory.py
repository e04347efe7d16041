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
    ids = set(mem.ids)
    rows = []
    for q in mem.questions:
        gold = list(q.get("gold") or [])
        rows.append(
            {
                **q,
                "gold": ",".join(gold),
                "n_gold": len(gold),
                "gold_in_memory": bool(gold) and all(g in ids for g in gold),
            }
        )
    return pd.DataFrame.from_records(rows)


UTTERANCE_SUITE = [
    V.columns_present(["id", "session_id", "text", "timestamp"]),
    V.unique("id"),
    V.non_empty_text("text"),
    V.not_null("timestamp"),
    V.in_set("ts_ordered", [True]),
]
QUESTION_SUITE = [
    V.columns_present(["id", "type", "text", "gold"]),
    V.unique("id"),
    V.non_empty_text("text"),
    V.in_set("type", list(QUESTION_TYPES)),
    V.between("n_gold", min_value=1),
    V.in_set("gold_in_memory", [True]),
]


def validate_memory(mem: Memory, *, name: str, result_dir=None) -> None:
    """Run both GX suites; raises ValidationFailed naming the expectation, column and sample rows."""
    u_path = None if result_dir is None else f"{result_dir}/{name.replace('/', '_')}_utterances.json"
    q_path = None if result_dir is None else f"{result_dir}/{name.replace('/', '_')}_questions.json"
    V.validate(utterance_frame(mem), UTTERANCE_SUITE, name=f"{name}/utterances", result_path=u_path)
    if mem.questions:
        V.validate(question_frame(mem), QUESTION_SUITE, name=f"{name}/questions", result_path=q_path)
