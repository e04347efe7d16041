"""The README's papers table, generated from recorded default-profile claims (like dvc.yaml from the specs).

Reports are DVC outputs, not in git, so the verdicts a README may quote are
recorded: ``paperline verdicts --record <paper>`` copies a default-profile
``reports/<slug>/claims.json`` (validated: every verdict re-derived from its
numbers) to ``docs/verdicts/<slug>.json``. The table between the README's
markers is rendered from those files; ``--check`` (and a test) fails when the
committed README differs, so nobody types a verdict by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

from components.errors import DataError, PaperlineError
from components.io import read_json, write_json
from flows.registry import SHARED, papers

START, END = "<!-- papers-table:start -->", "<!-- papers-table:end -->"
RECORDED_PROFILE = "default"


def validate_claims_document(doc: dict, where: str) -> dict:
    """components.evaluation.claims' check, imported when used: it pulls numpy and scipy, which a listing skips."""
    from components.evaluation.claims import validate_claims_document as validate

    return validate(doc, where)


def record_path(root: Path, slug: str) -> Path:
    return root / "docs" / "verdicts" / f"{slug}.json"


def record(root: Path, slug: str) -> Path:
    """Copy ``reports/<slug>/claims.json`` (a default-profile run) into ``docs/verdicts/``; return the path."""
    src = root / "reports" / slug / "claims.json"
    if not src.is_file():
        raise DataError(f"{src}: no claims.json; run `paperline run {slug} --profile default` first")
    doc = validate_claims_document(read_json(src), str(src))
    if doc["profile"] != RECORDED_PROFILE:
        raise DataError(f"{src}: profile {doc['profile']!r}; only {RECORDED_PROFILE}-profile verdicts are recorded")
    _check_params(root, slug, doc, src)
    dest = record_path(root, slug)
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_json(dest, doc)
    return dest


def _check_params(root: Path, slug: str, doc: dict, src: Path) -> None:
    """The run used params.yaml's own default-profile params: a run with ``--set`` overrides (a reduced run, say)
    is not the default profile's verdict, even though its claims.json says ``profile: default``."""
    want = (doc.get("provenance") or {}).get("params_hash")
    if want is None:  # a claims.json from before reports carried the hash
        return
    from flows.registry import get_paper
    from flows.runtime.pipeline import resolve_owner_params
    from flows.runtime.report_stage import params_hash
    from flows.runtime.settings import Paths

    if params_hash(resolve_owner_params(get_paper(slug), Paths(root), RECORDED_PROFILE, ())) != want:
        raise DataError(
            f"{src}: made with params other than params.yaml's {RECORDED_PROFILE} profile (a --set "
            f"override?); rerun `paperline run {slug} --profile {RECORDED_PROFILE}` to record it"
        )


def recorded(root: Path, slug: str, *, validate: bool = True) -> dict | None:
    """The paper's recorded default-profile claims (``docs/verdicts/<slug>.json``), or None (none, or unreadable).
    ``validate=False`` skips re-deriving each verdict (numpy and scipy), for cheap listings."""
    path = record_path(root, slug)
    try:
        doc = read_json(path) if path.is_file() else None
        if doc is None or not validate:
            return doc if isinstance(doc, dict) and isinstance(doc.get("claims"), list) else None
        return validate_claims_document(doc, str(path))
    except (PaperlineError, OSError, ValueError):
        return None


def _cell(text: object) -> str:
    return " ".join(str(text if text is not None else "").split()).replace("|", "\\|")


def results_page(root: Path) -> str:
    """The docs site's "Recorded results" page: every implemented paper's recorded default-profile claims (what a
    fresh clone can show before anything runs; the full reports are DVC outputs in the remote)."""
    from components.evaluation.explain import verdict_text

    def num(x: object) -> str:
        return f"{x:+.4g}" if isinstance(x, int | float) and not isinstance(x, bool) else "—"

    out = [
        "# Recorded results",
        "",
        "The default-profile verdicts recorded in `docs/verdicts/` (`paperline verdicts --record <paper>` after a "
        "default run), one table per paper: the claim, its verdict, the effect with its confidence interval, the "
        "seeds and the reason. Run `paperline run <paper>` to make them again; `paperline list` shows them as "
        "*recorded* until a run of yours replaces them.",
        "",
    ]
    for slug, spec in papers().items():
        if slug == SHARED or not spec.implemented:
            continue
        out.append(f"## {spec.number:02d} {spec.title} (`{slug}`)")
        out.append("")
        doc = recorded(root, slug)
        if doc is None:
            out += ["Not recorded yet under the current rules.", ""]
            continue
        out += [f"Default profile, recorded {_when(doc)}: {summary(doc)}.", ""]
        out += ["| claim | statement | verdict | effect | CI | seeds | reason |", "|---|---|---|---|---|---|---|"]
        for c in doc["claims"]:
            effect = num(c.get("effect"))
            ci = "—" if c.get("ci_low") is None else f"[{num(c.get('ci_low'))}, {num(c.get('ci_high'))}]"
            cells = (c["id"], c.get("statement"), verdict_text(c), effect, ci, c.get("n_seeds"), c.get("reason"))
            out.append("| " + " | ".join(_cell(x) for x in cells) + " |")
        out.append("")
    return "\n".join(out)


def summary(doc: dict) -> str:
    """``C2, C3 reproduced; C1 not reproduced; C4 inconclusive`` (verdicts in a fixed order)."""
    from components.evaluation.explain import labels, not_testable

    def tagged(c: dict) -> str:  # C1 (weak), C3 (not testable here)
        tags = ["not testable here"] if not_testable(c) else labels(c)
        return f"{c['id']} ({', '.join(tags)})" if tags else c["id"]

    groups = []
    for verdict in ("reproduced", "not reproduced", "inconclusive"):
        ids = [tagged(c) for c in doc["claims"] if c["verdict"] == verdict]
        if ids:
            groups.append(f"{', '.join(ids)} {verdict}")
    return "; ".join(groups) or "no claims"


def _when(doc: dict) -> str:
    prov = doc.get("provenance") or {}
    commit = str(prov.get("git_commit") or "?")[:7]
    return f"{str(prov.get('date') or '?')[:10]}, {commit}"


def table(root: Path) -> str:
    """The Markdown papers table: one row per implemented pipeline, then the others."""
    rows = ["| # | paper | pipeline | default-profile verdicts | recorded |", "|---|---|---|---|---|"]
    for slug, spec in papers().items():
        if slug == SHARED or not spec.implemented:
            continue
        package = slug.replace("-", "_")
        path = record_path(root, slug)
        if path.is_file():
            doc = validate_claims_document(read_json(path), str(path))
            verdicts, when = summary(doc), _when(doc)
        else:
            verdicts, when = "not recorded yet under the current rules", "—"
        rows.append(
            f"| {spec.number:02d} | {spec.title} | [flows/{package}](flows/{package}/README.md) | {verdicts} | {when} |"
        )
    rows.append("| others | the other cards in `../shared/papers/` | not implemented yet (`paperline list`) | | |")
    return "\n".join(rows) + "\n"


def render_readme(root: Path) -> str:
    """README.md with the table between its markers replaced by :func:`table`."""
    text = (root / "README.md").read_text(encoding="utf-8")
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise PaperlineError(f"README.md: no {START} ... {END} markers around the papers table")
    return pattern.sub(lambda _m: f"{START}\n{table(root)}{END}", text, count=1)
