"""Vectorised MinHash signatures and LSH banding in numpy (the default backend).

Why hand-written rather than datasketch: datasketch builds one ``MinHash`` per
document, hashes every shingle with SHA-1 in a Python loop and inserts into LSH
tables one key at a time. Here words and shingles of a whole batch of documents
are hashed with array arithmetic (see :mod:`.shingles`), the permutations of a chunk
of whole documents (up to ``BATCH_SHINGLES`` shingles, a cache-sized matrix) are one
(num_perm x shingles) matrix operation reduced per document with
``np.minimum.reduceat``, and LSH buckets are found by sorting band keys.
``benchmarks/dedup.py`` measures the speed-up on the same corpus. What remains is
numpy's own per-element cost: the uint32 multiply, add and reduceat over every
(permutation, shingle) element, and the serial uint64 ``cumsum`` of the word hashes'
prefix sum (see docs/run-times.md, "Dedup throughput").

Permutations are datasketch's "affine32" family (its default since 2.0): for each
of num_perm seeded pairs (a odd, b), h -> a*h + b mod 2**32. With ``a`` odd this
is a bijection on 32-bit values, so, unlike the older ``(a*h + b) mod (2**61-1)``
truncated to 32 bits, the permutation step adds no collisions; and uint32
arithmetic halves the memory traffic of the hot loop.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Sequence

import numpy as np
from tqdm import tqdm

from components.data.dedup.shingles import shingle_hashes
from components.data.dedup.text import SHINGLE_UNITS
from components.errors import ParamsError

MAX_HASH = np.uint32(0xFFFFFFFF)
# Shingles per matrix operation: 4k x 112 perms x 4 bytes = 1.8 MB, which stays in a core's L2 cache.
BATCH_SHINGLES = 1 << 12
# Characters tokenised per batch (about 16k words of English).
BATCH_CHARS = 96_000
# Buckets larger than this are linked as a star plus a chain instead of all pairs.
MAX_BUCKET_ALL_PAIRS = 32


def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (a, b) uint32 parameters, drawn as datasketch's affine32 scheme draws them."""
    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return a, b


def signatures(
    texts: Sequence[str], *, num_perm: int, shingle_size: int, shingle_unit: str, seed: int, progress: bool = False
) -> np.ndarray:
    """MinHash signatures, shape (len(texts), num_perm) uint32.

    A text with no tokens after normalisation gets the all-``MAX_HASH`` signature;
    callers keep such documents out of LSH.
    """
    if shingle_unit not in SHINGLE_UNITS:
        raise ParamsError(f"shingle_unit: expected one of {SHINGLE_UNITS}, got {shingle_unit!r}")
    a, b = permutations(num_perm, seed)
    sig = np.full((len(texts), num_perm), MAX_HASH, dtype=np.uint32)
    buf = np.empty((num_perm, BATCH_SHINGLES), dtype=np.uint32)
    with tqdm(total=len(texts), desc="minhash", unit="doc", disable=None if progress else True) as bar:
        for lo, hi in _batches(texts):
            hashes, counts = shingle_hashes(texts[lo:hi], shingle_size, shingle_unit)
            _apply(sig[lo:hi], hashes, counts, a, b, buf)
            bar.update(hi - lo)
    return sig


def _batches(texts: Sequence[str]) -> Iterator[tuple[int, int]]:
    """[lo, hi) ranges of documents holding about BATCH_CHARS characters each."""
    lo, size = 0, 0
    for i, text in enumerate(texts):
        size += len(text)
        if size >= BATCH_CHARS:
            yield lo, i + 1
            lo, size = i + 1, 0
    if lo < len(texts):
        yield lo, len(texts)


