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
            from components.sparse_retrieval.model import served_output

            return served_output(self.model, model_input)


set_model(EncoderModel())
