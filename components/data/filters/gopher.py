"""Gopher quality and repetition rules (Rae et al. 2021, "Scaling Language Models", App. A).

Defaults are the paper's MassiveText thresholds (the same as datatrove's Gopher
filters). Words are whitespace-separated tokens; tokens made only of punctuation
are not words. These thresholds were tuned on web pages: short dictionary entries,
verse-per-line Bible text and poetry with refrains trip them (see ``score_filters``'s
per-source drop rates), so every threshold is a constructor argument.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from components.data.filters.base import KEEP, Decision, Rule, drop

STOP_WORDS = ("the", "be", "to", "of", "and", "that", "have", "with")
BULLETS = ("\u2022", "\u2023", "\u25cf", "\u25e6", "\u2043", "\u2219", "-", "*")
_ALPHA = re.compile(r"[^\W\d_]")
_PUNCT_ONLY = re.compile(r"^[^\w]+$")
_FOLD = np.uint64(0x9E3779B97F4A7C15)


def words_of(text: str) -> list[str]:
    """Whitespace tokens that contain at least one letter, digit or underscore."""
    return [w for w in text.split() if not _PUNCT_ONLY.match(w)]


@dataclass
class GopherQuality(Rule):
    """Drop documents whose length, word shape, symbols or stop words look unlike prose."""

    name: ClassVar[str] = "gopher_quality"
    min_doc_words: int = 50
    max_doc_words: int = 100_000
    min_avg_word_length: float = 3.0
    max_avg_word_length: float = 10.0
    max_symbol_word_ratio: float = 0.1
    max_bullet_lines_ratio: float = 0.9
    max_ellipsis_lines_ratio: float = 0.3
    min_alpha_words_ratio: float = 0.8
    min_stop_words: int = 2
    stop_words: tuple[str, ...] = STOP_WORDS

    def check_text(self, text: str) -> Decision:
        words = words_of(text)
        n = len(words)
        if n < self.min_doc_words:
            return drop("too_few_words")
        if n > self.max_doc_words:
            return drop("too_many_words")
        mean_len = sum(len(w) for w in words) / n
        if not self.min_avg_word_length <= mean_len <= self.max_avg_word_length:
            return drop("mean_word_length")
        symbols = text.count("#") + text.count("...") + text.count("\u2026")
        if symbols / n > self.max_symbol_word_ratio:
            return drop("symbol_word_ratio")
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if lines and sum(ln.startswith(BULLETS) for ln in lines) / len(lines) > self.max_bullet_lines_ratio:
            return drop("bullet_lines")
        if lines and sum(ln.endswith(("...", "\u2026")) for ln in lines) / len(lines) > self.max_ellipsis_lines_ratio:
            return drop("ellipsis_lines")
        if sum(bool(_ALPHA.search(w)) for w in words) / n < self.min_alpha_words_ratio:
            return drop("alpha_words")
        stops = set(self.stop_words)
        if sum(w.lower().strip(".,;:!?\"'()") in stops for w in words) < self.min_stop_words:
            return drop("stop_words")
        return KEEP


@dataclass
class GopherRepetition(Rule):
    """Drop documents dominated by repeated lines, paragraphs or word n-grams.

    Implements all of Gopher's repetition statistics: duplicate line / paragraph
    fractions (by count and by characters), the character share of the most frequent
    2-, 3- and 4-gram, and the character share of words covered by repeated 5- to
    10-grams (each word counted once, the first occurrence of an n-gram not counted).
    N-gram counting is vectorised with numpy (sorting 64-bit n-gram keys), which makes
    the rule about 3x faster than with tuples in a Python set on 2 KB documents.
    """

    name: ClassVar[str] = "gopher_repetition"
    max_dup_line_frac: float = 0.3
    max_dup_para_frac: float = 0.3
    max_dup_line_char_frac: float = 0.2
    max_dup_para_char_frac: float = 0.2
    top_n_grams: tuple[tuple[int, float], ...] = ((2, 0.20), (3, 0.18), (4, 0.16))
    dup_n_grams: tuple[tuple[int, float], ...] = ((5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10))

    def check_text(self, text: str) -> Decision:
        paras = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        for kind, units, max_frac, max_char in (
            ("para", paras, self.max_dup_para_frac, self.max_dup_para_char_frac),
            ("line", lines, self.max_dup_line_frac, self.max_dup_line_char_frac),
        ):
            n_dup, dup_chars, total = _duplicates(units)
            if units and n_dup / len(units) > max_frac:
                return drop(f"dup_{kind}_frac")
            if total and dup_chars / total > max_char:
                return drop(f"dup_{kind}_char_frac")
        words = text.split()
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        total_chars = int(lengths.sum())
        if not total_chars:
            return KEEP
        vocab: dict[str, int] = {}
        ids = np.fromiter((vocab.setdefault(w, len(vocab)) for w in words), dtype=np.uint64, count=len(words))
        for n, max_frac in self.top_n_grams:
            if _top_ngram_chars(ids, lengths, n) / total_chars > max_frac:
                return drop(f"top_{n}gram")
        for n, max_frac in self.dup_n_grams:
            if _dup_ngram_chars(ids, lengths, n) / total_chars > max_frac:
                return drop(f"dup_{n}gram")
        return KEEP


def _duplicates(units: list[str]) -> tuple[int, int, int]:
    """(number of repeats, characters in repeats, total characters); first occurrences are not repeats."""
    seen: set[str] = set()
    n_dup = dup_chars = 0
    for u in units:
        if u in seen:
            n_dup += 1
            dup_chars += len(u)
        seen.add(u)
    return n_dup, dup_chars, sum(len(u) for u in units)


def _ngram_keys(ids: np.ndarray, n: int) -> np.ndarray:
    """A 64-bit key per n-gram of word ids (polynomial fold; collisions are ~2**-64 unlikely)."""
    m = ids.size - n + 1
    with np.errstate(over="ignore"):
        key = ids[:m].copy()
        for j in range(1, n):
            key = key * _FOLD + ids[j : j + m]
    return key


def _top_ngram_chars(ids: np.ndarray, lengths: np.ndarray, n: int) -> int:
    """Characters covered by the most frequent n-gram (count x its word characters), 0 if none repeats.

    Ties go to the n-gram that occurs first, as ``Counter.most_common`` would.
    """
    if ids.size < n:
        return 0
    _, first, counts = np.unique(_ngram_keys(ids, n), return_index=True, return_counts=True)
    top = counts.max()
    if top < 2:
        return 0
    start = first[counts == top].min()
    return int(top * lengths[start : start + n].sum())


def _dup_ngram_chars(ids: np.ndarray, lengths: np.ndarray, n: int) -> int:
    """Characters of words covered by a repeated (not first) occurrence of some n-gram, each word once."""
    if ids.size < n:
        return 0
    _, first, inverse = np.unique(_ngram_keys(ids, n), return_index=True, return_inverse=True)
    repeats = np.flatnonzero(first[inverse] != np.arange(inverse.size))
    depth = np.bincount(repeats, minlength=ids.size + 1) - np.bincount(repeats + n, minlength=ids.size + 1)
    return int(lengths[np.cumsum(depth[: ids.size]) > 0].sum())
