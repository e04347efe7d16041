"""Dataset building and its checks: D4RL fields, returns-to-go, and clear errors on bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from components.errors import DataError, ValidationFailed
from components.rl import dataset as D
from components.rl.behaviour import NoisyScripted
from components.rl.checks import check_structure, validate_transitions
from components.rl.evaluate import normalised_score, q_accuracy
from components.rl.kitchen_lite import make_env


@pytest.fixture(scope="module")
def data():
    env = make_env(2, 0, max_steps=25)
    return D.collect(env, lambda i: NoisyScripted(env, "ordered", 0.3, np.random.default_rng(i)), 5, seed=0)


def test_fields_and_episode_layout(data, tmp_path):
    assert data.observations.shape == data.next_observations.shape == (len(data), 6)
    bounds = data.episode_bounds()
    assert len(bounds) == 5 and bounds[0][0] == 0 and bounds[-1][1] == len(data)
    for a, b in bounds:
        assert np.array_equal(data.next_observations[a : b - 1], data.observations[a + 1 : b])
        assert np.array_equal(data.next_actions[a : b - 1], data.actions[a + 1 : b])
        ends = data.terminals[a:b] | data.timeouts[a:b]
        assert ends[-1] and not ends[:-1].any()
    D.save(data, tmp_path / "t.npz")
    back = D.load(tmp_path / "t.npz")
    assert all(np.array_equal(getattr(back, f), getattr(data, f)) for f in D.FIELDS)


def test_returns_to_go_closed_form():
    eps = [
        {
            "observations": [[0.0]] * 3,
            "actions": [[0.0]] * 3,
            "rewards": [0.0, 1.0, 1.0],
            "next_observations": [[0.0]] * 3,
            "terminals": [False, False, True],
            "timeouts": [False] * 3,
        },
        {
            "observations": [[0.0]] * 2,
            "actions": [[0.0]] * 2,
            "rewards": [1.0, 0.0],
            "next_observations": [[0.0]] * 2,
            "terminals": [False, False],
            "timeouts": [False, True],
        },
    ]
    g = D.returns_to_go(D.from_episodes(eps), 0.5)
    assert np.allclose(g, [0.5 + 0.25, 1.5, 1.0, 1.0, 0.0])


def test_valid_dataset_passes_gx(data, tmp_path):
    validate_transitions(data, name="ok", obs_dim=6, act_dim=2, result_path=tmp_path / "r.json")
    assert '"success": true' in (tmp_path / "r.json").read_text()


def test_nan_reward_fails_naming_the_column(data):
    bad = dataclasses.replace(data, rewards=data.rewards.copy())
    bad.rewards[3] = np.nan
    with pytest.raises(ValidationFailed, match="reward"):
        validate_transitions(bad, name="nan")


def test_mismatched_observation_shapes(data):
    bad = dataclasses.replace(data, next_observations=data.next_observations[:, :5])
    with pytest.raises(DataError, match="next_observations: width 5 but observations has 6"):
        check_structure(bad)
    with pytest.raises(DataError, match="observations: width 6 but the environment has 8"):
        check_structure(data, obs_dim=8)
    short = dataclasses.replace(data, actions=data.actions[:-1])
    with pytest.raises(DataError, match="dataset.actions"):
        check_structure(short)


def test_empty_dataset():
    with pytest.raises(DataError, match="empty"):
        D.from_episodes([])
    empty = D.Transitions(**{f: np.zeros((0, 2)) for f in D.FIELDS})
    with pytest.raises(DataError, match="empty"):
        validate_transitions(empty, name="empty")


def test_transition_across_an_episode_boundary_fails(data):
    bad = dataclasses.replace(data, next_observations=data.next_observations.copy())
    bad.next_observations[2] += 0.5  # no longer the next row's observation
    with pytest.raises(ValidationFailed, match="continues"):
        validate_transitions(bad, name="cross")
    merged = dataclasses.replace(data, episode=np.zeros_like(data.episode))  # two episodes glued into one
    with pytest.raises(ValidationFailed, match="continues|end_flag_ok"):
        validate_transitions(merged, name="glued")


def test_unreadable_file(tmp_path):
    (tmp_path / "x.npz").write_text("not npz")
    with pytest.raises(DataError, match="x.npz"):
        D.load(tmp_path / "x.npz")


def test_normalised_score_and_q_accuracy():
    assert np.allclose(normalised_score([0.5, 4.0, 2.25], 0.5, 4.0), [0.0, 100.0, 50.0])
    with pytest.raises(DataError, match="expert reference"):
        normalised_score([1.0], 2.0, 2.0)
    acc = q_accuracy(np.array([1.0, 2.0, 3.0, 4.0]), np.array([10.0, 20.0, 30.0, 45.0]))
    assert acc["spearman"] == pytest.approx(1.0)
    with pytest.raises(DataError, match="q_accuracy"):
        q_accuracy(np.ones(3), np.ones(4))
