"""Specifications for the heuristic filters (components.data.filters)."""

from __future__ import annotations

import pytest

from components.data.filters import (
    Aesthetic,
    C4Quality,
    GopherQuality,
    GopherRepetition,
    apply_filters,
    get_rules,
    score_filters,
)
from components.errors import DataError, ParamsError

PARAGRAPH = (
    "The river rose slowly through the night, and by morning the lower fields were under water. "
    "Farmers moved their animals to the high ground before the road was closed. "
    "Nobody in the village could remember a flood of that size, although the oldest residents had seen many storms. "
    "When the rain finally stopped, the neighbours worked together to clear the mud from the houses near the bank. "
    "It took almost a month before life returned to its usual pace, and the harvest was smaller than anyone hoped. "
    "Still, the school reopened on time and the market was busy again by the end of the season."
)
LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt. " * 12
CODE = "\n".join(["def area(r):", "    x = r * r;", "    if x == 0 {", "        return x;", "    }"] * 12)
JUNK = {
    ("gopher_quality", "too_few_words"): "The end of the story is near.",
    ("gopher_quality", "mean_word_length"): " ".join(["the and"] + ["incomprehensibilities"] * 60),
    ("gopher_quality", "symbol_word_ratio"): PARAGRAPH + " #tag" * 20,
    ("gopher_quality", "bullet_lines"): "\n".join(f"- item {i} of the list and the rest" for i in range(60)),
    ("gopher_quality", "ellipsis_lines"): "\n".join(
        f"and then the long story of the old town number {i} went on and on..." for i in range(60)
    ),
    ("gopher_quality", "alpha_words"): "the and " + " ".join(str(i * 7919) for i in range(80)),
    ("gopher_quality", "stop_words"): "Lorem ipsum dolor sit amet consectetur adipiscing elit sed do " * 8,
    ("gopher_repetition", "dup_line_frac"): "\n".join(["Click here to subscribe to our newsletter today."] * 40),
    ("gopher_repetition", "top_2gram"): " ".join(["buy now"] * 30 + PARAGRAPH.split()[:40]),
    ("gopher_repetition", "dup_5gram"): PARAGRAPH + " " + " ".join(PARAGRAPH.split()[:40]),
    ("c4", "lorem_ipsum"): LOREM,
    ("c4", "curly_brace"): PARAGRAPH + " The config is {x: 1}.",
    ("c4", "too_few_sentences"): "\n".join(["Shall I compare thee to a summer's day", "Thou art more lovely"] * 10),
    ("aesthetic", "lorem_ipsum"): LOREM,
    ("aesthetic", "inline_code"): PARAGRAPH + " Call `area(r)` to get it.",
    ("aesthetic", "alnum_ratio"): " ".join("#$%@! &&** ~~^^ ab" for _ in range(60)),
}


@pytest.mark.parametrize("rule", get_rules(["gopher_quality", "gopher_repetition", "c4", "aesthetic"]), ids=str)
def test_every_rule_keeps_a_normal_english_paragraph(rule):
    decision = rule.check({"id": "p", "text": PARAGRAPH})
    assert decision.keep and decision.reason is None


@pytest.mark.parametrize(("rule_name", "reason"), list(JUNK))
def test_each_rule_drops_its_target_junk_with_the_expected_reason(rule_name, reason):
    (rule,) = get_rules([rule_name])
    decision = rule.check({"id": "j", "text": JUNK[(rule_name, reason)]})
    assert (decision.keep, decision.reason) == (False, reason)


def test_code_is_dropped_by_every_family():
    reasons = {r.name: r.check_text(CODE).reason for r in get_rules(["gopher", "c4", "aesthetic"])}
    assert reasons == {
        "gopher_quality": "mean_word_length",
        "gopher_repetition": "dup_line_frac",
        "c4": "curly_brace",
        "aesthetic": "inline_code",
    }


def test_c4_removes_bad_lines_and_returns_the_cleaned_text():
    text = PARAGRAPH + "\nPlease enable JavaScript to view this page.\nMenu\nHome | About"
    decision = C4Quality().check_text(text)
    assert decision.keep and decision.text == PARAGRAPH
    assert C4Quality(edit_text=False).check_text(text).text is None


def test_thresholds_are_constructor_arguments():
    short = "The cat and the dog sat on the mat."
    assert not GopherQuality().check_text(short).keep
    assert GopherQuality(min_doc_words=5).check_text(short).keep
    assert Aesthetic(max_code_spans=5).check_text(JUNK[("aesthetic", "inline_code")]).keep
    repeated = JUNK[("gopher_repetition", "dup_line_frac")]
    assert GopherRepetition(max_dup_line_frac=1.0).check_text(repeated).reason == "dup_line_char_frac"


