"""POPE metrics against scikit-learn, CHAIR against a hand count, MME's acc+, and the two-stage paired bootstrap
(the statistic on the identity resample is the plain difference; clusters are drawn whole; strata are kept)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_score, recall_score

from components.errors import DataError
from components.selfaug_decoding import metrics as MT


def test_pope_matches_sklearn():
    rng = np.random.default_rng(0)
    t, p = rng.random(200) < 0.5, rng.random(200) < 0.6
    got = MT.pope(p, t)
    assert got["f1"] == pytest.approx(f1_score(t, p))
    assert got["precision"] == pytest.approx(precision_score(t, p))
    assert got["recall"] == pytest.approx(recall_score(t, p))
    assert got["yes_ratio"] == pytest.approx(p.mean())
    assert got["false_yes_rate"] == pytest.approx((p & ~t).sum() / (~t).sum())
    assert MT.yes("Yes, there is") and not MT.yes("no") and not MT.yes("")


def test_chair_by_hand():
    caps = [["a", "red", "circle", "and", "a", "blue", "square"], ["a", "red", "circle"], ["a", "cross"]]
    truth = [["circle", "triangle"], ["circle"], ["square"]]
    got = MT.chair(caps, truth)
    assert got["chair_s"] == pytest.approx(2 / 3)  # captions 1 and 3 hallucinate
    assert got["chair_i"] == pytest.approx(2 / 4)  # square and cross of 4 mentions
    with pytest.raises(DataError, match="chair"):
        MT.chair([], [])


def test_mme_acc_plus_needs_both_questions_right():
    rows = [{"qtype": "count", "image": i, "correct": c} for i, c in ((1, True), (1, False), (2, True), (2, True))]
    assert MT.mme(rows)["count"] == {"acc": 0.75, "acc_plus": 0.5, "n": 4}


def test_two_stage_bootstrap_draws_whole_clusters_and_keeps_strata():
    clusters = np.repeat([0, 1, 2], 4)
    strata = np.tile([0, 0, 1, 1], 3)
    labels: list = []
    idx = MT.two_stage_indices(clusters, 50, np.random.default_rng(0), strata=strata, labels_out=labels)
    assert idx.shape == (50, 12) and labels[0].shape == (12,)
    assert all((strata[row] == np.repeat([0, 1], 6)).all() for row in idx)  # strata sizes fixed
    with pytest.raises(DataError, match="must be equal"):
        MT.two_stage_indices(np.array([0, 0, 1]), 5, np.random.default_rng(0))


def test_paired_f1_difference_and_its_ci():
    rng = np.random.default_rng(1)
    t = rng.random(400) < 0.5
    good = np.where(rng.random(400) < 0.9, t, ~t)
    bad = np.where(rng.random(400) < 0.7, t, ~t)
    stat = MT.f1_difference(good, bad, t)
    pt, lo, hi = MT.paired_bootstrap(stat, 400, None, n_resamples=1000, seed=0)
    assert pt == pytest.approx(f1_score(t, good) - f1_score(t, bad))
    assert 0 < lo < pt < hi
    same = MT.paired_bootstrap(MT.f1_difference(good, good, t), 400, None, n_resamples=200, seed=0)
    assert same == (0.0, 0.0, 0.0)
    ratio = MT.ratio_difference([1, 0, 2], [2, 2, 2], [0, 0, 1], [2, 2, 2])
    assert ratio(np.arange(3)[None])[0] == pytest.approx(3 / 6 - 1 / 6)
