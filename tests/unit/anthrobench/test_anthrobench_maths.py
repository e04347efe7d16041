"""AnthroBench's statistics pinned against references: Fleiss' kappa on the textbook example (statsmodels'
formula), the aggregates against brute-force loops, F1 against scikit-learn, the hazards against sigmoid."""

from __future__ import annotations

import numpy as np
import pytest

from components.anthrobench import aggregate as A
from components.anthrobench import behaviours as B
from components.anthrobench import evaluate as E
from components.anthrobench.judges import f1, f1_parts, fleiss_kappa, kappa_of_votes
from components.anthrobench.simulate import Hazards, sigmoid
from components.errors import DataError

# Fleiss (1971) as worked on Wikipedia: 10 items, 14 raters, 5 categories; kappa = 0.210 (statsmodels: 0.20993)
WIKI = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)


def test_fleiss_kappa_matches_the_worked_example():
    assert fleiss_kappa(WIKI) == pytest.approx(0.20993, abs=5e-5)


def test_fleiss_kappa_perfect_and_bad_tables():
    votes = [np.array([1, 0, 1, 0])] * 3
    assert kappa_of_votes(votes) == pytest.approx(1.0)
    with pytest.raises(DataError):
        fleiss_kappa(np.array([[1, 2], [3, 1]]))  # unequal numbers of ratings


def _brute(labels):
    d, t, b = labels.shape
    late, snow = [], []
    for k in range(b):
        firsts = [next((i + 1 for i in range(t) if labels[j, i, k]), 0) for j in range(d)]
        occ = [f for f in firsts if f > 0]
        late.append(np.nan if not occ else sum(f > 1 for f in occ) / len(occ))
        on = [labels[j, i + 1, k] for j in range(d) for i in range(t - 1) if labels[j, i, k]]
        off = [labels[j, i + 1, k] for j in range(d) for i in range(t - 1) if not labels[j, i, k]]
        snow.append((np.mean(on) if on else np.nan) - (np.mean(off) if off else np.nan))
    return np.array(late), np.array(snow)


def test_aggregates_match_brute_force():
    rng = np.random.default_rng(0)
    labels = (rng.random((23, 5, 6)) < [0.05, 0.2, 0.5, 0.8, 0.0, 1.0]).astype(int)
    late, snow = _brute(labels)
    np.testing.assert_allclose(A.late_onset_share(labels), late, equal_nan=True)
    np.testing.assert_allclose(A.snowball(labels), snow, equal_nan=True)
    np.testing.assert_allclose(A.dialogue_prevalence(labels, 1), labels[:, 0].mean(axis=0))
    np.testing.assert_allclose(A.dialogue_prevalence(labels, 5), labels.max(axis=1).mean(axis=0))
    np.testing.assert_allclose(A.message_prevalence(labels), labels.reshape(-1, 6).mean(axis=0))
    assert A.late_onset_count(labels) == int(np.sum(np.nan_to_num(late, nan=-1) >= 0.5))
    with pytest.raises(DataError):
        A.dialogue_prevalence(labels, 6)


def test_f1_is_micro_f1():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(1)
    t, p = rng.random((50, 13)) < 0.3, rng.random((50, 13)) < 0.4
    assert f1(t, p) == pytest.approx(f1_score(t.ravel(), p.ravel()))
    tp, nt, npred = f1_parts(t, p).sum(axis=0)
    assert 2 * tp / (nt + npred) == pytest.approx(f1(t, p))


def test_simulator_hazards_match_sigmoid():
    h = Hazards.build({"default": -1.0, "emotions": 0.5}, 0.4, 0.0)
    labels = E.truth_tensor(E.simulate(h, 400, seed=5))
    for t in (1, 5):
        k = B.BEHAVIOURS.index("emotions")
        assert labels[:, t - 1, k].mean() == pytest.approx(float(sigmoid(0.5 + 0.4 * t)), abs=0.07)
        k = B.BEHAVIOURS.index("agency")
        assert labels[:, t - 1, k].mean() == pytest.approx(float(sigmoid(-1.0 + 0.4 * t)), abs=0.07)


def test_two_stage_indices_draw_seeds_first():
    clusters = np.repeat([0, 1, 2], [2, 3, 4])
    for idx in A.two_stage_indices(clusters, 50, seed=0):
        drawn = clusters[idx]
        assert len(idx) in {6, 7, 8, 9, 10, 11, 12} and all(np.sum(drawn == c) % [2, 3, 4][c] == 0 for c in set(drawn))


def test_flat_late_share_matches_a_flat_simulation():
    for a in (-1.5, 0.0, 1.0):
        labels = E.truth_tensor(E.simulate(Hazards.build(a, 0.0, 0.0), 400, seed=6))[:, :, :13]
        expected = A.flat_late_share(np.array([float(sigmoid(a))]), 5)[0]
        assert np.nanmean(A.late_onset_share(labels)) == pytest.approx(expected, abs=0.05)
