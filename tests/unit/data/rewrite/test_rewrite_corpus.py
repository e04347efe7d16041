"""rewrite_corpus: labels, ids, seeded LLM sample, and resuming from the cache after a crash."""

import json
import logging

import pytest

from components.data.rewrite import rewrite_corpus, select_llm_sample
from components.data.rewrite.corpus import OUTPUT_FIELDS
from components.errors import DataError, ParamsError
from components.io import read_jsonl


class FakeRewriter:
    """Same interface as LLMRewriter; counts the texts it is asked to rewrite; can crash on a given call."""

    def __init__(self, name="fake-lm", batch_size=3, crash_on_call=None, empty=False):
        self.name, self.batch_size = name, batch_size
        self.crash_on_call, self.empty = crash_on_call, empty
        self.calls, self.texts = 0, []

    def rewrite(self, texts, style):
        self.calls += 1
        if self.calls == self.crash_on_call:
            raise KeyboardInterrupt("simulated kill")
        self.texts.extend(texts)
        return ["" if self.empty else f"[{self.name}:{style}] {t[::-1]}" for t in texts]


def make_docs(n=20):
    return [
        {
            "id": f"src/{i:03d}",
            "source": "austen" if i % 2 else "gcide",
            "title": f"t{i}",
            "text": f"Document number {i} says something long enough to rewrite. " * (1 + i % 3),
        }
        for i in range(n)
    ]


def test_every_output_is_labelled_synthetic_with_derived_ids(tmp_path):
    docs = make_docs()
    out = rewrite_corpus(
        docs, style="qa", rewriter=FakeRewriter(), llm_budget=5, cache_path=tmp_path / "c.jsonl", seed=1, progress=False
    )
    assert len(out) == len(docs)
    for doc, rec in zip(docs, out):
        assert tuple(rec) == OUTPUT_FIELDS
        assert rec["id"] == doc["id"] + "#qa" and rec["orig_id"] == doc["id"]
        assert rec["source"] == doc["source"] and rec["label"] == "synthetic" and rec["style"] == "qa"
        assert rec["text"].strip() and rec["text"] != doc["text"]
    by = [r["rewriter"] for r in out]
    assert by.count("fake-lm") == 5 and by.count("template") == 15


def test_llm_sample_is_seeded_and_independent_of_order():
    docs = make_docs(50)
    a = {docs[i]["id"] for i in select_llm_sample(docs, 10, seed=7)}
    rev = docs[::-1]
    assert {rev[i]["id"] for i in select_llm_sample(rev, 10, seed=7)} == a
    assert {docs[i]["id"] for i in select_llm_sample(docs, 10, seed=8)} != a
    assert len(a) == 10


def test_zero_budget_or_no_rewriter_uses_only_the_template():
    docs = make_docs(6)
    fake = FakeRewriter()
    out = rewrite_corpus(docs, style="hq", rewriter=fake, llm_budget=0, cache_path=None, seed=0, progress=False)
    assert fake.calls == 0 and {r["rewriter"] for r in out} == {"template"}
    out = rewrite_corpus(docs, style="hq", rewriter=None, llm_budget=3, cache_path=None, seed=0, progress=False)
    assert {r["rewriter"] for r in out} == {"template"} and len(out) == 6


def test_template_rest_false_returns_only_llm_rewrites(tmp_path):
    out = rewrite_corpus(
        make_docs(),
        style="textbook",
        rewriter=FakeRewriter(),
        llm_budget=4,
        cache_path=tmp_path / "c.jsonl",
        seed=0,
        template_rest=False,
        progress=False,
    )
    assert len(out) == 4 and {r["rewriter"] for r in out} == {"fake-lm"}


def test_empty_llm_output_falls_back_to_labelled_template(tmp_path):
    out = rewrite_corpus(
        make_docs(5),
        style="qa",
        rewriter=FakeRewriter(empty=True),
        llm_budget=2,
        cache_path=tmp_path / "c.jsonl",
        seed=0,
        progress=False,
    )
    assert {r["rewriter"] for r in out} == {"template"} and all(r["text"].strip() for r in out)


