"""Loading a paper's aliased model from the MLflow registry and re-evaluating it (no Prefect here)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.errors import DataError, PaperlineError

log = logging.getLogger("paperline")


@dataclass
class Champion:
    """A registered model version behind an alias, with its accepted values and how to re-evaluate it.

    ``eval_spec``: ``evaluator`` (the paper whose ``champion.evaluate`` recomputes the metrics), ``settings``
    (what it needs besides the model) and ``rules`` (per metric: direction and tolerance).
    """

    paper: str
    version: str
    accepted: dict[str, float]
    eval_spec: dict[str, Any]

    @property
    def rules(self) -> dict[str, dict]:
        return dict(self.eval_spec.get("rules") or {})


def registered_papers(client, alias: str) -> list[str]:
    """Names of registered models that have ``alias``."""
    return sorted(m.name for m in client.search_registered_models() if alias in (m.aliases or {}))


def champion(client, paper: str, alias: str) -> Champion:
    """The version behind ``paper@alias``; a missing model or alias is a one-line error."""
    try:
        model = client.get_registered_model(paper)
        mv = client.get_model_version_by_alias(paper, alias)
    except Exception as exc:
        raise PaperlineError(
            f"{paper}: no registered model with alias @{alias} (run its pipeline to completion at the default profile, "
            f"or `paperline promote {paper}` after a smoke run)"
        ) from exc
    from flows.runtime.accepted import NOT_METRICS

    accepted = {
        k.split(".", 1)[1]: float(v)
        for k, v in model.tags.items()
        if k.startswith("accepted.") and k not in NOT_METRICS
    }  # a passing run also stores its verdicts there
    if not accepted:
        raise DataError(f"{paper}: registered model has no accepted.* values to compare with")
    from flows.runtime.champions import eval_spec

    return Champion(paper, str(mv.version), accepted, eval_spec(json.loads(mv.tags.get("eval", "{}"))))


def reevaluate(champ: Champion, root: Path) -> tuple[dict[str, float], dict[str, str]]:
    """Load the champion's folder from the registry (``models:/paper/version``) and compute its metrics now.

    Returns the metrics and the versions of the packages they depend on. Nothing is unpickled: the MLmodel
    file is read with ``yaml.safe_load`` and the folder goes to the allow-listed loader it names
    (``flows.runtime.mlflow_model``); the evaluator is the named paper's ``champion.evaluate``.
    """
    import tempfile

    from components.registry_eval.environment import versions
    from flows.runtime.champions import evaluator
    from flows.runtime.mlflow_model import load_folder_model

    evaluate, libraries = evaluator(str(champ.eval_spec["evaluator"]))
    with tempfile.TemporaryDirectory(prefix="paperline-champion-") as tmp:
        model = load_folder_model(f"models:/{champ.paper}/{champ.version}", Path(tmp))
        metrics = evaluate(model, dict(champ.eval_spec.get("settings") or {}), root)
    return {k: float(v) for k, v in metrics.items()}, versions(libraries)