def test_get_rules_expands_gopher_and_applies_overrides():
    rules = get_rules(["gopher", "c4"], params={"gopher_quality": {"min_doc_words": 10}})
    assert [r.name for r in rules] == ["gopher_quality", "gopher_repetition", "c4"]
    assert rules[0].min_doc_words == 10 and rules[0].params()["min_doc_words"] == 10


def test_get_rules_rejects_unknown_names_and_thresholds_listing_valid_ones():
    with pytest.raises(ParamsError, match="'nsfw'.*aesthetic, c4, gopher, gopher_quality, gopher_repetition"):
        get_rules(["gopher", "nsfw"])
    with pytest.raises(ParamsError, match="min_words.*min_doc_words"):
        get_rules(["gopher_quality"], params={"gopher_quality": {"min_words": 3}})


def test_apply_filters_records_reasons_counts_and_leaves_inputs_untouched():
    docs = [
        {"id": "good", "text": PARAGRAPH, "label": "natural"},
        {"id": "lorem", "text": LOREM, "label": "junk"},
        {"id": "rep", "text": JUNK[("gopher_repetition", "dup_line_frac")], "label": "junk"},
        {"id": "js", "text": PARAGRAPH + "\nEnable javascript now.", "label": "natural"},
    ]
    snapshot = [dict(d) for d in docs]
    result = apply_filters(docs, get_rules(["gopher", "c4"]))
    assert [d["id"] for d in result.kept] == ["good", "js"]
    assert {d["id"]: d["drop_reason"] for d in result.dropped} == {
        "lorem": "gopher_quality:stop_words",  # the first failing rule wins
        "rep": "gopher_repetition:dup_line_frac",
    }
    assert result.counts == {"gopher_quality:stop_words": 1, "gopher_repetition:dup_line_frac": 1}
    assert result.kept[1]["text"] == PARAGRAPH  # C4 removed the javascript line
    assert docs == snapshot
    assert result.stats() == {"n_in": 4, "n_kept": 2, "n_dropped": 2}


def test_apply_filters_missing_text_field_names_field_and_document():
    with pytest.raises(DataError, match=r"'doc-7'.*'content'"):
        apply_filters([{"id": "doc-7", "text": PARAGRAPH}], get_rules(["c4"]), text_field="content")


def test_apply_filters_on_empty_input_is_an_empty_result():
    result = apply_filters([], get_rules(["gopher"]))
    assert (result.kept, result.dropped, result.counts) == ([], [], {})


def test_score_filters_against_junk_labels_with_drop_rates_by_source():
    docs = [
        {"id": "a", "text": PARAGRAPH, "label": "natural", "source": "austen"},
        {"id": "b", "text": "Abide: to wait.", "label": "natural", "source": "gcide"},
        {"id": "c", "text": LOREM, "label": "junk", "source": "junk"},
        {"id": "d", "text": PARAGRAPH + " Lorem ipsum.", "label": "junk", "source": "junk"},
    ]
    result = apply_filters(docs, get_rules(["gopher_quality"]))  # drops b (short) and c, keeps d
    score = score_filters(result, docs)
    assert (score["precision"], score["recall"]) == (0.5, 0.5)
    assert score["dropped_frac_by_source"] == {"austen": 0.0, "gcide": 1.0, "junk": 0.5}
    assert score["dropped_frac_by_label"] == {"junk": 0.5, "natural": 0.5}
    with pytest.raises(DataError, match="label"):
        score_filters(result, [{"id": "a", "text": "x"}])


def test_vectorised_ngram_statistics_match_their_plain_definitions():
    import random
    from collections import Counter

    import numpy as np

    from components.data.filters.gopher import _dup_ngram_chars, _top_ngram_chars

    def top_plain(words, n):  # characters of the most frequent n-gram (first seen wins ties)
        if len(words) < n:
            return 0
        gram, count = Counter(zip(*(words[i:] for i in range(n)), strict=False)).most_common(1)[0]
        return count * sum(map(len, gram)) if count > 1 else 0

    def dup_plain(words, n):  # characters of words inside a repeated occurrence of an n-gram
        seen, covered = set(), [False] * len(words)
        for i in range(len(words) - n + 1):
            gram = tuple(words[i : i + n])
            if gram in seen:
                covered[i : i + n] = [True] * n
            seen.add(gram)
        return sum(len(w) for w, c in zip(words, covered, strict=True) if c)

    rng = random.Random(0)
    for _ in range(200):
        words = [rng.choice(["a", "bb", "ccc", "dd", "e"]) for _ in range(rng.randint(0, 120))]
        vocab: dict[str, int] = {}
        ids = np.array([vocab.setdefault(w, len(vocab)) for w in words], dtype=np.uint64)
        lengths = np.array([len(w) for w in words], dtype=np.int64)
        for n in (1, 2, 3, 4):
            assert _top_ngram_chars(ids, lengths, n) == top_plain(words, n)
        for n in (5, 7, 10):
            assert _dup_ngram_chars(ids, lengths, n) == dup_plain(words, n)
