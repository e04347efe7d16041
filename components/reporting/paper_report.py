"""One paper's report: ``report.md``, a self-contained ``report.html``, claims and metrics.

A pipeline's report stage builds :class:`Section` objects (text, figures,
tables) and calls :func:`write_paper_report`. The claims table comes first and
shows every verdict the same way; the HTML file embeds its CSS and figures so
it can be mailed or archived as one file.
"""

from __future__ import annotations

import html
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from components.errors import DataError, ParamsError
from components.io import atomic_path, write_json, write_text
from components.reporting import html as H
from components.reporting.claims_doc import (
    SMOKE_BANNER,
    check_claims_doc,
    claim_row,
    flatten_metrics,
    fmt_num,
    fmt_provenance,
    part_rows,
    summarize,
)
from components.reporting.plots import figure_to_png

log = logging.getLogger(__name__)

Table = pd.DataFrame | Sequence[Mapping[str, Any]]
FigureSpec = tuple[str, Figure | bytes, str]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_CLAIM_HEADERS = [
    "ID",
    "Claim",
    "Method vs baseline",
    "Paper",
    "Ours [CI]",
    "δ",
    "n",
    "Per-seed signs",
    "Verdict",
    "Reason",
]
_CLAIM_COLUMNS = ["id", "statement", "comparison", "paper", "effect", "delta", "n", "signs", "verdict", "reason"]
_PART_COLUMNS = ["id", "comparison", "effect", "delta", "n", "verdict", "reason"]
_PART_HEADERS = ["Part", "Method vs baseline", "Ours [CI]", "δ", "n", "Verdict", "Reason"]


def banners(doc: Mapping[str, Any]) -> list[str]:
    """Warnings shown above the claims: the smoke banner, a variant's params (those that differ from the profile's
    preset), then the document's flags (e.g. degenerate fits)."""
    out = [SMOKE_BANNER] if doc.get("profile") == "smoke" else []
    provenance = doc.get("provenance") or {}
    if changed := provenance.get("variant"):
        items = "; ".join(
            f"{k} = {_short(v.get('value'))} (preset {_short(v.get('preset'))})" for k, v in changed.items()
        )
        out.append(f"Variant: params that differ from the {doc.get('profile')} profile's preset: {items}")
    if folder := provenance.get("variant_folder"):
        out.append(
            f"Variant run: written to {folder}/ beside the default report, which it left unchanged "
            "(`paperline run --replace-default` writes over the default instead)"
        )
    return out + [f"Flag: {f}" for f in doc.get("flags") or []]


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class Section:
    """A titled part of a report: Markdown text, then figures (name, Figure or PNG bytes, caption), then tables."""

    title: str
    markdown: str = ""
    figures: list[FigureSpec] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)


def _table_rows(table: Table) -> tuple[list[str], list[dict[str, str]], set[str]]:
    """Columns, display-string rows and numeric columns of a DataFrame or a list of dicts."""
    if isinstance(table, pd.DataFrame):
        df = table if isinstance(table.index, pd.RangeIndex) and table.index.name is None else table.reset_index()
        records = df.to_dict(orient="records")
    else:
        records = [dict(r) for r in table]
    records = [{str(k): (v.item() if hasattr(v, "item") else v) for k, v in rec.items()} for rec in records]
    columns: list[str] = []
    for rec in records:
        columns += [k for k in rec if k not in columns]
    numeric = {c for c in columns if all(_is_number(rec.get(c)) for rec in records)}
    rows = [{k: fmt_num(v) for k, v in rec.items()} for rec in records]
    return columns, rows, numeric


