"""Metrics equal scikit-learn's on fixed arrays; Recall@k and the trap split by hand."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from components.errors import DataError
from components.graph import metrics as M

Y = np.array([0, 0, 1, 0, 1, 0, 0, 1, 0, 0])
S = np.array([0.1, 0.4, 0.35, 0.8, 0.9, 0.2, 0.05, 0.6, 0.3, 0.5])


def test_equal_sklearn():
    assert M.roc_auc(Y, S) == pytest.approx(roc_auc_score(Y, S))
    assert M.average_precision(Y, S) == pytest.approx(average_precision_score(Y, S))
    lab = (S > 0.45).astype(int)
    assert M.f1(Y, lab) == pytest.approx(f1_score(Y, lab))


def test_recall_at_k_by_hand():
    # top-3 scores: 0.9 (outlier), 0.8 (normal), 0.6 (outlier) -> 2 of 3 outliers
    assert M.recall_at_k(Y, S) == pytest.approx(2 / 3)
    assert M.recall_at_k(Y, S, k=1) == pytest.approx(1 / 3)


def test_contamination_labels_take_the_top_tenth():
    assert M.contamination_labels(S, 0.1).tolist() == [0, 0, 0, 0, 1, 0, 0, 0, 0, 0]


def test_trap_split():
    ei = np.array([[2, 0, 2, 1, 3, 4], [0, 2, 1, 2, 4, 3]])
    y = np.array([0, 0, 1, 0, 0])
    trap, rest = M.trap_split(y, ei)
    assert trap.tolist() == [True, True, True, False, False]
    assert rest.tolist() == [False, False, True, True, True]


def test_bad_inputs():
    with pytest.raises(DataError, match="not finite"):
        M.roc_auc(Y, np.where(Y == 1, np.nan, S))
    with pytest.raises(DataError, match="both outliers and normal"):
        M.roc_auc(np.zeros(10, int), S)
    with pytest.raises(DataError, match="equal-length"):
        M.average_precision(Y, S[:5])
