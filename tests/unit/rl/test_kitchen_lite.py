"""The kitchen-lite environment: passes Gymnasium's checker, is deterministic under a seed, rewards in order."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from components.errors import ParamsError
from components.rl.behaviour import NoisyScripted, expert_action
from components.rl.evaluate import episode_returns
from components.rl.kitchen_lite import ENV_ID, KitchenLiteEnv, make_env, make_layout, register


def test_registered_and_passes_check_env():
    register()
    env = gym.make(ENV_ID, n_subtasks=4)
    check_env(env.unwrapped, skip_render_check=True)
    assert env.observation_space.shape == (8,) and env.action_space.shape == (2,)


def _trajectory(seed, n=4):
    env = make_env(n, layout_seed=1)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = [obs]
    for _ in range(40):
        obs, r, term, trunc, _ = env.step(rng.uniform(-1, 1, 2))
        out.append(np.r_[obs, r])
    return out


def test_deterministic_under_a_seed():
    a, b, c = _trajectory(5), _trajectory(5), _trajectory(6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])


def test_layout_is_procedural_and_validated():
    assert np.array_equal(make_layout(3, 4).targets, make_layout(3, 4).targets)
    assert not np.array_equal(make_layout(3, 4).targets, make_layout(4, 4).targets)
    assert np.array_equal(make_layout(3, 1).targets, make_layout(3, 4).targets[:1])
    with pytest.raises(ParamsError, match="n_subtasks"):
        KitchenLiteEnv(n_subtasks=5)


def test_expert_completes_every_subtask_and_rewards_are_ordered():
    env = make_env(4, 0)
    rets, done = episode_returns(env, lambda o: expert_action(env), range(5))
    assert rets == [4.0] * 5 and done == [4] * 5
    # visiting the targets out of order earns less than the ordered plan
    shuffled = NoisyScripted(env, "shuffled", 0.0, np.random.default_rng(1))
    if [tuple(t) for t in shuffled.plan[:4]] != [tuple(t) for t in env.layout.targets]:
        r, _ = episode_returns(env, shuffled, [0])
        assert r[0] < 4.0


def test_episode_truncates_at_max_steps():
    env = make_env(4, 0, max_steps=7)
    env.reset(seed=0)
    flags = [env.step(np.zeros(2))[3] for _ in range(7)]
    assert flags == [False] * 6 + [True]


def test_drift_and_radius_are_settings_and_validated():
    weak, strong = make_layout(2, 4, drift=0.4), make_layout(2, 4, drift=1.5)
    assert np.array_equal(weak.targets, strong.targets) and np.allclose(strong.drift, weak.drift * 1.5 / 0.4)
    assert np.allclose(np.linalg.norm(strong.drift, axis=1), 1.5)
    with pytest.raises(ParamsError, match="drift"):
        make_layout(0, 4, drift=-1)
    with pytest.raises(ParamsError, match="radius"):
        make_env(4, 0, radius=0.0)


def test_partial_drift_compensation_makes_the_sub_controller_suboptimal():
    """Ceiling check: with compensation < 1 the noiseless sub-controller (the mean of the noisy data) falls short of
    the expert, so a learner cannot reach the expert's score by averaging the dataset's actions; with 1 (the old
    data) it is the expert."""
    env = make_env(4, 0, drift=1.5)
    seeds = range(10)
    expert, _ = episode_returns(env, lambda o: expert_action(env), seeds)
    for comp, below in ((1.0, False), (0.5, True)):
        policy = NoisyScripted(env, "ordered", 0.0, np.random.default_rng(0), compensation=comp)
        rets = [
            episode_returns(env, NoisyScripted(env, "ordered", 0.0, np.random.default_rng(0), compensation=comp), [s])[
                0
            ][0]
            for s in seeds
        ]
        assert policy.compensation == comp
        assert bool(np.mean(rets) < np.mean(expert) - 0.5) == below, (comp, rets, expert)
