"""IR metrics through ir_measures equal hand-computed values."""

import math

import pytest

from components.errors import DataError
from components.retrieval import metrics as M


def test_metrics_equal_hand_computed_values():
    qrels = {"q1": ["a", "c"], "q2": ["z"]}
    run = {"q1": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"], "q2": ["b", "c", "z"]}
    out = M.per_query(qrels, run)
    assert out["q1"]["R@6"] == pytest.approx(1.0)
    assert out["q1"]["MRR"] == pytest.approx(1.0)
    dcg = 1 / math.log2(2) + 1 / math.log2(4)
    idcg = 1 / math.log2(2) + 1 / math.log2(3)
    assert out["q1"]["nDCG@10"] == pytest.approx(dcg / idcg)
    assert out["q2"]["R@10"] == pytest.approx(1.0)
    assert out["q2"]["MRR"] == pytest.approx(1 / 3)
    assert out["q2"]["nDCG@10"] == pytest.approx((1 / math.log2(4)) / 1.0)


def test_recall_at_6_counts_only_the_first_six():
    out = M.per_query({"q": ["g", "a"]}, {"q": ["b", "c", "d", "e", "f", "x", "g", "a"]})
    assert out["q"]["R@6"] == 0.0
    assert out["q"]["R@10"] == 1.0


def test_missing_run_scores_zero_and_empty_gold_is_an_error():
    assert M.per_query({"q": ["a"]}, {})["q"]["R@10"] == 0.0
    with pytest.raises(DataError, match="no gold"):
        M.per_query({"q": []}, {"q": ["a"]})


def test_session_ranking_keeps_first_appearance_order():
    session_of = {"u1": "s1", "u2": "s2", "u3": "s1", "u4": "s3"}
    assert M.to_sessions(["u3", "u2", "u1", "u4"], session_of) == ["s1", "s2", "s3"]
