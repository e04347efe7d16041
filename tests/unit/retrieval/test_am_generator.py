"""The meeting-memory generator: repeatable, gold by construction, nested size units."""

import numpy as np

from components.retrieval.generator import generate_memory, projects_for_size


def test_same_seed_same_memory_and_different_seed_differs():
    a = generate_memory(n_projects=3, weeks=8, seed=5)
    b = generate_memory(n_projects=3, weeks=8, seed=5)
    c = generate_memory(n_projects=3, weeks=8, seed=6)
    assert a.utterances == b.utterances and a.questions == b.questions
    assert a.texts != c.texts


def test_gold_matches_each_question_type():
    mem = generate_memory(n_projects=3, weeks=10, seed=0)
    by_id = {u["id"]: u for u in mem.utterances}
    types = {q["type"] for q in mem.questions}
    assert types == {"single-session", "temporal", "aggregate", "knowledge-update"}
    for q in mem.questions:
        gold = [by_id[g] for g in q["gold"]]
        assert gold and all(g["clue_truth"] == q["project"] for g in gold)
        if q["type"] == "single-session":
            assert gold[0]["person"] in q["text"] and gold[0]["item"] in q["text"]
        elif q["type"] == "temporal":
            assert all(g["kind"] == "decision" for g in gold) and len({g["week"] for g in gold}) == 1
        elif q["type"] == "aggregate":
            assert len(gold) >= 2 and all(g["kind"] == "complaint" and g["person"] in q["text"] for g in gold)
        else:
            updates = [
                u for u in mem.utterances if u.get("metric") == gold[0]["metric"] and u["clue_truth"] == q["project"]
            ]
            assert gold[0]["timestamp"] == max(u["timestamp"] for u in updates)


def test_timestamps_increase_and_size_units_nest():
    mem = generate_memory(n_projects=5, weeks=8, seed=1)
    assert np.all(np.diff(mem.timestamps) >= 0)
    small, big = projects_for_size(mem, 100), projects_for_size(mem, 400)
    assert big[: len(small)] == small
    assert len(mem.subset(small).utterances) >= 100
    sub = mem.subset(small)
    assert all(q["project"] in small for q in sub.questions)
