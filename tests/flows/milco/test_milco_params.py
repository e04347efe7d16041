"""milco params and inputs: every profile validates; bad values and bad files fail before any work with the key
or file named; the full profile's sources load from fixtures in their real formats and fail at once offline."""

from __future__ import annotations

import pytest

from components.errors import DataError, OfflineError, ParamsError
from components.sparse_retrieval.external import check_models, load_miracl, load_mkqa
from components.sparse_retrieval.lexicon import EnglishSpace, load_bpe
from flows.milco.params import PRESETS, Params
from flows.runtime.params import resolve

FIX = "tests/fixtures/milco"


def _resolve(profile="smoke", *overrides):
    return resolve(Params, PRESETS, slug="milco", profile=profile, overrides=overrides)


@pytest.mark.parametrize("profile", ["smoke", "default", "full"])
def test_profiles_validate(profile):
    p = _resolve(profile)
    assert "milco" in p.train.variants and p.data.contrastive_pairs <= p.data.sap_pairs


@pytest.mark.parametrize(
    "override, key",
    [
        ("train.variants=[milco, splade]", "milco.train.variants"),  # unknown name
        ("train.variants=[dense]", "milco.train.variants"),  # the method missing
        ("data.query_words=[9, 3]", "milco.data.query_words"),  # min > max
        ("model.n_heads=3", "milco.model"),  # shape: d_model not divisible by the heads
        ("data.bench_pairs=0", "milco.data.bench_pairs"),  # empty benchmark
        ("data.contrastive_pairs=20000", "milco.data"),  # more stage-2 pairs than SAP pairs
        ("eval.mass_grid=[0.5, 1.5]", "milco.eval.mass_grid"),  # out of range
        ("train.reg=l2", "milco.train.reg"),
        ("data.bible_books=[]", "milco.data.bible_books"),
        ("bogus=1", "milco.bogus"),
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key.replace(".", r"\.")):
        _resolve("smoke", override)


def test_bad_files_name_the_file(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match="tokenizer.json"):
        load_bpe(bad)
    space = tmp_path / "english.json"
    space.write_text("[1, 2]")
    with pytest.raises(DataError, match="english.json: a JSON list, expected a JSON dict"):
        EnglishSpace.load(space)
    with pytest.raises(DataError, match="bad.jsonl:1"):
        (tmp_path / "bad.jsonl").write_text("nope\n")
        load_miracl(str(tmp_path / "bad.jsonl"), None, "es")


def test_full_sources_load_real_formats_offline_and_ids_fail_at_once(monkeypatch):
    monkeypatch.delenv("PAPERLINE_ONLINE", raising=False)
    m = load_miracl(f"{FIX}/miracl/dev.jsonl", f"{FIX}/miracl/corpus.jsonl", "es")
    assert [q["qid"] for q in m["queries"]] == ["0", "1"] and m["queries"][0]["positives"] == ["12#0"]
    assert {d["id"] for d in m["docs"]} == {"12#0", "13#1", "14#0", "15#2"}
    mk = load_mkqa(f"{FIX}/mkqa.jsonl.gz", "es")
    assert len(mk) == 1 and mk[0]["answers"] == ["Dave Edmunds"]  # the empty Spanish query is skipped
    full = _resolve("full").full
    with pytest.raises(OfflineError, match="omai-research/milco-650m"):
        check_models(full)
    with pytest.raises(OfflineError, match="miracl/miracl"):
        load_miracl(full.miracl, None, "es")
