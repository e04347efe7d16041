"""The stored actor against stable-baselines3's own deterministic predict; reward integrity of a short real PPO
training run on the Daze simulator (and the privileged TrojDRL baseline caught by the same check)."""

from __future__ import annotations

import numpy as np
import pytest

from components.backdoor.policy import PPOConfig, load_actor, save_actor, train_ppo
from components.backdoor.runs import Attack, build_env
from components.backdoor.victim import reward_gaps, task_for
from components.errors import DataError

TINY = PPOConfig(n_steps=128, batch_size=64, n_epochs=1)
ATTACK = {
    "CartPole-v1": Attack(target=0, beta=0.2, tau=0.5, k=5),
    "InvertedPendulum-v5": Attack(target=-1.0, beta=0.2, tau=0.2, k=10),
}


@pytest.mark.parametrize("env_id", ["CartPole-v1", "InvertedPendulum-v5"])
def test_reward_integrity_during_poisoned_training_and_the_privileged_baseline_fails_it(tmp_path, env_id):
    env, sim = build_env(env_id, "daze", ATTACK[env_id], seed=0)
    model = train_ppo(env, TINY, steps=256, seed=0)
    log = env.arrays()
    assert {"trigger", "benign"} <= set(log["routine"]) and len(log["reward"]) >= 256
    assert reward_gaps(task_for(env_id), log).max() == 0.0  # every logged reward is the clean reward
    troj, _ = build_env(env_id, "trojdrl", ATTACK[env_id], seed=0)
    train_ppo(troj, TINY, steps=256, seed=0)
    tlog = troj.arrays()
    gaps = reward_gaps(task_for(env_id), tlog)
    poisoned = tlog["routine"] == "poisoned"
    assert (gaps[poisoned] > 0).any() and (gaps[~poisoned] == 0).all()  # a hit's +1 can equal the clean reward

    folder = save_actor(model, tmp_path / "actor", {"env": env_id})
    actor = load_actor(folder)
    obs = np.random.default_rng(0).normal(0, 0.5, (200, actor.obs_dim)).astype(np.float32)
    obs[::2, -1] = 1.0
    ours = actor.act(obs)
    sb3, _ = model.predict(obs, deterministic=True)
    np.testing.assert_allclose(np.asarray(ours).reshape(sb3.shape), sb3, rtol=1e-5, atol=1e-5)


def test_a_policy_folder_in_the_wrong_format_names_the_file(tmp_path):
    (tmp_path / "config.json").write_text('{"action": {"kind": "discrete", "n": 2}}')
    (tmp_path / "policy.safetensors").write_bytes(b"\x80\x04not safetensors")
    with pytest.raises(DataError, match="not a readable policy folder"):
        load_actor(tmp_path)
    with pytest.raises(DataError, match="missing"):
        load_actor(tmp_path / "nowhere")
