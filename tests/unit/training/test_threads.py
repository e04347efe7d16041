"""A stage's thread count: set for the job, restored after a block even when it fails."""

from __future__ import annotations

import pytest
import torch

from components.training.threads import set_threads, threads


def test_set_threads_sets_at_least_one():
    before = torch.get_num_threads()
    try:
        set_threads(0)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_threads_restores_the_count_after_an_error():
    before = torch.get_num_threads()
    target = 1 if before != 1 else 2
    with pytest.raises(RuntimeError), threads(target):
        assert torch.get_num_threads() == target
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
