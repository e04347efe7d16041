"""Fusion: softmax weights, CMI toward the informative signal, time winning when only time tells answers apart."""

import numpy as np
import pytest
import scipy.sparse as sp

from components.errors import ParamsError
from components.retrieval.assomem import fusion
from components.retrieval.assomem.retriever import AssoMem, AssoMemConfig, rank


def test_softmax_is_a_distribution():
    w = fusion.softmax([0.3, -2.0, 5.0], temperature=0.5)
    assert np.all(w >= 0) and np.isclose(w.sum(), 1.0)
    assert np.argmax(w) == 2
    with pytest.raises(ParamsError, match="temperature"):
        fusion.softmax([1.0], temperature=0)


def test_minmax_and_quantile_bins():
    assert np.allclose(fusion.minmax([2.0, 4.0, 3.0]), [0.0, 1.0, 0.5])
    assert np.allclose(fusion.minmax([1.0, 1.0]), [0.0, 0.0])
    bins = fusion.quantile_bins(np.arange(9.0), 3)
    assert list(bins) == [0, 0, 0, 1, 1, 1, 2, 2, 2]


def _synthetic(rng, n_q=40, n_c=60):
    bins = {"signal": [], "noise": []}
    rel = []
    for _ in range(n_q):
        r = np.zeros(n_c, dtype=int)
        r[rng.choice(n_c, 3, replace=False)] = 1
        informative = np.where(r == 1, 1.0, 0.0) + 0.3 * rng.random(n_c)
        bins["signal"].append(fusion.quantile_bins(fusion.minmax(informative)))
        bins["noise"].append(fusion.quantile_bins(rng.random(n_c)))
        rel.append(r)
    return bins, rel


@pytest.mark.parametrize("normalise", [True, False])
def test_cmi_weights_move_to_the_informative_signal(normalise):
    bins, rel = _synthetic(np.random.default_rng(0))
    types = ["t"] * len(rel)
    w, cmi = fusion.cmi_weights(bins, rel, types, temperature=0.1 if normalise else 0.01, normalise=normalise)
    assert np.isclose(sum(w["t"].values()), 1.0) and min(w["t"].values()) >= 0
    assert cmi["t"]["signal"] > cmi["t"]["noise"]
    assert w["t"]["signal"] > 0.8


def test_temporal_signal_wins_when_only_time_distinguishes_answers():
    """Identical utterances (same text, same embedding): the gold is always the most recent one."""
    rng = np.random.default_rng(1)
    n = 30
    utt = np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (n, 1))
    times = np.sort(rng.uniform(0, 100, n))
    clue = np.zeros(n, dtype=np.int64)
    adj = sp.csr_matrix(np.pad(np.ones((1, n)), ((0, n), (1, 0)))[: n + 1, : n + 1])
    adj = ((adj + adj.T) > 0).astype(float)
    am = AssoMem(
        utt,
        times,
        clue,
        np.array([[1.0, 0.0]], dtype=np.float32),
        sp.csr_matrix(adj),
        AssoMemConfig(direct_top=n, union_direct=True),
    )
    q = np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (20, 1))
    sigs = am.signals(q, [100.0] * 20)
    gold = int(np.argmax(times))
    rel = [(s.candidates == gold).astype(int) for s in sigs]
    w, _ = fusion.cmi_weights({d: [s.bins[d] for s in sigs] for d in "RIT"}, rel, ["temporal"] * 20, temperature=0.1)
    assert max(w["temporal"], key=w["temporal"].get) == "T"
    assert rank(sigs[0], w["temporal"], 1)[0] == gold


def test_pooled_bins_cut_all_questions_at_the_released_positions():
    """Cuts at sorted positions int(n * i / 3) - 1 of all values pooled; a value equal to a cut stays below it."""
    bins = fusion.pooled_bins([np.arange(0.0, 5.0), np.arange(5.0, 9.0)], 3)
    assert [list(b) for b in bins] == [[0, 0, 0, 1, 1], [1, 2, 2, 2]]
    assert [list(b) for b in fusion.pooled_bins([np.ones(4)], 3)] == [[0, 0, 0, 0]]
    with pytest.raises(ParamsError, match="binning"):
        fusion.calibration_bins([], ("R",), binning="global")
