"""Real data sources as memory units: clue keyphrases per session and one GX run over many memories.

LongMemEval gives every question its own haystack (one Memory per entry); the
GX suites of :mod:`components.retrieval.memory` then run once over all of them
(ids prefixed by the memory's name, ordering and gold checked within each memory)
instead of once per entry.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from components.data import validate as V
from components.retrieval.memory import QUESTION_SUITE, UTTERANCE_SUITE, Memory, question_frame, utterance_frame

MAX_PHRASE_WORDS = 24


def session_keyphrases(mem: Memory, topics: Mapping[str, str] | None = None) -> list[str]:
    """One clue keyphrase per session (first-appearance order): its topic when given, else its opening utterance.

    The offline stand-in for the paper's LLM clue tagger on data without a project list: a session's
    opening line (truncated to ``MAX_PHRASE_WORDS`` words) usually states what it is about.
    """
    first: dict[str, str] = {}
    for u in mem.utterances:
        if u["session_id"] not in first and str(u["text"]).strip():
            first[u["session_id"]] = str(u["text"])
    for s in dict.fromkeys(mem.sessions):
        first.setdefault(s, s)
    topics = topics or {}
    return [topics.get(s) or " ".join(first[s].split()[:MAX_PHRASE_WORDS]) for s in dict.fromkeys(mem.sessions)]


def validate_many(mems: Mapping[str, Memory], *, name: str, result_dir=None) -> None:
    """Both memory suites over every memory at once (one GX run per suite); ids become ``<memory>/<id>``."""
    utts, qs = [], []
    for key, mem in mems.items():
        u = utterance_frame(mem)
        u["id"] = key + "/" + u["id"].astype(str)
        utts.append(u)
        if mem.questions:
            q = question_frame(mem)
            q["id"] = key + "/" + q["id"].astype(str)
            qs.append(q)
    stem = None if result_dir is None else f"{result_dir}/{name.replace('/', '_')}"
    V.validate(
        pd.concat(utts, ignore_index=True),
        UTTERANCE_SUITE,
        name=f"{name}/utterances",
        result_path=None if stem is None else f"{stem}_utterances.json",
    )
    if qs:
        V.validate(
            pd.concat(qs, ignore_index=True),
            QUESTION_SUITE,
            name=f"{name}/questions",
            result_path=None if stem is None else f"{stem}_questions.json",
        )
