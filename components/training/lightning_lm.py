"""A thin Lightning wrapper around any ``forward(idx, targets) -> (logits, loss)`` LM.

This is the scale-up path (GPUs, several devices, mixed precision through
``lightning.Trainer``). On a 2-core CPU the plain loop in ``lm_trainer`` is
kept because the Trainer costs more than the project's 5% overhead threshold
there (see ``benchmarks/trainer_overhead.py``). Importing this module imports
Lightning (~11 s), so import it only where it is used.
"""

from __future__ import annotations

from collections.abc import Iterator

import lightning as L
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset

from components.training.lm_trainer import make_optimizer, sample_batch
from components.training.schedules import wsd_lr


class RandomWindows(IterableDataset):
    """``steps`` batches of random windows, identical to the plain loop's ``sample_batch`` stream."""

    def __init__(self, tokens: np.ndarray, *, steps: int, batch_size: int, seq_len: int, seed: int) -> None:
        self.tokens, self.steps = tokens, steps
        self.kw = dict(batch_size=batch_size, seq_len=seq_len, seed=seed)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for step in range(self.steps):
            yield sample_batch(self.tokens, step=step, **self.kw)

    def loader(self) -> DataLoader:
        """A DataLoader that passes the ready-made batches through (``batch_size=None``)."""
        return DataLoader(self, batch_size=None)


class LitLM(L.LightningModule):
    """Trains ``model`` with AdamW and the warmup-stable-decay schedule of ``schedules.wsd_lr``."""

    def __init__(
        self,
        model: nn.Module,
        *,
        peak_lr: float,
        warmup_steps: int,
        decay_start: int,
        decay_steps: int,
        weight_decay: float = 0.1,
        min_lr_frac: float = 0.0,
    ) -> None:
        super().__init__()
        self.model = model
        self.peak_lr, self.weight_decay = peak_lr, weight_decay
        self.sched = dict(
            warmup_steps=warmup_steps, decay_start=decay_start, decay_steps=decay_steps, min_lr_frac=min_lr_frac
        )

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        return self.model(idx, targets)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        _, loss = self.model(*batch)
        self.log("train_loss", loss, on_step=True, on_epoch=False, prog_bar=True)
        return loss

    def configure_optimizers(self) -> dict:
        opt = make_optimizer(self.model, lr=self.peak_lr, weight_decay=self.weight_decay)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda step: wsd_lr(step, peak_lr=self.peak_lr, **self.sched) / self.peak_lr
        )
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}