def _is_number(value: object) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _md_cell(value: object) -> str:
    """Table-safe Markdown text: HTML escaped (renderers pass raw HTML through), pipes and newlines neutralised."""
    return html.escape(str(value), quote=False).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _md_table(
    columns: Sequence[str], rows: Sequence[Mapping[str, object]], headers: Sequence[str] | None = None
) -> str:
    head = "| " + " | ".join(_md_cell(h) for h in (headers or columns)) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(_md_cell(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join([head, sep, *body]) + "\n"


def _render_figures(sections: Sequence[Section]) -> dict[str, bytes]:
    """PNG bytes per figure name, checking names are safe file names and unique."""
    pngs: dict[str, bytes] = {}
    for section in sections:
        for name, fig, _caption in section.figures:
            if not _NAME.match(str(name)):
                raise ParamsError(f"section {section.title!r}: figure name {name!r} must match {_NAME.pattern}")
            if name in pngs:
                raise ParamsError(f"section {section.title!r}: figure name {name!r} is used twice")
            pngs[name] = fig if isinstance(fig, bytes) else figure_to_png(fig)
    return pngs


def _details(claim: Mapping) -> Any:
    extra = {k: claim[k] for k in ("per_seed_signs", "details") if claim.get(k) not in (None, "", [], {})}
    return extra or None


def _claims_markdown(claims: list[dict]) -> list[str]:
    out = []
    rows = []
    for c in claims:
        r = claim_row(c)
        has_ci = c.get("ci_low") is not None or c.get("ci_high") is not None
        rows.append(
            {
                **r,
                "verdict": f"**{r['verdict']}**",
                "paper": r["paper"] or "—",
                "effect": r["effect"] + (f" ({r['ci_level']})" if has_ci else ""),
                "comparison": r["comparison"] + (f" ({r['metric']})" if r["metric"] else ""),
            }
        )
    out.append(_md_table(_CLAIM_COLUMNS, rows, _CLAIM_HEADERS) if claims else "_No claims recorded._\n")
    out.append(
        "Rules:\n\n"
        + "\n".join(f"- **{_md_cell(c['id'])}**: {_md_cell(claim_row(c)['rule_text'])}" for c in claims)
        + "\n"
        if claims
        else ""
    )
    notes = [f"- **{_md_cell(c['id'])}**: {_md_cell(c['scale_note'])}" for c in claims if c.get("scale_note")]
    if notes:
        out.append("Scale notes:\n\n" + "\n".join(notes) + "\n")
    for c in claims:
        if parts := part_rows(c):
            out.append(
                f"<details><summary>{_md_cell(c['id'])}: its parts</summary>\n\n"
                + _md_table(_PART_COLUMNS, parts, _PART_HEADERS)
                + "\n</details>\n"
            )
        if (extra := _details(c)) is not None:
            out.append(
                f"<details><summary>{_md_cell(c['id'])} details</summary>\n\n```json\n"
                f"{json.dumps(extra, indent=2, default=str)}\n```\n\n</details>\n"
            )
    return out


def _markdown(
    slug: str,
    title: str,
    doc: Mapping[str, Any],
    claims: list[dict],
    metrics: Mapping,
    sections: Sequence[Section],
    readme_link: str | None,
) -> str:
    counts = summarize(claims)
    profile = str(doc.get("profile") or "n/a")
    meta = f"Paper `{slug}` · profile `{profile}`" + (f" · [pipeline README]({readme_link})" if readme_link else "")
    out = [
        f"# {_md_cell(title)}\n",
        meta + "\n",
        *[f"> **{_md_cell(b)}**\n" for b in banners(doc)],
        "**Verdicts:** " + " · ".join(f"{n} {v}" for v, n in counts.items()) + "\n",
        "## Claims\n",
    ]
    out += _claims_markdown(claims)
    for section in sections:
        out.append(f"## {_md_cell(section.title)}\n")
        if section.markdown:
            out.append(section.markdown.rstrip() + "\n")
        for name, _fig, caption in section.figures:
            alt = _md_cell(caption or name).replace("[", "(").replace("]", ")")
            out.append(f"![{alt}](figures/{name}.png)\n" + (f"\n*{_md_cell(caption)}*\n" if caption else ""))
        for table in section.tables:
            columns, rows, _numeric = _table_rows(table)
            out.append(_md_table(columns, rows))
    flat = flatten_metrics(metrics)
    if flat:
        out.append("## Metrics\n")
        out.append(_md_table(["metric", "value"], [{"metric": k, "value": fmt_num(v)} for k, v in flat.items()]))
    if prov := fmt_provenance(doc.get("provenance") or {}):
        out.append("## Provenance\n")
        out.append("\n".join(f"- {_md_cell(line)}" for line in prov) + "\n")
    return "\n".join(out)


def _html(
    slug: str,
    title: str,
    doc: Mapping[str, Any],
    claims: list[dict],
    metrics: Mapping,
    sections: Sequence[Section],
    pngs: Mapping[str, bytes],
    readme_link: str | None,
) -> str:
    readme = ""
    if readme_link and H.is_local_link(readme_link):
        readme = f' · <a href="{H.esc(readme_link)}">pipeline README</a>'
    profile = str(doc.get("profile") or "n/a")
    body = [
        f"<h1>{H.esc(title)}</h1>",
        f'<div class="meta">paper <code>{H.esc(slug)}</code> · profile <code>{H.esc(profile)}</code>{readme}</div>',
        *[H.banner(b) for b in banners(doc)],
        H.summary_badges(summarize(claims)),
        "<h2>Claims</h2>",
        H.claims_table_html(claims) if claims else "<p><em>No claims recorded.</em></p>",
    ]
    for c in claims:
        if parts := part_rows(c):
            rows = [{**r, "verdict": r["verdict"]} for r in parts]
            body.append(
                f"<details><summary>{H.esc(c['id'])}: its parts ({len(parts)})</summary>"
                + H.table_html(rows, _PART_COLUMNS, headers=dict(zip(_PART_COLUMNS, _PART_HEADERS)), cls="compact")
                + "</details>"
            )
        if (extra := _details(c)) is not None:
            body.append(
                f"<details><summary>{H.esc(c['id'])} details</summary>"
                f"<pre>{H.esc(json.dumps(extra, indent=2, default=str))}</pre></details>"
            )
    for section in sections:
        body.append(f"<h2>{H.esc(section.title)}</h2>")
        body.append(H.markdown_to_html(section.markdown))
        body += [H.figure_html(pngs[name], caption, caption or name) for name, _f, caption in section.figures]
        for table in section.tables:
            columns, rows, numeric = _table_rows(table)
            body.append(H.table_html(rows, columns, numeric=numeric, cls="compact"))
    flat = flatten_metrics(metrics)
    if flat:
        table = H.table_html(
            [{"metric": k, "value": fmt_num(v)} for k, v in flat.items()],
            ["metric", "value"],
            numeric=["value"],
            cls="compact",
        )
        body.append("<h2>Metrics</h2>")
        body.append(table if len(flat) <= 25 else f"<details><summary>{len(flat)} metrics</summary>{table}</details>")
    prov = fmt_provenance(doc.get("provenance") or {})
    footer = (
        "Generated by paperline from this run's <code>claims.json</code> and <code>metrics.json</code>; "
        "verdicts follow each claim's rule." + "".join(f"<br>{H.esc(line)}" for line in prov)
    )
    return H.page(title, "\n".join(body), footer=footer)


def write_paper_report(
    out_dir: str | os.PathLike,
    *,
    slug: str,
    title: str,
    claims_doc: Mapping[str, Any],
    metrics: Mapping[str, Any],
    sections: Sequence[Section] = (),
    readme_link: str | None = None,
) -> dict[str, Path]:
    """Write report.md (+ figures/), report.html, claims.json and metrics.json into ``out_dir``.

    Each file is written atomically. ``claims_doc`` follows the claims.json schema;
    its ``summary`` is recomputed from the verdicts so the two can never disagree.
    Returns the written paths keyed by file name (``figures`` for the folder).
    """
    out_dir = Path(out_dir)
    claims = check_claims_doc(claims_doc, f"claims of {slug}")
    if not isinstance(metrics, Mapping):
        raise DataError(f"metrics of {slug}: expected a dict, got {type(metrics).__name__}")
    counts = summarize(claims)
    if claims_doc.get("summary") and claims_doc["summary"] != counts:
        log.warning(
            "claims of %s: summary %s disagrees with the verdicts; writing %s", slug, claims_doc["summary"], counts
        )
    pngs = _render_figures(sections)
    paths = {
        "figures": out_dir / "figures",
        "report.md": out_dir / "report.md",
        "report.html": out_dir / "report.html",
        "claims.json": out_dir / "claims.json",
        "metrics.json": out_dir / "metrics.json",
    }
    with atomic_path(paths["figures"], is_dir=True) as tmp:
        tmp.chmod(0o755)  # mkdtemp makes it owner-only
        for name, png in pngs.items():
            (tmp / f"{name}.png").write_bytes(png)
    write_text(paths["report.md"], _markdown(slug, title, claims_doc, claims, metrics, sections, readme_link))
    write_text(paths["report.html"], _html(slug, title, claims_doc, claims, metrics, sections, pngs, readme_link))
    write_json(paths["claims.json"], {**claims_doc, "paper": claims_doc.get("paper", slug), "summary": counts})
    write_json(paths["metrics.json"], dict(metrics))
    log.info("wrote report for %s (%d claims, %d figures)", slug, len(claims), len(pngs))  # out_dir: staging
    return paths
