"""Reading a training curve: has it stopped moving?"""

from __future__ import annotations

import numpy as np


def plateau(losses: list[float], window: float = 0.2) -> float:
    """Relative change of the mean loss between the last two ``window`` shares of training (small = flat);
    NaN when the curve is too short to hold two windows."""
    n = max(1, int(len(losses) * window))
    if len(losses) < 2 * n:
        return float("nan")
    last, prev = float(np.mean(losses[-n:])), float(np.mean(losses[-2 * n : -n]))
    return abs(prev - last) / max(abs(prev), 1e-8)


def stable_plateau(steps: list[float], losses: list[float], cooldown_frac: float, window: float = 0.2) -> float:
    """:func:`plateau` over the stable phase of a warmup-stable-decay schedule: points after the last
    ``cooldown_frac`` of the steps are left out, since the cooldown's drop is the schedule, not learning still
    going on."""
    last = max(steps) * (1.0 - cooldown_frac)
    return plateau([v for s, v in sorted(zip(steps, losses)) if s <= last], window)
