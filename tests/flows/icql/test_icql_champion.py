"""ICQL's champion: the safetensors folder round-trips bit for bit, the evaluator recomputes the evaluate stage's
numbers, a sabotaged critic scores clearly worse, and missing data is a DataError naming the file.

A tiny 1-subtask kitchen-lite dataset (30 episodes of 40 steps, nearest contexts k = 5) and 200 ICQL steps on one
torch thread: a few seconds. Measured: Spearman(Q-hat, G) about 0.5 after 200 steps; with both critics' feature
MLPs zeroed, phi = 0, so Q-hat = 0 for every row (Spearman 0, MAE = mean |G|).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from components.errors import DataError
from components.io import read_json, write_json
from components.rl import dataset as D
from components.rl.evaluate import episode_returns, normalised_score, q_accuracy
from components.rl.kitchen_lite import make_env
from components.rl.trainer import (
    TensorData,
    build_agent,
    load_agent,
    load_agent_safetensors,
    method_config,
    save_agent,
    save_agent_safetensors,
    train_agent,
)
from flows.icql import champion
from flows.icql.common import behaviour_factory, env_settings, task_env
from flows.icql.data import contexts, references
from flows.icql.params import PRESETS, Params
from flows.icql.qvalues import predict_q, q_rows
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader
from flows.runtime.params import resolve

LOADER = "components.rl.trainer:load_agent_safetensors"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(params, checkout root with the t1 dataset, champion folder, the trained agent)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        p = resolve(
            Params,
            PRESETS,
            slug="icql",
            profile="smoke",
            overrides=(
                "data.episodes=30",
                "data.max_steps=40",
                "data.reference_episodes=3",
                "eval.episodes=3",
                "eval.q_episodes=8",
            ),
        )
        root = tmp_path_factory.mktemp("icql-champion")
        folder = root / "data/icql/datasets/t1"
        folder.mkdir(parents=True)
        env = task_env({"task": 1, "env": env_settings(p)})
        data = D.collect(env, behaviour_factory(env, p, 1), p.data.episodes, seed=1)
        D.save(data, folder / "transitions.npz")
        contexts(data, p, folder, seed=7)
        write_json(folder / "meta.json", {"task": 1, "env": env_settings(p), "references": references(env, p, 1)})
        cfg = method_config("icql", p.agent.model_dump())
        agent = build_agent("icql", data.obs_dim, data.act_dim, cfg, 0)
        train_agent(agent, TensorData(data, np.load(folder / "ctx_nearest.npy")), steps=200, batch_size=32, seed=0)
        meta = {"method": "icql", "obs_dim": data.obs_dim, "act_dim": data.act_dim, "cfg": cfg, "seed": 0}
        save_agent(agent, root / "run", **meta)
        champ = save_agent_safetensors(load_agent(root / "run"), root / "champion", **meta)
        yield p, root, champ, agent
    finally:
        torch.set_num_threads(threads)


def _evaluate(model, p, root):
    with warnings.catch_warnings():  # a constant Q-hat (the sabotage) has no Spearman correlation: scored 0
        warnings.simplefilter("ignore")
        return champion.evaluate(model, champion.settings_for(p, 1), root)


def test_loader_is_allowed_and_round_trips_bit_for_bit(trained):
    p, root, folder, agent = trained
    assert LOADER in ALLOWED_LOADERS and resolve_loader(LOADER) is load_agent_safetensors
    loaded = resolve_loader(LOADER)(folder)
    want, got = agent.state_dict(), loaded.state_dict()
    assert sorted(want) == sorted(got) and all(torch.equal(want[k], got[k]) for k in want)
    obs = D.load(root / "data/icql/datasets/t1/transitions.npz").observations[:50]
    assert all(np.array_equal(loaded.act(o), agent.act(o)) for o in obs)  # what the rollouts call
    assert np.array_equal(loaded.pyfunc_predict(obs), agent.pyfunc_predict(obs))  # the MLflow pyfunc (batched)
    assert np.allclose(loaded.pyfunc_predict(obs), np.stack([agent.act(o) for o in obs]), atol=1e-6)
    assert _evaluate(loaded, p, root) == _evaluate(agent, p, root)


def test_evaluate_recomputes_the_evaluate_stage_numbers(trained):
    """The evaluate stage's own path (model.pt, its seeds and rows) gives the champion's metrics."""
    p, root, folder, _ = trained
    metrics = _evaluate(load_agent_safetensors(folder), p, root)
    ds = root / "data/icql/datasets/t1"
    agent, data = load_agent(root / "run"), D.load(ds / "transitions.npz")
    env = make_env(1, p.data.layout_seed, p.data.max_steps, radius=p.data.radius, drift=p.data.drift)
    rets, _ = episode_returns(env, agent.act, [p.eval.seed + i for i in range(p.eval.episodes)])
    refs = read_json(ds / "meta.json")["references"]
    rows = q_rows(p, data)
    acc = q_accuracy(
        predict_q(agent, data, np.load(ds / "ctx_nearest.npy"), rows), D.returns_to_go(data, p.agent.gamma)[rows]
    )
    assert metrics == {
        "score": pytest.approx(float(np.mean(normalised_score(rets, refs["random"], refs["expert"])))),
        "q_spearman": pytest.approx(acc["spearman"]),
        "q_mae": pytest.approx(acc["mae"]),
    }
    assert metrics["q_spearman"] > 0.3  # the critic ranks returns: what the sabotage below must break


def test_zeroed_critic_features_score_clearly_worse(trained):
    p, root, folder, _ = trained
    good = _evaluate(load_agent_safetensors(folder), p, root)
    broken = load_agent_safetensors(folder)
    with torch.no_grad():
        for w in broken.qs.phi_net.parameters():  # every stacked critic's feature MLP
            w.zero_()
    bad = _evaluate(broken, p, root)
    assert bad["q_spearman"] <= good["q_spearman"] - 0.3
    assert bad["q_mae"] > good["q_mae"] * (1 + champion.RULES["q_mae"].tolerance)
    assert bad["score"] == good["score"]  # the policy was left alone: the critic metrics are what caught it


def test_candidate_uses_the_loaded_folder_and_declares_every_rule(trained):
    p, root, folder, _ = trained
    settings = champion.settings_for(p, 1)
    assert champion.candidate(None, "t1-icql-s0", folder, settings, root) is None
    cand = champion.candidate("run-id", "t1-icql-s0", folder, settings, root)
    assert cand["metrics"] == _evaluate(load_agent_safetensors(folder), p, root)
    assert cand["eval"]["evaluator"] == "icql" and set(cand["eval"]["rules"]) == set(cand["metrics"])
    assert settings["episodes"] == min(p.eval.episodes, champion.EPISODES)
    tasks = [int(t) for t, methods in p.train.runs.items() if "icql" in methods]  # C1's task: the most subtasks
    assert champion.choose(p) == (max(tasks), p.train.seeds[0], f"t{max(tasks)}-icql-s{p.train.seeds[0]}")


def test_missing_data_and_a_broken_folder_are_data_errors(trained, tmp_path):
    p, root, folder, _ = trained
    with pytest.raises(DataError, match=r"ctx_nearest\.npy: ICQL's evaluation data not found .*paperline run icql"):
        (tmp_path / "data/icql/datasets/t1").mkdir(parents=True)
        for name in ("transitions.npz", "meta.json"):
            (tmp_path / "data/icql/datasets/t1" / name).write_bytes(
                (root / "data/icql/datasets/t1" / name).read_bytes()
            )
        champion.evaluate(load_agent_safetensors(folder), champion.settings_for(p, 1), tmp_path)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad/config.json").write_text((folder / "config.json").read_text())
    (tmp_path / "bad/model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(DataError, match="not a readable agent folder"):
        load_agent_safetensors(tmp_path / "bad")
    with pytest.raises(DataError, match="missing"):
        load_agent_safetensors(tmp_path / "nowhere")
