"""Training loop for the offline agents: tensor views of a dataset, seeded batches, save/load.

For ICQL, every batch row carries the context retrieved for its state (precomputed
indices, see :mod:`components.rl.retrieval`), gathered here by index. Runs are saved as ``model.pt``
(a state_dict, read back with ``weights_only=True``); a model that leaves the pipeline (a champion) as
``model.safetensors`` + ``config.json`` (:func:`save_agent_safetensors`, :func:`load_agent_safetensors`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from components.errors import DataError, ParamsError
from components.io import model_files
from components.rl.agents import AGENTS
from components.rl.dataset import Transitions

log = logging.getLogger(__name__)
METHODS = ("bc", "td3bc", "iql", "icql", "icql-random")
ICQL_KEYS = ("d", "n_layers", "init", "alpha", "fixed_features")
_BASE = ("hidden", "layers", "lr")
_IQL = (*_BASE, "gamma", "polyak_tau", "expectile", "beta", "n_critics", "actor_schedule")
METHOD_KEYS = {
    "bc": _BASE,
    "td3bc": (*_BASE, "gamma", "polyak_tau", "td3_alpha"),
    "iql": _IQL,
    "icql": (*_IQL, *ICQL_KEYS),
    "icql-random": (*_IQL, *ICQL_KEYS),
}


def method_config(method: str, agent_params: dict) -> dict:
    """The hyperparameters ``method`` uses, taken from the shared agent params."""
    if method not in METHODS:
        raise ParamsError(f"method: expected one of {METHODS}, got {method!r}")
    return {k: agent_params[k] for k in METHOD_KEYS[method] if k in agent_params}


class TensorData:
    """A dataset as float tensors, plus optional (n, k) context indices for in-context critics."""

    def __init__(self, data: Transitions, ctx_idx: np.ndarray | None = None):
        self.obs = torch.as_tensor(data.observations, dtype=torch.float32)
        self.act = torch.as_tensor(data.actions, dtype=torch.float32)
        self.rew = torch.as_tensor(data.rewards, dtype=torch.float32)
        self.next_obs = torch.as_tensor(data.next_observations, dtype=torch.float32)
        self.next_act = torch.as_tensor(data.next_actions, dtype=torch.float32)
        self.not_done = 1.0 - torch.as_tensor(data.terminals, dtype=torch.float32)
        self.ctx_idx = None if ctx_idx is None else torch.as_tensor(ctx_idx, dtype=torch.long)
        self.n = len(data)

    def batch(self, idx: torch.Tensor) -> dict:
        """Rows ``idx`` (and, with context indices, their retrieved contexts under ``ctx``)."""
        b = {
            "obs": self.obs[idx],
            "act": self.act[idx],
            "rew": self.rew[idx],
            "next_obs": self.next_obs[idx],
            "next_act": self.next_act[idx],
            "not_done": self.not_done[idx],
        }
        if self.ctx_idx is not None:
            c = self.ctx_idx[idx]
            b["ctx"] = {
                "obs": self.obs[c],
                "act": self.act[c],
                "rew": self.rew[c],
                "next_obs": self.next_obs[c],
                "next_act": self.next_act[c],
                "not_done": self.not_done[c],
            }
        return b


def build_agent(method: str, obs_dim: int, act_dim: int, cfg: dict, seed: int):
    """A fresh agent for ``method`` with weights drawn from ``seed``; ``cfg`` holds its hyperparameters."""
    if method not in METHODS:
        raise ParamsError(f"method: expected one of {METHODS}, got {method!r}")
    torch.manual_seed(seed)
    kw = method_config(method, cfg)
    if method.startswith("icql"):
        return AGENTS["icql"](obs_dim, act_dim, seed=seed, **kw)
    return AGENTS[method](obs_dim, act_dim, **kw)


def train_agent(
    agent,
    data: TensorData,
    *,
    steps: int,
    batch_size: int,
    seed: int,
    log_every: int = 250,
    progress: bool = False,
    evaluate: Callable[[object], dict] | None = None,
) -> list[dict]:
    """``steps`` gradient steps on uniform batches drawn from ``seed``; returns the loss history. The agent's
    ``schedulers(steps)`` (its learning-rate schedules over this run) step once after every update.

    Every ``log_every`` steps (and at the last) the history gets the step's losses and, with ``evaluate``, what
    ``evaluate(agent)`` returns (e.g. a dev-episode score: the learning curve). ``evaluate`` must not draw from
    torch's global generator (rollouts of a deterministic policy do not), so the batches stay those of ``seed``.
    """
    if data.n < 1:
        raise ParamsError("train: the dataset is empty")
    gen = torch.Generator().manual_seed(seed)
    history: list[dict] = []
    schedulers = agent.schedulers(steps)
    agent.train()
    for step in tqdm(range(1, steps + 1), disable=None if progress else True, desc=type(agent).__name__, leave=False):
        idx = torch.randint(0, data.n, (batch_size,), generator=gen)
        out = agent.update(data.batch(idx))
        for sched in schedulers:
            sched.step()
        if step % log_every == 0 or step == steps:
            if evaluate is not None:
                agent.eval()
                out = {**out, **evaluate(agent)}
                agent.train()
            history.append({"step": step, **out})
    agent.eval()
    return history


def save_agent(agent, folder: Path, method: str, obs_dim: int, act_dim: int, cfg: dict, seed: int) -> None:
    """Write ``config.json`` and ``model.pt`` (a state_dict) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"method": method, "obs_dim": obs_dim, "act_dim": act_dim, "cfg": cfg, "seed": seed}
    (folder / "config.json").write_text(json.dumps(meta, indent=1))
    torch.save(agent.state_dict(), folder / "model.pt")


