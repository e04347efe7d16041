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


def fmix64(x: np.ndarray, tmp: np.ndarray | None = None) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, element-wise and in place (uint64 arithmetic wraps mod 2**64).

    ``x`` must be a uint64 array the caller owns; ``tmp`` (same shape) is scratch space.
    """
    tmp = np.empty_like(x) if tmp is None else tmp
    for mult in (_C1, _C2):
        np.right_shift(x, _U64(33), out=tmp)
        x ^= tmp
        x *= mult
    np.right_shift(x, _U64(33), out=tmp)
    x ^= tmp
    return x


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
    tok, counts = _word_tokens(texts)
    return tok, np.repeat(np.arange(len(texts)), counts)


def _word_tokens(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(64-bit hash of every word in reading order, number of words of each document).

    One pass of each kind over the batch's bytes: a space mask, its changes (the text is
    framed by spaces, so they alternate word start, word end), and the prefix sum.
    """
    parts = [clean_bytes(t) for t in texts]
    codes = np.frombuffer(b" ".join([b"", *parts, b""]), dtype=np.uint8)
    space = codes == SPACE
    edges = np.flatnonzero(space[1:] != space[:-1]) + 1
    starts, ends = edges[0::2], edges[1::2]
    # document d's bytes start at 1 + the sum of (length + 1) over the documents before it
    bounds = np.ones(len(parts) + 1, dtype=np.int64)
    bounds[1:] += np.cumsum(np.fromiter((len(p) + 1 for p in parts), dtype=np.int64, count=len(parts)))
    counts = np.diff(np.searchsorted(starts, bounds))
    pw, ipw = _powers(codes.size)
    prefix = np.empty(codes.size + 1, dtype=_U64)
    prefix[0] = 0
    with np.errstate(over="ignore"):
        np.multiply(codes, pw, out=prefix[1:])
        np.cumsum(prefix[1:], out=prefix[1:])
        hashes = prefix[ends]
        hashes -= prefix[starts]
        hashes *= ipw[starts]
        fmix64(hashes)
    return hashes, counts


def char_token_hashes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(64-bit hash of every character of the normalised text, index of its document)."""
    tok, counts = _char_tokens(texts)
    return tok, np.repeat(np.arange(len(texts)), counts)


def _char_tokens(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    cps = [np.frombuffer(normalize_text(t).encode("utf-32-le"), dtype=np.uint32) for t in texts]
    counts = np.fromiter((c.size for c in cps), dtype=np.int64, count=len(cps))
    flat = np.concatenate(cps) if cps else np.empty(0, np.uint32)
    with np.errstate(over="ignore"):
        tok = flat.astype(_U64)
        tok += _U64(1)
        return fmix64(tok), counts


def batch_shingle_hashes(texts: Sequence[str], k: int, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """32-bit hashes of every document's k-token shingles (repeats kept) and their document index.

    Sorted by document; a document with fewer than k (but some) tokens has one shingle of
    all its tokens; a document without tokens has none.
    """
    hashes, counts = shingle_hashes(texts, k, unit)
    return hashes, np.repeat(np.arange(len(texts)), counts)


def shingle_hashes(texts: Sequence[str], k: int, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """32-bit hashes of every document's k-token shingles, sorted by document, and their number per document.

    The same shingles as :func:`batch_shingle_hashes`, which derives the document index of each.
    """
    tok, n_tok = (_word_tokens if unit == "word" else _char_tokens)(texts)
    counts = np.maximum(n_tok - (k - 1), 0)
    short = np.flatnonzero((n_tok > 0) & (n_tok < k))
    m = tok.size - k + 1
    if m > 0:
        # fold every window of k consecutive tokens (slices, no gathers), then keep those inside one document
        with np.errstate(over="ignore"):
            h = tok[:m].copy()
            for j in range(1, k):
                h *= _FOLD
                h += tok[j : j + m]
        doc = np.repeat(np.arange(len(n_tok)), n_tok)
        h = h[doc[:m] == doc[k - 1 :]] if k > 1 else h
    else:
        h = np.empty(0, _U64)
    if short.size:  # rare: texts shorter than one shingle
        first = (np.cumsum(n_tok) - n_tok)[short]
        extra = [_fold_one(tok[s : s + int(n_tok[d])]) for d, s in zip(short, first, strict=True)]
        cut = np.cumsum(counts)[short]  # each short text's shingle goes where its (empty) run of shingles is
        h = np.insert(h, cut, np.array(extra, dtype=_U64))
        counts[short] = 1
    with np.errstate(over="ignore"):
        fmix64(h)
    h >>= _U64(32)
    return h.astype(np.uint32), counts


def _fold_one(tok: np.ndarray) -> int:
    """The unfinalised polynomial fold of one short text's tokens."""
    with np.errstate(over="ignore"):
        h = tok[:1].copy()
        for t in tok[1:]:
            h *= _FOLD
            h += t
    return h[0]
