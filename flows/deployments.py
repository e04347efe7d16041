"""Prefect deployments: the flow a worker runs for a paper, and ``paperline schedule`` / ``deployments``.

``paperline_run`` is the deployment entry point (``flows/deployments.py:paperline_run``,
also in ``prefect.yaml``): it runs one paper's pipeline in the checkout the worker
pulled, exactly as ``paperline run`` does. ``schedule`` creates or updates a
deployment named after the paper (``paperline-run/<paper>``) with a cron schedule
on a process work pool; the recurring evaluation is scheduled the same way under
the name ``recurring-eval``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from prefect import flow

from components.errors import PaperlineError, ParamsError
from flows.deploy_yaml import DEFAULT_POOL, ENTRYPOINTS  # the names prefect.yaml is generated with
from flows.deploy_yaml import RECURRING_NAME as RECURRING

log = logging.getLogger("paperline")


@flow(name="paperline-run", persist_result=False, log_prints=False)
def paperline_run(
    paper: str,
    profile: str | None = None,
    overrides: list[str] | None = None,
    runner: str | None = None,
    root: str | None = None,
    stages: list[str] | None = None,
    wait: bool = True,
    verdicts: str = "compare",
) -> dict[str, Any]:
    """Run ``paper``'s pipeline (what a worker executes for a deployment); returns the stage summaries.

    A scheduled run waits for another writer of the paper (``wait``) instead of failing, and compares its
    claims' verdicts with the accepted ones (``verdicts``): one that changed fails the run, naming the claim.
    """
    from flows.runtime import pipeline, runners
    from flows.runtime.settings import apply_env_defaults
    from flows.runtime.variants import run_variant

    paths = apply_env_defaults(Path(root) if root else None)
    if runner:
        runners.parse(runner)
        os.environ[runners.ENV] = runner
    return pipeline.run(
        paper,
        paths,
        profile=profile,
        overrides=overrides or (),
        stages=stages or None,
        wait=wait,
        verdicts=verdicts,
        variant=run_variant(paper, overrides or (), replace_default=False),
    )


def _require_server(api_url: str | None = None) -> str:
    url = api_url or os.environ.get("PREFECT_API_URL")
    if not url:
        raise PaperlineError(
            "scheduling needs a Prefect server: set PREFECT_API_URL or run `paperline server start` first"
        )
    return url


def _on(url: str):
    """Prefect's settings pointing at ``url`` for the block: Prefect reads PREFECT_API_URL once, when it is
    imported, so setting the variable afterwards would leave its clients on a temporary server of their own."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    return temporary_settings(updates={PREFECT_API_URL: url})


