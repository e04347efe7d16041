"""The trained control models of the implicit-planning tests, trained once per process: the unit tests'
known-answer checks and the flow tests' champion check read the same models (each folder's conftest wraps them
as session fixtures)."""

from __future__ import annotations

import functools

import torch

from components.implicit_planning.couplets import CoupletLanguage, train_control

LANG = CoupletLanguage()


@functools.cache
def positive():
    torch.set_num_threads(1)
    return train_control(LANG, "positive", seed=0, steps=600, batch_size=32, n_sequences=4000, lr=5e-3)[0]


@functools.cache
def negative():
    torch.set_num_threads(1)
    return train_control(
        LANG, "negative", seed=0, steps=500, batch_size=32, n_sequences=3000, lr=1e-2, d_model=64, n_layers=2
    )[0]
