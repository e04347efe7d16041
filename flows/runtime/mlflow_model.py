"""Log a saved model folder (config + safetensors) as an MLflow pyfunc model, and load it back without pickle.

The model is logged *from code* (``python_model`` is the path of ``folder_pyfunc.py``),
so MLflow stores no pickled Python object: the MLmodel file names the folder and the
``loader`` ("module:function") in its ``model_config``. Loaders are checked against
:data:`ALLOWED_LOADERS` before ``importlib`` sees them, on logging and on loading.

Our own re-evaluation (:func:`load_folder_model`) downloads the artifact, reads MLmodel
with ``yaml.safe_load`` and calls the allowed loader on the safetensors folder: nothing
stored in the artifact store is executed. ``mlflow.pyfunc.load_model`` still works for
serving (it imports the logged copy of ``folder_pyfunc.py``).
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mlflow.pyfunc
import numpy as np

from components.errors import DataError, ParamsError

# Every loader a logged model may name; one reason each: importing it must run only our own code.
ALLOWED_LOADERS = frozenset(
    {
        "components.models.tiny_lm:load_model",  # TinyLM from config.json + model.safetensors (no pickle)
        "components.dka.vit:load_model",  # dka's tiny ViT backbone from config.json + model.safetensors
        "components.dka.methods:load_adapted",  # dka's adapted ViT (method + adapter config) from the same pair
        "components.detection.centernet:load_model",  # forestpersons' TinyCenterNet (config.json + model.safetensors)
        "components.ebt.predictor:load_predictor",  # an EBT (config.json + model.safetensors) served as a causal LM
        "components.backdoor.policy:load_actor",  # daze's PPO actor (config.json + policy.safetensors, numpy)
        "components.graph.cergod:load_detector",  # cer-god's detector + its graph's edges (config.json + safetensors)
        "components.rl.trainer:load_agent_safetensors",  # icql's agent: critics + policy (config + model.safetensors)
        "components.editing.neuraldb:load_edited",  # neuraldb's TinyLM + its NeuralDB store (safetensors + JSON)
        "components.retrieval.assomem.index:load_index",  # assomem's memory index + CMI weights (npz, no pickle + JSON)
        "components.optim.settings:load_settings",  # optimistic-o2nc's tuned ODOG settings (settings.json, no weights)
        "components.sparse_retrieval.retriever:load_retriever",  # milco's encoder + its index (safetensors, npz, JSON)
        "components.sparse_retrieval.model:load_encoder",  # a milco encoder alone (config.json + model.safetensors)
        "components.anthrobench.judges:load_j3",  # anthrobench's J3 judge (config.json + j3.npz, no pickle)
        "components.selfaug_decoding.model:load_model",  # selfaug-decoding's tiny VLM (config.json + model.safetensors)
        "components.medgmae.model:load_model",  # medgmae's pretrained 3-D MAE (config.json + model.safetensors)
        "components.medgmae.segment:load_segmenter",  # medgmae's fine-tuned UNETR (config.json + model.safetensors)
        "components.got_r1.model:load_model",  # got-r1's chain-then-image decoder (config.json + model.safetensors)
    }
)
CODE_FILE = Path(__file__).with_name("folder_pyfunc.py")


def resolve_loader(loader: object) -> Callable[[str | Path], Any]:
    """The function named by ``loader`` if it is on the allow-list; else a ParamsError naming it."""
    if not isinstance(loader, str) or loader not in ALLOWED_LOADERS:
        raise ParamsError(f"model loader {loader!r}: not one of the allowed loaders {sorted(ALLOWED_LOADERS)}")
    module, func = loader.split(":")
    return getattr(importlib.import_module(module), func)


class FolderModel(mlflow.pyfunc.PythonModel):
    """Loads a model folder with an allowed loader; ``predict`` returns next-token logits' argmax."""

    def __init__(self) -> None:
        self.model = None

    def load_context(self, context: Any) -> None:
        loader = (context.model_config or {}).get("loader")
        self.model = resolve_loader(loader)(context.artifacts["model"])

    # np.ndarray is a hint MLflow infers no schema from (we log an explicit signature); without a hint MLflow
    # warns at class creation, from inside its own warnings filter, so the warning cannot be filtered out.
    def predict(self, context, model_input: np.ndarray, params=None):
        import torch

        if hasattr(self.model, "pyfunc_predict"):  # a model that defines its own pyfunc output (detectors)
            return self.model.pyfunc_predict(model_input)

        idx = torch.as_tensor(np.asarray(model_input, dtype="int64"))
        with torch.no_grad():
            logits, _ = self.model(idx)
        return logits[:, -1, :].argmax(-1).numpy()


