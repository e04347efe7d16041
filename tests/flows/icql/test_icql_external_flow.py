"""External datasets through the icql stages data -> train -> evaluate -> report table (no MuJoCo, no network).

``sac``: real stable-baselines3 SAC on Pendulum-v1 at a tiny scale. ``minari``: the package is not
installed, so ``minari.load_dataset`` is replaced by a stand-in with Minari 0.5's attributes
(``iterate_episodes``, ``action_space``, ``storage.metadata``, ``recover_environment``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

from components.errors import ParamsError
from components.io import read_json, read_jsonl
from components.rl.dataset import load
from flows.icql import data as data_stage
from flows.icql import evaluate as eval_stage
from flows.icql import train as train_stage
from flows.icql.params import PRESETS, Params
from flows.icql.report_external import external_table
from flows.registry import papers
from flows.runtime.params import resolve
from flows.runtime.settings import Paths
from flows.runtime.stages import StageContext

SMALL = (
    "data.tasks=[1, 4]",
    "data.episodes=6",
    "data.reference_episodes=2",
    "retrieval.k=3",
    "train.runs={'1': [], '4': []}",
    "train.steps=4",
    "train.batch_size=8",
    "resources.workers=1",
    "eval.episodes=2",
    "eval.q_episodes=2",
    "agent.hidden=16",
    "agent.d=8",
    "train.external_methods=['bc', 'td3bc', 'iql', 'icql', 'icql-random']",
)


class Ctx(StageContext):
    """A context of icql's train stage (the grid keys its jobs on it) with plain paths under a temporary folder."""

    def __init__(self, params, root: Path):
        paper = papers()["icql"]
        super().__init__(paper, paper.stage("train"), params, "smoke", Paths(root))
        self.root = root

    def input(self, rel: str) -> Path:
        return self.root / rel

    def output(self, rel: str) -> Path:
        return self.root / rel


def _params(external: str, *extra: str):
    return resolve(
        Params, PRESETS, slug="icql", profile="smoke", overrides=(*SMALL, f"data.external={external}", *extra)
    )


def _run_stages(ctx: Ctx) -> tuple[list[dict], list[dict]]:
    data_stage.run(ctx)
    train_stage.run(ctx)
    eval_stage.run(ctx)
    ev = ctx.root / "data/icql/eval"
    return read_jsonl(ev / "external_episodes.jsonl"), read_jsonl(ev / "external_runs.jsonl")


