"""Running a paper's stages as one Prefect flow run, tracked as one MLflow parent run.

``paperline run <paper>`` runs every stage (and the shared stages it reads) in
one flow run; ``paperline stage <paper> <stage>`` (what ``dvc.yaml`` calls) runs
one. Each stage is a Prefect subflow; params are resolved and validated for every
owner involved before the first stage starts.
"""

from __future__ import annotations

import importlib
import logging
import os
import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from components.errors import PaperlineError, ParamsError
from flows.registry import SHARED, PaperSpec, dvc_stage_name, get_paper, upstream
from flows.runtime import params as P
from flows.runtime.settings import Paths

log = logging.getLogger("paperline")


def resolve_owner_params(paper: PaperSpec, paths: Paths, profile: str, overrides: Sequence[str]) -> BaseModel:
    """Validated params of one owner (paper or ``shared``) for ``profile``."""
    if paper.params_module is None or paper.broken:
        paper.require()
    module = importlib.import_module(paper.params_module)
    file_values = P.load_params_file(paths.params_file)
    return P.resolve(
        module.Params,
        module.PRESETS,
        slug=paper.slug,
        profile=profile,
        file_section=file_values.get(paper.slug),
        overrides=overrides,
    )


def file_profile(paths: Paths) -> str:
    """The profile named in params.yaml (``default`` when absent)."""
    value = P.load_params_file(paths.params_file).get("profile", "default")
    return P.check_profile(str(value))


def plan(slug: str, stages: Sequence[str] | None, *, with_upstream: bool) -> list[tuple[str, str]]:
    """(owner, stage) pairs to run, in order."""
    paper = get_paper(slug).require()
    names = list(stages) if stages else [s.name for s in paper.stages]
    for name in names:
        paper.stage(name)  # validates the name
    order: list[tuple[str, str]] = []
    for name in names:
        chain = upstream(paper.slug, name) if with_upstream else [(paper.slug, name)]
        order.extend(pair for pair in chain if pair not in order)
    return order


def run(
    slug: str,
    paths: Paths,
    *,
    profile: str | None = None,
    overrides: Sequence[str] = (),
    stages: Sequence[str] | None = None,
    with_upstream: bool = True,
    force: bool = False,
    track: bool = True,
    wait: bool = False,
    verdicts: str = "accept",
    variant: str | None = None,
) -> dict[str, Any]:
    """Validate everything, take the paper lock(s), then run the planned stages in one Prefect flow run.

    Another writer of the same paper in this checkout makes this fail at once (or, with ``wait``, wait for it).
    ``verdicts``: ``accept`` (a run by hand) or ``compare`` (a scheduled rerun: a verdict that differs from the
    accepted one fails the run and accepts nothing; ``flows.runtime.accepted``). ``variant``: the report goes to
    ``reports/<paper>/variants/<variant>/`` and the run accepts nothing (``flows.runtime.variants``; the CLI
    names one for a run with ``--set``).
    """
    from flows.runtime.accepted import MODES

    if verdicts not in MODES:
        raise ParamsError(f"verdicts: {verdicts!r} is not one of {', '.join(MODES)}")
    profile = P.check_profile(profile) if profile is not None else file_profile(paths)
    order = plan(slug, stages, with_upstream=with_upstream)
    owners = {owner for owner, _ in order}
    resolved = {
        owner: resolve_owner_params(
            get_paper(owner), paths, profile, overrides if owner == get_paper(slug).slug else ()
        )
        for owner in owners
    }
    from flows.runtime.lock import hold

    if not os.environ.get("PREFECT_API_URL"):  # called from Python with no server: Prefect starts a temporary one
        from flows.runtime.prefect_server import prepare_temporary

        prepare_temporary()
    with hold(paths, owners, wait=wait):
        return _run_flow(
            get_paper(slug).slug,
            order,
            resolved,
            paths,
            profile,
            force=force,
            track=track,
            verdicts=verdicts,
            variant=variant,
        )


class _QuietUserErrors(logging.Filter):
    """Drop Prefect's traceback records for errors the user must fix: the CLI prints them as one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, PaperlineError)


def _quiet_prefect_user_errors() -> None:
    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _QuietUserErrors) for f in logger.filters):
            logger.addFilter(_QuietUserErrors())


def _run_flow(
    slug, order, resolved, paths, profile, *, force, track, verdicts="accept", variant=None
) -> dict[str, Any]:
    from concurrent.futures import ThreadPoolExecutor

    flow_name = slug if len(order) > 1 else dvc_stage_name(*order[0])
    # Prefect and MLflow both import SQLAlchemy; importing it from two threads at once can end in a circular-import
    # ImportError inside sqlalchemy.orm (seen on fresh copies), so the main thread imports it first.
    import sqlalchemy.orm  # noqa: F401

    # MLflow's import and store set-up take ~3 s; they overlap Prefect's start-up and the stage's work.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mlflow-init") as pool:
        tracker = pool.submit(_tracker, slug, flow_name, paths, profile, order, resolved, variant) if track else None
        try:
            return _prefect_flow(
                flow_name,
                order,
                resolved,
                paths,
                profile,
                force=force,
                tracker=tracker,
                settle=(slug, verdicts),
                variant=variant,
            )
        except BaseException as exc:
            _fail_unfinished(tracker, exc)
            raise


def _fail_unfinished(tracker, exc: BaseException) -> None:
    """A run whose flow never reached its stages (Prefect failed to start): its MLflow run ends FAILED too."""
    if tracker is None or not tracker.done() or tracker.exception() is not None:
        return
    t = tracker.result()
    try:
        running = t.client.get_run(t.run_id).info.status == "RUNNING"
    except Exception:
        running = True
    if running:
        _fail(t, exc)


def _fail(tracker, exc: BaseException) -> None:
    """Mark the parent run FAILED with its ``error`` tag; a tracking error here never hides the run's own error."""
    if tracker is None:
        return
    try:
        tracker.fail(exc)
    except Exception:
        log.warning("could not mark MLflow run %s FAILED", tracker.run_id, exc_info=True)


