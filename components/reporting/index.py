"""``reports/index.html``: every paper's claims and verdicts on one offline page.

The index reads each paper's ``reports/<slug>/claims.json``. A paper that has
not run yet is listed as such; a paper whose claims.json is unreadable gets an
error row naming the file, and the rest of the index still renders, so one
broken run never hides the others.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from components.errors import DataError, ParamsError
from components.io import write_text
from components.reporting import html as H
from components.reporting.claims_doc import VERDICTS, load_claims_doc, summarize

log = logging.getLogger(__name__)

NOT_RUN = "not run yet"


@dataclass
class PaperEntry:
    """What the index knows about one paper after reading its claims.json."""

    slug: str
    title: str
    stages: list[str]
    status: str  # "ok", NOT_RUN or "error"
    profile: str = ""
    claims: list[dict] = field(default_factory=list)
    error: str = ""
    report_href: str | None = None

    @property
    def counts(self) -> dict[str, int]:
        return summarize(self.claims)


def _check_paper(i: int, paper: Mapping) -> tuple[str, str, list[str]]:
    if not isinstance(paper, Mapping) or not paper.get("slug"):
        raise ParamsError(f"papers[{i}]: each paper needs a 'slug'")
    stages = paper.get("stages") or []
    return str(paper["slug"]), str(paper.get("title") or paper["slug"]), [str(s) for s in stages]


def load_entry(reports_dir: Path, paper: Mapping, index_dir: Path, i: int = 0) -> PaperEntry:
    """Read one paper's claims.json into an entry; never raises for a bad file."""
    slug, title, stages = _check_paper(i, paper)
    entry = PaperEntry(slug, title, stages, status=NOT_RUN)
    claims_path = reports_dir / slug / "claims.json"
    report = reports_dir / slug / "report.html"
    if report.is_file():
        entry.report_href = Path(os.path.relpath(report, index_dir)).as_posix()
    if not claims_path.exists():
        return entry
    try:
        doc, entry.claims = load_claims_doc(claims_path)
    except DataError as exc:
        log.warning("index: %s", exc)
        entry.status, entry.error = "error", str(exc)
        return entry
    entry.status, entry.profile = "ok", str(doc.get("profile") or "n/a")
    return entry


def _paper_cell(e: PaperEntry) -> str:
    name = f'<a href="#{H.esc(e.slug)}">{H.esc(e.title)}</a>' if e.status == "ok" else H.esc(e.title)
    stages = f'<span class="note">stages: {H.esc(" → ".join(e.stages))}</span>' if e.stages else ""
    return f'{name}<span class="note"><code>{H.esc(e.slug)}</code></span>{stages}'


def _status_cell(e: PaperEntry) -> str:
    if e.status == NOT_RUN:
        return H.badge("not run", NOT_RUN)
    if e.status == "error":
        return H.badge("error", "unreadable claims.json") + f'<span class="note error">{H.esc(e.error)}</span>'
    return " ".join(H.badge(v, f"{n} {v}") for v, n in e.counts.items())


def _report_cell(e: PaperEntry) -> str:
    if e.report_href:
        return f'<a href="{H.esc(e.report_href)}">report</a>'
    return '<span class="small">no report yet</span>'


def _overview(entries: Sequence[PaperEntry]) -> str:
    rows = [
        {
            "paper": _paper_cell(e),
            "profile": H.esc(e.profile or "–"),
            "verdicts": _status_cell(e),
            "report": _report_cell(e),
        }
        for e in entries
    ]
    headers = {"paper": "Paper", "profile": "Profile", "verdicts": "Verdicts", "report": "Report"}
    return H.table_html(rows, list(headers), headers=headers, raw=list(headers), cls="overview")


def _paper_section(e: PaperEntry) -> str:
    link = f' · <a href="{H.esc(e.report_href)}">full report</a>' if e.report_href else ""
    head = (
        f'<section class="paper" id="{H.esc(e.slug)}"><h2>{H.esc(e.title)}</h2>'
        f'<div class="meta">paper <code>{H.esc(e.slug)}</code> · profile <code>{H.esc(e.profile)}</code>'
        f"{link}</div>"
    )
    table = H.claims_table_html(e.claims, show_rule=False) if e.claims else "<p><em>No claims recorded.</em></p>"
    return head + H.summary_badges(e.counts) + table + "</section>"


def render_index(entries: Sequence[PaperEntry], title: str = "paperline — reproduction index") -> str:
    """The index page for already-loaded entries."""
    totals = {v: 0 for v in VERDICTS}
    for e in entries:
        for v, n in e.counts.items():
            totals[v] += n
    n_run = sum(e.status == "ok" for e in entries)
    n_err = sum(e.status == "error" for e in entries)
    meta = f"{len(entries)} papers · {n_run} with results · {len(entries) - n_run - n_err} {NOT_RUN}" + (
        f" · {n_err} unreadable" if n_err else ""
    )
    body = [
        f"<h1>{H.esc(title)}</h1>",
        f'<div class="meta">{H.esc(meta)}</div>',
        "<p>Each claim from a paper card is tested at the run's profile (a small, offline scale by default); "
        "its verdict is decided from that run's data by the rule in the card. "
        "<em>Inconclusive</em> means the interval was too wide to decide.</p>",
        H.summary_badges(totals),
        "<h2>Papers</h2>",
        _overview(entries) if entries else "<p><em>No papers registered.</em></p>",
    ]
    body += [_paper_section(e) for e in entries if e.status == "ok"]
    return H.page(title, "\n".join(body), footer="Generated by paperline from each paper's claims.json.")


def write_index(
    reports_dir: str | os.PathLike,
    papers: Sequence[Mapping],
    *,
    out_path: str | os.PathLike | None = None,
) -> Path:
    """Write the cross-paper index (default ``<reports_dir>/index.html``) atomically.

    ``papers`` lists dicts with ``slug``, ``title`` and ``stages``, in display order.
    """
    reports_dir = Path(reports_dir)
    out = Path(out_path) if out_path is not None else reports_dir / "index.html"
    entries = [load_entry(reports_dir, p, out.parent, i) for i, p in enumerate(papers)]
    write_text(out, render_index(entries))
    log.info("wrote index of %d papers to %s", len(entries), out)
    return out
