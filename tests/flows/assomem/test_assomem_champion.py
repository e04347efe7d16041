"""AssoMem's champion on a small synthetic memory: the index folder round-trips bit for bit (same arrays, same
rankings), the evaluator reads the held-out questions' recall, and an index with noise embeddings scores worse."""

from __future__ import annotations

import numpy as np
import pytest

from components.io import write_json, write_jsonl
from components.retrieval.assomem import graph
from components.retrieval.assomem.index import AssoMemIndex, load_index
from components.retrieval.assomem.retriever import AssoMem, AssoMemConfig
from components.retrieval.memory import QUESTION_TYPES
from flows.assomem import champion

N_PROJ, N_SES, N_UTT, DIM = 4, 5, 6, 16
WEIGHTS = {"single-session": {"R": 0.7, "I": 0.2, "T": 0.1}, "temporal": {"R": 0.3, "I": 0.1, "T": 0.6}}


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture
def built(tmp_path):
    """(root with memories + embeddings, the unit, the saved index folder, the in-memory index)."""
    rng = np.random.default_rng(0)
    centers = _unit(rng.normal(size=(N_PROJ, DIM)))
    utts, embs = [], []
    for p in range(N_PROJ):
        for s in range(N_SES):
            for u in range(N_UTT):
                utts.append(
                    {
                        "id": f"p{p}s{s}u{u}",
                        "session_id": f"p{p}s{s}",
                        "clue_truth": f"P{p}",
                        "speaker": "A",
                        "text": f"utterance {p} {s} {u}",
                        "timestamp": float(7 * s + u / 100),
                    }
                )
                embs.append(centers[p] + 0.6 * rng.normal(size=DIM))
    utt = _unit(np.array(embs))
    gold = rng.choice(len(utts), 24, replace=False)
    qs = [
        {
            "id": f"q{i}",
            "type": QUESTION_TYPES[i % 2],
            "text": f"question {i}",
            "query_time": 40.0,
            "gold": [utts[g]["id"]],
            "split": "test" if i % 3 else "calibration",
            "project": utts[g]["clue_truth"],
        }
        for i, g in enumerate(gold)
    ]
    q_embs = _unit(utt[gold] + 0.3 * rng.normal(size=(len(gold), DIM)))
    mem_dir, emb_dir = tmp_path / "data/assomem/memories", tmp_path / "data/assomem/embeddings"
    (mem_dir / "seed0").mkdir(parents=True)
    emb_dir.mkdir(parents=True)
    write_jsonl(mem_dir / "seed0/utterances.jsonl", utts)
    write_jsonl(mem_dir / "seed0/questions.jsonl", qs)
    unit = {"unit": "seed0-n120", "base": "seed0", "seed": 0, "size": len(utts)}  # the whole memory (no projects)
    write_json(mem_dir / "units.json", [unit])
    np.savez(emb_dir / "seed0.npz", utterances=utt, questions=q_embs, phrases=centers)
    utt_clue = np.repeat(np.arange(N_PROJ), N_SES * N_UTT).astype(np.int64)
    adj = graph.build_graph(utt, utt_clue, N_PROJ, threshold=0.75, max_neighbors=5)
    from flows.assomem.common import load_base

    mem = load_base(mem_dir, "seed0")
    cfg = AssoMemConfig(direct_top=10)
    folder = champion.save(tmp_path / "champion", (utt, adj, utt_clue, centers), mem, cfg, WEIGHTS, 10, unit)
    index = AssoMemIndex(AssoMem(utt, mem.timestamps, utt_clue, centers, adj, cfg), WEIGHTS, mem.ids, mem.sessions, 10)
    return tmp_path, unit, folder, index


def test_the_index_folder_round_trips_bit_for_bit(built):
    root, unit, folder, index = built
    loaded = load_index(folder)
    a, b = loaded.retriever, index.retriever
    for name in ("utt", "times", "clue_of", "clues"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert (a.adj != b.adj).nnz == 0 and a.adj.shape == b.adj.shape and a.cfg == b.cfg
    assert loaded.weights == WEIGHTS and loaded.ids == index.ids and loaded.top_k == 10
    assert loaded.weights_for("aggregate") == {"R": 1 / 3, "I": 1 / 3, "T": 1 / 3}  # a type never fitted
    settings = champion.settings_for(unit) | {
        "memories": "data/assomem/memories",
        "embeddings": "data/assomem/embeddings",
    }
    mem, q_embs = champion.unit_data(settings, root)
    args = (q_embs, [q["query_time"] for q in mem.questions], None, [q["type"] for q in mem.questions])
    assert all(np.array_equal(x, y) for x, y in zip(loaded.search(*args), index.search(*args)))
    assert champion.evaluate(loaded, settings, root) == champion.evaluate(index, settings, root)
    x = np.column_stack([np.zeros(2), np.full(2, 40.0), q_embs[:2]])
    assert np.array_equal(loaded.pyfunc_predict(x), index.pyfunc_predict(x)) and loaded.pyfunc_predict(x).shape == (
        2,
        10,
    )


def test_the_evaluator_reads_recall_and_noise_embeddings_score_worse(built):
    root, unit, folder, _ = built
    settings = champion.settings_for(unit)
    good = champion.evaluate(load_index(folder), settings, root)
    assert set(good) == set(champion.RULES) and good["recall_at_10"] >= 0.8
    broken = load_index(folder)
    r = broken.retriever
    noise = _unit(np.random.default_rng(1).normal(size=r.utt.shape))  # the stored embeddings replaced by noise
    broken.retriever = AssoMem(noise, r.times, r.clue_of, r.clues, r.adj, r.cfg)
    bad = champion.evaluate(broken, settings, root)
    assert bad["recall_at_10"] <= good["recall_at_10"] - 0.3 and bad["ndcg_at_10"] < good["ndcg_at_10"]


def test_changed_memories_and_a_broken_folder_are_one_line_errors(built):
    from components.errors import DataError
    from components.retrieval.assomem.index import ARRAYS

    root, unit, folder, _ = built
    with pytest.raises(DataError, match="no memory unit 'seed9-n120'"):
        champion.evaluate(load_index(folder), {**champion.settings_for(unit), "unit": "seed9-n120"}, root)
    with pytest.raises(DataError, match="units.json: AssoMem's memories not found"):
        champion.evaluate(load_index(folder), champion.settings_for(unit), root / "elsewhere")
    (folder / ARRAYS).write_bytes(b"not an npz")
    with pytest.raises(DataError, match="not a readable AssoMem index"):
        load_index(folder)


def test_choose_takes_the_first_seeds_largest_unit():
    units = [{"unit": f"seed{s}-n{n}", "seed": s, "size": n} for s in (0, 1) for n in (300, 1000)]
    assert champion.choose(units, {u["unit"]: 5 for u in units})["unit"] == "seed0-n1000"
    real = [{"unit": f"m{i}", "seed": 0, "size": 50} for i in range(3)]
    assert champion.choose(real, {"m0": 1, "m1": 4, "m2": 4})["unit"] == "m1"  # most test questions, then first
    assert champion.choose(real, {}) is None
