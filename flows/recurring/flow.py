"""The recurring evaluation flow: re-evaluate every ``@champion``, log a time series, fail on regressions.

Scheduled with ``paperline schedule recurring-eval --cron "0 4 * * *"``. For each
paper it loads the registered model behind the alias, evaluates it on the paper's
evaluation data in this checkout, logs the metrics to the MLflow experiment
``recurring-eval`` (one run per evaluation: a time series per paper), writes the
history report (``reports/recurring-eval/``), and fails with one line per
regression naming paper, metric, old and new value when a metric worsens beyond
its tolerance. Each paper's champion declares its evaluator and its metrics' rules
(``flows.runtime.champions``); a paper that cannot be evaluated (no data, no champion) fails by name while
the others are still evaluated and reported; each point records the package versions it ran with.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from prefect import flow

from components.errors import PaperlineError, ParamsError
from components.registry_eval.compare import find_regressions

log = logging.getLogger("paperline")


class RegressionDetected(PaperlineError):
    """A re-evaluated metric got worse than its tolerance allows."""


@flow(name="recurring-eval", persist_result=False, log_prints=False)
def recurring_eval(
    root: str | None = None,
    papers: list[str] | None = None,
    alias: str | None = None,
    default_tolerance: float | None = None,
    tolerances: dict[str, float] | None = None,
    higher_is_better: list[str] | None = None,
    experiment: str | None = None,
    profile: str | None = None,
) -> dict[str, Any]:
    """Re-evaluate the aliased models (see the module doc); raises RegressionDetected on a regression.

    Unset settings take the defaults of ``flows.recurring.params.Params``; ``profile`` is
    accepted for symmetry with the paper deployments (evaluation data come from the checkout).
    """
    given = {
        "papers": papers,
        "alias": alias,
        "default_tolerance": default_tolerance,
        "tolerances": tolerances,
        "higher_is_better": higher_is_better,
        "experiment": experiment,
    }
    return run(root, {k: v for k, v in given.items() if v is not None})


def run(root: str | None, settings: dict[str, Any]) -> dict[str, Any]:
    """The flow's body, callable without Prefect (tests, `flow.fn`)."""
    from pydantic import ValidationError

    from flows.recurring.params import Params
    from flows.runtime.params import format_validation_error
    from flows.runtime.settings import apply_env_defaults

    try:
        params = Params(**settings)
    except ValidationError as exc:
        raise ParamsError(format_validation_error(exc, "recurring-eval", Params)) from None
    paths = apply_env_defaults(Path(root) if root else None)
    from mlflow.tracking import MlflowClient

    from flows.recurring.evaluate import champion, reevaluate, registered_papers
    from flows.recurring.report import write_report
    from flows.runtime.tracking import experiment_id

    client = MlflowClient()
    papers = params.papers or registered_papers(client, params.alias)
    if not papers:
        raise PaperlineError(
            f"no registered model has alias @{params.alias}: a run at the default or full profile sets it when it "
            "completes; a smoke run does not, `paperline promote <paper>` promotes its champion"
        )
    exp_id = experiment_id(client, params.experiment)
    results, failures = {}, []
    for paper in papers:
        started = time.perf_counter()
        try:  # one paper's missing data or broken evaluator is its own failure; the others are still evaluated
            champ = champion(client, paper, params.alias)
            metrics, env = reevaluate(champ, paths.root)
            found = find_regressions(
                paper,
                champ.accepted,
                metrics,
                tolerances=params.tolerances,
                default_tolerance=params.default_tolerance,
                higher_is_better=tuple(params.higher_is_better),
                rules=champ.rules,
            )
        except PaperlineError as exc:
            log.error("%s", exc)
            results[paper] = {"version": "", "metrics": {}, "accepted": {}, "regressions": [], "error": str(exc)}
            failures.append(str(exc))
            continue
        _log(client, exp_id, paper, champ.version, metrics, env, failed=bool(found))
        results[paper] = {
            "version": champ.version,
            "metrics": metrics,
            "accepted": champ.accepted,
            "versions": env,
            "regressions": [r.message() for r in found],
            "seconds": round(time.perf_counter() - started, 3),
        }  # load + re-evaluate + compare
        failures.extend(r.message() for r in found)
    write_report(client, exp_id, paths.report("recurring-eval"), results, history=params.history)
    if failures:
        raise RegressionDetected("regression: " + "; ".join(failures))
    return results


def _log(
    client, exp_id: str, paper: str, version: str, metrics: dict[str, float], env: dict[str, str], *, failed: bool
) -> None:
    """One MLflow run per (paper, evaluation): the metrics at step = unix time, so runs form a time series;
    the package versions it ran with are its ``version.<package>`` tags."""
    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    tags = {
        "paper": paper,
        "model_version": version,
        "regressed": str(failed).lower(),
        **{f"version.{k}": v for k, v in env.items()},
    }
    run = client.create_run(exp_id, run_name=f"{paper}-v{version}", tags=tags)
    client.log_batch(run.info.run_id, metrics=[Metric(k, float(v), now, now // 1000) for k, v in metrics.items()])
    client.set_terminated(run.info.run_id, "FINISHED")
