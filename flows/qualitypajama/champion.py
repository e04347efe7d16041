"""QualityPajama's champion: the grid model with the lowest final held-out loss, re-evaluated on the same windows.

``candidate`` is what the train stage returns; ``evaluate`` is what the recurring evaluation calls on the
registered version (``flows.runtime.champions``): the mean next-token loss per held-out token file, on the
fixed windows training evaluated on, so an unchanged model in an unchanged environment gives the same value.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from flows.runtime.champions import Rule
from flows.runtime.champions import candidate as make_candidate

SLUG = "qualitypajama"
# A loss may not rise by more than 2% of its accepted value.
LOSS = Rule(higher_is_better=False, tolerance=0.02)


def candidate(
    run_id: str | None, name: str, final_row: dict, seq_len: int, windows: int, val_paths: dict[str, str], root: Path
) -> dict | None:
    metrics = {k: final_row[k] for k in final_row if k == "loss" or (k.startswith("loss_") and k[5:] in val_paths)}
    settings = {
        "seq_len": seq_len,
        "windows": windows,
        "data": {k: os.path.relpath(v, root) for k, v in val_paths.items()},
    }
    return make_candidate(SLUG, run_id, name, metrics, {k: LOSS for k in metrics}, settings)


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    from components.registry_eval.lm_eval import lm_losses

    files = {name: str(Path(root) / rel) for name, rel in settings["data"].items()}
    return lm_losses(model, files, seq_len=int(settings["seq_len"]), windows=int(settings["windows"]))
