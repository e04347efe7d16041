"""Learning-rate schedules as plain functions of the step: warmup-stable-decay and cosine.

Both avoid a wasted zero-learning-rate step. Warmup step 0 already trains at
``peak_lr / warmup_steps`` and step ``warmup_steps - 1`` at ``peak_lr``. The
WSD decay's ``decay_steps`` steps train at ``C/(C+1), ..., 1/(C+1)`` of the
rate (C = decay_steps, min_lr_frac 0): a straight line from the stable rate at
step ``decay_start - 1`` to the floor ``min_lr_frac * peak_lr`` at step
``decay_start + decay_steps``, which then holds. So even a one-step cooldown
decays (to half), and no step of it repeats the peak or trains at zero.
"""

from __future__ import annotations

import math

from components.errors import ParamsError


def _check(peak_lr: float, warmup_steps: int, min_lr_frac: float) -> None:
    if peak_lr <= 0:
        raise ParamsError(f"peak_lr must be > 0, got {peak_lr}")
    if warmup_steps < 0:
        raise ParamsError(f"warmup_steps must be >= 0, got {warmup_steps}")
    if not 0.0 <= min_lr_frac <= 1.0:
        raise ParamsError(f"min_lr_frac must be in [0, 1], got {min_lr_frac}")


def _warmup(step: int, peak_lr: float, warmup_steps: int) -> float:
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    return peak_lr


def wsd_lr(
    step: int,
    *,
    peak_lr: float,
    warmup_steps: int,
    decay_start: int,
    decay_steps: int,
    min_lr_frac: float = 0.0,
) -> float:
    """Warmup-stable-decay (Hu et al. 2024; Hägele et al. 2024): linear warmup, constant, linear decay.

    The decay scales whatever rate was reached at ``decay_start`` (``peak_lr``
    once warmup is over), so a decay that starts during warmup still falls
    smoothly to ``min_lr_frac * peak_lr``.
    """
    _check(peak_lr, warmup_steps, min_lr_frac)
    if decay_start < 0 or decay_steps < 1:
        raise ParamsError(f"need decay_start >= 0 and decay_steps >= 1, got {decay_start}, {decay_steps}")
    if step < 0:
        raise ParamsError(f"step must be >= 0, got {step}")
    if step < decay_start:
        return _warmup(step, peak_lr, warmup_steps)
    base = _warmup(max(decay_start - 1, 0), peak_lr, warmup_steps)
    remaining = max(0.0, 1.0 - (step - decay_start + 1) / (decay_steps + 1))
    return base * (min_lr_frac + (1.0 - min_lr_frac) * remaining)


def cosine_lr(
    step: int,
    *,
    peak_lr: float,
    warmup_steps: int,
    total_steps: int,
    min_lr_frac: float = 0.0,
) -> float:
    """Linear warmup then a half-cosine from ``peak_lr`` to ``min_lr_frac * peak_lr`` at ``total_steps``."""
    _check(peak_lr, warmup_steps, min_lr_frac)
    if total_steps <= warmup_steps:
        raise ParamsError(f"total_steps ({total_steps}) must exceed warmup_steps ({warmup_steps})")
    if step < 0:
        raise ParamsError(f"step must be >= 0, got {step}")
    if step < warmup_steps:
        return _warmup(step, peak_lr, warmup_steps)
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return peak_lr * (min_lr_frac + (1.0 - min_lr_frac) * 0.5 * (1.0 + math.cos(math.pi * progress)))
