"""The pyfunc model-from-code file MLflow stores beside a logged model folder (see ``mlflow_model``)."""

from mlflow.models import set_model

from flows.runtime.mlflow_model import FolderModel

set_model(FolderModel())
