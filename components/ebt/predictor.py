"""An EBT served as a causal LM (the MLflow folder model's loader): M gradient steps from zero logits."""

from __future__ import annotations

import os

import torch
from torch import nn

from components.ebt.energy_model import EnergyTransformer, load_model
from components.ebt.optimise import minimise


class Predictor(nn.Module):
    """An EBT served as a causal LM: ``forward(idx) -> (logits after infer_steps steps from y_0 = 0, None)``.

    Zero initial logits (the repo's ``denoising_initial_condition="zeros"``) make serving deterministic.
    """

    def __init__(self, model: EnergyTransformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, None]:
        ctx = self.model.context(idx)
        y0 = torch.zeros((*idx.shape, self.model.config.vocab_size))
        return minimise(self.model, ctx, y0, steps=self.model.config.infer_steps).final, None


def load_predictor(directory: str | os.PathLike) -> Predictor:
    """:func:`load_model` wrapped as a :class:`Predictor` (the MLflow folder model's loader)."""
    return Predictor(load_model(directory)).eval()
