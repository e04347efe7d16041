"""Memory validation (GX) and bad input: no gold in memory, empty memory, missing timestamps, unknown model."""

import numpy as np
import pytest

from components.errors import DataError, OfflineError, ValidationFailed
from components.retrieval.embed import make_embedder, normalise
from components.retrieval.generator import generate_memory
from components.retrieval.memory import Memory, validate_memory


def utts():
    return [
        {
            "id": f"u{i}",
            "session_id": "s0",
            "clue_truth": "P",
            "speaker": "A",
            "text": f"line {i}",
            "timestamp": float(i),
        }
        for i in range(4)
    ]


def test_generated_memory_passes_its_suites(tmp_path):
    mem = generate_memory(n_projects=2, weeks=6, seed=0, temporal_weeks=2)
    validate_memory(mem, name="t", result_dir=tmp_path)
    assert (tmp_path / "t_questions.json").exists()


def test_question_without_gold_in_memory_fails_naming_the_column():
    mem = Memory(utts(), [{"id": "q1", "type": "temporal", "text": "when?", "query_time": 9.0, "gold": ["missing"]}])
    with pytest.raises(ValidationFailed, match="gold_in_memory"):
        validate_memory(mem, name="bad")


def test_empty_memory_is_a_clear_error():
    with pytest.raises(DataError, match="no utterances"):
        Memory([])


def test_utterances_without_timestamps_fail():
    rows = utts()
    del rows[1]["timestamp"]
    with pytest.raises(DataError, match="timestamp"):
        Memory(rows)
    rows = utts()
    rows[2]["timestamp"] = None
    with pytest.raises(ValidationFailed, match="timestamp"):
        validate_memory(Memory(rows), name="nulls")


def test_unordered_timestamps_and_empty_text_fail():
    rows = utts()
    rows[3]["timestamp"] = 0.5
    with pytest.raises(ValidationFailed, match="ts_ordered"):
        validate_memory(Memory(rows), name="order")
    rows = utts()
    rows[0]["text"] = "  "
    with pytest.raises(ValidationFailed, match="text"):
        validate_memory(Memory(rows), name="empty-text")


def test_unknown_embedding_model_offline_fails_at_once(monkeypatch):
    monkeypatch.delenv("PAPERLINE_ONLINE", raising=False)
    with pytest.raises(OfflineError, match="no-such/model"):
        make_embedder("no-such/model")


def test_tfidf_embedder_gives_unit_rows():
    emb = make_embedder("tfidf").fit(["the cat sat", "a dog ran"])
    x = emb.encode(["the cat", "zzz"])
    assert x.shape[0] == 2
    assert abs((x[0] ** 2).sum() - 1) < 1e-5 and (x[1] == 0).all()
    assert np.allclose(normalise([[3.0, 4.0]]), [[0.6, 0.8]])
