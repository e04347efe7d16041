"""Component commands usable on any data: ``scaling-fit`` and ``curate dedup|filter``.

They call components directly (no Prefect run), validate every input (and every
output path) before any work, and stage every output beside its target, renaming
them into place only once all are written, so bad input, a directory in an
output's place or a full or read-only disk leaves every previous output as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from components.errors import DataError, ParamsError

curate_app = typer.Typer(
    help="Curate a JSONL corpus: dedup or heuristic filters.", no_args_is_help=True, rich_markup_mode=None
)


def scaling_fit(
    file: Annotated[Path, typer.Argument(help="CSV with one row per trained model")],
    n_column: Annotated[str, typer.Option(help="column with parameter counts N")],
    loss_column: Annotated[str, typer.Option(help="column with the loss")],
    d_column: Annotated[str | None, typer.Option(help="column with token counts D")] = None,
    flops_column: Annotated[str | None, typer.Option(help="column with training FLOPs C (D = C / 6N)")] = None,
    exclude_top_loss: Annotated[int, typer.Option(help="drop the K highest-loss rows first")] = 0,
    bootstrap: Annotated[int, typer.Option(help="bootstrap refits for 95% CIs (0 = none; at most 1,000,000)")] = 0,
    seed: Annotated[int, typer.Option(help="bootstrap seed, 0 <= seed < 2**32")] = 0,
    allow_degenerate: Annotated[
        bool,
        typer.Option(
            "--allow-degenerate",
            help="print a degenerate fit (constant loss, one distinct N or D, a vanishing term) "
            "with its reasons and exit 0, instead of failing",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Fit L(N, D) = E + A/N^alpha + B/D^beta (Chinchilla approach 3) to a CSV.

    A degenerate fit (the data does not determine a law) is an error unless --allow-degenerate.
    """
    from components.scaling.bootstrap import MAX_RESAMPLES, bootstrap_fits, check_n_boot
    from components.scaling.chinchilla import fit_chinchilla
    from components.scaling.degenerate import degenerate_reasons
    from components.scaling.table import load_scaling_table

    if (d_column is None) == (flops_column is None):
        raise ParamsError("give exactly one of --d-column or --flops-column")
    if bootstrap < 0 or exclude_top_loss < 0:
        raise ParamsError("--bootstrap and --exclude-top-loss must be >= 0")
    if bootstrap > MAX_RESAMPLES:
        raise ParamsError(f"--bootstrap: {bootstrap} resamples is above the limit of {MAX_RESAMPLES:,}")
    if not 0 <= seed < 2**32:
        raise ParamsError(f"--seed: must be in [0, 2**32), got {seed}")
    table = load_scaling_table(
        file,
        n_column=n_column,
        loss_column=loss_column,
        d_column=d_column,
        flops_column=flops_column,
        exclude_top_loss=exclude_top_loss,
    )
    if bootstrap:
        check_n_boot(bootstrap, len(table.L), name="--bootstrap")
    fit = fit_chinchilla(table.N, table.D, table.L)
    reasons = degenerate_reasons(fit, table.N, table.D, table.L)
    if reasons and not allow_degenerate:
        raise DataError(f"{file}: degenerate fit: {'; '.join(reasons)} (pass --allow-degenerate to print it anyway)")
    out = {k: float(v) for k, v in fit.to_dict().items() if k in ("A", "B", "E", "alpha", "beta")}
    out["n_points"] = int(len(table.L))
    if reasons:
        out["degenerate"] = reasons
        typer.echo(f"warning: degenerate fit: {'; '.join(reasons)}", err=True)
    if bootstrap:
        boot = bootstrap_fits(table.N, table.D, table.L, n_boot=bootstrap, seed=seed)
        out["ci95"] = {k: [float(lo), float(hi)] for k, (lo, hi) in boot.ci(0.95).items()}
    if as_json:
        typer.echo(json.dumps(out))
    else:
        for key, value in out.items():
            typer.echo(f"{key}: {value}")


def _check_curate_paths(input: Path, **outputs: Path | None) -> None:
    """Before any work: the input is a file and every output a distinct, writable-looking file path."""
    from components.io import check_input_file, check_output_path

    check_input_file(input)
    seen: dict[str, str] = {}
    for option, path in outputs.items():
        if path is None:
            continue
        label = option if option == "OUTPUT" else f"--{option}"
        key = os.path.realpath(path)
        if key in seen:
            raise ParamsError(f"{label} {path}: the same file as {seen[key]}; give each output its own path")
        seen[key] = label
        check_output_path(path)


