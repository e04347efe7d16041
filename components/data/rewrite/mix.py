"""Mix synthetic (rewritten) and natural documents at a byte fraction.

The paper's mixes (synthetic:natural 100/0, 67/33, 33/67) are fractions of the
training text. Here they are fractions of UTF-8 bytes, which a byte-level BPE
turns into tokens at a similar rate for both kinds of text:

1. ``total`` is ``total_bytes``, or by default the largest total both pools
   can supply at the fraction: ``min(S / f, N / (1 - f))`` for synthetic bytes
   ``S``, natural bytes ``N`` and fraction ``f``.
2. Each pool is shuffled with its own seeded generator, and the prefix whose
   cumulative bytes is closest to its target (``f * total`` or
   ``(1 - f) * total``) is taken, so each side misses its target by at most
   half a document.
3. The union is shuffled (seeded) so training does not see the two kinds in
   blocks.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from components.errors import DataError, ParamsError

log = logging.getLogger(__name__)


def doc_bytes(doc: dict) -> int:
    """UTF-8 size of a document's text."""
    return len(str(doc.get("text", "")).encode("utf-8"))


def mix_synthetic(
    natural_docs: Sequence[dict],
    synthetic_docs: Sequence[dict],
    *,
    synthetic_frac: float,
    total_bytes: int | None = None,
    seed: int,
) -> list[dict]:
    """Return a shuffled mix whose synthetic share of text bytes is about ``synthetic_frac``."""
    f = float(synthetic_frac)
    if not 0.0 <= f <= 1.0:
        raise ParamsError(f"synthetic_frac must be in [0, 1], got {synthetic_frac}")
    syn_sizes = np.array([doc_bytes(d) for d in synthetic_docs], dtype=np.int64)
    nat_sizes = np.array([doc_bytes(d) for d in natural_docs], dtype=np.int64)
    avail_s, avail_n = int(syn_sizes.sum()), int(nat_sizes.sum())
    if f > 0 and avail_s == 0:
        raise DataError(f"synthetic_frac={f} needs synthetic documents, but none (or only empty ones) were given")
    if f < 1 and avail_n == 0:
        raise DataError(f"synthetic_frac={f} needs natural documents, but none (or only empty ones) were given")
    achievable = min(avail_s / f if f > 0 else np.inf, avail_n / (1 - f) if f < 1 else np.inf)
    if total_bytes is None:
        total = float(achievable)
    elif total_bytes <= 0 or total_bytes > achievable * (1 + 1e-9):
        raise ParamsError(
            f"total_bytes={total_bytes} is out of range: the pools supply at most {int(achievable)} bytes "
            f"at synthetic_frac={f} ({avail_s} synthetic, {avail_n} natural bytes)"
        )
    else:
        total = float(total_bytes)
    syn = _take(synthetic_docs, syn_sizes, f * total, np.random.default_rng([seed, 1]))
    nat = _take(natural_docs, nat_sizes, (1 - f) * total, np.random.default_rng([seed, 2]))
    mixed = syn + nat
    order = np.random.default_rng([seed, 3]).permutation(len(mixed))
    got_s = sum(doc_bytes(d) for d in syn)
    got = got_s + sum(doc_bytes(d) for d in nat)
    log.info(
        "mix: %d synthetic + %d natural docs, %d bytes, synthetic share %.3f (target %.3f)",
        len(syn),
        len(nat),
        got,
        got_s / got if got else 0.0,
        f,
    )
    return [mixed[i] for i in order]


def _take(docs: Sequence[dict], sizes: np.ndarray, target: float, rng: np.random.Generator) -> list[dict]:
    """The prefix of a seeded shuffle whose byte total is closest to ``target``."""
    if target <= 0 or not len(docs):
        return []
    order = rng.permutation(len(docs))
    cum = np.concatenate([[0], np.cumsum(sizes[order])])
    k = int(np.searchsorted(cum, target))  # first prefix reaching the target
    if k > len(docs):
        k = len(docs)
    elif k > 0 and target - cum[k - 1] < cum[k] - target:
        k -= 1
    return [docs[i] for i in order[:k]]