def ensure_pool(name: str, kind: str = "process") -> None:
    """Create the work pool ``name`` if the server does not have it."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(name)
        except ObjectNotFound:
            client.create_work_pool(WorkPoolCreate(name=name, type=kind))


def plan(
    paper: str,
    root: Path,
    *,
    cron: str | None,
    profile: str | None = None,
    overrides: list[str] | None = None,
    runner: str | None = None,
    parameters: dict[str, Any] | None = None,
) -> tuple[str, str, dict[str, Any]]:
    """Validate a deployment (cron, paper, profile, ``--set`` values) without a server: (name, entrypoint, params)."""
    from flows.registry import get_paper

    if cron is not None:
        _check_cron(cron)
    if paper == RECURRING:
        params = {"root": str(root), **(parameters or {})}
        if profile:
            params["profile"] = profile
        return RECURRING, ENTRYPOINTS[RECURRING], params
    check_overrides(paper, root, profile, overrides or [])
    spec = get_paper(paper).require()
    params = {"paper": spec.slug, "profile": profile, "overrides": overrides or [], "runner": runner, "root": str(root)}
    return spec.slug, ENTRYPOINTS["run"], params


def schedule(
    paper: str,
    root: Path,
    *,
    cron: str | None,
    profile: str | None = None,
    overrides: list[str] | None = None,
    runner: str | None = None,
    pool: str = DEFAULT_POOL,
    parameters: dict[str, Any] | None = None,
    api_url: str | None = None,
) -> str:
    """Create or update the deployment for ``paper`` (or ``recurring-eval``) on the server at ``api_url``
    (default: PREFECT_API_URL); returns its full name."""
    name, entry, params = plan(
        paper, root, cron=cron, profile=profile, overrides=overrides, runner=runner, parameters=parameters
    )
    url = _require_server(api_url)
    from prefect import Flow

    with _on(url):
        ensure_pool(pool)
        source = Flow.from_source(source=str(root), entrypoint=entry)
        source.deploy(
            name=name,
            work_pool_name=pool,
            cron=cron,
            parameters=params,
            build=False,
            push=False,
            print_next_steps=False,
            ignore_warnings=True,
            tags=["paperline", name],
        )
    return f"{source.name}/{name}"


def check_overrides(paper: str, root: Path, profile: str | None, overrides: list[str]) -> None:
    """Validate the deployment's profile and ``--set`` values against the paper's params model (as a run would)."""
    from flows.registry import get_paper
    from flows.runtime import pipeline
    from flows.runtime.params import check_profile
    from flows.runtime.settings import Paths

    paths = Paths(Path(root))
    chosen = check_profile(profile) if profile is not None else pipeline.file_profile(paths)
    pipeline.resolve_owner_params(get_paper(paper), paths, chosen, overrides)


def _check_cron(cron: str) -> None:
    try:
        from croniter import croniter

        ok = croniter.is_valid(cron)
    except ImportError:  # pragma: no cover - croniter comes with Prefect
        ok = len(cron.split()) == 5
    if ok:
        try:  # Prefect's own check is stricter (field ranges: minute 0-59, hour 0-23, ...)
            from prefect.client.schemas.schedules import CronSchedule

            CronSchedule(cron=cron)
        except ImportError:  # pragma: no cover
            pass
        except Exception:
            ok = False
    if not ok:
        raise ParamsError(f"--cron {cron[:60]!r} is not a valid cron expression (e.g. '0 3 * * *')")


def list_deployments(api_url: str | None = None) -> list[dict[str, Any]]:
    """Every deployment on the server at ``api_url`` (default: PREFECT_API_URL): name, pool, schedules, paused,
    parameters."""
    from prefect.client.orchestration import get_client

    url = _require_server(api_url)
    with _on(url), get_client(sync_client=True) as client:
        flows = {f.id: f.name for f in client.read_flows()}
        rows = []
        for d in client.read_deployments():
            crons = [getattr(s.schedule, "cron", None) or str(s.schedule) for s in (d.schedules or [])]
            rows.append(
                {
                    "name": f"{flows.get(d.flow_id, '?')}/{d.name}",
                    "pool": d.work_pool_name,
                    "schedules": crons,
                    "paused": bool(d.paused),
                    "parameters": d.parameters,
                }
            )
    return sorted(rows, key=lambda r: r["name"])


def trigger(name: str, api_url: str | None = None) -> dict[str, str]:
    """Create a flow run of the deployment ``name`` (``flow/deployment``, or a bare deployment name such as a paper
    slug) on the server at ``api_url``, as ``prefect deployment run`` does; a worker on its pool runs it. Returns
    the deployment's full name, the run's name and id."""
    url = _require_server(api_url)
    if "/" not in name:
        full = [r["name"] for r in list_deployments(url) if r["name"].split("/", 1)[1] == name]
        if len(full) != 1:
            raise PaperlineError(
                f"no single deployment named {name[:80]!r} on {url}"
                + (f" ({', '.join(full)})" if full else "")
                + ": `paperline deployments` lists them"
            )
        name = full[0]
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound

    with _on(url):
        try:
            run = run_deployment(name, timeout=0, as_subflow=False)
        except ObjectNotFound:
            raise PaperlineError(
                f"deployment {name[:80]!r} not found on {url}: `paperline deployments` lists them, "
                "`paperline schedule <paper>` creates one"
            ) from None
    return {"deployment": name, "flow_run": run.name, "id": str(run.id)}


def next_steps(name: str, pool: str, url: str, *, lasting: bool) -> list[str]:
    """The commands that run deployment ``name`` now and start a worker, exactly as they work when pasted in a
    shell: Prefect's CLI reads its server from PREFECT_API_URL (without it, it looks at a server of its own and
    says "Deployment not found"), so each command names it. A server that does not last (a temporary one, or the
    shared API-only one that stops when idle) is named as ``$(paperline server status)``, to run after
    ``paperline server start``."""
    api = url if lasting else "$(paperline server status)"
    lines = [] if lasting else ["first start the full server (it runs schedules): paperline server start"]
    return [
        *lines,
        f"run it now: paperline trigger '{name}'",
        f"  or with Prefect's CLI: PREFECT_API_URL={api} prefect deployment run '{name}'",
        f"a worker that runs it: PREFECT_API_URL={api} prefect worker start --pool {pool}",
    ]
