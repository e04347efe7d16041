"""MLflow tracking: one experiment per paper, a parent run per flow run, child runs per model.

Experiments are tagged as model-training experiments (``mlflow.experimentKind``), so MLflow 3's UI opens them in
its classic view (runs, params, metrics) rather than the GenAI view.

The embedded default is a SQLite store under ``.paperline/`` (set by
``settings.apply_env_defaults``); ``MLFLOW_TRACKING_URI`` points elsewhere at scale.
A parent run holds the resolved params (flattened, ``grid.sizes``; whole in ``params.json``), tags ``profile``,
``git_commit`` and ``git_dirty`` (and MLflow's own ``mlflow.source.*`` tags, so the UI shows the source), each
stage's numbers, and after a report stage its report, claims.json,
metrics.json and figures as artifacts, a ``verdict.<claim id>`` tag per claim (``verdicts``: the counts) and each
claim's effect, CI bounds and verdict code as metrics (``claim.<id>.effect``, ...).
A failed run ends FAILED with tag ``error`` (the line ``paperline`` prints after ``error:``).
Models are logged as a state_dict + config folder with a pyfunc model-from-code (no pickle) and an explicit
signature and requirements, which takes well under a second; the default
``mlflow.pytorch.log_model`` path takes 24-40 s here (pt2 export, requirement
inference, and importing Lightning).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tensor:
    """One named tensor of a logged model's signature: ``Tensor("token_ids", "int64", (-1, -1))`` (-1: any size)."""

    name: str
    dtype: str
    shape: tuple[int, ...]


def signature(inputs: Tensor, outputs: Tensor) -> Any:
    """The MLflow ``ModelSignature`` of a model that maps one tensor to one tensor."""
    import numpy as np
    from mlflow.models import ModelSignature
    from mlflow.types import Schema, TensorSpec

    def spec(t: Tensor) -> Any:
        return Schema([TensorSpec(np.dtype(t.dtype), tuple(int(d) for d in t.shape), t.name)])

    return ModelSignature(inputs=spec(inputs), outputs=spec(outputs))


# The signatures several pipelines share: a language model's next token, and its logits.
TOKEN_IDS = Tensor("token_ids", "int64", (-1, -1))
NEXT_TOKEN = Tensor("next_token", "int64", (-1,))
LM_LOADER = "components.models.tiny_lm:load_model"  # the allow-listed loader of a logged tiny LM folder


# What an MLflow server takes: 500 characters per param value (the limit of older servers; 3.x takes 6000),
# 100 params or tags per log_batch call, tag values up to 8000 characters.
MAX_PARAM_VALUE = 500
MAX_PARAMS_PER_BATCH = 100
MAX_TAG_VALUE = 8000


def param_value(value: Any) -> str:
    """A param's text: strings as they are, anything else as JSON (``[1, 2]``, ``true``), cut to 500 chars."""
    import json

    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= MAX_PARAM_VALUE else text[: MAX_PARAM_VALUE - 3] + "..."


def flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` → ``{"a.b": 1}``."""
    out: dict[str, Any] = {}
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


# MLflow 3's UI opens an experiment in the GenAI view unless this tag says it holds model training runs.
EXPERIMENT_KIND, CLASSIC_ML = "mlflow.experimentKind", "custom_model_development"


def source_tags(tags: Mapping[str, str]) -> dict[str, str]:
    """MLflow's standard source tags (the UI's "Source" column and its git link) from paperline's own:
    ``git_commit`` and the paper, as ``paperline run <paper>`` (a local run)."""
    out = {"mlflow.source.type": "LOCAL"}
    if tags.get("git_commit"):
        out["mlflow.source.git.commit"] = str(tags["git_commit"])
    if tags.get("paper"):
        out["mlflow.source.name"] = f"paperline run {tags['paper']}"
    return out


def experiment_id(client, name: str) -> str:
    """The id of experiment ``name``, created if missing; safe when several runs create it at once.

    Two flow runs starting together (two workers, one MLflow server) can both find
    no experiment and both try to create it; the loser gets RESOURCE_ALREADY_EXISTS
    and reads the winner's.
    """
    from mlflow.exceptions import MlflowException

    exp = client.get_experiment_by_name(name)
    if exp is not None:
        if exp.tags.get(EXPERIMENT_KIND) is None:  # made by an older paperline: set the view once
            client.set_experiment_tag(exp.experiment_id, EXPERIMENT_KIND, CLASSIC_ML)
        return exp.experiment_id
    try:
        return client.create_experiment(name, tags={EXPERIMENT_KIND: CLASSIC_ML})
    except MlflowException as exc:
        if exc.error_code != "RESOURCE_ALREADY_EXISTS":
            raise
        exp = client.get_experiment_by_name(name)
        if exp is None:  # pragma: no cover - deleted between the two calls
            raise
        return exp.experiment_id


class Tracker:
    """A thin, batch-logging wrapper around one MLflow parent run.

    Its runs carry the owning process (host, PID, start time) and checkout; starting one first
    marks this checkout's runs whose process was killed as KILLED (``flows.runtime.stale_runs``).
    """

    def __init__(self, experiment: str, run_name: str, tags: Mapping[str, str], checkout: Path | None = None):
        import mlflow
        from mlflow.tracking import MlflowClient

        from flows.runtime.db_templates import seed_mlflow
        from flows.runtime.stale_runs import CHECKOUT, mark_stale_runs, owner_tags

        seed_mlflow()  # a new SQLite store starts from the migrated template
        self._mlflow = mlflow
        self.client = MlflowClient()
        self.experiment_id = experiment_id(self.client, experiment)
        owner = owner_tags(checkout)
        mark_stale_runs(self.client, self.experiment_id, owner[CHECKOUT])  # runs left RUNNING by a killed process
        self.tags = {**tags, **source_tags(tags), **owner}
        self.run = self.client.create_run(self.experiment_id, run_name=run_name, tags=self.tags)
        self.run_id = self.run.info.run_id

    def log_config(self, params: Mapping[str, Any]) -> None:
        """The run's resolved params: flattened as params, and whole (no value cut) as artifact ``params.json``."""
        self.log_params(params)
        self.log_json(params, "params.json")

    def log_json(self, doc: Any, name: str) -> None:
        """``doc`` as a JSON artifact of the parent run at ``name`` (``folder/file.json`` puts it in a folder)."""
        import json
        import tempfile

        rel = Path(name)
        with tempfile.TemporaryDirectory(prefix="paperline-json-") as tmp:
            path = Path(tmp) / rel.name
            path.write_text(json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n")
            self.client.log_artifact(self.run_id, str(path), rel.parent.as_posix() if rel.parent != Path(".") else None)

    def log_params(self, params: Mapping[str, Any], run_id: str | None = None) -> None:
        """Log a (nested) mapping as flattened params (``a.b``), 100 per batch, each value cut to 500 chars."""
        from mlflow.entities import Param

        flat = [Param(k, param_value(v)) for k, v in flatten(params).items()]
        for i in range(0, len(flat), MAX_PARAMS_PER_BATCH):
            self.client.log_batch(run_id or self.run_id, params=flat[i : i + MAX_PARAMS_PER_BATCH])

    def log_metrics(self, metrics: Mapping[str, Any], *, step: int = 0, run_id: str | None = None) -> None:
        """Log numeric leaves of a (nested) dict in batches; non-numbers are skipped."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        flat = [
            Metric(k, float(v), now, step)
            for k, v in flatten(metrics).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        ]
        for i in range(0, len(flat), 500):
            self.client.log_batch(run_id or self.run_id, metrics=flat[i : i + 500])

    def log_curves(self, curves: Mapping[str, Sequence[tuple[int, float]]], *, run_id: str | None = None) -> None:
        """Log whole curves (``{key: [(step, value), ...]}``) in batches: one point per step, like a training
        loss logged as it went."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        flat = [Metric(k, float(v), now, int(step)) for k, points in curves.items() for step, v in points]
        for i in range(0, len(flat), 500):
            self.client.log_batch(run_id or self.run_id, metrics=flat[i : i + 500])

    def log_artifact(self, path: Path, artifact_path: str | None = None, run_id: str | None = None) -> None:
        self.client.log_artifact(run_id or self.run_id, str(path), artifact_path)

    def log_report(self, files: Sequence[Path]) -> dict[str, str]:
        """The report stage's outputs as artifacts of the parent run (a folder under its own name, files at the
        top), its verdicts as tags (``verdict.<claim id>`` per claim, ``verdicts``: the counts) and each claim's
        numbers as metrics (``claim.<id>.effect``, ``.ci_low``, ``.ci_high``, ``.verdict_code``, ``.testable``:
        ``components.evaluation.claim_metrics``; absent numbers are not logged).

        The verdicts come from the ``claims.json`` among ``files``; returns them (claim id -> verdict).
        """
        import json

        from mlflow.entities import RunTag

        from components.evaluation.claim_metrics import flat_claim_metrics

        verdicts: dict[str, str] = {}
        for path in files:
            if path.is_dir():
                self.client.log_artifacts(self.run_id, str(path), path.name)
            elif path.is_file():
                self.client.log_artifact(self.run_id, str(path))
            if path.name == "claims.json" and path.is_file():
                doc = json.loads(path.read_text())
                verdicts = {str(c["id"]): str(c["verdict"]) for c in doc.get("claims", [])}
                summary = ", ".join(f"{k}={v}" for k, v in doc.get("summary", {}).items())
                tags = [RunTag(f"verdict.{k}", v) for k, v in verdicts.items()] + [RunTag("verdicts", summary)]
                for i in range(0, len(tags), MAX_PARAMS_PER_BATCH):
                    self.client.log_batch(self.run_id, tags=tags[i : i + MAX_PARAMS_PER_BATCH])
                self.log_metrics(flat_claim_metrics(doc.get("claims", [])))
        return verdicts

    @contextlib.contextmanager
    def child(self, name: str, params: Mapping[str, Any] | None = None) -> Iterator[str]:
        """A child run (one trained model); yields its run id and closes it with the right status."""
        tags = {**self.tags, "mlflow.parentRunId": self.run_id}
        child = self.client.create_run(self.experiment_id, run_name=name, tags=tags)
        run_id = child.info.run_id
        if params:
            self.log_params(params, run_id=run_id)
        try:
            yield run_id
        except BaseException:
            self.client.set_terminated(run_id, "FAILED")
            raise
        self.client.set_terminated(run_id, "FINISHED")

    def log_state_dict_model(
        self, run_id: str, model_dir: Path, *, loader: str, signature: Any, name: str | None = None
    ) -> None:
        """Log a saved model folder as an MLflow pyfunc model named ``<paper>-<name>`` (``name``: the run's name
        unless given), fast path: no pickling of torch, no inference. The name is tagged on the run
        (``mlflow_model.MODEL_NAME_TAG``), where ``mlflow_model.model_uri`` finds it."""
        from flows.runtime.mlflow_model import MODEL_NAME_TAG, log_folder_model, model_name

        logged = model_name(self.tags.get("paper", ""), name or self.client.get_run(run_id).info.run_name)
        self.client.set_tag(run_id, MODEL_NAME_TAG, logged)
        with self._mlflow.start_run(run_id=run_id, nested=False):
            log_folder_model(model_dir, name=logged, loader=loader, signature=signature)

    def log_model(
        self,
        name: str,
        params: Mapping[str, Any] | None,
        model_dir: Path | None,
        *,
        loader: str,
        inputs: Tensor,
        outputs: Tensor,
        metrics: Mapping[str, Any] | None = None,
        curves: Mapping[str, Sequence[tuple[int, float]]] | None = None,
    ) -> str:
        """One model's child run: its params, final metrics and curves, and the folder logged as a pyfunc with
        its signature (``model_dir`` None: a run whose model was not kept, logged without one); returns the
        run id."""
        with self.child(name, params) as run_id:
            if metrics:
                self.log_metrics(metrics, run_id=run_id)
            if curves:
                self.log_curves(curves, run_id=run_id)
            if model_dir is not None:
                self.log_state_dict_model(
                    run_id, model_dir, name=name, loader=loader, signature=signature(inputs, outputs)
                )
        return run_id

    def set_tag(self, key: str, value: str, run_id: str | None = None) -> None:
        self.client.set_tag(run_id or self.run_id, key, value)

    def finish(self, status: str = "FINISHED") -> None:
        self.client.set_terminated(self.run_id, status)

    def fail(self, exc: BaseException) -> None:
        """End the parent run FAILED (KILLED on Ctrl-C) with tag ``error``: the line the CLI prints after ``error:``."""
        self.client.set_tag(self.run_id, "error", error_message(exc))
        self.finish("KILLED" if isinstance(exc, KeyboardInterrupt) else "FAILED")


def error_message(exc: BaseException) -> str:
    """One line naming what failed: a user error's own message (as ``paperline`` prints it), else ``Type: message``."""
    from components.errors import PaperlineError

    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    text = str(exc) if isinstance(exc, PaperlineError) else f"{type(exc).__name__}: {exc}"
    lines = text.strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:MAX_TAG_VALUE]


CHAMPION = "champion"


def register_champion(tracker: Tracker, model_name: str, champion: Mapping[str, Any]) -> str:
    """Register the champion run's model as a new version of ``model_name`` and point ``@champion`` at it.

    Called only when a pipeline run passed every stage (and so every data check).
    The accepted metric values become tags of the registered model (``accepted.<metric>``):
    the recurring evaluation compares its re-evaluations with them. How to re-evaluate
    (the ``eval`` tag: evaluator kind, data paths, settings, as JSON) is tagged on the version.
    Returns the new version number.
    """
    import json

    client = tracker.client
    tags = {
        "grid_model": str(champion.get("name", "")),
        "eval": json.dumps(champion.get("eval", {}), sort_keys=True),
        **{f"metric.{k}": repr(float(v)) for k, v in champion.get("metrics", {}).items()},
    }
    from flows.runtime.mlflow_model import model_uri

    # mlflow.register_model resolves runs:/<id>/<name> to the run's logged model (MLflow 3) and creates the name.
    version = tracker._mlflow.register_model(model_uri(client, champion["run_id"]), model_name, tags=tags).version
    client.set_registered_model_alias(model_name, CHAMPION, version)
    for metric, value in champion.get("metrics", {}).items():
        client.set_registered_model_tag(model_name, f"accepted.{metric}", repr(float(value)))
    client.set_registered_model_tag(model_name, "accepted.version", str(version))
    log.info("registered %s version %s as @%s", model_name, version, CHAMPION)
    return str(version)