@curate_app.command("dedup")
def dedup(
    input: Annotated[Path, typer.Argument(help="input JSONL")],
    output: Annotated[Path, typer.Argument(help="output JSONL (one document kept per cluster)")],
    method: Annotated[str, typer.Option(help="exact | minhash")] = "minhash",
    threshold: Annotated[float, typer.Option(help="Jaccard threshold (minhash), in (0, 1]")] = 0.8,
    num_perm: Annotated[int, typer.Option(help="MinHash permutations (1..4096)")] = 112,
    shingle_size: Annotated[int, typer.Option(help="words per shingle (1..1000)")] = 5,
    text_field: Annotated[str, typer.Option(help="field holding the text")] = "text",
    clusters: Annotated[Path | None, typer.Option(help="also write the duplicate clusters (JSON)")] = None,
    seed: Annotated[int, typer.Option(help="MinHash seed, 0 <= seed < 2**32")] = 1,
) -> None:
    """Exact (normalised-text hash) or MinHash-LSH near-duplicate removal.

    Every output is written to a staging file and renamed into place only when all are complete.
    """
    from components.data.dedup import exact_dedup, minhash_dedup, write_dedup
    from components.io import read_jsonl

    if method not in ("exact", "minhash"):
        raise ParamsError(f"--method {method!r}: choose exact or minhash")
    if not text_field:
        raise ParamsError("--text-field: must not be empty")
    _check_curate_paths(input, OUTPUT=output, clusters=clusters)
    docs = read_jsonl(input, required=("id", text_field))
    if method == "exact":
        result = exact_dedup(docs, text_field=text_field)
    else:
        result = minhash_dedup(
            docs, threshold=threshold, num_perm=num_perm, shingle_size=shingle_size, text_field=text_field, seed=seed
        )
    stats = write_dedup(result, output, clusters)
    typer.echo(json.dumps(stats))


@curate_app.command("filter")
def filter_(
    input: Annotated[Path, typer.Argument(help="input JSONL")],
    output: Annotated[Path, typer.Argument(help="output JSONL (kept documents)")],
    rules: Annotated[
        str, typer.Option(help="comma-separated: gopher, gopher_quality, gopher_repetition, c4, aesthetic")
    ] = "gopher,c4",
    text_field: Annotated[str, typer.Option(help="field holding the text")] = "text",
    dropped: Annotated[Path | None, typer.Option(help="also write dropped documents with their reason")] = None,
) -> None:
    """Gopher/C4-style quality filters; every drop has a reason.

    Every output is written to a staging file and renamed into place only when all are complete.
    """
    from components.data.filters import RULE_NAMES, apply_filters, get_rules
    from components.io import atomic_paths, dump_jsonl, read_jsonl

    names = [r.strip() for r in rules.split(",") if r.strip()]
    if not names:
        raise ParamsError(f"--rules {rules!r}: no rule given; choose from {', '.join(RULE_NAMES)}")
    chosen = get_rules(names)
    if not text_field:
        raise ParamsError("--text-field: must not be empty")
    _check_curate_paths(input, OUTPUT=output, dropped=dropped)
    docs = read_jsonl(input, required=("id", text_field))
    result = apply_filters(docs, chosen, text_field=text_field)
    with atomic_paths(output, dropped) as (out_tmp, dropped_tmp):
        dump_jsonl(out_tmp, result.kept)
        if dropped_tmp is not None:
            dump_jsonl(dropped_tmp, result.dropped)
    typer.echo(json.dumps({**result.stats(), "reasons": result.counts}))


