"""A small fixture shared by cdra's unit tests: the task at 10 pairs per topic and a partly competent SFT policy
(trained once per session, a few CPU-seconds)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.cdra import cdpa as C
from components.cdra import task as T


@pytest.fixture(scope="session")
def split() -> tuple[list[T.Pair], list[T.Pair]]:
    pairs = T.make_pairs(20, seed=3)
    order = np.random.default_rng(0).permutation(len(pairs))
    return [pairs[i] for i in order[100:]], [pairs[i] for i in order[:100]]


@pytest.fixture(scope="session")
def sft(split):
    torch.set_num_threads(1)
    train, _ = split
    policy, _ = C.sft_policy(train, noise=0.4, d_model=64, n_layers=2, steps=300, batch=32, lr=3e-3, seed=0)
    return policy
