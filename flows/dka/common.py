"""Small helpers the dka stages share."""

from __future__ import annotations

import logging

from flows.runtime.tracking import Tensor

log = logging.getLogger("paperline")


def images(size: int) -> Tensor:
    """The signature input of an image classifier: float32 images (B, 1, size, size)."""
    return Tensor("image", "float32", (-1, 1, size, size))


def proba(n_classes: int) -> Tensor:
    """The signature output of a classifier: its class probabilities (B, n_classes)."""
    return Tensor("proba", "float32", (-1, n_classes))