def schedule(
    paper: Annotated[str, typer.Argument(help="paper slug, or `recurring-eval` for the recurring evaluation")],
    cron: Annotated[str | None, typer.Option(help="cron schedule, e.g. '0 3 * * *' (none: run on demand only)")] = None,
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="smoke | default | full")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", "-s", help="param override KEY=VALUE (repeatable)")] = None,
    runner: Annotated[
        str | None, typer.Option(help="task runner for the fan-out (see `paperline run --runner`)")
    ] = None,
    pool: Annotated[str, typer.Option(help="Prefect work pool (created as a process pool if missing)")] = "paperline",
) -> None:
    """Create or update a paper's scheduled Prefect deployment.

    On the server PREFECT_API_URL names, else the one `paperline server start` recorded, else a temporary
    one on this checkout's Prefect database (the deployment is kept there for the next server).
    """
    from flows.runtime import prefect_server
    from flows.runtime.settings import apply_env_defaults

    paths = apply_env_defaults()
    if profile:
        from flows.runtime.params import check_profile

        check_profile(profile)
    if runner:
        from flows.runtime.runners import parse

        parse(runner)
    from flows import deployments as D

    D.plan(paper, paths.root, cron=cron, profile=profile, overrides=set_ or [], runner=runner)  # bad input: no server
    with prefect_server.connected(paths) as server:
        name = D.schedule(
            paper,
            paths.root,
            cron=cron,
            profile=profile,
            overrides=set_ or [],
            runner=runner,
            pool=pool,
            api_url=server.url,
        )
    typer.echo(f"deployment {name} on pool {pool}" + (f", cron {cron!r}" if cron else ", no schedule"))
    if server.temporary or server.idle:
        typer.echo(
            "no Prefect server with a scheduler was running: the deployment is stored in this checkout's Prefect "
            "database; start one with `paperline server start` so its schedule runs",
            err=True,
        )
    for line in D.next_steps(name, pool, server.url, lasting=not (server.temporary or server.idle)):
        typer.echo(line)


def trigger(
    deployment: Annotated[
        str, typer.Argument(help="deployment name, e.g. paperline-run/qualitypajama (or just qualitypajama)")
    ],
) -> None:
    """Run a deployment now (`prefect deployment run` on the server `paperline schedule` uses): a worker on its
    pool picks the run up."""
    from flows.runtime import prefect_server
    from flows.runtime.settings import apply_env_defaults

    paths = apply_env_defaults()
    with prefect_server.connected(paths) as server:
        from flows.deployments import trigger as run_now

        run = run_now(deployment, server.url)
    typer.echo(f"flow run {run['flow_run']} ({run['id']}) of {run['deployment']} on {server.url}")
    if server.temporary or server.idle:
        typer.echo(
            "the run waits in this checkout's Prefect database: start the full server (`paperline server start`) "
            "and a worker (`PREFECT_API_URL=$(paperline server status) prefect worker start --pool <pool>`)",
            err=True,
        )


def deployments(as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False) -> None:
    """List the deployments with their schedules (on the same server `paperline schedule` uses)."""
    from flows.runtime import prefect_server
    from flows.runtime.settings import apply_env_defaults

    with prefect_server.connected(apply_env_defaults()) as server:
        from flows.deployments import list_deployments

        rows = list_deployments(server.url)
    if as_json:
        typer.echo(json.dumps(rows, default=str))
        return
    if not rows:
        typer.echo("no deployments")
    for row in rows:
        state = " (paused)" if row["paused"] else ""
        typer.echo(f"{row['name']}  pool={row['pool']}  schedules={', '.join(row['schedules']) or '-'}{state}")
    if rows:
        typer.echo("run one now: paperline trigger '<name>'")


def promote(
    paper: Annotated[str, typer.Argument(help="paper slug")],
    run_id: Annotated[str | None, typer.Option("--run-id", help="this run, not the latest completed one")] = None,
) -> None:
    """Move @champion to the latest completed run's champion (a smoke run never promotes itself) and accept its
    verdicts: what a passing run at the default or full profile does on its own; the recurring evaluation then
    re-evaluates it."""
    from flows.registry import get_paper
    from flows.runtime.promote import promote as promote_run
    from flows.runtime.settings import apply_env_defaults

    apply_env_defaults()
    slug = get_paper(paper).slug
    versions = promote_run(slug, run_id)
    for model, version in versions.items():
        typer.echo(f"{model}: version {version} is @champion")


def register(app: typer.Typer) -> None:
    app.command("scaling-fit")(scaling_fit)
    app.command("schedule")(schedule)
    app.command("deployments")(deployments)
    app.command("trigger")(trigger)
    app.command("promote")(promote)
    app.add_typer(curate_app, name="curate")
