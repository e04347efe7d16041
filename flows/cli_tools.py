"""Component commands usable on any data: ``scaling-fit`` and ``curate dedup|filter``.

They call components directly (no Prefect run), validate every input before
writing, and write outputs atomically, so bad input leaves nothing behind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from components.errors import ParamsError

curate_app = typer.Typer(help="Curate a JSONL corpus: dedup or heuristic filters.", no_args_is_help=True)


def scaling_fit(
    file: Annotated[Path, typer.Argument(help="CSV with one row per trained model")],
    n_column: Annotated[str, typer.Option(help="column with parameter counts N")],
    loss_column: Annotated[str, typer.Option(help="column with the loss")],
    d_column: Annotated[str | None, typer.Option(help="column with token counts D")] = None,
    flops_column: Annotated[str | None, typer.Option(help="column with training FLOPs C (D = C / 6N)")] = None,
    exclude_top_loss: Annotated[int, typer.Option(help="drop the K highest-loss rows first")] = 0,
    bootstrap: Annotated[int, typer.Option(help="bootstrap refits for 95% CIs (0 = none)")] = 0,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Fit L(N, D) = E + A/N^alpha + B/D^beta (Chinchilla approach 3) to a CSV."""
    from components.scaling.bootstrap import bootstrap_fits
    from components.scaling.chinchilla import fit_chinchilla
    from components.scaling.table import load_scaling_table

    if (d_column is None) == (flops_column is None):
        raise ParamsError("give exactly one of --d-column or --flops-column")
    if bootstrap < 0 or exclude_top_loss < 0:
        raise ParamsError("--bootstrap and --exclude-top-loss must be >= 0")
    table = load_scaling_table(
        file, n_column=n_column, loss_column=loss_column, d_column=d_column,
        flops_column=flops_column, exclude_top_loss=exclude_top_loss,
    )
    fit = fit_chinchilla(table.N, table.D, table.L)
    out = {k: float(v) for k, v in fit.to_dict().items() if k in ("A", "B", "E", "alpha", "beta")}
    out["n_points"] = int(len(table.L))
    if bootstrap:
        boot = bootstrap_fits(table.N, table.D, table.L, n_boot=bootstrap, seed=seed)
        out["ci95"] = {k: [float(lo), float(hi)] for k, (lo, hi) in boot.ci(0.95).items()}
    if as_json:
        typer.echo(json.dumps(out))
    else:
        for key, value in out.items():
            typer.echo(f"{key}: {value}")


@curate_app.command("dedup")
def dedup(
    input: Annotated[Path, typer.Argument(help="input JSONL")],
    output: Annotated[Path, typer.Argument(help="output JSONL (one document kept per cluster)")],
    method: Annotated[str, typer.Option(help="exact | minhash")] = "minhash",
    threshold: Annotated[float, typer.Option(help="Jaccard threshold (minhash)")] = 0.8,
    num_perm: Annotated[int, typer.Option(help="MinHash permutations")] = 112,
    shingle_size: Annotated[int, typer.Option(help="words per shingle")] = 5,
    text_field: Annotated[str, typer.Option(help="field holding the text")] = "text",
    clusters: Annotated[Path | None, typer.Option(help="also write the duplicate clusters (JSON)")] = None,
    seed: Annotated[int, typer.Option(help="MinHash seed")] = 1,
) -> None:
    """Exact (normalised-text hash) or MinHash-LSH near-duplicate removal."""
    from components.data.dedup import exact_dedup, minhash_dedup, write_dedup
    from components.io import read_jsonl

    if method not in ("exact", "minhash"):
        raise ParamsError(f"--method {method!r}: choose exact or minhash")
    docs = read_jsonl(input, required=("id", text_field))
    if method == "exact":
        result = exact_dedup(docs, text_field=text_field)
    else:
        result = minhash_dedup(docs, threshold=threshold, num_perm=num_perm, shingle_size=shingle_size, text_field=text_field, seed=seed)
    stats = write_dedup(result, output, clusters)
    typer.echo(json.dumps(stats))


@curate_app.command("filter")
def filter_(
    input: Annotated[Path, typer.Argument(help="input JSONL")],
    output: Annotated[Path, typer.Argument(help="output JSONL (kept documents)")],
    rules: Annotated[str, typer.Option(help="comma-separated: gopher, gopher_quality, gopher_repetition, c4, aesthetic")] = "gopher,c4",
    text_field: Annotated[str, typer.Option(help="field holding the text")] = "text",
    dropped: Annotated[Path | None, typer.Option(help="also write dropped documents with their reason")] = None,
) -> None:
    """Gopher/C4-style quality filters; every drop has a reason."""
    from components.data.filters import apply_filters, get_rules
    from components.io import read_jsonl, write_jsonl

    chosen = get_rules([r.strip() for r in rules.split(",") if r.strip()])
    docs = read_jsonl(input, required=("id", text_field))
    result = apply_filters(docs, chosen, text_field=text_field)
    write_jsonl(output, result.kept)
    if dropped is not None:
        write_jsonl(dropped, result.dropped)
    typer.echo(json.dumps({**result.stats(), "reasons": result.counts}))


def schedule(
    paper: Annotated[str, typer.Argument(help="paper slug, or `recurring-eval` for the recurring evaluation")],
    cron: Annotated[str | None, typer.Option(help="cron schedule, e.g. '0 3 * * *' (none: run on demand only)")] = None,
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="smoke | default | full")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", "-s", help="param override KEY=VALUE (repeatable)")] = None,
    runner: Annotated[str | None, typer.Option(help="task runner for the fan-out (see `paperline run --runner`)")] = None,
    pool: Annotated[str, typer.Option(help="Prefect work pool (created as a process pool if missing)")] = "paperline",
) -> None:
    """Create or update a paper's scheduled Prefect deployment (needs PREFECT_API_URL or `paperline server start`)."""
    from flows.deployments import schedule as deploy
    from flows.runtime import prefect_server
    from flows.runtime.settings import apply_env_defaults

    paths = apply_env_defaults()
    if profile:
        from flows.runtime.params import check_profile

        check_profile(profile)
    if runner:
        from flows.runtime.runners import parse

        parse(runner)
    prefect_server.use_running(paths)
    name = deploy(paper, paths.root, cron=cron, profile=profile, overrides=set_ or [], runner=runner, pool=pool)
    typer.echo(f"deployment {name} on pool {pool}" + (f", cron {cron!r}" if cron else ", no schedule"))
    typer.echo(f"run it now: prefect deployment run '{name}'; a worker: prefect worker start --pool {pool}")


def deployments(as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False) -> None:
    """List the Prefect server's deployments with their schedules."""
    from flows.deployments import list_deployments
    from flows.runtime import prefect_server
    from flows.runtime.settings import apply_env_defaults

    prefect_server.use_running(apply_env_defaults())
    rows = list_deployments()
    if as_json:
        typer.echo(json.dumps(rows, default=str))
        return
    if not rows:
        typer.echo("no deployments")
    for row in rows:
        state = " (paused)" if row["paused"] else ""
        typer.echo(f"{row['name']}  pool={row['pool']}  schedules={', '.join(row['schedules']) or '-'}{state}")


def register(app: typer.Typer) -> None:
    app.command("scaling-fit")(scaling_fit)
    app.command("schedule")(schedule)
    app.command("deployments")(deployments)
    app.add_typer(curate_app, name="curate")
