"""MedGMAE's champion: the UNETR fine-tuned from the MedGMAE encoder at the claims' low label fraction, first seed.

That is the model claim 1 is about, saved by the finetune stage as ``data/medgmae/finetune/champion/``
(config.json + model.safetensors) and logged as the MLflow model of its child run
``finetune-medgmae-f<fraction>-s<seed>`` (loader ``components.medgmae.segment:load_segmenter``). It is
re-evaluated as the finetune stage scores every run: argmax label maps of the fixed test crops of
``data/medgmae/data/pool.npz`` and MONAI's ``DiceMetric`` per crop (GM, WM), averaged. Eval mode, a fixed test
set, nothing sampled: an unchanged model in unchanged torch/MONAI gives the same number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "medgmae"
LOADER = "components.medgmae.segment:load_segmenter"
LIBRARIES = ("monai", "safetensors")
RULES = {"mean_dice": Rule(higher_is_better=True, tolerance=0.01, relative=False)}  # the claims' 1-point band


def settings_for(pool_rel: str) -> dict[str, Any]:
    return {"pool": pool_rel, "split": "test"}


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    import numpy as np
    import torch

    from components.errors import DataError
    from components.inputs import load_npz
    from components.medgmae import segment as S

    path = Path(root) / settings["pool"]
    if not path.is_file():
        raise DataError(f"{path}: medgmae's evaluation pool not found (run `paperline run medgmae --stage data`)")
    split = str(settings.get("split", "test"))
    with load_npz(path) as z:
        if f"{split}_x" not in z.files or f"{split}_y" not in z.files:
            raise DataError(f"{path}: no {split}_x / {split}_y arrays (rerun `paperline run medgmae --stage data`)")
        x, y = z[f"{split}_x"], z[f"{split}_y"].astype(np.int64)
    pred = S.predict(model, torch.as_tensor(x))
    dice = S.mean_foreground_dice(S.dice_per_volume(pred, torch.as_tensor(y), model.n_classes))
    return {"mean_dice": float(dice.mean())}


def candidate(run_id: str | None, name: str, folder: Path, pool_rel: str, root: Path) -> dict | None:
    """The champion record: its metrics computed on the model loaded back from ``folder`` by its logged loader."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(pool_rel), root)
