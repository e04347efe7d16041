"""The fact generator, edit requests and their bad-input rules; CounterFact/ZsRE loaders on fixtures."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from components.editing.facts import (
    RELATIONS,
    build_edit_requests,
    check_requests,
    fact_sentences,
    generate_facts,
    make_subjects,
)
from components.editing.loaders import load_counterfact, load_zsre
from components.errors import DataError, ParamsError

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "neuraldb"


def _requests(n_subjects=60, n_edit=20, seed=0):
    facts = generate_facts(n_subjects, seed)
    subjects = list(dict.fromkeys(f["subject"] for f in facts))
    return build_edit_requests(facts, edit_subjects=subjects[:n_edit], neighbour_subjects=subjects[n_edit:], seed=seed)


def test_generator_is_repeatable_and_complete():
    assert make_subjects(50, 3) == make_subjects(50, 3) and len(set(make_subjects(50, 3))) == 50
    facts = generate_facts(10, 0)
    assert len(facts) == 10 * len(RELATIONS)
    assert all(f["object"] in RELATIONS[f["relation"]]["objects"] for f in facts)
    n_templates = len(RELATIONS["sport"]["rewrite"]) + len(RELATIONS["sport"]["paraphrase"])
    assert len(fact_sentences(facts)) == len(facts) * n_templates


@pytest.mark.parametrize("last_names", [1, 7, 100, 300])
def test_last_names_sets_how_many_subjects_share_a_last_name(last_names):
    subjects = make_subjects(300, 2, last_names)
    assert subjects == make_subjects(300, 2, last_names) and len(set(subjects)) == 300
    counts = Counter(s.split(" ")[1] for s in subjects)
    assert len(counts) == last_names
    assert max(counts.values()) - min(counts.values()) <= 1  # spread evenly: about 300 / L subjects per last name
    with pytest.raises(ParamsError, match="last_names"):
        make_subjects(300, 2, 301)


def test_default_subjects_share_last_names_from_a_small_pool():
    subjects = make_subjects(2060, 0)
    assert len({s.split(" ")[1] for s in subjects}) <= 65 and len(set(subjects)) == 2060


def test_requests_are_counterfactual_and_neighbours_disjoint():
    reqs = _requests()
    edited = {r["subject"] for r in reqs}
    for r in reqs:
        assert r["target_new"] != r["target_true"]
        assert r["target_new"] in RELATIONS[r["relation"]]["objects"]
        assert not set(r["neighborhood_subjects"]) & edited
        assert all(r["subject"] in p for p in r["prompts"] + r["paraphrase_prompts"])
        assert not set(r["prompts"]) & set(r["paraphrase_prompts"])
    assert check_requests(reqs) == reqs


def test_bad_requests_give_clear_errors():
    reqs = _requests()
    with pytest.raises(DataError, match="edit set is empty"):
        check_requests([])
    bad = dict(reqs[0], prompts=["Somebody else was born in"])
    with pytest.raises(DataError, match="is not in prompt"):
        check_requests([bad])
    clash = dict(
        reqs[0],
        target_new=next(
            o
            for o in RELATIONS[reqs[0]["relation"]]["objects"]
            if o not in (reqs[0]["target_new"], reqs[0]["target_true"])
        ),
    )
    with pytest.raises(DataError, match="conflicting targets"):
        check_requests([reqs[0], clash])
    assert check_requests([reqs[0], clash], duplicates="last-wins") == [clash]
    with pytest.raises(ParamsError):
        check_requests(reqs, duplicates="first")


def test_counterfact_and_zsre_loaders_read_the_release_format(tmp_path):
    cf = load_counterfact(FIX / "counterfact_sample.json")
    assert cf[0]["prompts"] == ["The mother tongue of Danielle Darrieux is"]
    assert cf[0]["target_new"] == "English" and cf[0]["target_true"] == "French"
    assert len(cf[0]["paraphrase_prompts"]) == 2 and cf[1]["neighborhood_prompts"]
    check_requests(cf)
    zs = load_zsre(FIX / "zsre_sample.json", limit=1)
    assert len(zs) == 1 and zs[0]["target_new"] == "University of Michigan" and zs[0]["loc_ans"] == "Hugo Weaving"
    (tmp_path / "bad.json").write_text(json.dumps([{"requested_rewrite": {"prompt": "x {}"}}]))
    with pytest.raises(DataError, match="missing field 'subject'"):
        load_counterfact(tmp_path / "bad.json")
    with pytest.raises(DataError, match="not found"):
        load_zsre(tmp_path / "none.json")
