"""Real data sources: the LongMemEval and MeetingQA loaders on fixtures in their released formats, bad input."""

import json
from pathlib import Path

import pytest

from components.errors import DataError
from components.retrieval.loaders import load_longmemeval
from components.retrieval.meetingqa import load_meetingqa, load_meetingqa_topics
from components.retrieval.sources import session_keyphrases

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "assomem"
LME, MQA, TOPICS = FIX / "longmemeval_small.json", FIX / "meetingqa_raw_tiny.json", FIX / "meetingqa_topics_tiny.json"


def write(tmp_path, data, name="bad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_longmemeval_maps_types_keeps_the_original_and_skips_abstention():
    mems = load_longmemeval(LME)
    qs = [m.questions[0] for m in mems]
    assert [q["id"] for q in qs] == ["e1", "e2", "e3", "e4", "e5", "e6", "e7"]  # e1_abs skipped
    assert [(q["orig_type"], q["type"]) for q in qs[2:6]] == [
        ("temporal-reasoning", "temporal"),
        ("multi-session", "aggregate"),
        ("knowledge-update", "knowledge-update"),
        ("single-session-preference", "aggregate"),
    ]
    assert qs[2]["gold"] == ["answer_e3_0-u000", "answer_e3_2-u000"]  # the has_answer turns
    assert qs[5]["gold"] == ["answer_e6_1-u000", "answer_e6_1-u001"]  # no has_answer: the answer session's turns
    assert len(mems[0].utterances) == 6 and mems[0].timestamps.tolist() == sorted(mems[0].timestamps)
    assert all(set(q["gold"]) <= set(m.ids) for m, q in zip(mems, qs))


def _lme_entry() -> dict:
    return json.loads(LME.read_text())[0]


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda e: e.pop("question_date"), r"bad\.json\[0\]: missing field\(s\) \['question_date'\]"),
        (lambda e: e.update(haystack_sessions=[[], [], []]), r"bad\.json\[0\]\.haystack_sessions: empty haystack"),
        (lambda e: e.update(haystack_dates=e["haystack_dates"][:1]), r"haystack_dates.*same length"),
        (
            lambda e: (
                [t.pop("has_answer", None) for s in e["haystack_sessions"] for t in s]
                and e.update(answer_session_ids=[])
            ),
            r"bad\.json\[0\]: question 'e1' has no gold turn",
        ),
        (
            lambda e: e["haystack_sessions"][1][0].pop("content"),
            r"haystack_sessions\[1\]\[0\]: a turn needs a 'content'",
        ),
    ],
)
def test_longmemeval_bad_input_names_file_and_field(tmp_path, change, match):
    entry = _lme_entry()
    change(entry)
    with pytest.raises(DataError, match=match):
        load_longmemeval(write(tmp_path, [entry]))


def test_longmemeval_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="nothing.json: LongMemEval file not found"):
        load_longmemeval(tmp_path / "nothing.json")


def test_meetingqa_fields_gold_and_times():
    mem = load_meetingqa(MQA)
    assert len(mem.utterances) == 12 and len(mem.questions) == 7
    by_text = {q["text"]: q for q in mem.questions}
    crm = by_text["What is the name of the CRM system being discussed?"]  # asked in two meetings
    assert crm["gold"] == ["aa11bb22_000", "cc33dd44_000"] and crm["type"] == "aggregate"
    flux = by_text["By how much did Flux reduce invoice generation time?"]
    assert flux["gold"] == ["ee55ff66_001"] and flux["type"] == "single-session" and flux["answer"] == "60 percent"
    first = {u["id"]: u for u in mem.utterances}
    assert first["aa11bb22_001"]["clue_truth"] == "Aurora" and first["aa11bb22_001"]["speaker"] == "Sarah Robinson"
    # meeting 2 of Aurora and of Flux share week 2 (two slots), Aurora's meeting 3 is a week later
    assert first["aa11bb22_000"]["timestamp"] == 14.0 and first["ee55ff66_000"]["timestamp"] == 14.25
    assert first["cc33dd44_000"]["timestamp"] == 21.0
    assert all(q["query_time"] > mem.timestamps.max() for q in mem.questions)


def test_meetingqa_topics_become_session_keyphrases():
    mem = load_meetingqa(MQA)
    topics = load_meetingqa_topics(TOPICS)
    phrases = session_keyphrases(mem, topics)
    assert len(phrases) == 3 and phrases[0].startswith("The team introduced Aurora")
    assert session_keyphrases(mem)[0].startswith("Alright, let's start. Today we look at Aurora")


def _mqa() -> dict:
    return json.loads(MQA.read_text())


@pytest.mark.parametrize(
    "change, match",
    [
        (
            lambda d: d["entries"][3].pop("transcript_message"),
            r"bad\.json\.entries\[3\]: missing field\(s\) \['transcript_message'\]",
        ),
        (lambda d: d.update(entries=[]), r"bad\.json\.entries: empty haystack"),
        (lambda d: [e.pop("qa_pairs", None) for e in d["entries"]], r"bad\.json: no question"),
        (
            lambda d: d["entries"][1].update(qa_pairs=[{"answer": "x"}]),
            r"entries\[1\]\.qa_pairs\[0\]: missing field 'question'",
        ),
        (lambda d: d["entries"][1].update(entry_id=d["entries"][0]["entry_id"]), r"entries\[1\]\.entry_id: duplicate"),
    ],
)
def test_meetingqa_bad_input_names_file_and_field(tmp_path, change, match):
    data = _mqa()
    change(data)
    with pytest.raises(DataError, match=match):
        load_meetingqa(write(tmp_path, data))


def test_meetingqa_wrong_file_and_missing_file(tmp_path):
    with pytest.raises(DataError, match="sessions-with-topics file"):
        load_meetingqa(TOPICS)
    with pytest.raises(DataError, match="MeetingQA file not found"):
        load_meetingqa(tmp_path / "meeting_qa_raw.json")
    with pytest.raises(DataError, match=r"bad\.json\[0\]: missing field 'session_id' or 'topic'"):
        load_meetingqa_topics(write(tmp_path, [{"session_id": "s"}]))