# The child-run tag that holds the logged model's name (absent on runs from before names: they used "model").
MODEL_NAME_TAG = "paperline.model_name"
_BAD_NAME_CHARS = re.compile(r"[/:.%\"']+")


def model_name(paper: str, run_name: str) -> str:
    """The logged model's name: paper and child run, e.g. ``ofmu-lm-target`` (MLflow forbids / : . % and quotes)."""
    name = _BAD_NAME_CHARS.sub("-", f"{paper}-{run_name}" if paper else run_name).strip("-")
    return name or "model"


def model_uri(client: Any, run_id: str) -> str:
    """``runs:/<id>/<name>`` of the model a child run logged (its ``MODEL_NAME_TAG``; ``model`` for older runs)."""
    return f"runs:/{run_id}/{client.get_run(run_id).data.tags.get(MODEL_NAME_TAG, 'model')}"


def log_folder_model(model_dir: Path, *, name: str, loader: str, signature: Any) -> None:
    """Log ``model_dir`` as the model ``name`` with explicit requirements (no inference, no pickle)."""
    import logging

    import torch

    resolve_loader(loader)
    logging.getLogger("mlflow.pyfunc").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        # We pass an explicit signature and requirements; MLflow's hints about input examples and
        # type-hint inference do not apply to a folder model.
        warnings.simplefilter("ignore", UserWarning)
        mlflow.pyfunc.log_model(
            name=name,
            python_model=str(CODE_FILE),
            artifacts={"model": str(model_dir)},
            model_config={"loader": loader},
            signature=signature,
            pip_requirements=[f"torch=={torch.__version__.split('+')[0]}", "safetensors", "numpy"],
        )


def folder_of(local: Path) -> tuple[Path, str]:
    """The model folder and loader recorded in a downloaded pyfunc model's MLmodel file."""
    import yaml

    mlmodel = local / "MLmodel"
    if not mlmodel.is_file():
        raise DataError(f"{mlmodel}: not an MLflow model (no MLmodel file)")
    flavor = (yaml.safe_load(mlmodel.read_text()) or {}).get("flavors", {}).get("python_function", {})
    loader = (flavor.get("config") or {}).get("loader")  # MLflow writes model_config here
    if loader is None:
        raise DataError(
            f"{mlmodel}: no config.loader (logged in the old pickled format; rerun the pipeline "
            "to register a new version)"
        )
    rel = ((flavor.get("artifacts") or {}).get("model") or {}).get("path")
    folder = (local / str(rel)).resolve() if rel else None
    if folder is None or not folder.is_dir() or not folder.is_relative_to(local.resolve()):
        raise DataError(f"{mlmodel}: artifacts.model.path {rel!r} is not a folder inside the model")
    return folder, loader


def load_folder_model(model_uri: str, dst: Path) -> Any:
    """Download ``model_uri`` (``models:/name/version``, or ``runs:/id/name`` from :func:`model_uri`) into ``dst``
    and load its folder."""
    import mlflow.artifacts

    local = Path(mlflow.artifacts.download_artifacts(artifact_uri=model_uri, dst_path=str(dst)))
    folder, loader = folder_of(local)
    return resolve_loader(loader)(folder)