def load_agent(folder: Path):
    """Rebuild an agent saved by :func:`save_agent` (in eval mode)."""
    from components.inputs import load_state_into, load_torch_state
    from components.io import read_json

    cfg_path, w_path = Path(folder) / "config.json", Path(folder) / "model.pt"
    meta = read_json(cfg_path, {"method": str, "obs_dim": int, "act_dim": int, "cfg": dict, "seed": int})
    try:
        agent = build_agent(meta["method"], meta["obs_dim"], meta["act_dim"], meta["cfg"], meta["seed"])
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(
            f"{cfg_path}: cannot build the agent it describes ({type(exc).__name__}: {str(exc)[:80]})"
        ) from None
    load_state_into(agent, load_torch_state(w_path), w_path, cfg_path)
    return agent.eval()


SAFETENSORS_FORMAT = "rl-agent/1"


def save_agent_safetensors(agent, folder: Path, method: str, obs_dim: int, act_dim: int, cfg: dict, seed: int) -> Path:
    """Write ``config.json`` and ``model.safetensors`` (the state_dict: every critic, target, V and the policy)
    into ``folder``: the form a model leaves the pipeline in (the MLflow model of a champion; no pickle)."""
    from safetensors.torch import save_file

    from components.io import atomic_path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": SAFETENSORS_FORMAT,
        "method": method,
        "obs_dim": obs_dim,
        "act_dim": act_dim,
        "cfg": cfg,
        "seed": seed,
    }
    with atomic_path(folder / "model.safetensors") as tmp:
        save_file({k: v.detach().contiguous().clone() for k, v in agent.state_dict().items()}, str(tmp))
    (folder / "config.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
    return folder


def load_agent_safetensors(folder: str | Path):
    """Rebuild an agent saved by :func:`save_agent_safetensors` (eval mode; safetensors + JSON: nothing unpickled)."""
    from safetensors.torch import load_file

    cfg_path, w_path = model_files(folder, "model.safetensors", "save_agent_safetensors (an agent)")
    try:
        meta = json.loads(cfg_path.read_text())
        if meta.get("format") != SAFETENSORS_FORMAT:
            raise ValueError(f"format {meta.get('format')!r}, expected {SAFETENSORS_FORMAT!r}")
        with torch.random.fork_rng(devices=[]):  # building seeds torch; the caller's generator stays as it was
            agent = build_agent(meta["method"], meta["obs_dim"], meta["act_dim"], meta["cfg"], meta["seed"])
        agent.load_state_dict(load_file(str(w_path)))
    except Exception as exc:
        raise DataError(f"{folder}: not a readable agent folder ({type(exc).__name__}: {exc})") from None
    return agent.eval()
