"""Known answer for the EBT, and the sabotage a reviewer would try.

Fixture: a successor sequence over 8 symbols (token t+1 = token t + 1 mod 8, random starts), where the next token
is a deterministic function of the current one. The trivial baseline, the unigram distribution, scores log 8 =
2.08 nats. A tiny EBT trained through its inner optimisation must predict after M_train = 2 steps with NLL at
least 1 nat below that, and thinking (more steps) must not hurt. Sabotage: training without the second-order
path (dE/dy detached, so the loss never reaches the energy's parameters) must miss that margin; and descending
*up* the energy at inference must make predictions worse than the trained descent.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from components.ebt.energy_model import EBTConfig, EnergyTransformer
from components.ebt.inference import think_curve
from components.ebt.optimise import minimise
from components.ebt.training import train_ebt

V = 8


def _successor_tokens(n: int = 20_000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, V, n // 16)
    return ((starts[:, None] + np.arange(16)) % V).reshape(-1).astype(np.int64)


@functools.lru_cache(maxsize=2)  # one training per variant for the whole module
def _trained(second_order: bool = True) -> EnergyTransformer:
    torch.manual_seed(0)
    model = EnergyTransformer(
        EBTConfig(vocab_size=V, d_model=32, n_layers=1, n_heads=2, d_ff=64, max_seq_len=16, step_size=2.0), seed=0
    )
    train_ebt(
        model,
        _successor_tokens(),
        steps=120,
        batch_size=16,
        seq_len=16,
        peak_lr=1e-2,
        mcmc_steps=2,
        alpha_lr_mult=6.0,
        seed=0,
        progress=False,
        second_order=second_order,
    )
    return model


def _windows() -> torch.Tensor:
    return torch.from_numpy(_successor_tokens(2_000, seed=1)[: 64 * 17].reshape(64, 17))


def test_ebt_beats_the_unigram_baseline_by_a_nat_and_thinking_does_not_hurt():
    nll, energy = think_curve(_trained(), _windows(), max_steps=4, seed=3)
    per_step = nll.mean(0)
    assert per_step[2] < math.log(V) - 1.0, per_step  # M_train = 2
    assert per_step[4] <= per_step[2] + 0.05, per_step  # thinking longer does not undo the prediction
    assert energy.mean(0)[2] < energy.mean(0)[0]  # the steps descend the learned energy


def test_sabotage_first_order_training_misses_the_margin():
    nll, _ = think_curve(_trained(second_order=False), _windows(), max_steps=2, seed=3)
    assert nll.mean(0)[2] > math.log(V) - 1.0


def test_sabotage_ascending_the_energy_at_inference_is_worse():
    model = _trained()
    w = _windows()
    with torch.no_grad():
        ctx = model.context(w[:, :-1])
        y0 = torch.randn(64, 16, V, generator=torch.Generator().manual_seed(3))
        down = minimise(model, ctx, y0, steps=2).final
        up = minimise(model, ctx, y0, steps=2, alpha=-model.step_size()).final
    nll = lambda y: torch.nn.functional.cross_entropy(y.transpose(1, 2), w[:, 1:]).item()  # noqa: E731
    assert nll(up) > nll(down) + 0.5