def test_resume_after_crash_with_truncated_line_generates_only_missing(tmp_path, caplog):
    docs, cache = make_docs(), tmp_path / "rewrites.jsonl"
    kw = dict(style="qa", llm_budget=10, cache_path=cache, seed=3, progress=False)
    with pytest.raises(KeyboardInterrupt):  # batches of 3: two finish (6 cached), the third is killed
        rewrite_corpus(docs, rewriter=FakeRewriter(crash_on_call=3), **kw)
    lines = cache.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 6
    cache.write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2], encoding="utf-8")  # killed mid-write

    fake = FakeRewriter()
    with caplog.at_level(logging.WARNING):
        resumed = rewrite_corpus(docs, rewriter=fake, **kw)
    assert len(fake.texts) == 10 - 5  # only the missing ones, including the truncated one
    assert any("truncated last line" in r.getMessage() for r in caplog.records)
    fresh = rewrite_corpus(docs, rewriter=FakeRewriter(), **{**kw, "cache_path": tmp_path / "fresh.jsonl"})
    assert resumed == fresh
    assert len(read_jsonl(cache)) == 10  # the file is valid JSONL again

    again = FakeRewriter()
    assert rewrite_corpus(docs, rewriter=again, **kw) == fresh
    assert again.calls == 0


def test_cache_is_keyed_by_rewriter_style_and_source_text(tmp_path):
    docs, cache = make_docs(8), tmp_path / "c.jsonl"
    kw = dict(llm_budget=3, cache_path=cache, seed=0, progress=False)
    rewrite_corpus(docs, style="qa", rewriter=FakeRewriter(), **kw)
    other_name, other_style, same = FakeRewriter(name="other-lm"), FakeRewriter(), FakeRewriter()
    rewrite_corpus(docs, style="qa", rewriter=other_name, **kw)
    rewrite_corpus(docs, style="hq", rewriter=other_style, **kw)
    assert len(other_name.texts) == 3 and len(other_style.texts) == 3
    edited = [dict(d, text=d["text"] + " Edited.") for d in docs]
    rewrite_corpus(edited, style="qa", rewriter=same, **kw)
    assert len(same.texts) == 3
    assert {json.loads(line)["rewriter"] for line in cache.read_text().splitlines()} == {"fake-lm", "other-lm"}


def test_corrupt_middle_line_is_a_data_error(tmp_path):
    cache = tmp_path / "c.jsonl"
    rewrite_corpus(
        make_docs(), style="qa", rewriter=FakeRewriter(), llm_budget=4, cache_path=cache, seed=0, progress=False
    )
    lines = cache.read_text().splitlines(keepends=True)
    cache.write_text(lines[0] + "{not json\n" + "".join(lines[1:]))
    with pytest.raises(DataError, match="c.jsonl:2"):
        rewrite_corpus(
            make_docs(), style="qa", rewriter=FakeRewriter(), llm_budget=4, cache_path=cache, seed=0, progress=False
        )


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        (dict(style="poem"), ParamsError, "poem"),
        (dict(llm_budget=-1), ParamsError, "llm_budget"),
        (dict(docs=[{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]), DataError, "duplicate id"),
        (dict(docs=[{"id": "a"}]), DataError, "'text'"),
    ],
)
def test_bad_arguments_name_what_to_fix(bad, exc, match):
    kw = dict(docs=make_docs(3), style="qa", rewriter=None, llm_budget=0, cache_path=None, seed=0, progress=False)
    kw.update(bad)
    with pytest.raises(exc, match=match):
        rewrite_corpus(kw.pop("docs"), **kw)


def test_rewriter_returning_wrong_count_is_a_data_error():
    class Short(FakeRewriter):
        def rewrite(self, texts, style):
            return ["x"]

    with pytest.raises(DataError, match="returned 1 texts for 3"):
        rewrite_corpus(
            make_docs(5), style="qa", rewriter=Short(), llm_budget=3, cache_path=None, seed=0, progress=False
        )
