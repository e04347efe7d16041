"""Known-answer test and sabotage check of AssoMem's min-max variant (ARCHITECTURE.md, "Method tests").

The variant is our earlier reading (``fusion="minmax"``, per-query bins, top-1 clue plus the direct top-N); the
released-code default has its own in ``test_am_released_fusion.py``. On this fixture the released fusion fails
(assoc 0.00, temporal 0.00, measured): raw PageRank probabilities (~1e-3) cannot close a 0.2 cosine gap, and the
pooled marginal CMI gives T 0.27 against R 0.34, too little to close a 0.35 cosine gap.

Fixture (built here, seeded, 256-d random unit vectors; 24 questions of each type, calibration and evaluation
alternating): every question has its own session (clue) and the memory is shared.

- ``assoc``: the query q hits a hub utterance (cos 0.8); the 3 gold utterances are near-duplicates of each
  other, linked to the hub (cos ~0.8, same session) but only cos ~0.3 to q; 4 distractors are closer to q
  (cos 0.5), each in a session of unrelated filler. Only association (PageRank from the hub) finds the gold.
- ``temporal``: 8 old near-duplicates (cos 0.95, 20-60 days old) and 2 gold ones (cos 0.6, 1-2 days old), plus
  old filler. Only the temporal signal finds the gold, and only if the fusion gives it the weight.

The method runs as the flow runs it: graph by ``build_graph`` (cos >= 0.75 and ownership edges), signals by
``AssoMem.signals`` (the variant, direct_top 10), CMI weights per type fitted on the calibration half (temperature 0.1),
``rank``; Recall@3 on the evaluation half by ir_measures (``components.retrieval.metrics.per_query``).
Check: for every type, AssoMem's mean R@3 >= max(dense-only, random candidate order) + 0.25.

Measured: assoc 0.667 vs dense 0.000 / random 0.250; temporal 1.000 vs 0.000 / 0.333 (learned weights: assoc
w_I 0.93, temporal w_T 0.85). Sabotaged (the failing value): PageRank replaced by noise -> assoc 0.000 (w_R takes
over); temporal signal reversed -> temporal 0.000 (CMI is sign-blind, w_T stays 0.85 and picks the oldest);
temporal signal shuffled -> temporal 0.000 (w_T falls to 0.10); fusion weight learning zeroed (equal weights) ->
temporal 0.000 (assoc 0.528 still passes).
"""

from __future__ import annotations

import numpy as np
import pytest

from components.retrieval.assomem import fusion, importance
from components.retrieval.assomem.graph import build_graph
from components.retrieval.assomem.retriever import SIGNALS, AssoMem, AssoMemConfig, rank
from components.retrieval.baselines import dense_flat
from components.retrieval.metrics import per_query
from tests.unit.retrieval.assomem import am_fixtures as F

D, NOW, K, N_PER_TYPE = 256, 1000.0, 3, 24
MARGIN = 0.25
TYPES = ("assoc", "temporal")
VARIANT = AssoMemConfig(top_clues=1, union_direct=True, direct_top=10, fusion="minmax")


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def memory_fixture(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)

    def rv(*shape):
        return _unit(rng.normal(size=(*shape, D)))

    utts, ages, clue, queries, gold, types = [], [], [], [], [], []
    n_clue = 0

    def add(vecs, age, c):
        start = len(utts)
        utts.extend(vecs)
        ages.extend(age)
        clue.extend([c] * len(vecs))
        return list(range(start, start + len(vecs)))

    for _ in range(N_PER_TYPE):
        a, b = rv(), rv()
        c0, n_clue = n_clue, n_clue + 1
        add([_unit(0.8 * a + 0.6 * b)], rng.uniform(10, 300, 1), c0)  # the hub
        g = add(list(_unit(0.3 * a + 0.9 * b + 0.2 * rv(3))), rng.uniform(10, 300, 3), c0)
        for _ in range(4):
            cvec = rv()
            ck, n_clue = n_clue, n_clue + 1
            add([_unit(0.5 * a + 0.85 * cvec)], rng.uniform(10, 300, 1), ck)
            add(list(_unit(0.3 * cvec + 0.95 * rv(4))), rng.uniform(10, 300, 4), ck)
        queries.append(a), gold.append(g), types.append("assoc")
    for _ in range(N_PER_TYPE):
        a = rv()
        c0, n_clue = n_clue, n_clue + 1
        add(list(_unit(a + np.sqrt(1 / 0.95**2 - 1) * rv(8))), rng.uniform(20, 60, 8), c0)
        g = add(list(_unit(a + np.sqrt(1 / 0.6**2 - 1) * rv(2))), rng.uniform(1, 2, 2), c0)
        add(list(_unit(0.2 * a + rv(4))), rng.uniform(100, 300, 4), c0)
        queries.append(a), gold.append(g), types.append("temporal")
    utts, clue = np.asarray(utts, np.float32), np.asarray(clue)
    clue_embs = _unit(np.stack([utts[clue == c].mean(0) for c in range(n_clue)])).astype(np.float32)
    return {
        "utts": utts,
        "times": NOW - np.asarray(ages),
        "clue": clue,
        "clue_embs": clue_embs,
        "q": np.asarray(queries, np.float32),
        "gold": gold,
        "types": types,
        "calibration": np.arange(len(queries)) % 2 == 0,
    }


