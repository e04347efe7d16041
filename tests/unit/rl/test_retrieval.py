"""Nearest-state retrieval returns the true nearest transitions (against brute force); bad sizes fail clearly."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import DataError, ParamsError
from components.rl.retrieval import StateIndex, brute_force, context_indices


def _states(n=400, dim=6, seed=0):
    return np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)


def test_query_matches_brute_force():
    states = _states()
    queries = _states(50, seed=1)
    got = StateIndex(states).query(queries, 7)
    want = brute_force(states, queries, 7)
    d_got = ((states[got] - queries[:, None]) ** 2).sum(-1)
    d_want = ((states[want] - queries[:, None]) ** 2).sum(-1)
    assert np.allclose(d_got, d_want, atol=1e-5)  # same distances (ties may reorder indices)
    assert (got == want).mean() > 0.99


def test_context_indices_exclude_self_and_equal_brute_force():
    states = _states(300)
    ctx = context_indices(states, 5, "nearest", exclude_self=True)
    assert ctx.shape == (300, 5)
    assert not (ctx == np.arange(300)[:, None]).any()
    want = brute_force(states, states, 6)[:, 1:]  # the first hit is the state itself
    assert (ctx == want).mean() > 0.99


def test_random_contexts_are_seeded_and_skip_self():
    states = _states(50)
    a = context_indices(states, 8, "random", seed=3)
    assert np.array_equal(a, context_indices(states, 8, "random", seed=3))
    assert not np.array_equal(a, context_indices(states, 8, "random", seed=4))
    assert not (a == np.arange(50)[:, None]).any() and a.min() >= 0 and a.max() < 50


def test_retrieval_size_larger_than_dataset_is_an_error():
    states = _states(10)
    with pytest.raises(DataError, match=r"retrieval.k=10 is larger than the dataset \(10 transitions"):
        context_indices(states, 10, "nearest", exclude_self=True)
    with pytest.raises(DataError, match="larger than the dataset"):
        StateIndex(states).query(states[:2], 11)
    with pytest.raises(ParamsError, match="retrieval.mode"):
        context_indices(states, 2, "similar")


def test_empty_or_misshaped_states_fail():
    with pytest.raises(DataError, match="non-empty"):
        StateIndex(np.zeros((0, 3)))
    with pytest.raises(DataError, match=r"expected \(m, 6\)"):
        StateIndex(_states()).query(np.zeros((2, 5)), 3)
