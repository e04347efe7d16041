"""Small helpers the dka stages share."""

from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger("paperline")


def set_threads(n: int) -> None:
    import torch

    torch.set_num_threads(max(1, n))


def image_signature(size: int, n_out: int):
    """MLflow signature of an image classifier: float32 (B, 1, size, size) -> class probabilities (B, n_out)."""
    from mlflow.models import ModelSignature
    from mlflow.types import Schema, TensorSpec

    return ModelSignature(
        inputs=Schema([TensorSpec(np.dtype("float32"), (-1, 1, size, size), "image")]),
        outputs=Schema([TensorSpec(np.dtype("float32"), (-1, n_out), "proba")]),
    )
