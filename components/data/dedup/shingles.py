"""Vectorised shingle hashing for a batch of documents (the numpy backend's front end).

The shingles are exactly those of :func:`components.data.dedup.text.shingle_strings`
on :func:`components.data.dedup.text.normalize_text` (what the datasketch backend
hashes), but computed without one Python string per word:

* texts are normalised to bytes by :func:`components.data.dedup.text.clean_bytes`
  (a byte table for ASCII text), where every separator is a space (byte 32).
* Word hashes come from one prefix sum over the batch's bytes: with
  H[i] = sum_{j<i} c_j * P**j (mod 2**64, P odd so invertible), the word in bytes
  [s, e) hashes to (H[e] - H[s]) * P**-s, then the MurmurHash3 64-bit finaliser.
* A k-gram of token hashes folds polynomially (h = h*C + t), is finalised again and
  its top 32 bits are the shingle hash.

The hash is deterministic (no per-process salt) and needs no optional package.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from components.data.dedup.text import clean_bytes, normalize_text

_U64 = np.uint64
_C1, _C2 = _U64(0xFF51AFD7ED558CCD), _U64(0xC4CEB9FE1A85EC53)
_BASE = _U64(0x100000001B3)  # odd: P**-1 exists mod 2**64
_BASE_INV = _U64(pow(0x100000001B3, -1, 1 << 64))
_FOLD = _U64(0x9E3779B97F4A7C15)
SPACE = 32


_POW: list[np.ndarray] = [np.ones(1, _U64), np.ones(1, _U64)]  # cached P**i and P**-i


def fmix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, element-wise (uint64 arithmetic wraps mod 2**64)."""
    x = x ^ (x >> _U64(33))
    x = x * _C1
    x = x ^ (x >> _U64(33))
    x = x * _C2
    return x ^ (x >> _U64(33))


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """P**i and P**-i mod 2**64 for i < n (grown and cached)."""
    if _POW[0].size < n:
        size = max(n, 2 * _POW[0].size)
        for slot, base in ((0, _BASE), (1, _BASE_INV)):
            p = np.full(size, base, dtype=_U64)
            p[0] = 1
            _POW[slot] = np.multiply.accumulate(p)
    return _POW[0][:n], _POW[1][:n]


def word_token_hashes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(64-bit hash of every word, index of its document) for a batch, in reading order."""
    parts = [clean_bytes(t) for t in texts]
    lengths = np.fromiter((len(p) + 1 for p in parts), dtype=np.int64, count=len(parts))
    codes = np.frombuffer(b" ".join(parts) + b" ", dtype=np.uint8)
    is_word = codes != SPACE
    edges = np.diff(is_word.astype(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    pw, ipw = _powers(codes.size)
    with np.errstate(over="ignore"):
        prefix = np.concatenate([np.zeros(1, _U64), np.cumsum(codes.astype(_U64) * pw)])
        hashes = fmix64((prefix[ends] - prefix[starts]) * ipw[starts])
    doc = np.searchsorted(np.cumsum(lengths), starts, side="right")
    return hashes, doc


def char_token_hashes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(64-bit hash of every character of the normalised text, index of its document)."""
    cps = [np.frombuffer(normalize_text(t).encode("utf-32-le"), dtype=np.uint32) for t in texts]
    doc = np.repeat(np.arange(len(texts)), [c.size for c in cps])
    flat = np.concatenate(cps) if cps else np.empty(0, np.uint32)
    return fmix64(flat.astype(_U64) + _U64(1)), doc


def batch_shingle_hashes(texts: Sequence[str], k: int, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """32-bit hashes of every document's k-token shingles (repeats kept) and their document index.

    Sorted by document; a document with fewer than k (but some) tokens has one shingle of
    all its tokens; a document without tokens has none.
    """
    tok, doc = (word_token_hashes if unit == "word" else char_token_hashes)(texts)
    n_tok = np.bincount(doc, minlength=len(texts))
    starts = np.flatnonzero(doc[: max(tok.size - k + 1, 0)] == doc[k - 1 :]) if tok.size >= k else np.empty(0, int)
    hashes, owners = [_fold(tok, starts, k)], [doc[starts]]
    short = np.flatnonzero((n_tok > 0) & (n_tok < k))
    if short.size:  # rare: texts shorter than one shingle
        first = np.searchsorted(doc, short)
        for d, s in zip(short, first, strict=True):
            hashes.append(_fold(tok, np.array([s]), int(n_tok[d])))
            owners.append(np.array([d]))
        order = np.argsort(np.concatenate(owners), kind="stable")
        return np.concatenate(hashes)[order], np.concatenate(owners)[order]
    return hashes[0], owners[0]


def _fold(tok: np.ndarray, starts: np.ndarray, k: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        h = tok[starts]
        for j in range(1, k):
            h = h * _FOLD + tok[starts + j]
        return (fmix64(h) >> _U64(32)).astype(np.uint32)
