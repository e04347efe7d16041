"""Reading a training curve: has it stopped moving?"""

from __future__ import annotations

import numpy as np


def plateau(losses: list[float], window: float = 0.2) -> float:
    """Relative change of the mean loss between the last two ``window`` shares of training (small = flat);
    NaN when the curve is too short to hold two windows."""
    n = max(1, int(len(losses) * window))
    if len(losses) < 2 * n:
        return float("nan")
    last, prev = float(np.mean(losses[-n:])), float(np.mean(losses[-2 * n:-n]))
    return abs(prev - last) / max(abs(prev), 1e-8)
