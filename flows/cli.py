"""The ``paperline`` command.

Start-up stays cheap: Prefect, MLflow, DVC and torch are imported inside the
commands that need them, so ``paperline list`` and ``--help`` answer at once.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Annotated

import typer

from components.errors import PaperlineError
from flows.runtime.settings import apply_env_defaults

app = typer.Typer(
    help="Reproduce ICLR 2026 papers: Prefect flows, DVC-versioned data, MLflow-tracked models.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: flags show no `<bool>` type, options their own metavar
)
server_app = typer.Typer(
    help="Manage the local Prefect server shared by stage processes.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(server_app, name="server")


def _complete_profile(incomplete: str) -> list[str]:
    from flows.runtime.params import PROFILES

    return [p for p in PROFILES if p.startswith(incomplete)]


def _paper_in(args: list[str]):
    """The paper named on the command line so far (the first word that is a paper's slug), or None. Click hands a
    completion callback neither the earlier words nor their values here, so they are read where the shell's
    completion script puts them (bash: ``COMP_WORDS``; zsh, fish, PowerShell: ``_TYPER_COMPLETE_ARGS``)."""
    import os

    from flows.registry import get_paper, papers

    words = list(args) or (os.environ.get("COMP_WORDS") or os.environ.get("_TYPER_COMPLETE_ARGS") or "").split()
    for word in words:
        if word in papers():
            try:
                return get_paper(word).require()
            except Exception:
                return None
    return None


def _complete_stage(args: list[str], incomplete: str) -> list[str]:
    """Shell completion for ``--stage``: the stages of the paper already given."""
    paper = _paper_in(args)
    return [st.name for st in paper.stages if st.name.startswith(incomplete)] if paper else []


def _complete_set(args: list[str], incomplete: str) -> list[str]:
    """Shell completion for ``--set``: the paper's params keys (``training.lr=``), from its params model."""
    paper = _paper_in(args)
    if paper is None or "=" in incomplete:
        return []
    import importlib

    from flows.runtime import params as P
    from flows.runtime.tracking import flatten

    module = importlib.import_module(paper.params_module)
    params = P.resolve(module.Params, module.PRESETS, slug=paper.slug, profile="default")
    return [f"{k}=" for k in sorted(flatten(params.model_dump(mode="json"))) if k.startswith(incomplete)]


ProfileOpt = Annotated[
    str | None,
    typer.Option(
        "--profile",
        "-p",
        metavar="PROFILE",
        help="smoke | default | full (default: params.yaml's `profile`)",
        autocompletion=_complete_profile,
    ),
]
RunnerOpt = Annotated[
    str | None,
    typer.Option(
        "--runner",
        metavar="RUNNER",
        help="Task runner for fan-out: local | process[:N] | dask[:N] | tcp://HOST:PORT | ray[:ADDRESS] "
        "(env PAPERLINE_RUNNER)",
    ),
]
WaitOpt = Annotated[
    bool,
    typer.Option(
        "--wait/--no-wait",
        help="If another process is writing this paper: wait for it (--wait) or stop at once (default)",
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        metavar="KEY=VALUE",
        help="Override a param: KEY=VALUE (repeatable), e.g. training.lr=3e-4",
        autocompletion=_complete_set,
    ),
]


def _setup_logging(verbose: bool = False) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S"
    )
    for noisy in ("prefect", "httpx", "mlflow", "alembic", "urllib3", "great_expectations"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _complete_paper(incomplete: str) -> list[str]:
    """Shell completion for paper arguments: the implemented papers' slugs (the registry is cheap to import)."""
    from flows.registry import papers

    return [
        slug for slug, spec in papers().items() if spec.implemented and slug != "shared" and slug.startswith(incomplete)
    ]


PaperArg = Annotated[
    str, typer.Argument(metavar="PAPER", help="a paper's slug (see `paperline list`)", autocompletion=_complete_paper)
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")]


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"paperline {version('paperline')}")
        except PackageNotFoundError:
            typer.echo("paperline (not installed: run `make setup`)")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print paperline's version and exit")
    ] = False,
) -> None:
    """Reproduce ICLR 2026 papers: Prefect flows, DVC-versioned data, MLflow-tracked models."""


