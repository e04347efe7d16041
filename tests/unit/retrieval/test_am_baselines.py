"""Baselines (dense, BM25, recency, topic grouping), clues and the LongMemEval loader."""

from pathlib import Path

import numpy as np
import pytest

from components.errors import DataError, ParamsError
from components.retrieval import baselines as B
from components.retrieval.assomem import clues
from components.retrieval.assomem.temporal import recency, target_day, temporal_signal
from components.retrieval.loaders import load_longmemeval

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "assomem" / "longmemeval_tiny.json"


def test_top_k_and_dense_order():
    scores = np.array([[0.1, 0.9, 0.5, 0.9]])
    assert B.top_k(scores, 3).tolist() == [[1, 3, 2]]
    u = np.eye(3, dtype=np.float32)
    assert B.dense_flat(u[[2]], u, 2)[0, 0] == 2


def test_recency_ignores_the_future():
    times = np.array([1.0, 5.0, 3.0, 9.0])
    assert B.recency(times, [6.0], 2).tolist() == [[1, 2]]


def test_bm25_prefers_the_lexical_match():
    texts = ["the budget is large", "we discussed the hiring plan", "a quiet meeting"]
    assert B.BM25(texts).search(["hiring plan"], 2)[0, 0] == 1


def test_topic_grouping_returns_k_distinct_utterances():
    rng = np.random.default_rng(0)
    u = rng.normal(size=(40, 5)).astype(np.float32)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    out = B.TopicGrouping(u, n_clusters=4, seed=0).search(u[:3], 10)
    assert out.shape == (3, 10) and all(len(set(r)) == 10 for r in out)
    with pytest.raises(ParamsError):
        B.TopicGrouping(u, n_clusters=0, seed=0)


def test_clues_pick_the_nearest_keyphrase_and_merge_near_duplicates():
    phrases = np.array([[1.0, 0.0], [0.0, 1.0], [0.05, 0.9987]], dtype=np.float32)
    utts = np.array([[0.9, 0.436], [0.1, 0.995], [0.0, 1.0]], dtype=np.float32)
    got = clues.extract_clues(utts, ["a", "b", "b"], phrases, pooling="max")
    assert got["a"] == 0 and got["b"] in (1, 2)
    canon = clues.merge_clues(phrases, 0.99)
    assert canon[1] == canon[2] != canon[0]


def test_temporal_code_kernel_and_parsed_dates():
    assert recency(np.array([0.0]))[0] == pytest.approx(1.0)
    assert recency(np.array([10.0]))[0] < recency(np.array([1.0]))[0]
    assert target_day("What did we decide 2 weeks ago?", 100.0) == pytest.approx(86.0)
    assert target_day("What is the budget?", 100.0) is None
    sig = temporal_signal(np.array([86.0, 99.0]), 100.0, "decided 2 weeks ago?", mode="parsed")
    assert sig[0] > sig[1]


def test_longmemeval_loader_reads_the_format():
    mems = load_longmemeval(FIXTURE)
    assert len(mems) == 2
    m = mems[0]
    assert m.questions[0]["type"] == "knowledge-update"
    assert m.questions[0]["gold"] == ["s2-u000"]
    assert np.all(np.diff(m.timestamps) >= 0)
    assert mems[1].questions[0]["gold"] == ["a-u000", "a-u001"]  # no has_answer: the answer session's turns


def test_longmemeval_loader_names_bad_fields(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"question_id": "x"}]')
    with pytest.raises(DataError, match=r"bad.json\[0\]: missing field"):
        load_longmemeval(bad)
    bad.write_text("{")
    with pytest.raises(DataError, match="not valid JSON"):
        load_longmemeval(bad)
