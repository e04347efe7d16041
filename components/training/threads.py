"""Torch's intra-op thread count for one stage or one grid job.

A job sets its own count (``resources.threads`` or the job's ``threads``) so that two jobs running side by side
do not oversubscribe the cores, and so that reductions, hence numbers, are the same on every run of a stage.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


def set_threads(n: int) -> None:
    """Use ``n`` torch threads from now on (at least one)."""
    import torch

    torch.set_num_threads(max(1, int(n)))


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    """Use ``n`` torch threads inside the block and restore the previous count after it, even on an error."""
    import torch

    before = torch.get_num_threads()
    set_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
