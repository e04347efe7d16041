"""Thinking at inference: more optimisation steps than in training, and best-of-N self-verification.

- :func:`think_curve`: one trajectory of ``max_steps`` steps per window; the per-window NLL of softmax(y_i) after
  every step i (so M_inf in {1, 2, 4, 8} are points of one trajectory, as ``infer_ebt_num_steps`` would give).
- :func:`best_of_n`: the repo's ``ebt_advanced_inference`` with ``infer_energy_sampling_technique="min"``:
  N candidates per context from independent initialisations (plus optional Langevin noise), each optimised for
  ``steps`` steps; per token the candidate with the lowest final energy E(x, y_M) is kept.
No randomised step size at evaluation (the repo's ``no_randomness=True`` outside training).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from components.ebt.energy_model import EnergyTransformer
from components.ebt.optimise import initial_logits, minimise
from components.training.lm_trainer import eval_window_starts


def windows_of(tokens: np.ndarray, seq_len: int, max_windows: int | None = None) -> torch.Tensor:
    """The LM trainer's fixed evaluation windows (seq_len + 1 tokens each), so both models score the same items."""
    starts = eval_window_starts(len(tokens), seq_len, max_windows)
    return torch.from_numpy(np.asarray(tokens)[starts[:, None] + np.arange(seq_len + 1)].astype(np.int64))


def _nll(y: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-token NLL per window (B,) of logits y (B, S, V)."""
    return F.cross_entropy(y.transpose(1, 2), targets, reduction="none").mean(dim=1)


def _gen(seed: int, batch: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed) * 1_000_003 + batch)


@torch.no_grad()
def think_curve(
    model: EnergyTransformer,
    windows: torch.Tensor,
    *,
    max_steps: int,
    seed: int = 0,
    batch_size: int = 64,
    init_scale: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """(nll, energy): per window, NLL after 0..max_steps steps (n, max_steps + 1) and mean energy per step."""
    model.eval()
    nlls, energies = [], []
    for b in range(0, len(windows), batch_size):
        w = windows[b : b + batch_size]
        x, t = w[:, :-1], w[:, 1:]
        ctx = model.context(x)
        y0 = initial_logits((*x.shape, model.config.vocab_size), scale=init_scale, generator=_gen(seed, b))
        traj = minimise(model, ctx, y0, steps=max_steps)
        nlls.append(torch.stack([_nll(y, t) for y in traj.ys], dim=1))
        final = model.energy(ctx, traj.final)
        energies.append(torch.stack([e.mean(1) for e in [*traj.energies, final]], dim=1))
    return torch.cat(nlls).numpy(), torch.cat(energies).numpy()


@torch.no_grad()
def best_of_n(
    model: EnergyTransformer,
    windows: torch.Tensor,
    *,
    ns: list[int],
    steps: int,
    seed: int = 0,
    noise_std: float = 0.0,
    batch_size: int = 64,
    init_scale: float = 1.0,
) -> dict[int, np.ndarray]:
    """Per-window NLL when each token keeps the minimum-energy candidate among the first N, for every N in ``ns``."""
    model.eval()
    g_max = max(ns)
    out: dict[int, list[torch.Tensor]] = {n: [] for n in ns}
    for b in range(0, len(windows), batch_size):
        w = windows[b : b + batch_size]
        x, t = w[:, :-1], w[:, 1:]
        bsz, s = x.shape
        ctx = model.context(x).repeat(g_max)
        gen = _gen(seed, b)
        y0 = initial_logits((bsz * g_max, s, model.config.vocab_size), scale=init_scale, generator=gen)
        final = minimise(model, ctx, y0, steps=steps, noise_std=noise_std, generator=gen).final
        energy = model.energy(ctx, final).reshape(bsz, g_max, s)
        cand = final.reshape(bsz, g_max, s, -1)
        for n in ns:
            pick = energy[:, :n].argmin(dim=1)  # (B, S): the lowest-energy candidate per token
            chosen = torch.gather(cand, 1, pick[:, None, :, None].expand(-1, 1, -1, cand.shape[-1])).squeeze(1)
            out[n].append(_nll(chosen, t))
    return {n: torch.cat(v).numpy() for n, v in out.items()}


@torch.no_grad()
def lm_window_nll(model: torch.nn.Module, windows: torch.Tensor, batch_size: int = 64) -> np.ndarray:
    """Per-window mean NLL of a causal LM returning (logits, loss) (the Transformer++)."""
    model.eval()
    out = []
    for b in range(0, len(windows), batch_size):
        w = windows[b : b + batch_size]
        logits, _ = model(w[:, :-1])
        out.append(_nll(logits, w[:, 1:]))
    return torch.cat(out).numpy()