@app.command("list")
def list_papers(as_json: JsonOpt = False) -> None:
    """Every paper with its stages and last verdicts (cheap: imports no ML library)."""
    from flows.cli_views import print_list

    print_list(apply_env_defaults(), as_json=as_json)


@app.command()
def show(
    paper: PaperArg,
    profile: ProfileOpt = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", "-s", metavar="KEY=VALUE", help="Also print the params resolved with this override (repeatable)"
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """A paper's stages, params per profile and last claims; with --profile/--set, the resolved params as YAML."""
    from flows.cli_views import print_show

    print_show(apply_env_defaults(), paper, as_json=as_json, profile=profile, overrides=set_ or [])


@app.command()
def doctor(as_json: JsonOpt = False) -> None:
    """Check the set-up: venv packages, offline sources, SmolLM2, Prefect, MLflow, DVC, disk; exit 1 if one is
    missing."""
    import dataclasses

    from flows.doctor import failed, format_table, run_checks

    checks = run_checks(apply_env_defaults())
    bad = failed(checks)
    if as_json:
        typer.echo(json.dumps([dataclasses.asdict(c) for c in checks], indent=2))
        raise typer.Exit(1 if bad else 0)
    typer.echo(format_table(checks))
    if bad:
        typer.echo(f"{len(bad)} required check(s) failed: {', '.join(c.name for c in bad)}", err=True)
        raise typer.Exit(1)
    typer.echo("all required checks passed")


@app.command("run")
def run_cmd(
    paper: PaperArg,
    profile: ProfileOpt = None,
    set_: SetOpt = None,
    stage: Annotated[
        list[str] | None,
        typer.Option(
            "--stage",
            metavar="STAGE",
            help="Run only these stages (and what they read)",
            autocompletion=_complete_stage,
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Rerun stages even when up to date")] = False,
    no_track: Annotated[bool, typer.Option("--no-track", help="Do not log to MLflow")] = False,
    runner: RunnerOpt = None,
    wait: WaitOpt = False,
    replace_default: Annotated[
        bool,
        typer.Option(
            "--replace-default",
            help="With --set: write the report over the default one in reports/<paper>/ (and accept the run) "
            "instead of reports/<paper>/variants/<overrides>/",
        ),
    ] = False,
) -> None:
    """Run a paper's pipeline end to end as one Prefect flow run; report in reports/<paper>/ (a run with --set:
    in reports/<paper>/variants/<overrides>/)."""
    from flows.cli_views import check_stages, find_paper
    from flows.runtime.variants import run_variant

    paths = apply_env_defaults(writing=True)
    spec = find_paper(paper)
    check_stages(spec, stage)
    _setup_logging()
    _use_runner(runner)  # a bad --runner fails before anything, even when nothing is to do
    variant = run_variant(spec.slug, set_ or (), replace_default=replace_default)
    if not force and _nothing_to_do(
        paths, spec.slug, profile=profile, overrides=set_ or (), stages=stage, variant=variant
    ):
        return
    typer.echo(f"{spec.slug}: stages to run; checking inputs and params ...", err=True)
    from flows.doctor import preflight
    from flows.runtime import prefect_server

    with prefect_server.connected(paths, wait=False) as server:  # a temporary one starts while params are checked
        preflight(spec.slug, paths, profile=profile, overrides=set_ or (), stages=stage)
        _starting(server, track=not no_track)
        server.ready()
        from flows.runtime import pipeline

        results = pipeline.run(
            spec.slug,
            paths,
            profile=profile,
            overrides=set_ or (),
            stages=stage,
            force=force,
            track=not no_track,
            wait=wait,
            variant=variant,
        )
    _write_index(paths)
    for name, summary in results.items():
        state = "skipped (up to date)" if summary.get("skipped") else f"done in {summary.get('seconds', 0):.1f} s"
        typer.echo(f"{name}: {state}")
    _record_in_dvc_lock(paths, results, profile=profile, overrides=set_ or ())
    _print_claims(paths, spec.slug, results, variant)
    typer.echo(f"report: {paths.report(spec.slug, variant)}/report.html")


def _nothing_to_do(paths, slug: str, *, profile: str | None, overrides, stages, variant: str | None = None) -> bool:
    """Every planned stage up to date: say so, print the last claims and return True, having imported neither
    Prefect, MLflow nor torch (``flows.runtime.noop``); False when there is work."""
    from flows.runtime import dvc_lock, noop, pipeline

    order = noop.up_to_date(slug, paths, profile=profile, overrides=overrides, stages=stages, variant=variant)
    if order is None:
        return False
    typer.echo(f"{slug}: nothing to do, every stage is up to date (--force reruns them)", err=True)
    results = {f"{owner}:{name}": {"skipped": True} for owner, name in order}
    for name in results:
        typer.echo(f"{name}: skipped (up to date)")
    why = dvc_lock.why_not(paths, profile=profile, file_profile=pipeline.file_profile(paths), overrides=overrides)
    if why is None and noop.lock_needs_record(paths, order):
        _record_in_dvc_lock(paths, results, profile=profile, overrides=overrides)
    _print_claims(paths, slug, results, variant)
    typer.echo(f"report: {paths.report(slug, variant)}/report.html")
    return True


def _record_in_dvc_lock(paths, results: dict, *, profile: str | None, overrides) -> None:
    """After a run with params.yaml's own params, `dvc status` is clean (flows/runtime/dvc_lock.py)."""
    from flows.runtime import dvc_lock, pipeline

    why = dvc_lock.why_not(paths, profile=profile, file_profile=pipeline.file_profile(paths), overrides=overrides)
    if why:
        typer.echo(f"dvc.lock not updated: {why}", err=True)
        return
    try:
        names = dvc_lock.record(paths, results)
    except Exception as exc:
        typer.echo(
            f"dvc.lock not updated: dvc commit failed: {str(exc).splitlines()[0] if str(exc) else exc!r}", err=True
        )
        return
    typer.echo(f"dvc.lock: recorded {len(names)} stage(s); `dvc status` is clean for them")


def _starting(server, *, track: bool) -> None:
    """One line before the quiet start-up (a new Prefect server answers in about 5 s, 15 s on a new database)."""
    if server.temporary:
        prefect = "starting a temporary Prefect server"
    elif server.proc is not None:
        prefect = f"starting the shared Prefect server at {server.url} (it stops after {server.idle:g} s unused)"
    else:
        prefect = f"using the Prefect server at {server.url}"
    typer.echo(f"{prefect}" + (" and opening the MLflow store" if track else "") + " ...", err=True)


def _print_claims(paths, slug: str, results: dict, variant: str | None = None) -> None:
    """The claims the run's report stage wrote (read from reports/<slug>/claims.json, or its variant's)."""
    if f"{slug}:report" not in results:
        return
    from flows.cli_views import claims_table, last_claims

    doc = last_claims(paths, slug, variant)
    if doc and doc.get("claims"):
        typer.echo(f"claims ({doc.get('profile')} profile, {paths.report(slug, variant)}/claims.json):")
        typer.echo(claims_table(doc))


@app.command()
def metrics(paper: PaperArg, as_json: JsonOpt = False) -> None:
    """A paper's metrics (reports/<paper>/metrics.json), one key per line (`dvc metrics diff` compares revisions)."""
    from flows.cli_views import find_paper, flat_metrics

    paths = apply_env_defaults()
    values = flat_metrics(paths, find_paper(paper).slug)
    if as_json:
        typer.echo(json.dumps(values, indent=2))
        return
    width = max((len(k) for k in values), default=0)
    for key, value in values.items():
        typer.echo(f"{key.ljust(width)}  {value:.6g}" if isinstance(value, float) else f"{key.ljust(width)}  {value}")


@app.command()
def stage(
    owner: Annotated[str, typer.Argument(metavar="PAPER", help="a paper's slug, or `shared`")],
    name: Annotated[str, typer.Argument(metavar="STAGE", help="one of the paper's stages (`paperline show PAPER`)")],
    profile: ProfileOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Rerun even when up to date")] = False,
    wait: WaitOpt = False,
) -> None:
    """Run one stage (what dvc.yaml calls); reads params.yaml, no overrides."""
    from flows.cli_views import check_stages, find_paper

    paths = apply_env_defaults(writing=True)
    spec = find_paper(owner)
    check_stages(spec, [name])
    _setup_logging()
    from flows.doctor import preflight
    from flows.runtime import prefect_server

    with prefect_server.connected(paths, wait=False) as server:
        preflight(spec.slug, paths, profile=profile, stages=[name], with_upstream=False)
        server.ready()
        from flows.runtime import pipeline

        pipeline.run(owner, paths, profile=profile, stages=[name], with_upstream=False, force=force, wait=wait)


@app.command()
def report(
    paper: Annotated[
        str | None, typer.Argument(help="Only this paper (default: every paper whose outputs exist)")
    ] = None,
    index_only: Annotated[bool, typer.Option(help="Only rebuild reports/index.html")] = False,
    wait: WaitOpt = False,
) -> None:
    """Rebuild reports from stored outputs (no training is rerun), then reports/index.html."""
    paths = apply_env_defaults(writing=True)
    _setup_logging()
    if not index_only:
        from flows.cli_views import reportable
        from flows.runtime import pipeline, prefect_server

        todo, missing = reportable(paths, paper)
        for slug, why in missing.items():
            typer.echo(f"{slug}: skipped ({why})")
        if todo:
            with prefect_server.connected(paths):
                for slug in todo:
                    pipeline.run(slug, paths, stages=["report"], with_upstream=False, force=True, wait=wait)
                    typer.echo(f"{slug}: report rebuilt")
    typer.echo(str(_write_index(paths)))


@app.command()
def repro(
    paper: Annotated[str | None, typer.Argument(help="Only this paper's stages (default: every pipeline)")] = None,
    keep_server: Annotated[bool, typer.Option(help="Leave the Prefect server running afterwards")] = False,
    wait: WaitOpt = False,
) -> None:
    """The main job: `dvc repro` with one shared local Prefect server, then reports/index.html."""
    paths = apply_env_defaults(writing=True)
    _setup_logging()
    from flows.runtime.repro import reproduce

    index = reproduce(paths, paper, keep_server=keep_server, wait=wait)
    typer.echo(f"reports: {index}")


@server_app.command("start")
def server_start() -> None:
    """Start a local Prefect server on 127.0.0.1 and record it for stage processes."""
    from flows.runtime import prefect_server

    typer.echo(prefect_server.start(apply_env_defaults()))


@server_app.command("stop")
def server_stop() -> None:
    """Stop the recorded local Prefect server."""
    from flows.runtime import prefect_server

    typer.echo("stopped" if prefect_server.stop(apply_env_defaults()) else "no server recorded")


@server_app.command("status")
def server_status() -> None:
    """Print the recorded server's URL if it answers."""
    from flows.runtime import prefect_server

    typer.echo(prefect_server.running(apply_env_defaults()) or "not running")


@app.command("dvc-yaml")
def dvc_yaml(
    write: Annotated[bool, typer.Option(help="Write dvc.yaml")] = False,
    check: Annotated[bool, typer.Option(help="Fail if dvc.yaml differs from the registry")] = False,
) -> None:
    """Print (or write, or check) dvc.yaml generated from the stage registry, with its plot templates."""
    from flows.cli_views import sync_generated
    from flows.dvcgen import PLOT_TEMPLATE_DIR, plot_templates, render

    root = apply_env_defaults().root
    sync_generated(root / "dvc.yaml", render(), write=write, check=check)
    if write or check:
        templates = plot_templates()
        for name, text in templates.items():
            sync_generated(root / PLOT_TEMPLATE_DIR / name, text, write=write, check=check)
        for stale in sorted(p for p in (root / PLOT_TEMPLATE_DIR).glob("paperline-*.json") if p.name not in templates):
            if check:
                raise PaperlineError(f"{stale} is no longer used by dvc.yaml: run `paperline dvc-yaml --write`")
            stale.unlink()
            typer.echo(f"removed {stale}")


@app.command("deployments-yaml")
def deployments_yaml(
    write: Annotated[bool, typer.Option(help="Write prefect.yaml")] = False,
    check: Annotated[bool, typer.Option(help="Fail if prefect.yaml differs from the registry")] = False,
) -> None:
    """Print (or write, or check) prefect.yaml: one deployment per paper and the recurring evaluation."""
    from flows.cli_views import sync_generated
    from flows.deploy_yaml import render

    sync_generated(apply_env_defaults().root / "prefect.yaml", render(), write=write, check=check)


@app.command("verdicts")
def verdicts_cmd(
    record: Annotated[
        list[str] | None, typer.Option(help="Record this paper's default-profile claims.json (repeatable)")
    ] = None,
    write: Annotated[bool, typer.Option(help="Write the README's papers table")] = False,
    check: Annotated[bool, typer.Option(help="Fail if the README's papers table differs from the records")] = False,
) -> None:
    """Record default-profile verdicts (docs/verdicts/) and print, write or check the README's papers table."""
    from flows.cli_views import sync_generated
    from flows.verdicts import record as record_verdicts
    from flows.verdicts import render_readme

    root = apply_env_defaults().root
    for slug in record or []:
        typer.echo(f"recorded {record_verdicts(root, slug)}")
    sync_generated(root / "README.md", render_readme(root), write=write, check=check)


@app.command("new")
def new_pipeline(
    slug: Annotated[str, typer.Argument(help="The paper's slug: a planned card (see `paperline list`) or a new one")],
    title: Annotated[
        str | None, typer.Option(help="The paper's title (required for a paper that is not a planned card)")
    ] = None,
) -> None:
    """Render a working pipeline skeleton for a paper (spec, params, stages, claims, report, README, tests,
    benchmark) from the kit's templates, then regenerate dvc.yaml, params.yaml, prefect.yaml and the README's
    papers table. A paper of your own takes the next free number: `paperline new toy-median --title "..."`."""
    from flows.kit.new import regenerate, render, tidy

    root = apply_env_defaults().root
    written = render(root, slug, title)
    for path in written:
        typer.echo(f"wrote {path.relative_to(root)}")
    if not tidy(root, written):
        typer.echo("ruff is not installed (`make setup`): the rendered files are not formatted")
    regenerate(root)
    typer.echo(
        "regenerated dvc.yaml, params.yaml, prefect.yaml and the README table; "
        f"try: paperline run {slug} --profile smoke"
    )


@app.command("params")
def params_template(
    write: Annotated[bool, typer.Option(help="Write params.yaml (keeps `profile`)")] = False,
    check: Annotated[bool, typer.Option(help="Fail if params.yaml lacks or has extra keys")] = False,
) -> None:
    """Print (or write, or check) the params.yaml template: every key, null = the profile's preset."""
    from flows.cli_views import params_yaml, sync_generated

    paths = apply_env_defaults()
    sync_generated(paths.params_file, params_yaml(paths), write=write, check=check)


def _use_runner(runner: str | None) -> None:
    """Validate ``--runner`` and hand it to stage code (and worker processes) through PAPERLINE_RUNNER."""
    import os

    from flows.runtime import runners

    if runner:
        runners.parse(runner)
        os.environ[runners.ENV] = runner
    elif os.environ.get(runners.ENV):
        runners.parse(os.environ[runners.ENV])


def _write_index(paths):
    from flows.cli_views import write_index

    return write_index(paths)


def _register_extras() -> None:
    from flows import cli_tools

    cli_tools.register(app)


_register_extras()


def main() -> None:
    try:
        app()
    except PaperlineError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
