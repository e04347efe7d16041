"""Helpers the vip stages share."""

from __future__ import annotations

import logging

import torch

log = logging.getLogger("paperline")


def set_threads(n: int) -> None:
    torch.set_num_threads(max(1, n))
