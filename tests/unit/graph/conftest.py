"""Small graphs shared by the graph unit tests."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.graph.graph import NORMAL, TRAP, from_pairs


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


@pytest.fixture
def toy():
    """40 normal nodes near 0 and 10 outliers near +4, dense within groups, with some cross edges."""
    rng = np.random.default_rng(0)
    n_norm, n_out = 40, 10
    x = np.concatenate([rng.normal(0, 1, (n_norm, 8)), rng.normal(4, 1, (n_out, 8))]).astype(np.float32)
    pairs = [(i, j) for i in range(n_norm) for j in range(i + 1, n_norm) if rng.random() < 0.2]
    pairs += [(i, j) for i in range(n_norm, n_norm + n_out) for j in range(i + 1, n_norm + n_out) if rng.random() < 0.5]
    pairs += [(int(rng.integers(n_norm, n_norm + n_out)), int(rng.integers(0, n_norm))) for _ in range(30)]
    kind = np.array([NORMAL] * n_norm + [TRAP] * n_out)
    return from_pairs("toy", x, np.array(pairs), kind)
