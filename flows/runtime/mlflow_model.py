"""Log a saved model folder (config + safetensors) as an MLflow pyfunc model.

``FolderModel.load_context`` imports the ``loader`` ("module:function") that the
logging side named, so any component model with a ``load_model(folder)`` can be
served with ``mlflow.pyfunc.load_model`` without pickling torch objects.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import mlflow.pyfunc


class FolderModel(mlflow.pyfunc.PythonModel):
    """Loads a model folder with a named loader; ``predict`` returns next-token logits' argmax."""

    def __init__(self, loader: str):
        self.loader = loader
        self.model = None

    def load_context(self, context: Any) -> None:
        module, func = self.loader.split(":")
        self.model = getattr(importlib.import_module(module), func)(context.artifacts["model"])

    def predict(self, context: Any, model_input: Any, params: dict | None = None) -> Any:
        import numpy as np
        import torch

        idx = torch.as_tensor(np.asarray(model_input, dtype="int64"))
        with torch.no_grad():
            logits, _ = self.model(idx)
        return logits[:, -1, :].argmax(-1).numpy()


def log_folder_model(model_dir: Path, *, loader: str, signature: Any) -> None:
    """Log ``model_dir`` under artifact path ``model`` with explicit requirements (no inference)."""
    import logging
    import warnings

    import torch

    logging.getLogger("mlflow.pyfunc").setLevel(logging.ERROR)  # the CloudPickle notice: our model holds no code but a loader name
    with warnings.catch_warnings():
        # We pass an explicit signature and requirements; MLflow's hints about input examples and
        # type-hint inference do not apply to a folder model.
        warnings.simplefilter("ignore", UserWarning)
        _log(model_dir, loader, signature, torch.__version__.split("+")[0])


def _log(model_dir: Path, loader: str, signature: Any, torch_version: str) -> None:
    mlflow.pyfunc.log_model(
        name="model",
        python_model=FolderModel(loader),
        artifacts={"model": str(model_dir)},
        signature=signature,
        pip_requirements=[f"torch=={torch_version}", "safetensors", "numpy"],
        code_paths=None,
    )
