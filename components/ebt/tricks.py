"""The System-2 training tricks of the repo, each behind a flag (all off = the repo's System-1 setup).

- ``step_size_scale`` (``randomize_mcmc_step_size_scale``): alpha drawn per position from U(alpha/s, alpha*s);
- ``random_steps`` / ``random_steps_min`` (``randomize_mcmc_num_steps[_min]``): each of the M steps is repeated
  randint(max(1, min), random_steps + 1) times (inclusive), so the step count varies between batches;
- ``langevin_noise`` (``langevin_dynamics_noise``): Gaussian noise of this std added to y before every step;
- ``replay_buffer`` (``mcmc_replay_buffer``): a buffer of (window, final logits) from earlier batches; a share of
  the batch restarts from stored logits instead of noise (``CausalReplayBuffer``), so the model learns to
  keep improving predictions it has already refined.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

import torch

from components.errors import ParamsError


@dataclass(frozen=True)
class Tricks:
    step_size_scale: float = 1.0
    random_steps: int = 0
    random_steps_min: int = 0
    langevin_noise: float = 0.0
    replay_buffer: bool = False
    replay_size: int = 192
    replay_share: float = 0.5

    def __post_init__(self) -> None:
        if self.step_size_scale < 1:
            raise ParamsError(f"step_size_scale must be >= 1, got {self.step_size_scale}")
        if self.random_steps < 0 or self.random_steps_min < 0 or self.langevin_noise < 0:
            raise ParamsError("random_steps, random_steps_min and langevin_noise must be >= 0")


def step_plan(steps: int, tricks: Tricks, rng: random.Random) -> int:
    """How many gradient steps this batch takes (the repo's ``mcmc_steps`` list length for ``ebt_type=default``)."""
    if tricks.random_steps <= 0:
        return steps
    lo = max(1, tricks.random_steps_min)
    return sum(rng.randint(lo, tricks.random_steps + 1) for _ in range(steps))


def randomised_alpha(
    alpha: torch.Tensor, shape: tuple[int, int], tricks: Tricks, generator: torch.Generator | None = None
) -> torch.Tensor:
    """alpha, or per-position U(alpha/s, alpha*s) of shape (B, S, 1) when ``step_size_scale`` > 1 (differentiable)."""
    s = tricks.step_size_scale
    if s == 1:
        return alpha
    u = torch.rand((*shape, 1), generator=generator)
    return alpha / s + u * (alpha * s - alpha / s)


class ReplayBuffer:
    """FIFO of (window tokens, final logits) pairs; ``sample`` draws stored pairs to restart from."""

    def __init__(self, max_size: int, sample_size: int, seed: int = 0) -> None:
        self.items: deque[tuple[torch.Tensor, torch.Tensor]] = deque(maxlen=max_size)
        self.sample_size = int(sample_size)
        self.rng = random.Random(seed)

    def sample(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        if not self.items or self.sample_size < 1:
            return None
        picks = self.rng.sample(list(self.items), min(self.sample_size, len(self.items)))
        return torch.stack([w for w, _ in picks]), torch.stack([y for _, y in picks])

    def add(self, windows: torch.Tensor, logits: torch.Tensor) -> None:
        for w, y in zip(windows, logits.detach()):
            self.items.append((w, y))
