"""How synthetic subjects are tokenised decides where a tiny LM stores their facts (components/editing/facts.py)."""

from __future__ import annotations

import pytest

from components.editing.facts import add_subject_tokens
from components.training.tokenizer import load_bpe, train_bpe

SUBJECTS = ["Posshes Neartrath", "Posshes Draim", "Brulo Neartrath"]


@pytest.fixture
def tok(tmp_path):
    docs = ["the quick brown fox jumps over the lazy dog and was born in Paris"] * 50
    train_bpe(docs, vocab_size=300, out_path=tmp_path / "tok.json")
    return load_bpe(tmp_path / "tok.json")


def test_parts_gives_each_name_one_token_so_the_subject_ends_on_its_last_name(tok):
    before = tok.get_vocab_size()
    add_subject_tokens(tok, SUBJECTS, "parts")
    pieces = tok.encode("Posshes Neartrath was born in", add_special_tokens=False).tokens
    assert "Posshes" in pieces and "Neartrath" in pieces
    assert pieces.index("Neartrath") > pieces.index("Posshes")
    # three subjects share four names: a name token is reused across subjects, not one token per subject
    assert tok.get_vocab_size() - before == 4


def test_whole_gives_each_subject_one_token(tok):
    add_subject_tokens(tok, SUBJECTS, "whole")
    assert "Posshes Neartrath" in tok.encode("Posshes Neartrath plays", add_special_tokens=False).tokens


def test_a_name_is_not_matched_inside_another_word(tok):
    add_subject_tokens(tok, ["Ban Smith"], "parts")
    assert "Ban" not in tok.encode("Bank of England", add_special_tokens=False).tokens
