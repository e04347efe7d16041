"""Specifications for exact and MinHash dedup (components.data.dedup)."""

from __future__ import annotations

import json
import random

import pytest

from components.data.dedup import (
    DedupResult,
    choose_bands_rows,
    exact_dedup,
    minhash_dedup,
    normalize_text,
    score_dedup,
    write_dedup,
)
from components.errors import DataError, ParamsError

VOCAB = [
    "river",
    "stone",
    "light",
    "morning",
    "garden",
    "window",
    "letter",
    "market",
    "winter",
    "summer",
    "bridge",
    "forest",
    "harbour",
    "village",
    "teacher",
    "doctor",
    "farmer",
    "sailor",
    "painter",
    "singer",
    "dancer",
    "writer",
    "reader",
    "builder",
    "walked",
    "talked",
    "carried",
    "opened",
    "closed",
    "found",
    "lost",
    "kept",
    "gave",
    "took",
    "quickly",
    "slowly",
    "quietly",
    "bright",
    "dark",
    "heavy",
    "gentle",
    "ancient",
    "modern",
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "with",
    "under",
    "over",
    "between",
    "after",
    "before",
    "because",
    "although",
    "while",
    "every",
    "some",
    "many",
    "few",
]


def make_text(seed: int, n_words: int = 200) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(VOCAB) + str(rng.randint(0, 99)) for _ in range(n_words))


def edit_words(text: str, n_edits: int, seed: int) -> str:
    """Replace ``n_edits`` words at spread-out positions."""
    words = text.split()
    rng = random.Random(seed)
    for pos in rng.sample(range(len(words)), n_edits):
        words[pos] = f"edited{pos}"
    return " ".join(words)


@pytest.fixture()
def corpus() -> list[dict]:
    """20 unrelated docs, then near-copies of doc 3 and doc 7 (3 of 200 words edited)."""
    docs = [{"id": f"d{i}", "text": make_text(i), "dup_of": None} for i in range(20)]
    docs.append({"id": "near3", "text": edit_words(docs[3]["text"], 3, 1), "dup_of": "d3"})
    docs.append({"id": "near7", "text": edit_words(docs[7]["text"], 3, 2), "dup_of": "d7"})
    return docs


def test_normalize_text_folds_case_unicode_punctuation_and_space():
    assert normalize_text("  Hello,\tWORLD!\n\nIt's  ﬁne…  ") == "hello world it s fine"
    assert normalize_text("ＡＢＣ　１２３") == "abc 123"  # NFKC folds full-width forms and the ideographic space


def test_exact_dedup_removes_copies_and_variants_keeping_the_first():
    docs = [
        {"id": "a", "text": "The cat sat on the mat."},
        {"id": "b", "text": "Something else entirely."},
        {"id": "c", "text": "The cat sat on the mat."},
        {"id": "d", "text": "  the CAT   sat on\nthe mat  "},
        {"id": "e", "text": "The cat sat on the mat!!"},
        {"id": "f", "text": "The cat sat on the hat."},
    ]
    result = exact_dedup(docs)
    assert [d["id"] for d in result.kept] == ["a", "b", "f"]
    assert result.clusters == [["a", "c", "d", "e"]]
    assert result.removed_ids == ["c", "d", "e"]
    assert result.stats() == {"n_in": 6, "n_kept": 3, "n_removed": 3, "n_clusters": 1}


def test_minhash_finds_near_copies_and_keeps_unrelated_docs_apart(corpus):
    result = minhash_dedup(corpus, threshold=0.7)
    assert result.clusters == [["d3", "near3"], ["d7", "near7"]]
    assert result.removed_ids == ["near3", "near7"]
    assert [d["id"] for d in result.kept] == [f"d{i}" for i in range(20)]
    assert score_dedup(result, corpus)["f1"] == 1.0


def test_minhash_keeps_the_first_in_input_order_even_when_the_copy_comes_first(corpus):
    reordered = [corpus[-1], *corpus[:-1]]  # near7 before d7
    result = minhash_dedup(reordered, threshold=0.7)
    assert ["near7", "d7"] in result.clusters
    assert "d7" in result.removed_ids and "near7" not in result.removed_ids


def test_minhash_does_not_merge_docs_below_the_threshold():
    base = make_text(1)
    docs = [{"id": "a", "text": base}, {"id": "b", "text": edit_words(base, 60, 3)}]  # ~30% of words edited
    assert minhash_dedup(docs, threshold=0.7).clusters == []


def test_numpy_and_datasketch_backends_give_the_same_clusters(corpus):
    pytest.importorskip("datasketch")
    extra = [{"id": f"x{i}", "text": edit_words(corpus[i]["text"], 2, i), "dup_of": f"d{i}"} for i in (11, 12, 13)]
    docs = corpus + extra
    kwargs = dict(threshold=0.7, num_perm=112, bands=14, rows=8)
    ours = minhash_dedup(docs, backend="numpy", **kwargs)
    theirs = minhash_dedup(docs, backend="datasketch", **kwargs)
    assert ours.clusters == theirs.clusters
    assert len(ours.clusters) == 5


