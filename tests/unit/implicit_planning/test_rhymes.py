"""Rhyme families through the CMU dictionary, first-line extraction, QA nouns."""

from __future__ import annotations

import pytest

from components.errors import DataError, ParamsError
from components.implicit_planning import qa as Q
from components.implicit_planning import rhymes as R


@pytest.mark.parametrize(
    ("word", "family"),
    [("night", "ight"), ("delight", "ight"), ("king", "ing"), ("there", "air"), ("ship", "ip"), ("coat", "oat"),
     ("word", "ird"), ("free", "ee"), ("take", "ake"), ("snow", "ow"), ("wit", "it")],
)  # fmt: skip
def test_cmu_families(word, family):
    assert R.families_of(word) == [family]


def test_non_members_and_unknown_words():
    assert R.families_of("now") == []  # /AW/, not the /OW/ of "go"
    assert R.families_of("morning") == []  # stress on "mor"
    assert R.families_of("xqzzy") == []
    with pytest.raises(ParamsError, match="unknown"):
        R.family_part("ough")


def test_candidate_lines_and_family_lines():
    text = "Shall I compare thee to a summer's day?\nThou art more lovely and more temperate.\nO sight!\n[Exit] him"
    assert list(R.candidate_lines(text)) == [
        "Shall I compare thee to a summer's day",
        "Thou art more lovely and more temperate",
    ]
    docs = [{"id": "d1", "source": "x", "text": "And in the darkness of the night\nI saw the little ship\n"
             "And all was fair beneath the light\nAnd all was fair beneath the light"}]  # fmt: skip
    got = R.first_lines_by_family(docs, ["ight", "ip"], per_family=5)
    assert [r["line"] for r in got["ight"]] == [
        "And in the darkness of the night",
        "And all was fair beneath the light",
    ]
    assert [r["line"] for r in got["ip"]] == ["I saw the little ship"]


def test_qa_pairs_differ_in_article_and_load_errors(tmp_path):
    pairs = Q.pairs()
    assert len(pairs) == 20 and all(a["article"] != b["article"] for a, b in pairs)
    assert all(len(n["questions"]) == 3 for p in pairs for n in p)
    assert R.article_initial(" An elephant") == "an" and R.article_initial("The whale") is None
    bad = tmp_path / "qa.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match="qa.json"):
        Q.load_pairs(bad)
    bad.write_text('[{"noun": "x", "article": "the", "questions": ["a?", "b?"]}, {"noun": "y"}]')
    with pytest.raises(DataError, match="article"):
        Q.load_pairs(bad)
