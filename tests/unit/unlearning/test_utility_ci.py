"""The paired bootstrap CI of a model-utility difference (components/unlearning/utility_ci.py)."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import DataError
from components.unlearning.metrics import model_utility
from components.unlearning.utility_ci import utility_difference_ci, utility_resampled


def _splits(rng, n=40, shift=0.0):
    return {s: {"prob": np.clip(rng.uniform(0.2, 0.8, n) + shift, 0.01, 1), "rouge": rng.uniform(0.1, 0.9, n),
                "tr": rng.uniform(0.3, 1.5, n)} for s in ("retain", "general")}


def test_the_identity_resample_gives_model_utility():
    d = _splits(np.random.default_rng(0))
    picks = {s: np.arange(40)[None, :] for s in d}
    assert utility_resampled(d, picks)[0] == pytest.approx(model_utility(d))


def test_a_model_against_itself_has_a_zero_difference_and_a_zero_width_ci():
    d = _splits(np.random.default_rng(1))
    pt, lo, hi, per_seed = utility_difference_ci([d, d], [d, d], n_resamples=200, level=0.95, seed=0)
    assert pt == lo == hi == 0.0 and per_seed == [0.0, 0.0]


def test_higher_answer_probabilities_give_a_ci_above_zero():
    rng = np.random.default_rng(2)
    base = [_splits(rng) for _ in range(2)]
    better = [{s: {**v, "prob": np.clip(v["prob"] + 0.15, 0, 1)} for s, v in b.items()} for b in base]
    pt, lo, hi, _ = utility_difference_ci(better, base, n_resamples=500, level=0.95, seed=0)
    assert 0 < lo <= pt <= hi


def test_models_scored_on_different_questions_are_an_error():
    rng = np.random.default_rng(3)
    with pytest.raises(DataError, match="different questions"):
        utility_difference_ci([_splits(rng, n=40)], [_splits(rng, n=30)], n_resamples=10, level=0.95, seed=0)