def test_numpy_signatures_estimate_jaccard_similarity():
    from components.data.dedup.minhash_numpy import signatures

    base = make_text(3, 400)
    texts = [base] + [edit_words(base, n, n) for n in (10, 40, 100)]
    sig = signatures(texts, num_perm=256, shingle_size=5, shingle_unit="word", seed=1)
    shingles = [{tuple(t.split()[i : i + 5]) for i in range(len(t.split()) - 4)} for t in texts]
    for j in (1, 2, 3):
        exact = len(shingles[0] & shingles[j]) / len(shingles[0] | shingles[j])
        estimate = (sig[0] == sig[j]).mean()
        assert abs(estimate - exact) < 0.1, (j, exact, estimate)


# SHA-256 of the little-endian uint32 signatures of GOLDEN_TEXTS, computed with the implementation of 7630f25
# (before the speed-ups of issue 57): a faster backend must give the same signatures for the same seed, bit for bit.
GOLDEN_TEXTS = [
    make_text(1, 300),
    "",
    " ,;; ",
    "Two words",
    "Café—naïve «Ünïcode» ＡＢＣ text_with under_score!",
    "x\u2028y z",
    "The quick brown fox jumps over the lazy dog. " * 3,
    make_text(2, 5000),
]


@pytest.mark.parametrize(
    ("unit", "k", "num_perm", "seed", "digest", "head"),
    [("word", 5, 112, 1, "3323ba941b4813d0ee543ac0b52a597a40546a27327fde1ff393c53b5dfd8720",
      [22065959, 582031, 19263932, 13218318]),
     ("word", 1, 64, 7, "9062a08af8cf2f9804ecd41b751cae2f00f88f0a95742bc89528dddc7f9b350e",
      [16356764, 18012, 1098964, 4481275]),
     ("char", 6, 128, 3, "0f97dabf2ea7883863b19fe1f8ea2bc11212366065b0c705223f0ee1c0b8358f",
      [236439, 593006, 293432, 2818114]),
     ("word", 3, 112, 2**32 - 1, "5c08065a5cefa6a10b7a9a21925d4c3b8968ea577abf7c030a1fbd5836093bdd",
      [12318470, 18561083, 7207350, 1233542])],
)  # fmt: skip
def test_numpy_signatures_are_unchanged_bit_for_bit(unit, k, num_perm, seed, digest, head):
    import hashlib

    from components.data.dedup.minhash_numpy import signatures

    sig = signatures(GOLDEN_TEXTS, num_perm=num_perm, shingle_size=k, shingle_unit=unit, seed=seed)
    assert sig.shape == (len(GOLDEN_TEXTS), num_perm) and sig.dtype == "uint32"
    assert sig[0, :4].tolist() == head
    assert hashlib.sha256(sig.astype("<u4").tobytes()).hexdigest() == digest


@pytest.mark.parametrize(("unit", "k"), [("word", 5), ("word", 1), ("char", 6)])
def test_vectorised_shingles_are_the_datasketch_backend_shingles(unit, k):
    from components.data.dedup.shingles import batch_shingle_hashes
    from components.data.dedup.text import shingle_strings, tokens

    unicode = "Café—naïve «Ünïcode» ＡＢＣ text_with under_score!"
    texts = [make_text(1, 60), "", " ,;; ", "Two words", unicode, "x\u2028y z"]
    hashes, owner = batch_shingle_hashes(texts, k, unit)
    for i, text in enumerate(texts):
        expected = set(shingle_strings(tokens(normalize_text(text), unit), k, unit))
        assert len(set(hashes[owner == i].tolist())) == len(expected), text


def test_minhash_is_repeatable_and_seeded(corpus):
    first = minhash_dedup(corpus, threshold=0.7, seed=7)
    again = minhash_dedup(corpus, threshold=0.7, seed=7)
    other_seed = minhash_dedup(corpus, threshold=0.7, seed=8)
    assert first == again
    assert other_seed.clusters == first.clusters  # a clear duplicate does not depend on the seed


def test_character_shingles_also_find_near_copies(corpus):
    result = minhash_dedup(corpus, threshold=0.7, shingle_unit="char", shingle_size=8)
    assert result.removed_ids == ["near3", "near7"]


def test_a_large_bucket_of_identical_docs_becomes_one_cluster():
    docs = [{"id": f"same{i}", "text": make_text(99)} for i in range(40)] + [{"id": "other", "text": make_text(5)}]
    result = minhash_dedup(docs, threshold=0.9)
    assert result.clusters == [[f"same{i}" for i in range(40)]]
    assert [d["id"] for d in result.kept] == ["same0", "other"]


@pytest.mark.parametrize("threshold", [0.5, 0.7, 0.8, 0.9])
@pytest.mark.parametrize("num_perm", [64, 112, 128])
def test_chosen_bands_and_rows_fit_in_num_perm(threshold, num_perm):
    bands, rows = choose_bands_rows(threshold, num_perm)
    assert bands >= 1 and rows >= 1 and bands * rows <= num_perm