def _prefect_flow(
    flow_name, order, resolved, paths, profile, *, force, tracker, settle=None, variant=None
) -> dict[str, Any]:
    from prefect import flow

    from flows.runtime.stages import StageContext

    _quiet_prefect_user_errors()

    # The flow's closure must stay picklable (a process-pool task runner ships the flow context to its
    # workers), so it holds a list that swaps the background Future for the Tracker once it is ready.
    holder = [tracker]

    @flow(name=flow_name, persist_result=False, log_prints=False)
    def pipeline() -> dict[str, Any]:
        holder[0] = holder[0].result() if holder[0] is not None else None
        tracker = holder[0]
        results: dict[str, Any] = {}
        try:
            for owner, name in order:
                paper = get_paper(owner)
                own = variant if settle is None or owner == settle[0] else None  # shared stages have no variant
                ctx = StageContext(paper, paper.stage(name), resolved[owner], profile, paths, tracker, variant=own)
                t0 = time.perf_counter()
                if len(order) == 1:  # one stage (what DVC runs): no nested subflow, one flow run per process
                    summary = _stage_body(ctx, force)
                else:
                    summary = flow(name=dvc_stage_name(owner, name), persist_result=False)(_stage_body)(ctx, force)
                summary["seconds"] = round(time.perf_counter() - t0, 3)
                results[f"{owner}:{name}"] = summary
                _log_stage(ctx.tracker, owner, name, summary, single=len(order) == 1)
                _log_report(ctx)
            _settle(holder[0], results, profile, order, paths, settle, variant)
        except BaseException as exc:
            _fail(tracker, exc)
            raise
        if tracker is not None:
            tracker.finish("FINISHED")
        return results

    return pipeline()


def _log_stage(tracker, owner: str, name: str, summary: dict[str, Any], *, single: bool) -> None:
    if tracker is None:
        return
    tracker.log_metrics({name: _numbers(summary)})
    if summary.get("fingerprint"):
        tracker.set_tag(f"stage_hash.{dvc_stage_name(owner, name)}", summary["fingerprint"])
        if single:
            tracker.set_tag("dvc_stage_hash", summary["fingerprint"])


def _log_report(ctx) -> None:
    """After a report stage (run or up to date): its report, claims.json, metrics.json and figures become
    artifacts of the parent run, its verdicts tags (``verdict.<id>``, ``verdicts``)."""
    outputs = (*ctx.stage.outs, *ctx.stage.metrics)
    if ctx.tracker is None or not any(rel.endswith("/claims.json") for rel in outputs):
        return
    ctx.tracker.log_report([ctx.paths.root / ctx.target(rel) for rel in outputs])


def _settle(tracker, results: dict[str, Any], profile: str, order, paths, settle, variant=None) -> None:
    """Every stage passed (checks included): accept the run (champions, verdicts) as ``flows.runtime.accepted`` says.

    The verdicts count only when this run covered every stage of the paper (a `--stage report` rerun on
    someone else's outputs is not a reproduction to accept); a variant run accepts nothing.
    """
    from flows.runtime.accepted import settle as accept

    slug, mode = settle or (order[-1][0], "accept")
    ran = {name for owner, name in order if owner == slug}
    whole = ran == {st.name for st in get_paper(slug).stages}
    claims = paths.report(slug) / "claims.json" if whole else None
    accept(tracker, slug, results, profile, claims, mode, variant=variant)


def _stage_body(ctx, force):
    from flows.runtime.stages import execute

    return execute(ctx, force=force)


def _numbers(summary: dict[str, Any]) -> dict[str, Any]:
    """A stage summary's measurements, logged as the parent run's metrics. The champion candidate is left out: its
    metrics are its child run's, and its rules (tolerances) are settings, not measurements."""
    return {
        k: v
        for k, v in summary.items()
        if k != "champion" and isinstance(v, (int, float, dict)) and not isinstance(v, bool)
    }


def _tracker(slug, run_name, paths, profile, order, resolved, variant=None):
    from flows.runtime.gitinfo import git_state
    from flows.runtime.tracking import Tracker

    tags = {"paper": slug, "profile": profile, **git_state(paths.root)}
    if os.environ.get("DVC_STAGE"):
        tags["dvc_stage"] = os.environ["DVC_STAGE"]
    tags["stages"] = ",".join(dvc_stage_name(o, s) for o, s in order)
    if variant:
        tags["variant"] = variant
    experiment = slug if slug != SHARED else "shared"
    tracker = Tracker(experiment, f"{run_name} [{variant}]" if variant else run_name, tags)
    tracker.log_config(_config(slug, resolved))
    return tracker


def _config(slug: str, resolved: dict[str, BaseModel]) -> dict[str, Any]:
    """The params of the run: the paper's own at the top (``grid.sizes``), other owners' under their name."""
    config: dict[str, Any] = {}
    for owner, params in sorted(resolved.items(), key=lambda kv: kv[0] != slug):
        values = params.model_dump(mode="json")
        config.update(values if owner == slug else {owner: values})
    return config
