"""A model folder: ``config.json`` (``{"model_type": ..., **config}``) and ``model.safetensors``, no pickle.

One implementation for every small model the pipelines train and log (the tiny LM, EBT's energy transformer,
DKA's ViT): :func:`save` writes the folder atomically, :func:`load` rebuilds the model in eval mode and turns
every way a folder can be wrong (missing file, another model type, unknown config fields, a corrupt or
mismatched weights file) into a DataError naming the file.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from components.errors import DataError
from components.io import atomic_path, read_model_config, write_json

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"


def save(model: Any, directory: str | os.PathLike, model_type: str) -> Path:
    """Write ``model.config`` (a dataclass) and the weights into ``directory`` atomically; tied weights (an LM's
    head and embedding) are stored once (``safetensors.torch.save_model``)."""
    from safetensors.torch import save_model

    with atomic_path(directory, is_dir=True) as tmp:
        write_json(tmp / CONFIG_FILE, {"model_type": model_type, **dataclasses.asdict(model.config)})
        save_model(model, str(tmp / WEIGHTS_FILE))
    return Path(directory)


def load(
    directory: str | os.PathLike,
    model_cls: Callable[[Any], Any],
    config_cls: type,
    model_type: str,
    *,
    may_be_missing: Callable[[Any], set[str]] = lambda config: set(),
) -> Any:
    """Rebuild ``model_cls(config)`` from a folder written by :func:`save`, in eval mode.

    ``may_be_missing(config)`` names parameters the file need not hold (a tied head); any other missing or
    unexpected tensor is a DataError.
    """
    from safetensors.torch import load_model

    directory = Path(directory)
    config = read_model_config(directory / CONFIG_FILE, model_type, config_cls)
    model = model_cls(config)
    weights = directory / WEIGHTS_FILE
    if not weights.is_file():
        raise DataError(f"{weights}: file not found")
    try:
        missing, unexpected = load_model(model, str(weights), strict=False)
    except RuntimeError as exc:  # a tensor of the wrong shape
        raise DataError(f"{weights}: weights do not match {CONFIG_FILE} ({str(exc).splitlines()[0]})") from None
    except Exception as exc:  # safetensors raises its own error types for a corrupt header
        raise DataError(f"{weights}: not a safetensors file ({type(exc).__name__})") from None
    missing = sorted(set(missing) - may_be_missing(config))
    if missing or unexpected:
        raise DataError(f"{weights}: weights do not match {CONFIG_FILE} (missing {missing}, unexpected {unexpected})")
    return model.eval()