def test_bands_and_rows_follow_explicit_values_and_reject_too_many():
    assert choose_bands_rows(0.8, 112, bands=14, rows=8) == (14, 8)
    assert choose_bands_rows(0.8, 112, bands=14) == (14, 8)
    assert choose_bands_rows(0.8, 112, rows=16) == (7, 16)
    with pytest.raises(ParamsError, match="num_perm=112"):
        choose_bands_rows(0.8, 112, bands=15, rows=8)
    with pytest.raises(ParamsError, match="bands"):
        choose_bands_rows(0.8, 112, bands=0)


def test_bands_and_rows_match_datasketch_choice():
    lsh = pytest.importorskip("datasketch.lsh")
    from components.data.dedup.minhash import _optimal_param_fallback

    assert choose_bands_rows(0.7, 112) == lsh._optimal_param(0.7, 112, 0.5, 0.5)
    assert _optimal_param_fallback(0.8, 24) == lsh._optimal_param(0.8, 24, 0.5, 0.5)


@pytest.mark.parametrize("dedup", [exact_dedup, minhash_dedup])
def test_missing_text_field_names_the_field_and_the_document(dedup):
    docs = [{"id": "ok", "body": "x"}, {"id": "doc-42", "content": "y"}]
    with pytest.raises(DataError, match=r"'doc-42'.*'body'"):
        dedup(docs, text_field="body")
    with pytest.raises(DataError, match=r"'ok'.*'text'"):
        dedup(docs)


def test_missing_id_or_duplicate_id_is_a_data_error():
    with pytest.raises(DataError, match="#1.*'id'"):
        exact_dedup([{"id": "a", "text": "x"}, {"text": "y"}])
    with pytest.raises(DataError, match="'a'.*duplicate id"):
        minhash_dedup([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}])


@pytest.mark.parametrize("dedup", [exact_dedup, minhash_dedup])
def test_empty_input_gives_an_empty_result(dedup):
    result = dedup([])
    assert result.kept == [] and result.clusters == [] and result.removed_ids == []
    assert result.stats() == {"n_in": 0, "n_kept": 0, "n_removed": 0, "n_clusters": 0}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"threshold": 0}, "threshold"), ({"backend": "faiss"}, "backend"), ({"num_perm": 0}, "num_perm"),
     ({"shingle_unit": "token"}, "shingle_unit"), ({"shingle_size": 2.5}, "shingle_size")],
)  # fmt: skip
def test_bad_parameters_raise_params_error_naming_them(corpus, kwargs, field):
    with pytest.raises(ParamsError, match=field):
        minhash_dedup(corpus, **kwargs)


def test_score_dedup_counts_one_removal_per_injected_copy_whichever_member_is_kept():
    pairs = [("a", None), ("b", "a"), ("c", None), ("d", "c"), ("e", None), ("f", None), ("g", None)]
    docs = [{"id": i, "text": "", "dup_of": d} for i, d in pairs]
    # b (a copy) removed; c (an original whose copy d came first) removed; f (natural, no copy) removed
    result = DedupResult(kept=[], clusters=[["a", "b"], ["d", "c"], ["e", "f"]], removed_ids=["b", "c", "f"])
    score = score_dedup(result, docs)
    assert (score["tp"], score["fp"], score["fn"]) == (2, 1, 0)
    assert score["precision"] == pytest.approx(2 / 3) and score["recall"] == 1.0
    strict = score_dedup(result, docs, strict=True)
    assert (strict["tp"], strict["fp"], strict["fn"]) == (1, 2, 1)


def test_score_dedup_does_not_reward_removing_a_whole_group():
    docs = [{"id": "a", "text": "", "dup_of": None}, {"id": "b", "text": "", "dup_of": "a"}]
    both = DedupResult(kept=[], clusters=[], removed_ids=["a", "b"])
    assert (score_dedup(both, docs)["tp"], score_dedup(both, docs)["fp"]) == (1, 1)
    none = DedupResult(kept=docs, clusters=[], removed_ids=[])
    assert score_dedup(none, docs) == {"precision": 1.0, "recall": 0.0, "f1": 0.0, "tp": 0, "fp": 0, "fn": 1}
    with pytest.raises(DataError, match="dup_of"):
        score_dedup(none, [{"id": "a", "text": ""}])


def test_write_dedup_writes_kept_jsonl_and_clusters_json(tmp_path, corpus):
    result = minhash_dedup(corpus, threshold=0.7)
    stats = write_dedup(result, tmp_path / "out" / "kept.jsonl", tmp_path / "out" / "clusters.json")
    lines = (tmp_path / "out" / "kept.jsonl").read_text().splitlines()
    assert [json.loads(ln)["id"] for ln in lines] == [d["id"] for d in result.kept]
    meta = json.loads((tmp_path / "out" / "clusters.json").read_text())
    assert meta["clusters"] == result.clusters and meta["removed_ids"] == ["near3", "near7"]
    assert meta["params"]["bands"] * meta["params"]["rows"] <= 112
    assert stats == result.stats()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["clusters.json", "kept.jsonl"]
