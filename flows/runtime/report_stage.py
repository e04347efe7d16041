"""What every paper's ``report`` stage does last: write the report into its declared outputs.

The claims document gets the run's provenance (git commit and dirty flag, date,
profile, params hash, wall and CPU time of each upstream stage from its marker,
the MLflow parent run id), which the report prints in its footer.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from components.errors import PaperlineError
from components.evaluation import claims as CL
from components.evaluation.claim_metrics import PREFIX as CLAIM_NUMBERS
from components.evaluation.claim_metrics import claim_numbers
from components.evaluation.claim_spec import ClaimSpec, check_results
from components.evaluation.power import power_table
from components.io import write_text
from components.reporting import Section, write_paper_report
from flows.runtime import publish as pub
from flows.runtime.gitinfo import git_state
from flows.runtime.stages import StageContext
from flows.runtime.variants import NOT_RESULTS, report_rel


def params_hash(params: Any) -> str:
    """md5 of a paper's resolved params (a pydantic model): which params produced a report."""
    return hashlib.md5(json.dumps(params.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


def provenance(ctx: StageContext) -> dict[str, Any]:
    """Where this report's numbers come from: commit, date, profile, params, stage times, MLflow run."""
    stages = {}
    for st in ctx.paper.stages:
        record = pub.read_marker(ctx.paths, ctx.slug, st.name) if st.name != ctx.stage.name else None
        if record:
            stages[st.name] = {"wall_s": record.get("run_seconds"), "cpu_s": record.get("cpu_seconds")}
    tracker = ctx.tracker
    return {
        **git_state(ctx.paths.root),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "profile": ctx.profile,
        "params_hash": params_hash(ctx.params),
        "variant": variant(ctx),
        "variant_folder": report_rel(ctx.slug, ctx.variant) if ctx.variant else None,
        "mlflow_run_id": getattr(tracker, "run_id", None),
        "stages": stages,
    }


MAX_VARIANT_KEYS = 20


def variant(ctx: StageContext) -> dict[str, dict[str, Any]]:
    """The params of this run that differ from its profile's preset (``key: {"value", "preset"}``), whatever set
    them: ``--set``, params.yaml, ``dvc exp run -S``. Empty for the profile as shipped; the report says so at
    the top. At most ``MAX_VARIANT_KEYS`` keys (the rest are counted under ``...``)."""
    import importlib

    from flows.runtime import params as P
    from flows.runtime.tracking import flatten

    module = importlib.import_module(ctx.paper.params_module)
    preset = P.resolve(module.Params, module.PRESETS, slug=ctx.slug, profile=ctx.profile)
    now, base = flatten(ctx.params.model_dump(mode="json")), flatten(preset.model_dump(mode="json"))
    keys = [k for k in now if now[k] != base.get(k) and not k.startswith(NOT_RESULTS)]
    out = {k: {"value": now[k], "preset": base.get(k)} for k in keys[:MAX_VARIANT_KEYS]}
    if len(keys) > MAX_VARIANT_KEYS:
        out["..."] = {"value": f"{len(keys) - MAX_VARIANT_KEYS} more", "preset": None}
    return out


def write_report_outputs(
    ctx: StageContext,
    *,
    claims_doc: Mapping[str, Any],
    metrics: Mapping[str, Any],
    sections: Sequence[Section],
    readme_link: str,
) -> None:
    """Render report.md/.html, claims.json, metrics.json and figures into the stage's staged outputs.

    The report writer fills one folder; each file it wrote replaces the staging path of the declared
    output with the same name, so the usual publish step renames them into place together.
    """
    staged = {rel: ctx.output(rel) for rel in (*ctx.stage.outs, *ctx.stage.metrics)}
    claims_doc = {**claims_doc, "provenance": provenance(ctx)}
    scratch = ctx.paths.reports / "report"  # reports/.tmp-report-<pid>-<random>: a killed writer's is removed below
    pub.clean_stale_staging(ctx.paths, [str(scratch.relative_to(ctx.paths.root))])
    tmp = pub.unique_name(scratch)
    tmp.mkdir(parents=True)
    try:
        written = write_paper_report(
            tmp,
            slug=ctx.slug,
            title=ctx.paper.title,
            claims_doc=claims_doc,
            metrics=metrics,
            sections=sections,
            readme_link=readme_link,
        )
        for rel, target in staged.items():
            Path(written[Path(rel).name]).replace(target)
    finally:
        pub.remove(tmp)


def write_plot_csv(ctx: StageContext, rel: str, rows: Iterable[Mapping[str, Any]], fieldnames: Sequence[str]) -> None:
    """A DVC plots CSV (declared in the stage's ``plots``) with the given columns."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(fieldnames), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_text(ctx.output(rel), buf.getvalue())


PlotRows = tuple[Iterable[Mapping[str, Any]], Sequence[str]]


def finish_report(
    ctx: StageContext,
    declared: Sequence[ClaimSpec],
    results: Sequence[CL.ClaimResult],
    *,
    metrics: Mapping[str, Any],
    sections: Sequence[Section],
    plots: Mapping[str, PlotRows] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The one ending of every report stage: check the results against the declared claims, then write
    claims.json (with provenance and any ``extra`` top-level keys), metrics.json (with each claim's verdict under
    ``claims`` and its numbers under ``claim``: effect, CI bounds, verdict code, as
    ``components.evaluation.claim_metrics`` codes them), the report with its figures, and every declared DVC plots
    CSV (``plots``: file name -> (rows, columns)).

    Returns the stage's summary ``{"claims": {id: verdict}}``.
    """
    check_results(declared, results, f"{ctx.slug}:{ctx.stage.name}")
    verdicts = {c.id: c.verdict for c in results}
    doc = CL.claims_document(ctx.slug, ctx.profile, results, extra=extra)
    plots = dict(plots or {})
    declared_plots = {Path(rel).name: rel for rel in ctx.stage.plots}
    if set(plots) != set(declared_plots):
        raise PaperlineError(
            f"{ctx.slug}:{ctx.stage.name}: plots {sorted(plots)} were computed but "
            f"{sorted(declared_plots)} are declared (spec.py)"
        )
    write_report_outputs(
        ctx,
        claims_doc=doc,
        metrics={**metrics, "claims": verdicts, CLAIM_NUMBERS: claim_numbers(doc["claims"])},
        sections=sections,
        readme_link=_up(ctx) + f"flows/{ctx.paper.module_name}/README.md",
    )
    for name, (rows, columns) in plots.items():
        write_plot_csv(ctx, declared_plots[name], rows, columns)
    return {"claims": verdicts}


def _up(ctx: StageContext) -> str:
    """``../`` from the report's folder (``reports/<paper>/`` or a variant's) back to the checkout."""
    return "../" * len(Path(report_rel(ctx.slug, ctx.variant)).parts)


def power_section(
    results: Sequence[CL.ClaimResult], n_resamples: int, *, units: str = "units", note: str = ""
) -> Section:
    """The report section "Power of the design": for each claim not reproduced (or inconclusive) that carries a
    power check, the share of simulated runs per verdict at each planted effect (``power_table``)."""
    table = power_table(results)
    text = (
        "For each claim not reproduced or inconclusive, its own rule on runs simulated from this run's data "
        f"(the observed effect removed, a planted one added, seeds then {units} redrawn), with {n_resamples} "
        "resamples each; the share of runs per verdict at each planted effect (multiples of the claim's band, "
        "on the claimed side). Low power at the paper's effect size means a verdict other than reproduced "
        "says little about the paper. With few seeds a redrawn run often repeats a seed, which narrows its CI: "
        "the shares (the one at a planted 0, the false-positive rate, included) are then upper bounds."
        + (f" {note}" if note else "")
        + ("" if table else " No claim carries a power check (every one was reproduced, or none applies).")
    )
    return Section("Power of the design", text, tables=[table] if table else [])
