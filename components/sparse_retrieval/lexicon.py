"""The shared EN+ES BPE (``tokenizers``), the English lexical space (the top-V English words) and the lexical
teacher: saturated BM25 weights of an English text over that space, a labelled stand-in for SPLADE-v3.

The teacher's output plays SPLADE's max-pooled logits: the pivot of a text is log1p(ReLU(logit)), so the
student's and the teacher's vectors live on the same scale.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from components.errors import DataError

EN_WORD = re.compile(r"[a-z]+")
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[ECHO]"]
PAD, UNK, CLS, ECHO = 0, 1, 2, 3


def english_words(text: str) -> list[str]:
    return EN_WORD.findall(text.lower())


def train_bpe(texts: Sequence[str], vocab_size: int):
    """A BPE over English and Spanish text together (NFKC, lower-case, whitespace/punctuation pre-split)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Digits()])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(list(texts), trainer=trainer)
    for i, s in enumerate(SPECIALS):
        if tok.token_to_id(s) != i:
            raise DataError(f"BPE: special token {s} did not get id {i}")
    return tok


def load_bpe(path: Path):
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on a corrupt file
        raise DataError(f"{path}: not a tokenizers JSON file ({str(exc)[:80]})") from None


def encode_batch(tok, texts: Sequence[str], max_len: int, *, echo: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and mask, [CLS] first (then [ECHO] when ``echo``), cut to ``max_len``, padded with 0."""
    head = [CLS, ECHO] if echo else [CLS]
    rows = [head + e.ids[: max_len - len(head)] for e in tok.encode_batch(list(texts))]
    ids = np.zeros((len(rows), max_len), np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
    return ids, (ids != PAD).astype(np.int64)


def term_tokens(tok, terms: Sequence[str]) -> list[int]:
    """The first BPE token id of each English term (-1 when the BPE gives none): the lexical head's tie."""
    return [(e.ids[0] if e.ids else -1) for e in tok.encode_batch(list(terms))]


class EnglishSpace:
    """The English lexical space: the ``size`` most frequent English words of a corpus, with BM25 statistics."""

    def __init__(self, terms: list[str], df: np.ndarray, n_docs: int, avg_len: float) -> None:
        self.terms = terms
        self.index = {t: i for i, t in enumerate(terms)}
        self.df, self.n_docs, self.avg_len = np.asarray(df, float), int(n_docs), float(avg_len)
        self.idf = np.log(1 + (self.n_docs - self.df + 0.5) / (self.df + 0.5))

    @classmethod
    def build(cls, english_texts: Sequence[str], size: int, min_count: int = 2) -> EnglishSpace:
        if not english_texts:
            raise DataError("English space: no English texts")
        counts, df = Counter(), Counter()
        lengths = []
        for t in english_texts:
            words = english_words(t)
            lengths.append(len(words))
            counts.update(words)
            df.update(set(words))
        terms = [w for w, c in counts.most_common(size) if c >= min_count]
        return cls(terms, np.array([df[t] for t in terms]), len(english_texts), float(np.mean(lengths)))

    def __len__(self) -> int:
        return len(self.terms)

    def teacher(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
        """(n, V) saturated BM25 weights of each English text's in-space words (0 elsewhere)."""
        return self.teacher_csr(texts, k1, b).toarray()

    def teacher_csr(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75):
        """The teacher's weights as a scipy CSR matrix (for corpora too large for a dense array)."""
        import scipy.sparse as sp

        rows, cols, vals = [], [], []
        for i, t in enumerate(texts):
            words = english_words(t)
            tf = Counter(w for w in words if w in self.index)
            norm = k1 * (1 - b + b * len(words) / self.avg_len)
            for w, f in tf.items():
                j = self.index[w]
                rows.append(i)
                cols.append(j)
                vals.append(self.idf[j] * f * (k1 + 1) / (f + norm))
        return sp.csr_matrix((np.asarray(vals, np.float32), (rows, cols)), shape=(len(texts), len(self.terms)))

    def to_json(self) -> dict:
        return {"terms": self.terms, "df": self.df.tolist(), "n_docs": self.n_docs, "avg_len": self.avg_len}

    @classmethod
    def from_json(cls, d: dict) -> EnglishSpace:
        try:
            return cls(list(d["terms"]), np.asarray(d["df"]), int(d["n_docs"]), float(d["avg_len"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"English space JSON: missing or bad field ({exc})") from None

    def save(self, path: Path) -> None:
        from components.io import write_json

        write_json(path, self.to_json())

    @classmethod
    def load(cls, path: Path) -> EnglishSpace:
        from components.io import read_json

        doc = read_json(path, kind=dict)
        try:
            return cls.from_json(doc)
        except (KeyError, TypeError, ValueError, DataError) as exc:
            raise DataError(f"{path}: not an English-space file ({type(exc).__name__}: {str(exc)[:80]})") from None
