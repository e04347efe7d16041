"""PPO (stable-baselines3) on a victim environment, and the trained actor stored without pickle.

SB3's own ``model.save`` zip holds pickled objects, and the repo loads nothing by unpickling
(``tests/flows/test_no_pickle.py``), so only the actor's weights leave training: ``policy.safetensors`` plus
``config.json``. :class:`ActorPolicy` runs SB3's default MlpPolicy actor (tanh MLP, then the action head) in
numpy: argmax of the logits (Discrete) or the clipped mean (Box), which is what SB3's
``predict(deterministic=True)`` returns (pinned by a unit test).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from components.errors import DataError
from components.io import atomic_path, model_files, write_json

ACTOR_PREFIXES = ("mlp_extractor.policy_net.", "action_net.")


@dataclass(frozen=True)
class PPOConfig:
    """The PPO settings shared by every method (same tuning for clean, Daze and TrojDRL agents)."""

    n_steps: int = 256
    batch_size: int = 64
    n_epochs: int = 10
    gamma: float = 0.98
    gae_lambda: float = 0.8
    learning_rate: float = 1e-3
    ent_coef: float = 0.0
    clip_range: float = 0.2
    hidden: list[int] = field(default_factory=lambda: [64, 64])


def train_ppo(env, cfg: PPOConfig, *, steps: int, seed: int, threads: int = 1):
    """An SB3 PPO agent trained for ``steps`` environment steps on ``env`` (one process, CPU, seeded)."""
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(threads)
    kw = {k: v for k, v in asdict(cfg).items() if k != "hidden"}
    model = PPO(
        "MlpPolicy", env, seed=seed, device="cpu", verbose=0, policy_kwargs={"net_arch": list(cfg.hidden)}, **kw
    )
    model.learn(total_timesteps=steps, progress_bar=False)
    return model


def actor_weights(model) -> dict[str, np.ndarray]:
    """The actor's tensors of an SB3 PPO model (policy MLP + action head), as float32 arrays."""
    sd = model.policy.state_dict()
    return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in sd.items() if k.startswith(ACTOR_PREFIXES)}


def save_actor(model, folder: Path, meta: dict) -> Path:
    """Write ``policy.safetensors`` and ``config.json`` (action space, activation, ``meta``) into ``folder``."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    space = model.action_space
    if hasattr(space, "n"):
        act = {"kind": "discrete", "n": int(space.n)}
    else:
        act = {"kind": "box", "low": np.asarray(space.low).tolist(), "high": np.asarray(space.high).tolist()}
    with atomic_path(folder / "policy.safetensors") as tmp:
        save_file(actor_weights(model), str(tmp))
    write_json(
        folder / "config.json",
        {"action": act, "activation": "tanh", "obs_dim": int(model.observation_space.shape[0]), **meta},
    )
    return folder


class ActorPolicy:
    """A trained actor in numpy: ``act(obs)`` is the deterministic action for one observation or a batch."""

    def __init__(self, weights: dict[str, np.ndarray], action: dict):
        hidden = sorted({int(k.split(".")[2]) for k in weights if k.startswith("mlp_extractor.policy_net.")})
        self.layers = [
            (weights[f"mlp_extractor.policy_net.{i}.weight"], weights[f"mlp_extractor.policy_net.{i}.bias"])
            for i in hidden
        ]
        self.head = (weights["action_net.weight"], weights["action_net.bias"])
        self.action = action

    @property
    def obs_dim(self) -> int:
        return int(self.layers[0][0].shape[1])

    def output(self, obs: np.ndarray) -> np.ndarray:
        """Logits (Discrete) or the Gaussian mean (Box), batch first."""
        h = np.atleast_2d(np.asarray(obs, np.float32))
        for w, b in self.layers:
            h = np.tanh(h @ w.T + b)
        return h @ self.head[0].T + self.head[1]

    def act(self, obs: np.ndarray) -> np.ndarray:
        out = self.output(obs)
        if self.action["kind"] == "discrete":
            return out.argmax(axis=-1)
        return np.clip(out, np.asarray(self.action["low"], np.float32), np.asarray(self.action["high"], np.float32))

    def pyfunc_predict(self, obs):
        """MLflow pyfunc entry (``flows.runtime.mlflow_model``): observations (batch, obs_dim) -> actions."""
        return self.act(np.asarray(obs, np.float32))


def load_actor(folder: str | Path) -> ActorPolicy:
    """An :class:`ActorPolicy` from a folder written by :func:`save_actor` (safetensors: no pickle)."""
    from safetensors.numpy import load_file

    cfg_path, w_path = model_files(folder, "policy.safetensors", "save_actor (a policy)")
    try:
        cfg = json.loads(cfg_path.read_text())
        weights = load_file(str(w_path))
        return ActorPolicy(weights, cfg["action"])
    except Exception as exc:
        raise DataError(f"{folder}: not a readable policy folder ({type(exc).__name__}: {exc})") from None
