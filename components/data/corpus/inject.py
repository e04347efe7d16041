"""Inject labelled near-duplicates and junk into a pool of natural documents.

The injected documents are the ground truth for measuring dedup precision and
recall and filter accuracy. A near-copy is an original with edits in short
spans of words (substitutions, deletions, insertions, case and whitespace
changes), the way templated or re-posted web pages differ; ``edit_rate`` is the
fraction of words touched. Sprinkling single-word edits instead would break
five 5-word shingles per edit and push copies below any realistic dedup
threshold. Junk comes from :mod:`components.data.corpus.junk`.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Sequence

from components.data.corpus.junk import JUNK_KINDS, make_junk
from components.errors import ParamsError

log = logging.getLogger(__name__)

RECORD_FIELDS = ("id", "source", "text", "title", "label", "dup_of", "junk_kind")
# Edit operations and their weights; case and whitespace edits leave normalised shingles intact.
_OPS = ("substitute", "delete", "insert", "case", "whitespace")
_OP_WEIGHTS = (0.35, 0.2, 0.2, 0.15, 0.1)
_SPAN_LENGTHS = (1, 2, 3, 4, 6, 8)
_SPAN_WEIGHTS = (0.2, 0.25, 0.2, 0.15, 0.12, 0.08)


def _record(doc: dict, label: str, dup_of: str | None = None, junk_kind: str | None = None) -> dict:
    return {
        "id": doc["id"],
        "source": doc["source"],
        "text": doc["text"],
        "title": doc.get("title", ""),
        "label": label,
        "dup_of": dup_of,
        "junk_kind": junk_kind,
    }


def _edit_span(
    words: list[str], seps: list[str], i: int, length: int, op: str, rng: random.Random, vocab: Sequence[str]
) -> None:
    """Apply one edit to ``words[i:i+length]`` (and their separators) in place."""
    span = slice(i, min(i + length, len(words)))
    if op == "substitute":
        words[span] = [rng.choice(vocab) for _ in words[span]]
    elif op == "delete" and len(words) > length + 1:
        del words[span], seps[span]
    elif op == "insert":
        words[i:i] = [rng.choice(vocab) for _ in range(length)]
        seps[i:i] = [" "] * length
    elif op == "case":
        change = rng.choice((str.upper, str.lower, str.title))
        words[span] = [change(w) for w in words[span]]
    else:  # whitespace: double spaces, tabs or line breaks between words
        seps[span] = [rng.choice(("  ", "\n", " \t", "\n\n")) for _ in seps[span]]


def near_copy(text: str, rate: float, rng: random.Random) -> str:
    """Return ``text`` with about ``rate`` of its words touched by span edits."""
    parts = re.split(r"(\s+)", text.strip())
    words, seps = parts[0::2], parts[1::2] + [""]
    if len(words) < 2:
        return text + " " + text
    vocab = sorted(set(words))
    budget = max(1, round(rate * len(words)))
    while budget > 0:
        length = min(budget, rng.choices(_SPAN_LENGTHS, _SPAN_WEIGHTS)[0])
        op = rng.choices(_OPS, _OP_WEIGHTS)[0]
        _edit_span(words, seps, rng.randrange(len(words)), length, op, rng, vocab)
        budget -= length
    return "".join(w + s for w, s in zip(words, seps)).strip()


def _check_params(near_dup_frac: float, junk_frac: float, edit_rate: tuple[float, float]) -> None:
    for name, value in (("near_dup_frac", near_dup_frac), ("junk_frac", junk_frac)):
        if not 0 <= value <= 10:
            raise ParamsError(f"{name}={value}: must be a fraction of the natural documents, between 0 and 10")
    lo, hi = edit_rate
    if not 0 < lo <= hi < 1:
        raise ParamsError(f"edit_rate={edit_rate}: must be (low, high) with 0 < low <= high < 1")


def inject_noise(
    docs: Sequence[dict],
    *,
    near_dup_frac: float = 0.15,
    junk_frac: float = 0.10,
    seed: int,
    edit_rate: tuple[float, float] = (0.05, 0.15),
) -> list[dict]:
    """Return the natural docs plus near-copies and junk, labelled and shuffled with ``seed``.

    Counts are ``round(frac * len(docs))``. Near-copies (``label="near_dup"``,
    ``dup_of=<original id>``, id ``<original id>~nd<k>``) keep the original's
    source and title; each draws its edit rate uniformly from ``edit_rate``.
    Junk (``label="junk"``, ``source="junk"``) cycles through all
    :data:`JUNK_KINDS` and takes its size from a random natural document.
    Every record has exactly the fields :data:`RECORD_FIELDS`.
    """
    _check_params(near_dup_frac, junk_frac, edit_rate)
    rng = random.Random(seed)
    out = [_record(d, "natural") for d in docs]
    n = len(out)
    if n == 0:
        return out
    n_dup, n_junk = round(near_dup_frac * n), round(junk_frac * n)
    originals = rng.sample(range(n), n_dup) if n_dup <= n else [rng.randrange(n) for _ in range(n_dup)]
    copies: dict[int, int] = {}
    for i in originals:
        k = copies[i] = copies.get(i, -1) + 1
        orig = out[i]
        text = near_copy(orig["text"], rng.uniform(*edit_rate), rng)
        out.append(_record({**orig, "id": f"{orig['id']}~nd{k}", "text": text}, "near_dup", dup_of=orig["id"]))
    kinds = [JUNK_KINDS[j % len(JUNK_KINDS)] for j in range(n_junk)]
    rng.shuffle(kinds)
    for j, kind in enumerate(kinds):
        donor = out[rng.randrange(n)]["text"]
        text = make_junk(kind, rng, size=len(out[rng.randrange(n)]["text"]), donor=donor)
        out.append(
            _record(
                {"id": f"junk/{kind}/{j:06d}", "source": "junk", "text": text, "title": f"junk: {kind}"},
                "junk",
                junk_kind=kind,
            )
        )
    rng.shuffle(out)
    log.info("injected %d near-copies and %d junk docs into %d natural docs", n_dup, n_junk, n)
    return out