@pytest.mark.slow
def test_sac_pendulum_source_trains_every_method_and_scores(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLINE_ONLINE", "1")
    # 300 SAC steps do not beat a random policy on Pendulum, so the expert anchor comes from the config here
    p = _params("[{'source': 'sac', 'id': 'Pendulum-v1', 'train_steps': 300, 'episodes': 3, 'ref_max_score': -150.0}]")
    episodes, runs = _run_stages(Ctx(p, tmp_path))
    folder = tmp_path / "data/icql/datasets/ext-Pendulum-v1"
    data = load(folder / "transitions.npz")
    assert (data.obs_dim, data.act_dim, len(data)) == (3, 1, 600) and np.abs(data.actions).max() <= 1
    refs = read_json(folder / "meta.json")["references"]
    assert refs["random_from"] == "measured in this run" and refs["expert_from"] == "config"
    assert {r["method"] for r in runs} == {"bc", "td3bc", "iql", "icql", "icql-random"}
    assert len(episodes) == 5 * 2
    for e in episodes:
        assert np.isfinite(e["score"])
        assert e["score"] == pytest.approx(100 * (e["return"] - refs["random"]) / (refs["expert"] - refs["random"]))
    assert all(-1 <= r["q_spearman"] <= 1 for r in runs if r["method"] != "bc")
    rows = external_table(p, episodes)
    assert len(rows) == 5 and all(r["ci_low"] <= r["score"] <= r["ci_high"] and r["seeds"] == 1 for r in rows)
    assert not (tmp_path / "data/icql/eval/runs.jsonl").read_text().strip()  # no kitchen runs were asked for


def test_sac_source_with_discrete_actions_names_the_field(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLINE_ONLINE", "1")
    p = _params("[{'source': 'sac', 'id': 'Pendulum-v1'}, {'source': 'sac', 'id': 'CartPole-v1'}]")
    with pytest.raises(ParamsError, match=r"data\.external\[1\]\.id = 'CartPole-v1': has a Discrete action space"):
        data_stage.build_external(p, 1, p.data.external[1], tmp_path)


class FakeMinariDataset:
    """Dict-observation episodes of a noisy swing-up controller on Pendulum, in Minari's layout (T+1 observations)."""

    def __init__(self, metadata: dict, action_space=None):
        self.action_space = action_space or gym.spaces.Box(-2.0, 2.0, (1,), np.float32)
        self.storage = SimpleNamespace(metadata=metadata)

    def recover_environment(self, eval_env: bool = False):
        space = gym.spaces.Dict(
            {"observation": gym.spaces.Box(-8, 8, (3,)), "desired_goal": gym.spaces.Box(-1, 1, (2,))}
        )
        return gym.wrappers.TransformObservation(
            gym.make("Pendulum-v1"), lambda o: {"observation": o, "desired_goal": np.array([1.0, 0.0])}, space
        )

    def iterate_episodes(self):
        rng = np.random.default_rng(0)
        env = self.recover_environment()
        for i in range(4):
            obs, _ = env.reset(seed=i)
            rec = {
                "observations": {"observation": [obs["observation"]], "desired_goal": [obs["desired_goal"]]},
                "actions": [],
                "rewards": [],
                "terminations": [],
                "truncations": [],
            }
            while True:
                a = np.clip([-2.0 * obs["observation"][2] + rng.normal()], -2, 2).astype(np.float32)
                obs, r, term, trunc, _ = env.step(a)
                for k in ("observation", "desired_goal"):
                    rec["observations"][k].append(obs[k])
                for k, v in (("actions", a), ("rewards", r), ("terminations", term), ("truncations", trunc)):
                    rec[k].append(v)
                if term or trunc:
                    break
            yield SimpleNamespace(
                observations={k: np.array(v) for k, v in rec["observations"].items()},
                **{k: np.array(v) for k, v in rec.items() if k != "observations"},
            )


def test_minari_source_uses_published_references_and_the_recovered_env(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLINE_ONLINE", "1")
    calls = []

    def load_dataset(dataset_id, download=False):
        calls.append((dataset_id, download))
        return FakeMinariDataset({"ref_min_score": -1500.0, "ref_max_score": -100.0})

    monkeypatch.setitem(sys.modules, "minari", SimpleNamespace(load_dataset=load_dataset))
    p = _params("[{'source': 'minari', 'id': 'test/pendulum/dict-v0'}]")
    episodes, runs = _run_stages(Ctx(p, tmp_path))
    folder = tmp_path / "data/icql/datasets/ext-test_pendulum_dict-v0"
    data = load(folder / "transitions.npz")
    assert (data.obs_dim, data.act_dim) == (5, 1) and np.abs(data.actions).max() <= 1
    assert np.allclose(data.observations[0, :2], [1.0, 0.0])  # desired_goal sorts before observation
    refs = read_json(folder / "meta.json")["references"]
    assert (refs["random"], refs["expert"]) == (-1500.0, -100.0) and refs["random_from"].startswith("published")
    assert calls == [("test/pendulum/dict-v0", True), ("test/pendulum/dict-v0", False)]
    assert len(episodes) == 10 and all(np.isfinite(e["score"]) for e in episodes)


def test_minari_source_with_discrete_actions_names_the_field(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLINE_ONLINE", "1")
    ds = FakeMinariDataset({}, action_space=gym.spaces.Discrete(3))
    monkeypatch.setitem(sys.modules, "minari", SimpleNamespace(load_dataset=lambda i, download=False: ds))
    p = _params("[{'source': 'minari', 'id': 'D4RL/some/discrete-v0'}]")
    with pytest.raises(ParamsError, match=r"data\.external\[0\]\.id: has a Discrete action space"):
        data_stage.build_external(p, 0, p.data.external[0], tmp_path)
