"""The pyfunc model-from-code file MLflow stores beside a logged MILCO encoder folder (see ``mlflow_model``)."""

import warnings

import mlflow.pyfunc
from mlflow.models import set_model

with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)

    class EncoderModel(mlflow.pyfunc.PythonModel):
        def load_context(self, context):
            from components.sparse_retrieval.model import load_encoder

            self.model = load_encoder(context.artifacts["model"])

        def predict(self, context, model_input, params=None):  # no type hints: MLflow would infer a schema
            import numpy as np
            import torch

            ids = torch.as_tensor(np.asarray(model_input, dtype="int64"))
            with torch.no_grad():
                out = self.model(ids, (ids != 0).long())
            return (out["dense"] if "dense" in out else out["pivot"]).numpy()


set_model(EncoderModel())
