"""Log a MILCO encoder folder (config.json + model.safetensors) as an MLflow pyfunc model from code: MLflow stores
``flows/milco/pyfunc.py`` and the folder, no pickled object. ``predict`` maps token ids (int64, [CLS]-first, 0 =
padding) to the pivot vector over the English lexical space (or the dense embedding)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

CODE_FILE = Path(__file__).with_name("pyfunc.py")


def signature(folder: Path):
    from mlflow.models import ModelSignature
    from mlflow.types import Schema, TensorSpec

    cfg = json.loads((folder / "config.json").read_text())
    width = cfg["d_dense"] if cfg["kind"] == "dense" else cfg["vocab_en"]
    return ModelSignature(
        inputs=Schema([TensorSpec(np.dtype("int64"), (-1, -1), "token_ids")]),
        outputs=Schema([TensorSpec(np.dtype("float32"), (-1, width), "pivot_or_embedding")]),
    )


def log_encoder(run_id: str, folder: Path) -> None:
    import logging

    import mlflow
    import torch

    logging.getLogger("mlflow.pyfunc").setLevel(logging.ERROR)
    with mlflow.start_run(run_id=run_id, nested=False), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mlflow.pyfunc.log_model(
            name="model",
            python_model=str(CODE_FILE),
            artifacts={"model": str(folder)},
            signature=signature(folder),
            pip_requirements=[f"torch=={torch.__version__.split('+')[0]}", "safetensors", "numpy"],
        )
