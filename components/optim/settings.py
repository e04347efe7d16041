"""An optimiser's tuned settings as a model folder: ``settings.json`` (the method and its scale-free config), no
weights.

Where nothing is trained (optimistic-o2nc), the artifact that stands for the method is the setting its tuning
chose. It is saved and logged like a trained model (an MLflow pyfunc folder with an allow-listed loader), so the
recurring evaluation loads it the same way: JSON read with ``json.loads``, nothing unpickled.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from components.errors import DataError

FILE = "settings.json"
FORMAT = 1
PREDICT_KEYS = ("eta", "radius", "episode")  # what the served model returns, one row per input row


@dataclass(frozen=True)
class OptimiserSettings:
    """``method`` (a name of ``components.optim.runner.METHODS``) and the config ``build_method`` reads."""

    method: str
    config: Mapping[str, Any] = field(default_factory=dict)

    def pyfunc_predict(self, model_input) -> np.ndarray:
        """Served as an MLflow model: per input row, the settings' (eta, radius, episode) as float64 (MLflow hands
        the signature's named tensor over as ``{"rows": array}``; a bare array is taken as it is)."""
        if isinstance(model_input, dict):
            model_input = model_input["rows"] if "rows" in model_input else next(iter(model_input.values()))
        n = len(np.asarray(model_input))
        row = [float(self.config.get(k, math.nan)) for k in PREDICT_KEYS]
        return np.tile(np.asarray(row, dtype="float64"), (n, 1))


def save_settings(settings: OptimiserSettings, folder: Path) -> Path:
    """Write ``folder/settings.json`` (sorted keys: the same settings give the same bytes); returns ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"format": FORMAT, "method": settings.method, "config": dict(settings.config)}
    (folder / FILE).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return folder


def load_settings(folder: str | Path) -> OptimiserSettings:
    """The settings saved by :func:`save_settings` (the allow-listed MLflow loader: JSON only)."""
    from components.optim.runner import METHODS

    path = Path(folder) / FILE
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not an optimiser settings file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("config"), dict):
        raise DataError(f"{path}: not an optimiser settings file (format {FORMAT} with a config object)")
    if doc.get("method") not in METHODS:
        raise DataError(f"{path}: method {doc.get('method')!r} is not one of {', '.join(METHODS)}")
    return OptimiserSettings(doc["method"], dict(doc["config"]))