def _apply(sig: np.ndarray, hashes: np.ndarray, counts: np.ndarray, a: np.ndarray, b: np.ndarray, buf: np.ndarray):
    """Permute shingle hashes with all num_perm functions and write per-document minima into ``sig``.

    ``hashes`` holds the shingles of ``sig``'s documents in order, ``counts[d]`` of them for
    document d. They are permuted in chunks of whole documents (at most ``buf``'s width
    of shingles, so the matrix stays in cache), laid out (num_perm, shingles) in ``buf``:
    numpy broadcasts a column of parameters against a contiguous row about 5x faster than
    the transpose. Each document lies in one chunk, so its row of ``sig`` is assigned
    once; only a document longer than a chunk is folded with ``np.minimum`` piece by piece.
    """
    width = buf.shape[1]
    ends = np.cumsum(counts).tolist()
    d, n = 0, len(ends)
    while d < n:
        s0 = ends[d - 1] if d else 0
        d1 = bisect.bisect_right(ends, s0 + width, lo=d)  # documents d..d1-1 end within the chunk
        if d1 == d:  # document d alone is longer than a chunk
            for s in range(s0, ends[d], width):
                part = _permute(hashes[s : min(s + width, ends[d])], a, b, buf)
                np.minimum(sig[d], part.min(axis=1), out=sig[d])
            d += 1
            continue
        part = _permute(hashes[s0 : ends[d1 - 1]], a, b, buf)
        if part.shape[1]:
            run = counts[d:d1]
            seg = np.cumsum(run) - run
            if run.all():
                sig[d:d1] = np.minimum.reduceat(part, seg, axis=1).T
            else:  # a document without shingles keeps MAX_HASH (reduceat of an empty run is not the identity)
                full = np.flatnonzero(run)
                sig[d + full] = np.minimum.reduceat(part, seg[full], axis=1).T
        d = d1


def _permute(hashes: np.ndarray, a: np.ndarray, b: np.ndarray, buf: np.ndarray) -> np.ndarray:
    """(a * h + b) mod 2**32 for every parameter pair (rows) and hash (columns), written into ``buf``."""
    out = buf[:, : hashes.size]
    np.multiply(a[:, None], hashes[None, :], out=out)  # uint32 wraps: this is the mod 2**32
    out += b[:, None]
    return out


def lsh_pairs(sig: np.ndarray, active: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """Candidate pairs (i < j) of active rows that share all ``rows`` values of some band.

    Returns an int64 array of shape (m, 2), unique pairs, sorted. Buckets larger than
    ``MAX_BUCKET_ALL_PAIRS`` are linked as a star to their first member plus a chain of
    neighbours (linear, not quadratic, in the bucket size).
    """
    idx = np.flatnonzero(active)
    cols = sig[idx, : bands * rows].reshape(idx.size, bands, rows)
    with np.errstate(over="ignore"):  # fold r values into one 64-bit key per band; collisions are verified later
        key = cols[:, :, 0].astype(np.uint64).T.copy()  # (bands, docs): each band's keys contiguous
        for c in range(1, rows):
            key *= np.uint64(0x100000001B3)
            key += cols[:, :, c].T
    order = np.argsort(key, axis=1, kind="stable")  # every band sorted in one call
    found = [_bucket_pairs(idx[order[band]], np.take_along_axis(key[band], order[band], 0)) for band in range(bands)]
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    pairs = np.concatenate(found)
    if pairs.size == 0:
        return pairs.reshape(0, 2)
    n = np.int64(len(sig))  # i * n + j orders pairs as the rows (i, j) sort; 1-d np.unique is far cheaper than axis=0
    code = np.unique(pairs[:, 0] * n + pairs[:, 1])
    return np.stack([code // n, code % n], axis=1)


def _bucket_pairs(si: np.ndarray, sk: np.ndarray) -> np.ndarray:
    """Pairs of document indices ``si`` whose band keys ``sk`` (sorted, stably) are equal."""
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    sizes = np.diff(np.r_[starts, sk.size])
    two = starts[sizes == 2]
    out = [np.stack([si[two], si[two + 1]], axis=1)]
    for s, n in zip(starts[sizes > 2], sizes[sizes > 2], strict=True):
        members = np.sort(si[s : s + n])
        if n <= MAX_BUCKET_ALL_PAIRS:
            out.append(np.array(list(itertools.combinations(members, 2)), dtype=np.int64))
        else:
            star = np.stack([np.full(n - 1, members[0]), members[1:]], axis=1)
            chain = np.stack([members[:-1], members[1:]], axis=1)
            out.append(np.concatenate([star, chain]))
    pairs = np.concatenate(out).astype(np.int64)
    return np.sort(pairs, axis=1)


def verify_pairs(sig: np.ndarray, pairs: np.ndarray, threshold: float, chunk: int = 1 << 15) -> np.ndarray:
    """The pairs whose estimated Jaccard (fraction of equal signature values) >= threshold."""
    keep = np.zeros(len(pairs), dtype=bool)
    for s in range(0, len(pairs), chunk):
        p = pairs[s : s + chunk]
        keep[s : s + chunk] = (sig[p[:, 0]] == sig[p[:, 1]]).mean(axis=1) >= threshold
    return pairs[keep]
