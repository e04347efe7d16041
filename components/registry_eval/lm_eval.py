"""Re-evaluating a language model on held-out token files (mean next-token loss in nats)."""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from components.errors import DataError
from components.inputs import load_npy


def lm_losses(model, token_files: Mapping[str, str | os.PathLike], *, seq_len: int, windows: int) -> dict[str, float]:
    """``{"loss_<name>": loss}`` for every token file, on the same fixed windows training evaluated on."""
    from components.training.lm_trainer import evaluate_loss

    out = {}
    for name, path in sorted(token_files.items()):
        if not os.path.isfile(path):
            raise DataError(
                f"{path}: evaluation tokens of {name!r} not found (run the paper's tokenize stage or `dvc pull`)"
            )
        tokens = load_npy(path)
        out[f"loss_{name}"] = float(evaluate_loss(model, tokens, seq_len=seq_len, max_windows=windows))
    if not out:
        raise DataError("no evaluation data given")
    out["loss"] = float(np.mean([out[k] for k in out]))
    return out
