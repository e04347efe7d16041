"""build_pool: byte budget, seeded determinism, and hold-outs fixed by document id."""

from __future__ import annotations

import random

import pytest

from components.data.corpus.pool import allocate, build_pool, holdout_score, holdout_unit
from components.errors import DataError, ParamsError
from components.io import write_jsonl


def _size(docs) -> int:
    return sum(len(d["text"].encode("utf-8")) for d in docs)


@pytest.fixture
def files(tmp_path):
    """Three sources: 'big' (~400 KB), 'mid' (~100 KB), 'small' (~20 KB); chunked units like real ids."""
    rng = random.Random(0)
    out = {}
    words = ["alpha", "beta", "gamma", "délta"]
    for name, units in (("big", 100), ("mid", 25), ("small", 5)):
        docs = [
            {
                "id": f"{name}/unit{u:03d}#{k}",
                "source": name,
                "title": name,
                "text": " ".join(rng.choice(words) for _ in range(rng.randint(150, 250))),
            }
            for u in range(units)
            for k in range(4)
        ]
        write_jsonl(tmp_path / f"{name}.jsonl", docs)
        out[name] = tmp_path / f"{name}.jsonl"
    return out


def _ids(docs) -> list[str]:
    return [d["id"] for d in docs]


def test_pool_respects_the_budget_and_mirrors_source_sizes(files):
    train, held = build_pool(files, budget_bytes=100_000, seed=0)
    assert 95_000 <= _size(train) <= 100_000
    assert held == {}
    by_source = {n: _size([d for d in train if d["source"] == n]) for n in files}
    assert by_source["big"] > 3 * by_source["mid"] > 3 * by_source["small"] > 0


def test_pool_is_deterministic_per_seed_and_changes_with_it(files):
    a, _ = build_pool(files, budget_bytes=80_000, seed=1)
    b, _ = build_pool(files, budget_bytes=80_000, seed=1)
    c, _ = build_pool(files, budget_bytes=80_000, seed=2)
    assert a == b
    assert set(_ids(a)) != set(_ids(c))


def test_budget_larger_than_corpus_takes_everything_once(files):
    train, _ = build_pool(files, budget_bytes=10**9, seed=0)
    assert len(train) == len(set(_ids(train))) == (100 + 25 + 5) * 4


def test_holdout_is_disjoint_whole_units_and_independent_of_budget_and_seed(files):
    holdout = {"big": 0.2, "small": 0.5}
    train1, held1 = build_pool(files, budget_bytes=50_000, holdout=holdout, seed=0)
    train2, held2 = build_pool(files, budget_bytes=10**9, holdout=holdout, seed=7)
    assert held1 == held2
    assert set(held1) == {"big", "small"}
    assert 0 < len(held1["big"]) < 400
    held_ids = {i for docs in held1.values() for i in _ids(docs)}
    assert not held_ids & set(_ids(train1)) and not held_ids & set(_ids(train2))
    # every chunk of a held-out unit is held out, none reaches the pool
    held_units = {holdout_unit(i) for i in held_ids}
    assert len(held_ids) == 4 * len(held_units)
    assert not {holdout_unit(i) for i in _ids(train2)} & held_units


def test_larger_holdout_fraction_only_adds_units(files):
    _, small = build_pool(files, budget_bytes=10_000, holdout={"big": 0.1}, seed=0)
    _, large = build_pool(files, budget_bytes=10_000, holdout={"big": 0.3}, seed=0)
    assert set(_ids(small["big"])) < set(_ids(large["big"]))


def test_weights_steer_the_mix_and_capped_sources_give_way(files):
    train, _ = build_pool(files, budget_bytes=60_000, weights={"big": 0, "mid": 1, "small": 1}, seed=0)
    by_source = {n: _size([d for d in train if d["source"] == n]) for n in files}
    assert by_source["big"] == 0
    assert by_source["small"] > 15_000  # all of small (~20 KB), the rest to mid
    assert by_source["mid"] > 35_000
    assert allocate(100, {"a": 10, "b": 1000}, {"a": 1, "b": 1}) == {"a": 10, "b": 90}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"holdout": {"nope": 0.1}}, "holdout.nope"),
        ({"holdout": {"big": 1.5}}, r"holdout.big=1.5"),
        ({"weights": {"big": -1}}, r"weights.big=-1"),
        ({"budget_bytes": 0}, "budget_bytes=0"),
    ],
)
def test_bad_parameters_name_the_key(files, kwargs, match):
    with pytest.raises(ParamsError, match=match):
        build_pool(files, **{"budget_bytes": 1000, "seed": 0, **kwargs})


def test_duplicate_ids_in_a_source_file_are_reported(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", [{"id": "x/1", "text": "a"}, {"id": "x/1", "text": "b"}])
    with pytest.raises(DataError, match="duplicate document id 'x/1'"):
        build_pool({"x": tmp_path / "d.jsonl"}, budget_bytes=100, seed=0)


def test_heldout_comes_unit_by_unit_in_hash_order_not_file_order(files):
    _, held = build_pool(files, budget_bytes=1000, holdout={"big": 0.3}, seed=0)
    units = [holdout_unit(d["id"]) for d in held["big"]]
    runs = [u for k, u in enumerate(units) if k == 0 or units[k - 1] != u]
    assert len(runs) == len(set(runs)) > 5  # each unit's chunks are contiguous
    assert runs == sorted(runs, key=lambda u: holdout_score(u + "#0"))
    assert runs != sorted(runs)  # a truncated validation set samples across the file
