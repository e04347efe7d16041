"""Sample a training pool under a byte budget, with fixed validation hold-outs.

Hold-out membership depends only on a document's id: the part before ``#``
(its natural unit: a chapter, a kernel doc file, both editions of a play) is
hashed to a number in [0, 1) and held out when below the source's fraction.
So the hold-out never changes with the budget or the seed, is always disjoint
from the pool, and chunks of one unit never straddle train and validation.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
from collections.abc import Mapping
from pathlib import Path

from tqdm.auto import tqdm

from components.errors import DataError, ParamsError
from components.io import iter_jsonl

log = logging.getLogger(__name__)

DEFAULT_BUDGET_BYTES = 20_000_000  # the card's 20 MB raw pool for the default profile
DEFAULT_HOLDOUT = {"austen": 0.05, "linux_docs": 0.02, "shakespeare": 0.05}  # the card's validation sets
REQUIRED = ("id", "text")


def holdout_unit(doc_id: str) -> str:
    """The natural unit a document belongs to: its id up to the first ``#``."""
    return doc_id.split("#", 1)[0]


def holdout_score(doc_id: str) -> float:
    """A stable number in [0, 1) from the document's unit (blake2b; no seed, no process hash salt)."""
    digest = hashlib.blake2b(holdout_unit(doc_id).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def allocate(budget: int, sizes: Mapping[str, int], weights: Mapping[str, float]) -> dict[str, int]:
    """Split ``budget`` bytes across sources in proportion to ``weights``, capped by each source's size.

    What a capped source cannot use is shared among the others (water-filling).
    """
    alloc = {name: 0 for name in sizes}
    active = {n for n in sizes if weights.get(n, 0) > 0 and sizes[n] > 0}
    remaining = float(budget)
    while active:
        wsum = sum(weights[n] for n in active)
        share = {n: remaining * weights[n] / wsum for n in active}
        capped = {n for n in active if share[n] >= sizes[n]}
        if not capped:
            alloc.update({n: int(share[n]) for n in active})
            break
        for n in capped:
            alloc[n] = sizes[n]
            remaining -= sizes[n]
        active -= capped
    return alloc


def _check(
    source_files: Mapping[str, str | os.PathLike],
    budget_bytes: int,
    weights: Mapping[str, float] | None,
    holdout: Mapping[str, float],
) -> None:
    if budget_bytes <= 0:
        raise ParamsError(f"budget_bytes={budget_bytes}: must be positive")
    for name, frac in holdout.items():
        if name not in source_files:
            raise ParamsError(f"holdout.{name}: no such source among {sorted(source_files)}")
        if not 0 <= frac < 1:
            raise ParamsError(f"holdout.{name}={frac}: must be a fraction in [0, 1)")
    for name, w in (weights or {}).items():
        if name not in source_files:
            raise ParamsError(f"weights.{name}: no such source among {sorted(source_files)}")
        if w < 0:
            raise ParamsError(f"weights.{name}={w}: must be >= 0")


def _scan(name: str, path: Path, frac: float) -> tuple[list[int], list[int], set[int]]:
    """First pass over a source: the byte size of every document, and which are held out."""
    sizes: list[int] = []
    held: set[int] = set()
    seen: set[str] = set()
    for i, doc in enumerate(iter_jsonl(path, REQUIRED)):
        if doc["id"] in seen:
            raise DataError(f"{path}: duplicate document id {doc['id']!r}; re-extract source {name!r}")
        seen.add(doc["id"])
        sizes.append(len(doc["text"].encode("utf-8")))
        if frac > 0 and holdout_score(doc["id"]) < frac:
            held.add(i)
    return sizes, [i for i in range(len(sizes)) if i not in held], sorted(held)


def _select(name: str, sizes: list[int], candidates: list[int], target: int, seed: int) -> set[int]:
    """Take candidates in a seeded random order while they fit in ``target`` bytes."""
    order = list(candidates)
    random.Random(f"{seed}/{name}").shuffle(order)  # str seeds hash with sha512: stable across processes
    chosen, used = set(), 0
    for i in order:
        if used + sizes[i] <= target:
            chosen.add(i)
            used += sizes[i]
    return chosen


def build_pool(
    source_files: Mapping[str, str | os.PathLike],
    *,
    budget_bytes: int = DEFAULT_BUDGET_BYTES,
    weights: Mapping[str, float] | None = None,
    holdout: Mapping[str, float] | None = None,
    seed: int,
    progress: bool = False,
) -> tuple[list[dict], dict[str, list[dict]]]:
    """Sample up to ``budget_bytes`` of text across sources; return (train docs, held-out docs per source).

    ``source_files`` maps a source name to its extracted JSONL. ``weights``
    defaults to each source's available size (so the pool mirrors the corpus);
    a source's share is capped by what it has, the rest going to the others.
    ``holdout`` maps source names to the fraction of units held out for
    validation (see the module docstring). Train docs come in a seeded order.
    Held-out docs come unit by unit in hash order (file order within a unit),
    so truncating a validation set keeps whole units from across the source,
    the same ones whatever the budget or seed. Sizes are UTF-8 bytes of ``text``.
    """
    holdout = dict(holdout or {})
    _check(source_files, budget_bytes, weights, holdout)
    paths = {name: Path(p) for name, p in source_files.items()}
    scans = {
        name: _scan(name, path, holdout.get(name, 0.0))
        for name, path in tqdm(paths.items(), desc="pool: scan", disable=None if progress else True)
    }
    available = {name: sum(s[0][i] for i in s[1]) for name, s in scans.items()}
    w = dict(weights) if weights is not None else dict(available)
    alloc = allocate(budget_bytes, available, {n: w.get(n, 0.0) for n in paths})
    train: list[dict] = []
    heldout: dict[str, list[dict]] = {name: [] for name in holdout}
    for name, path in tqdm(paths.items(), desc="pool: read", disable=None if progress else True):
        sizes, candidates, held = scans[name]
        chosen = _select(name, sizes, candidates, alloc[name], seed)
        held_set = set(held)
        for i, doc in enumerate(iter_jsonl(path, REQUIRED)):
            if i in chosen:
                train.append(doc)
            elif i in held_set:
                heldout[name].append(doc)
        log.info(
            "pool: %s %d of %d bytes (%d docs), %d held out",
            name,
            sum(sizes[i] for i in chosen),
            available[name],
            len(chosen),
            len(held),
        )
    random.Random(f"{seed}/pool").shuffle(train)
    for docs in heldout.values():  # whole units in score order: any prefix is a stable spread of units
        docs.sort(key=lambda d: holdout_score(d["id"]))
    return train, heldout
