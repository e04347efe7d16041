"""IQL's expectile loss matches its closed form; agents train deterministically from a seed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.errors import ParamsError
from components.rl.agents import IQL, expectile_loss
from components.rl.behaviour import expert_action
from components.rl.dataset import collect
from components.rl.kitchen_lite import make_env
from components.rl.retrieval import context_indices
from components.rl.trainer import TensorData, build_agent, load_agent, method_config, save_agent, train_agent

CFG = {
    "hidden": 16,
    "layers": 1,
    "lr": 1e-3,
    "gamma": 0.9,
    "polyak_tau": 0.1,
    "expectile": 0.7,
    "beta": 3.0,
    "n_critics": 2,
    "td3_alpha": 2.5,
    "d": 4,
    "n_layers": 2,
    "init": "td",
    "alpha": 1.0,
    "fixed_features": False,
}


def test_expectile_loss_closed_form():
    diff = torch.tensor([2.0, -1.0, 0.5, -3.0])
    tau = 0.8
    # |tau - 1(u < 0)| u^2: 0.8*4, 0.2*1, 0.8*0.25, 0.2*9 -> mean
    want = (0.8 * 4 + 0.2 * 1 + 0.8 * 0.25 + 0.2 * 9) / 4
    assert expectile_loss(diff, tau).item() == pytest.approx(want)
    assert expectile_loss(diff, 0.5).item() == pytest.approx(0.5 * diff.pow(2).mean().item())


def test_expectile_minimiser_is_the_expectile():
    x = torch.tensor([0.0, 1.0, 2.0, 10.0])
    grid = torch.linspace(0, 10, 10001)
    losses = torch.stack([expectile_loss(x - v, 0.9) for v in grid])
    v_star = grid[losses.argmin()].item()
    # first-order condition of the 0.9-expectile: 0.9 sum_{x>v}(x - v) = 0.1 sum_{x<v}(v - x)
    lhs = 0.9 * sum(max(xi - v_star, 0) for xi in x.tolist())
    rhs = 0.1 * sum(max(v_star - xi, 0) for xi in x.tolist())
    assert lhs == pytest.approx(rhs, abs=2e-3) and v_star > x.mean().item()


@pytest.fixture(scope="module")
def small_data():
    env = make_env(2, 0, max_steps=30)
    return collect(env, lambda i: lambda o: expert_action(env), 6, seed=0)


@pytest.mark.parametrize("method", ["bc", "td3bc", "iql", "icql"])
def test_agents_train_deterministically(method, small_data, tmp_path):
    ctx = context_indices(small_data.observations, 4) if method == "icql" else None
    runs = []
    for _ in range(2):
        agent = build_agent(method, small_data.obs_dim, small_data.act_dim, CFG, seed=3)
        hist = train_agent(agent, TensorData(small_data, ctx), steps=6, batch_size=8, seed=3, log_every=3)
        runs.append((hist, agent.act(small_data.observations[0])))
    assert runs[0][0] == runs[1][0] and np.array_equal(runs[0][1], runs[1][1])
    assert np.all(np.abs(runs[0][1]) <= 1)
    save_agent(agent, tmp_path / method, method, small_data.obs_dim, small_data.act_dim, CFG, 3)
    again = load_agent(tmp_path / method)
    assert np.array_equal(again.act(small_data.observations[0]), runs[1][1])


def test_icql_is_iql_with_in_context_critics(small_data):
    icql = build_agent("icql", small_data.obs_dim, small_data.act_dim, CFG, seed=0)
    iql = build_agent("iql", small_data.obs_dim, small_data.act_dim, CFG, seed=0)
    assert isinstance(icql, IQL) and type(icql.qs).__name__ == "InContextQ" and icql.qs.n == CFG["n_critics"]
    assert (icql.expectile, icql.beta, icql.tau) == (iql.expectile, iql.beta, iql.tau)
    with pytest.raises(ValueError, match="context"):
        icql.q_values(TensorData(small_data).batch(torch.arange(4)))


def test_method_config_and_unknown_method():
    assert "td3_alpha" not in method_config("iql", CFG) and "d" in method_config("icql-random", CFG)
    with pytest.raises(ParamsError, match="method"):
        build_agent("cql", 4, 2, CFG, 0)


def test_stacked_critics_equal_separate_critics(small_data):
    """The twin critics run as one stacked forward; critic i equals a separate critic with critic i's weights
    (IQL: an MLP; ICQL: feature MLP + linear TD transformer on its own features of the same context)."""
    from torch.nn import functional as F

    from components.rl.linear_attention import LinearTDTransformer
    from components.rl.retrieval import context_indices as ctx_idx

    tdata = TensorData(small_data, ctx_idx(small_data.observations, 4))
    batch = tdata.batch(torch.arange(7))
    for method in ("iql", "icql"):
        agent = build_agent(method, small_data.obs_dim, small_data.act_dim, CFG, seed=1)
        with torch.no_grad():
            for prm in agent.qs.parameters():  # away from the TD initialisation, so every weight counts
                prm.add_(0.1 * torch.randn_like(prm))
            q = agent._q(agent.qs, batch)
        assert q.shape == (CFG["n_critics"], 7)
        net = agent.qs.net if method == "iql" else agent.qs.phi_net
        lins = [m for m in net if hasattr(m, "weight")]

        def member(x, i, lins=lins):
            for j, lin in enumerate(lins):
                x = F.linear(x, lin.weight[i].t(), lin.bias[i, 0])
                x = torch.relu(x) if j < len(lins) - 1 else x
            return x

        for i in range(CFG["n_critics"]):
            with torch.no_grad():
                if method == "iql":
                    want = member(torch.cat([batch["obs"], batch["act"]], -1), i).squeeze(-1)
                else:
                    c, d = batch["ctx"], CFG["d"]
                    phi = lambda o, a, i=i, d=d: F.layer_norm(member(torch.cat([o, a], -1), i), (d,)) / d**0.5  # noqa: E731
                    tf = LinearTDTransformer(d, CFG["n_layers"])
                    for one, many in zip(tf.layers, agent.qs.tf.layers):
                        one.P.copy_(many.P[i]), one.G.copy_(many.G[i])
                    z = tf.prompt(
                        phi(c["obs"], c["act"]),
                        phi(c["next_obs"], c["next_act"]) * c["not_done"][..., None],
                        c["rew"],
                        phi(batch["obs"], batch["act"]),
                        CFG["gamma"],
                    )
                    want = tf(z)
            assert torch.allclose(q[i], want, atol=1e-5), (method, i)
        assert not torch.allclose(q[0], q[1])  # two critics, not one copied


def test_learning_curve_probe_is_logged_and_leaves_training_unchanged(small_data):
    """train_agent's ``evaluate`` (the dev-score probe of the learning curve) runs at every log point and does
    not change what is trained: the same losses and weights as without it."""
    calls = []

    def probe(agent):
        calls.append(agent.training)
        return {"dev_score": float(len(calls))}

    runs = {}
    for name, ev in (("plain", None), ("probed", probe)):
        agent = build_agent("iql", small_data.obs_dim, small_data.act_dim, CFG, seed=5)
        runs[name] = (
            train_agent(agent, TensorData(small_data), steps=9, batch_size=8, seed=5, log_every=3, evaluate=ev),
            agent.act(small_data.observations[0]),
        )
    plain, probed = runs["plain"][0], runs["probed"][0]
    assert [h["dev_score"] for h in probed] == [1.0, 2.0, 3.0] and calls == [False] * 3  # evaluated in eval mode
    assert [{k: v for k, v in h.items() if k != "dev_score"} for h in probed] == plain
    assert np.array_equal(runs["plain"][1], runs["probed"][1])


@pytest.mark.parametrize("method", ["iql", "icql"])
def test_the_actor_rate_anneals_by_cosine_over_the_run_and_the_critics_keep_theirs(small_data, method):
    """IQL's reference schedule (CORL, d3rlpy): the actor's rate follows cosine from lr to 0 over the run's steps;
    V and the critics are not scheduled. ``constant`` keeps every rate."""
    cfg = {**CFG, "actor_schedule": "cosine", "d": 4, "n_layers": 1}
    agent = build_agent(method, small_data.obs_dim, small_data.act_dim, cfg, seed=0)
    data = TensorData(small_data, np.zeros((len(small_data), 3), dtype=np.int64) if agent.uses_context else None)
    lr0 = agent.opt_a.param_groups[0]["lr"]
    seen = []
    train_agent(
        agent,
        data,
        steps=8,
        batch_size=4,
        seed=0,
        log_every=2,
        evaluate=lambda a: seen.append(a.opt_a.param_groups[0]["lr"]) or {},
    )
    want = [lr0 * (1 + np.cos(np.pi * s / 8)) / 2 for s in (2, 4, 6, 8)]
    assert np.allclose(seen, want) and seen[-1] == pytest.approx(0.0, abs=1e-12)
    assert agent.opt_q.param_groups[0]["lr"] == agent.opt_v.param_groups[0]["lr"] == lr0
    flat = build_agent(method, small_data.obs_dim, small_data.act_dim, {**cfg, "actor_schedule": "constant"}, seed=0)
    train_agent(flat, data, steps=8, batch_size=4, seed=0)
    assert flat.opt_a.param_groups[0]["lr"] == lr0
    with pytest.raises(ParamsError, match="actor_schedule"):
        build_agent(method, small_data.obs_dim, small_data.act_dim, {**cfg, "actor_schedule": "linear"}, seed=0)
