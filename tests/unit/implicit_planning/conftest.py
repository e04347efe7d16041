"""The trained control models shared by the implicit-planning unit tests (trained once per session: the known-answer
tests and the champion test read the same models)."""

from __future__ import annotations

import pytest
import torch

from components.implicit_planning.couplets import CoupletLanguage, train_control

LANG = CoupletLanguage()


@pytest.fixture(scope="session")
def positive():
    torch.set_num_threads(1)
    return train_control(LANG, "positive", seed=0, steps=600, batch_size=32, n_sequences=4000, lr=5e-3)[0]


@pytest.fixture(scope="session")
def negative():
    torch.set_num_threads(1)
    return train_control(LANG, "negative", seed=0, steps=500, batch_size=32, n_sequences=3000, lr=1e-2, d_model=64,
                         n_layers=2)[0]  # fmt: skip
