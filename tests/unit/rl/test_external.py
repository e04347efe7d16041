"""External datasets: any continuous-action dataset trains every method; envs, action scaling and anchors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from components.errors import DataError, ParamsError
from components.rl.dataset import Transitions, from_episodes
from components.rl.external import flat_obs, make_gym_env, reference_scores, rescale_actions, wrap_env
from components.rl.retrieval import context_indices
from components.rl.trainer import METHODS, TensorData, build_agent, train_agent

CFG = {
    "hidden": 16,
    "layers": 1,
    "lr": 1e-3,
    "gamma": 0.9,
    "polyak_tau": 0.05,
    "expectile": 0.7,
    "beta": 3.0,
    "n_critics": 2,
    "td3_alpha": 2.5,
    "d": 8,
    "n_layers": 2,
    "init": "td",
    "alpha": 1.0,
    "fixed_features": False,
}


def random_transitions(obs_dim: int, act_dim: int, episodes: int = 4, length: int = 15, seed: int = 0) -> Transitions:
    rng = np.random.default_rng(seed)
    eps = []
    for _ in range(episodes):
        obs = rng.normal(size=(length + 1, obs_dim)).astype(np.float32)
        eps.append(
            {
                "observations": obs[:-1],
                "next_observations": obs[1:],
                "actions": rng.uniform(-1, 1, (length, act_dim)),
                "rewards": rng.normal(size=length),
                "terminals": np.r_[np.zeros(length - 1, bool), True],
                "timeouts": np.zeros(length, bool),
            }
        )
    return from_episodes(eps)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_trains_on_a_dataset_with_another_observation_size(method):
    data = random_transitions(obs_dim=11, act_dim=3)  # kitchen-lite has 5 or 8 state dims and 2 actions
    ctx = context_indices(data.observations, 4, "nearest" if method == "icql" else "random")
    tdata = TensorData(data, ctx if method.startswith("icql") else None)
    agent = build_agent(method, data.obs_dim, data.act_dim, CFG, seed=0)
    hist = train_agent(agent, tdata, steps=4, batch_size=8, seed=0, log_every=2)
    assert len(hist) == 2 and all(np.isfinite(v) for h in hist for v in h.values())
    a = agent.act(data.observations[0])
    assert a.shape == (3,) and np.all(np.abs(a) <= 1)
    if method != "bc":
        q = agent.q_values(tdata.batch(torch.arange(6)))
        assert q.shape == (6,) and torch.isfinite(q).all()


def test_pendulum_is_wrapped_to_unit_actions():
    env = make_gym_env("Pendulum-v1", "data.external[0].id")
    raw = gym.make("Pendulum-v1")
    assert env.action_space.low.tolist() == [-1.0] and env.action_space.high.tolist() == [1.0]
    env.reset(seed=3)
    raw.reset(seed=3)
    assert np.allclose(env.step(np.array([1.0], np.float32))[0], raw.step(np.array([2.0], np.float32))[0])


def test_dict_observations_flatten_in_sorted_key_order_like_the_loader():
    obs = {"observation": np.array([1.0, 2.0, 3.0]), "desired_goal": np.array([9.0, 8.0])}
    assert flat_obs(obs).tolist() == [9.0, 8.0, 1.0, 2.0, 3.0]


def test_dataset_actions_rescale_with_the_env_bounds():
    data = random_transitions(2, 1)
    data.actions = np.array([[-2.0], [0.0], [2.0]] * (len(data) // 3) + [[1.0]] * (len(data) % 3), np.float32)
    data.next_actions = data.actions.copy()
    out = rescale_actions(data, np.array([-2.0]), np.array([2.0]))
    assert out.actions[:3, 0].tolist() == [-1.0, 0.0, 1.0] and np.allclose(out.next_actions, out.actions)
    with pytest.raises(DataError, match="dataset.actions: width 1"):
        rescale_actions(data, np.zeros(2), np.ones(2))


@pytest.mark.parametrize(
    "env_id, what", [("CartPole-v1", "Discrete action space"), ("NoSuchEnv-v9", "cannot make Gymnasium env")]
)
def test_non_continuous_or_unknown_env_names_the_field(env_id, what):
    with pytest.raises(ParamsError, match=rf"data\.external\[2\]\.id.*{what}"):
        make_gym_env(env_id, "data.external[2].id")


def test_unbounded_action_space_is_refused():
    env = gym.make("Pendulum-v1")
    env.action_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
    with pytest.raises(ParamsError, match="data.external\\[0\\].id: action bounds must be finite"):
        wrap_env(env, "data.external[0].id")


def _never():
    raise AssertionError("measured although a reference was given")


def test_reference_rule_config_then_published_then_measured():
    refs = reference_scores(
        "data.external[0]",
        config={"ref_max_score": 50.0},
        published={"ref_min_score": -3.0, "ref_max_score": 99.0},
        measured_random=_never,
        measured_expert=_never,
    )
    assert refs == {
        "random": -3.0,
        "random_from": "published (Minari metadata)",
        "expert": 50.0,
        "expert_from": "config",
    }
    refs = reference_scores(
        "data.external[0]", config={}, published={}, measured_random=lambda: -10.0, measured_expert=lambda: 5.0
    )
    assert refs["random"] == -10.0 and refs["expert"] == 5.0 and refs["expert_from"] == "measured in this run"


def test_behaviour_not_better_than_random_is_a_clear_error():
    with pytest.raises(DataError, match=r"data\.external\[1\]: expert reference -1500\.00 .*train_steps"):
        reference_scores(
            "data.external[1]",
            config={},
            published={},
            measured_random=lambda: -1200.0,
            measured_expert=lambda: -1500.0,
        )
