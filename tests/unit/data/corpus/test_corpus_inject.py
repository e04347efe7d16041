"""inject_noise: labelled near-copies and junk as ground truth for dedup and filters."""

from __future__ import annotations

import collections
import re
import statistics

import pytest

from components.data.corpus.inject import RECORD_FIELDS, inject_noise
from components.data.corpus.junk import JUNK_KINDS
from components.errors import ParamsError
from components.io import read_jsonl
from tests.conftest import ROOT

FIXTURE = ROOT / "tests/fixtures/corpus/natural_docs.jsonl"


@pytest.fixture(scope="module")
def natural() -> list[dict]:
    """32 real documents (Austen, KJV, Shakespeare) of 1.2-2.6 KB."""
    return read_jsonl(FIXTURE)


@pytest.fixture(scope="module")
def many(natural) -> list[dict]:
    """200 natural docs: the fixture repeated under new ids, so fractions are measurable."""
    return [{**d, "id": f"{d['id']}@{r}"} for r in range(7) for d in natural][:200]


def _shingles(text: str, k: int = 5) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + k]) for i in range(max(1, len(words) - k + 1))}


def _jaccard(a: str, b: str) -> float:
    sa, sb = _shingles(a), _shingles(b)
    return len(sa & sb) / len(sa | sb)


def test_counts_labels_and_exact_schema(many):
    out = inject_noise(many, seed=0)
    labels = collections.Counter(r["label"] for r in out)
    assert labels == {"natural": 200, "near_dup": 30, "junk": 20}
    assert all(tuple(r) == RECORD_FIELDS for r in out)
    ids = [r["id"] for r in out]
    assert len(set(ids)) == len(ids)
    natural_ids = {d["id"] for d in many}
    for r in out:
        if r["label"] == "natural":
            assert r["dup_of"] is None and r["junk_kind"] is None and r["id"] in natural_ids
        elif r["label"] == "near_dup":
            assert r["dup_of"] in natural_ids and r["junk_kind"] is None
        else:
            assert r["dup_of"] is None and r["junk_kind"] in JUNK_KINDS and r["source"] == "junk"


def test_fractions_are_relative_to_natural_docs(natural):
    out = inject_noise(natural, near_dup_frac=0.5, junk_frac=0.25, seed=3)
    labels = collections.Counter(r["label"] for r in out)
    assert labels == {"natural": 32, "near_dup": 16, "junk": 8}


def test_near_copies_are_edited_but_close_to_their_original(natural):
    out = inject_noise(natural, near_dup_frac=1.0, junk_frac=0, seed=0)
    originals = {r["id"]: r for r in out if r["label"] == "natural"}
    dups = [r for r in out if r["label"] == "near_dup"]
    sims = [_jaccard(r["text"], originals[r["dup_of"]]["text"]) for r in dups]
    assert all(r["text"] != originals[r["dup_of"]]["text"] for r in dups)
    assert all(r["source"] == originals[r["dup_of"]]["source"] for r in dups)
    assert 0.6 <= statistics.median(sims) <= 0.9
    assert sum(0.5 <= s <= 0.97 for s in sims) >= 0.9 * len(sims)


def test_higher_edit_rate_gives_less_similar_copies(natural):
    def median_sim(rate):
        out = inject_noise(natural, near_dup_frac=1.0, junk_frac=0, seed=0, edit_rate=rate)
        orig = {r["id"]: r["text"] for r in out if r["label"] == "natural"}
        return statistics.median(_jaccard(r["text"], orig[r["dup_of"]]) for r in out if r["label"] == "near_dup")

    assert median_sim((0.02, 0.03)) > median_sim((0.3, 0.4)) + 0.2


def test_junk_has_every_kind_sized_like_real_docs_and_trips_web_filters(many):
    out = inject_noise(many, near_dup_frac=0, junk_frac=0.5, seed=1)
    junk = collections.defaultdict(list)
    for r in out:
        if r["label"] == "junk":
            junk[r["junk_kind"]].append(r["text"])
    assert set(junk) == set(JUNK_KINDS)
    natural_median = statistics.median(len(d["text"]) for d in many)
    all_junk = [t for texts in junk.values() for t in texts]
    assert natural_median / 2 <= statistics.median(map(len, all_junk)) <= natural_median * 2
    assert len(set(all_junk)) == len(all_junk)  # no exact copies among junk
    for text in junk["symbol_soup"]:
        words = text.split()
        assert sum(bool(re.search(r"[a-zA-Z]", w)) for w in words) < 0.8 * len(words)  # Gopher alpha-words rule
    for text in junk["repeated_lines"]:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        assert 1 - len(set(lines)) / len(lines) > 0.3  # Gopher duplicate-line fraction
    assert all("lorem ipsum" in t.lower() for t in junk["lorem_ipsum"])  # C4
    assert all("{" in t for t in junk["code"])  # C4 curly-bracket rule
    assert all(re.search(r"cookie|privacy|terms of use|rights reserved|•", t, re.I) for t in junk["boilerplate"])


def test_same_seed_same_records_other_seed_other_order(natural):
    a = inject_noise(natural, seed=5)
    assert a == inject_noise(natural, seed=5)
    b = inject_noise(natural, seed=6)
    assert [r["id"] for r in a] != [r["id"] for r in b]


def test_input_docs_are_not_modified_and_extra_fields_dropped(natural):
    docs = [{**d, "extra": 1} for d in natural]
    snapshot = [dict(d) for d in docs]
    out = inject_noise(docs, seed=0)
    assert docs == snapshot
    assert all("extra" not in r for r in out)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"edit_rate": (0.2, 0.1)}, "edit_rate"),
        ({"edit_rate": (0.0, 0.1)}, "edit_rate"),
        ({"near_dup_frac": -0.1}, "near_dup_frac"),
        ({"junk_frac": -1}, "junk_frac"),
    ],
)
def test_bad_parameters_are_params_errors(natural, kwargs, match):
    with pytest.raises(ParamsError, match=match):
        inject_noise(natural, seed=0, **kwargs)
