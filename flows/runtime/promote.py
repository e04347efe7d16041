"""``paperline promote <paper>``: accept a completed run that did not promote itself (a smoke run).

A run that is not a smoke run and passes every stage moves ``@champion`` itself (``flows.runtime.accepted.settle``).
A smoke run only keeps its candidates on record: the tag ``champion.<model> = not moved: smoke profile`` and the
artifact ``champion/<model>.json``. Promoting registers those candidates through the same call a passing run makes
(``flows.runtime.tracking.register_champion``: a new model version, ``@champion``, the accepted metric values) and
accepts the run's verdicts (``flows.runtime.accepted.accept_verdicts``), so the recurring evaluation has a
champion to re-evaluate. A variant run (one with overrides, ``flows.runtime.variants``) keeps its candidates the
same way (``not moved: variant <name>``); it is promoted only when named (``--run-id``), never as the latest run.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from components.errors import PaperlineError

NOT_MOVED = "not moved: smoke profile"
NOT_MOVED_ANY = "not moved: "  # a smoke run's or a variant's


class _OnRun:
    """The parts of ``Tracker`` that ``register_champion`` uses, on an existing (finished) run."""

    def __init__(self, client, run_id: str):
        import mlflow

        self._mlflow = mlflow
        self.client = client
        self.run_id = run_id


def candidate_run(client, paper: str, run_id: str | None = None):
    """The latest finished parent run of ``paper`` with champion candidates on record (or run ``run_id``)."""
    if run_id:
        run = client.get_run(run_id)
        if not _candidates(run, named=True):
            raise PaperlineError(f"run {run_id}: no champion candidate on record (tag champion.<model>: {NOT_MOVED})")
        return run
    exp = client.get_experiment_by_name(paper)
    if exp is None:
        raise PaperlineError(f"{paper}: no MLflow runs; run `paperline run {paper}` to completion first")
    runs = client.search_runs(
        [exp.experiment_id], filter_string="attributes.status = 'FINISHED'", order_by=["attributes.start_time DESC"]
    )
    for run in runs:
        if "mlflow.parentRunId" not in run.data.tags and _candidates(run):
            return run
    raise PaperlineError(
        f"{paper}: no completed run with a champion candidate to promote (a run at the default or full profile "
        "promotes itself; a paper without a trained model has no champion)"
    )


def _candidates(run, *, named: bool = False) -> list[str]:
    """The models of ``run`` whose candidate is on record: a smoke run's; a variant's too when the run is ``named``."""
    return sorted(
        k.split(".", 1)[1]
        for k, v in run.data.tags.items()
        if k.startswith("champion.") and (v == NOT_MOVED or (named and v.startswith(NOT_MOVED_ANY)))
    )


def promote(paper: str, run_id: str | None = None) -> dict[str, str]:
    """Register the candidates of ``paper``'s latest completed run (or ``run_id``) as ``@champion`` and accept
    its verdicts. Returns ``{model: version}``; MLflow is the one ``MLFLOW_TRACKING_URI`` names."""
    from mlflow.tracking import MlflowClient

    from flows.runtime.accepted import accept_verdicts
    from flows.runtime.tracking import register_champion

    client = MlflowClient()
    run = candidate_run(client, paper, run_id)
    rid = run.info.run_id
    versions = {}
    with tempfile.TemporaryDirectory(prefix="paperline-promote-") as tmp:
        for model in _candidates(run, named=bool(run_id)):
            local = client.download_artifacts(rid, f"champion/{model}.json", tmp)
            candidate = json.loads(Path(local).read_text())
            versions[model] = register_champion(_OnRun(client, rid), model, candidate)
            client.set_tag(rid, f"champion.{model}", f"version {versions[model]} (paperline promote)")
    verdicts = {k.split(".", 1)[1]: v for k, v in run.data.tags.items() if k.startswith("verdict.")}
    if verdicts:
        accept_verdicts(client, paper, verdicts, rid)
    return versions