def _recall(fx: dict, ranked: dict[int, np.ndarray], qids: list[int]) -> dict[str, float]:
    pq = per_query(
        {str(i): [str(g) for g in fx["gold"][i]] for i in qids},
        {str(i): [str(u) for u in ranked[i]] for i in qids},
        ks=(K,),
    )
    return {t: float(np.mean([pq[str(i)][f"R@{K}"] for i in qids if fx["types"][i] == t])) for t in TYPES}


def known_answer(seed: int = 0) -> dict:
    fx = memory_fixture(seed)
    adj = build_graph(fx["utts"], fx["clue"], len(fx["clue_embs"]))
    am = AssoMem(fx["utts"], fx["times"], fx["clue"], fx["clue_embs"], adj, VARIANT)
    sigs = am.signals(fx["q"], [NOW] * len(fx["q"]))
    rel = [np.isin(s.candidates, g).astype(np.int64) for s, g in zip(sigs, fx["gold"])]
    cal = np.flatnonzero(fx["calibration"]).tolist()
    ev = np.flatnonzero(~fx["calibration"]).tolist()
    bins = fusion.calibration_bins([sigs[i] for i in cal], SIGNALS, binning="per-query")
    w, _ = fusion.cmi_weights(bins, [rel[i] for i in cal], [fx["types"][i] for i in cal], temperature=0.1)
    rng = np.random.default_rng(seed)
    method = _recall(fx, {i: rank(sigs[i], w[fx["types"][i]], K) for i in ev}, ev)
    dense = _recall(fx, {i: dense_flat(fx["q"][i : i + 1], fx["utts"], K)[0] for i in ev}, ev)
    rand = _recall(fx, {i: rng.permutation(sigs[i].candidates)[:K] for i in ev}, ev)
    passes = {t: method[t] >= max(dense[t], rand[t]) + MARGIN for t in TYPES}
    return {"assomem": method, "dense": dense, "random": rand, "weights": w, "passes": passes}


def test_assomem_known_answer():
    m = known_answer()
    assert all(m["passes"].values()), m


def _pagerank_noise(monkeypatch):
    rng = np.random.default_rng(123)
    monkeypatch.setattr(importance, "personalized_pagerank", lambda adj, t, **kw: rng.random(np.shape(t)))


def _no_weight_learning(monkeypatch):
    real = fusion.cmi_weights

    def zeroed(bins, relevant, types, *, temperature, normalise=True):
        _, cmi = real(bins, relevant, types, temperature=temperature, normalise=normalise)
        zero = {t: {d: 0.0 for d in v} for t, v in cmi.items()}
        return {t: dict(zip(v, fusion.softmax(list(v.values()), temperature))) for t, v in zero.items()}, zero

    monkeypatch.setattr(fusion, "cmi_weights", zeroed)


@pytest.mark.parametrize(
    "sabotage",
    [_pagerank_noise, F.temporal_reversed, F.temporal_shuffled, _no_weight_learning],
    ids=["pagerank-noise", "temporal-reversed", "temporal-shuffled", "no-weight-learning"],
)
def test_sabotage_breaks_the_known_answer(monkeypatch, sabotage):
    sabotage(monkeypatch)
    m = known_answer()
    assert not all(m["passes"].values()), m
