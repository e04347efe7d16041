"""POPE's JSONL format: the official file's first rows load with their objects; a wrong file is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.errors import DataError
from components.selfaug_decoding.pope_format import load_pope

FIXTURE = Path(__file__).parents[2] / "fixtures" / "selfaug_decoding" / "coco_pope_adversarial_sample.jsonl"


def test_the_official_format_loads():
    rows = load_pope(FIXTURE)
    assert [r["label"] for r in rows[:4]] == ["yes", "no", "yes", "no"]
    assert [r["object"] for r in rows[:2]] == ["snowboard", "backpack"]
    assert rows[0]["image"] == "COCO_val2014_000000310196.jpg"


@pytest.mark.parametrize(
    "text, message",
    [
        ("not json\n", "not a JSON line"),
        ('{"question_id": 1, "image": "a.jpg", "text": "Is there a cat in the image?"}\n', "missing field"),
        ('{"question_id": 1, "image": "a.jpg", "text": "Is there a cat?", "label": "maybe"}\n', "label 'maybe'"),
        ("", "no questions"),
    ],
)
def test_a_wrong_file_is_named(tmp_path, text, message):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    with pytest.raises(DataError, match=f"bad.jsonl.*{message}"):
        load_pope(bad)
