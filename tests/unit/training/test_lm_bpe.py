"""Byte-level BPE: deterministic training, exact round trips, encoding to token arrays."""

import numpy as np
import pytest

from components.errors import DataError, ParamsError
from components.training.tokenizer import (
    EOS,
    bits_per_byte,
    bytes_per_token,
    encode_docs,
    load_bpe,
    token_dtype,
    train_bpe,
)

TEXTS = [
    f"Line {i}: the quick brown fox jumps over the lazy dog; naïve café, 東京 🙂 #{i * 7}\n" for i in range(300)
] + ["It is a truth universally acknowledged, that a single man in possession of a good fortune."] * 20


@pytest.fixture(scope="module")
def tok_path(tmp_path_factory):
    return train_bpe(TEXTS, vocab_size=400, out_path=tmp_path_factory.mktemp("bpe") / "tokenizer.json")


def test_training_is_deterministic(tmp_path, tok_path):
    again = train_bpe(TEXTS, vocab_size=400, out_path=tmp_path / "tokenizer.json")
    assert again.read_bytes() == tok_path.read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.name != "tokenizer.json"]  # no temp files left


def test_vocab_and_special_token(tok_path):
    tok = load_bpe(tok_path)
    assert 257 < tok.get_vocab_size() <= 400
    assert tok.token_to_id(EOS) is not None


@pytest.mark.parametrize("text", ["plain ascii", "  tabs\tand\nnewlines  ", "ünïcödé 日本語 🙂 ∑", "x" * 500])
def test_encode_decode_round_trip(tok_path, text):
    tok = load_bpe(tok_path)
    assert tok.decode(tok.encode(text).ids) == text


def test_merges_compress_frequent_text(tok_path):
    tok = load_bpe(tok_path)
    assert len(tok.encode(TEXTS[-1]).ids) < len(TEXTS[-1].encode()) / 2


def test_encode_docs_concatenates_with_eos(tok_path):
    tok = load_bpe(tok_path)
    docs = ["first doc", "second one", "third"]
    ids = encode_docs(tok, docs)
    eos = tok.token_to_id(EOS)
    assert ids.dtype == np.uint16 and ids.ndim == 1
    assert int((ids == eos).sum()) == 3 and ids[-1] == eos
    assert tok.decode(ids.tolist(), skip_special_tokens=False) == EOS.join(docs) + EOS
    plain = encode_docs(tok, docs, eos=False)
    assert eos not in plain and len(plain) == len(ids) - 3
    assert np.array_equal(encode_docs(tok, iter(docs), chunk_size=1), ids)  # batching does not matter


def test_token_dtype_widens_for_large_vocab():
    assert token_dtype(4096) == np.uint16
    assert token_dtype(65535) == np.uint16
    assert token_dtype(65536) == np.uint32


def test_bytes_per_token_and_bits_per_byte(tok_path):
    tok = load_bpe(tok_path)
    texts = TEXTS[:50]
    n_tokens = sum(len(tok.encode(t).ids) for t in texts)
    bpt = bytes_per_token(tok, texts)
    assert bpt == pytest.approx(sum(len(t.encode()) for t in texts) / n_tokens)
    assert bpt > 1.5
    assert bits_per_byte(np.log(2) * 3.0, 3.0) == pytest.approx(1.0)


def test_errors_name_what_to_fix(tmp_path):
    with pytest.raises(ParamsError, match="vocab_size"):
        train_bpe(TEXTS, vocab_size=100, out_path=tmp_path / "t.json")
    with pytest.raises(DataError, match="not found"):
        load_bpe(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(DataError, match="bad.json"):
        load_bpe(tmp_path / "bad.json")
