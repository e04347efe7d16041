"""What the listing commands print, and the generated files they keep in sync (cheap imports only)."""

from __future__ import annotations

import importlib
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
import yaml

from components.errors import PaperlineError, ParamsError
from flows.registry import SHARED, get_paper, paper_slugs, papers
from flows.runtime.params import PROFILES, deep_merge, load_params_file, null_template
from flows.runtime.params_template import MapTemplate, drop_unset_entries
from flows.runtime.settings import Paths


def report_problem(paths: Paths, slug: str) -> str | None:
    """Why the paper's report folder must not be shown (a publish into it was interrupted), or None."""
    from flows.runtime.publish import IncompleteOutputs, check_published

    try:
        check_published(paths, f"reports/{slug}")
    except IncompleteOutputs as exc:
        return str(exc)
    return None


def last_claims(paths: Paths, slug: str, variant: str | None = None) -> dict[str, Any] | None:
    """The paper's last claims.json (or its ``variant``'s), or None (missing, unreadable, or from an interrupted
    publish)."""
    if report_problem(paths, slug):
        return None
    path = paths.report(slug, variant) / "claims.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _verdicts(doc: dict[str, Any] | None) -> str:
    if not doc:
        return "-"
    from components.evaluation.explain import verdict_text  # labels: weak, one trained model, not testable

    return ", ".join(f"{c.get('id')}: {verdict_text(c)}" for c in doc.get("claims", [])) or "-"


def close_matches(name: str, choices: list[str]) -> str:
    """`` did you mean 'x'?`` (with a leading '; ') for a misspelt name, or ''."""
    from components.errors import closest

    found = closest(name, choices)
    return f"; did you mean {found!r}?" if found else ""


def find_paper(slug: str):
    """The paper ``slug`` names; a misspelt one fails with one line suggesting the closest slug."""
    return get_paper(slug)  # a misspelt slug fails with one line suggesting the closest


def check_stages(spec, names: list[str] | None) -> None:
    """Every name is one of the paper's stages; a misspelt one fails suggesting the closest stage."""
    if names:
        spec.require()
    stages = [s.name for s in spec.stages]
    for name in names or ():
        if name not in stages:
            raise ParamsError(
                f"{spec.slug}: unknown stage {name!r}{close_matches(name, stages)} (stages: {', '.join(stages)})"
            )


def _num(x: Any) -> str:
    return f"{x:+.4g}" if isinstance(x, (int, float)) and not isinstance(x, bool) else "-"


def _one_line(text: Any, width: int = 90) -> str:
    line = " ".join(str(text or "").split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def claims_table(doc: dict[str, Any]) -> str:
    """The claims of a claims.json as an aligned table: id, verdict, effect, CI, reason (one line)."""
    rows = [("id", "verdict", "effect", "CI", "reason")]
    for c in doc.get("claims", []):
        ci = (
            "-"
            if c.get("ci_low") is None and c.get("ci_high") is None
            else f"[{_num(c.get('ci_low'))}, {_num(c.get('ci_high'))}]"
        )
        rows.append((str(c.get("id")), str(c.get("verdict")), _num(c.get("effect")), ci, _one_line(c.get("reason"))))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4] for r in rows)


def flat_metrics(paths: Paths, slug: str) -> dict[str, Any]:
    """A paper's reports/<slug>/metrics.json as ``{"a.b.c": value}`` (what ``paperline metrics`` prints).

    ``dvc metrics show`` puts every key in a column of one row per file, thousands of characters wide for one
    paper; one key per line reads better, and ``dvc metrics diff`` stays the way to compare revisions."""
    path = paths.report(slug) / "metrics.json"
    if report_problem(paths, slug) or not path.is_file():
        raise PaperlineError(f"{path}: no metrics yet; run `paperline run {slug}` first")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise PaperlineError(f"{path}: not valid JSON ({exc})") from None

    def walk(node: Any, prefix: str) -> Iterator[tuple[str, Any]]:
        if isinstance(node, dict):
            for key, value in node.items():
                yield from walk(value, f"{prefix}{key}.")
        else:
            yield prefix[:-1], node

    return dict(walk(doc, ""))


def _made(doc: dict[str, Any] | None, source: str | None = None) -> str:
    """Which run the verdicts come from: ``default, 2026-12-01 17:02`` (profile and date; ``recorded default,
    ...`` for the recorded verdicts in docs/verdicts/), or ''."""
    if not doc:
        return ""
    date = str((doc.get("provenance") or {}).get("date") or "")[:16]
    profile = str(doc.get("profile") or "?")
    return ", ".join(x for x in (f"recorded {profile}" if source == "recorded" else profile, date) if x)


def shown_claims(paths: Paths, slug: str) -> tuple[dict[str, Any] | None, str | None]:
    """The claims ``paperline list`` shows and where they come from: the last run's (``"run"``), else the
    recorded default-profile verdicts of docs/verdicts/ (``"recorded"``), else ``(None, None)``. An interrupted
    publish shows nothing (the listing says to rerun)."""
    if report_problem(paths, slug):
        return None, None
    doc = last_claims(paths, slug)
    if doc is not None:
        return doc, "run"
    from flows.verdicts import recorded

    doc = recorded(paths.root, slug, validate=False)  # committed and checked by a test; keep `list` cheap
    return (doc, "recorded") if doc is not None else (None, None)


def list_rows(paths: Paths) -> list[dict[str, Any]]:
    """What ``paperline list --json`` prints: one object per paper."""
    rows = []
    for slug in paper_slugs():
        spec = get_paper(slug)
        problem = report_problem(paths, slug)
        doc, source = shown_claims(paths, slug)
        rows.append(
            {
                "number": spec.number,
                "slug": slug,
                "title": spec.title,
                "implemented": spec.implemented,
                "status": spec.status,
                "error": spec.error,
                "stages": [s.name for s in spec.stages],
                "last_verdicts": {c.get("id"): c.get("verdict") for c in doc.get("claims", [])} if doc else None,
                "last_profile": doc.get("profile") if doc else None,
                "last_date": (doc.get("provenance") or {}).get("date") if doc else None,
                "last_source": source,
                "report_problem": problem,
            }
        )
    return rows


def print_list(paths: Paths, *, as_json: bool = False) -> None:
    from rich.console import Console
    from rich.markup import escape as rich_escape
    from rich.table import Table

    if as_json:
        typer.echo(json.dumps(list_rows(paths), indent=2))
        return
    table = Table(title="paperline papers", show_lines=False)
    for col in ("#", "paper", "stages", "last verdicts", "from"):
        table.add_column(col, overflow="fold")
    for slug in paper_slugs():
        spec = get_paper(slug)
        if spec.broken:
            stages = f"[red]broken:[/red] {rich_escape(spec.error or '')}"
        else:
            stages = " → ".join(s.name for s in spec.stages) if spec.implemented else "(not implemented yet)"
        doc, source = shown_claims(paths, slug)
        verdicts = "(incomplete report: rerun it)" if report_problem(paths, slug) else _verdicts(doc)
        table.add_row(f"{spec.number:02d}", slug, stages, verdicts, _made(doc, source))
    Console(width=160).print(table)


def resolved_params(paths: Paths, spec, profile: str | None, overrides: list[str]) -> dict[str, Any]:
    """The validated params ``paperline run --profile P --set ...`` would use (bad keys: one-line error)."""
    from flows.runtime.params import check_profile
    from flows.runtime.pipeline import file_profile, resolve_owner_params

    chosen = check_profile(profile) if profile is not None else file_profile(paths)
    return {"profile": chosen, "params": resolve_owner_params(spec, paths, chosen, overrides).model_dump(mode="json")}


def show_doc(paths: Paths, spec, *, profile: str | None = None, overrides: list[str] | None = None) -> dict[str, Any]:
    """What ``paperline show --json`` prints."""
    doc: dict[str, Any] = {
        "number": spec.number,
        "slug": spec.slug,
        "title": spec.title,
        "card": f"shared/papers/{spec.card}" if spec.card else None,
        "implemented": spec.implemented,
        "status": spec.status,
        "error": spec.error,
    }
    if not spec.implemented:
        return doc
    doc["stages"] = [{"name": st.name, "summary": st.summary, "outs": list(st.outs + st.metrics)} for st in spec.stages]
    module = importlib.import_module(spec.params_module)
    explicit = load_params_file(paths.params_file).get(spec.slug) or {}
    doc["params"] = {p: _with_file(module, p, explicit) for p in PROFILES}
    if profile or overrides:
        doc["resolved"] = resolved_params(paths, spec, profile, list(overrides or ()))
    problem = report_problem(paths, spec.slug)
    doc["report_problem"] = problem
    doc["last_claims"] = None if problem else last_claims(paths, spec.slug)
    return doc


def _with_file(module: Any, profile: str, explicit: dict[str, Any]) -> dict[str, Any]:
    """A profile's preset with params.yaml's explicit values (as ``resolve`` merges them, before validation)."""
    preset = module.PRESETS[profile]
    return deep_merge(preset, drop_unset_entries(module.Params, explicit, preset), skip_none=True)


def print_show(
    paths: Paths, slug: str, *, as_json: bool = False, profile: str | None = None, overrides: list[str] | None = None
) -> None:
    spec = find_paper(slug)
    # validated like `paperline run` would (a bad params.yaml fails here, not after printing it)
    checked = spec.implemented and not spec.broken
    res = resolved_params(paths, spec, profile, list(overrides or ())) if checked or profile is not None else None
    if res is not None and profile is None and not overrides:
        res = None  # checked; printed only when asked for with --profile/--set
    if as_json:
        typer.echo(json.dumps(show_doc(paths, spec, profile=profile, overrides=overrides), indent=2, default=str))
        return
    typer.echo(f"{spec.number:02d} {spec.slug}: {spec.title}")
    typer.echo(f"card: shared/papers/{spec.card}" if spec.card else "card: (none: a paper of your own)")
    if spec.broken:
        typer.echo(f"pipeline: broken: {spec.error}")
        return
    if not spec.implemented:
        typer.echo("pipeline: not implemented yet")
        return
    typer.echo("stages:")
    for st in spec.stages:
        typer.echo(f"  {st.name:<10} {st.summary}")
        typer.echo(f"  {'':<10} outs: {', '.join(st.outs + st.metrics)}")
    module = importlib.import_module(spec.params_module)
    explicit = load_params_file(paths.params_file).get(spec.slug) or {}
    typer.echo("params (preset per profile; params.yaml values override):")
    for name in PROFILES:
        merged = _with_file(module, name, explicit)
        typer.echo(f"  [{name}] " + json.dumps(merged, sort_keys=False))
    if res is not None:
        how = f"profile {res['profile']}" + (f", --set {' '.join(overrides)}" if overrides else "")
        typer.echo(f"resolved params ({how}; what `paperline run` would use):")
        typer.echo(textwrap.indent(yaml.safe_dump(res["params"], sort_keys=False, width=120), "  "), nl=False)
    problem = report_problem(paths, spec.slug)
    if problem:
        typer.echo(f"last claims: not shown: {problem}")
        return
    doc = last_claims(paths, spec.slug)
    typer.echo(f"last claims ({doc.get('profile') if doc else '-'}):")
    for claim in (doc or {}).get("claims", []):
        typer.echo(f"  {claim.get('id')}: {claim.get('verdict')} — {claim.get('statement')}")


def params_yaml(paths: Paths) -> str:
    """params.yaml as generated from the params models, keeping the user's explicit values."""
    current = load_params_file(paths.params_file)
    tree: dict[str, Any] = {"profile": current.get("profile", "default")}
    for slug in [SHARED, *paper_slugs()]:
        spec = papers()[slug]
        if spec.params_module is None:
            continue
        module = importlib.import_module(spec.params_module)
        template = null_template(module.Params, list(getattr(module, "PRESETS", {}).values()))
        tree[slug] = _keep_known(template, current.get(slug) or {})
    head = (
        "# paperline params: one section per pipeline. `profile` (smoke | default | full) picks each\n"
        "# pipeline's presets; an empty value means \"the profile's preset\" (`paperline show <paper>` prints\n"
        "# them).\n"
        "# Set a value to override it, e.g. `dvc exp run -S qualitypajama.training.lr=3e-3`.\n"
        "# Regenerate the key list with `paperline params --write` (your values are kept).\n"
    )
    return head + yaml.dump(tree, Dumper=_ParamsDumper, sort_keys=False, width=120)


class _ParamsDumper(yaml.SafeDumper):
    """Writes ``None`` as an empty value (``key:``), the way DVC's ``exp run -S`` rewrites params.yaml, so that a
    ``dvc exp run`` changes only the keys it sets (with ``key: null`` it rewrote every unset key)."""


_ParamsDumper.add_representer(type(None), lambda dumper, _: dumper.represent_scalar("tag:yaml.org,2002:null", ""))
_ParamsDumper.add_representer(MapTemplate, yaml.SafeDumper.represent_dict)


def _keep_known(template: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """The template with the user's values; a map-valued param (:class:`MapTemplate`) also keeps the user's own
    entries, and a value that is not a mapping where the template has one (a whole map set) as it is."""
    out = {}
    for key, value in template.items():
        have = current.get(key) if isinstance(current, dict) else None
        if isinstance(value, dict) and have is not None and not isinstance(have, dict):
            out[key] = have
        else:
            out[key] = _keep_known(value, have or {}) if isinstance(value, dict) else have
    if isinstance(template, MapTemplate) and isinstance(current, dict):
        out.update({k: v for k, v in current.items() if k not in template})
    return out


def sync_generated(path: Path, text: str, *, write: bool, check: bool) -> None:
    """Print ``text``, or write it to ``path``, or fail if ``path`` differs from it."""
    if check:
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        if current != text:
            raise PaperlineError(f"{path.name} is out of date: run `paperline {_cmd(path)} --write`")
        typer.echo(f"{path.name} is up to date")
    elif write:
        from components.io import write_text

        write_text(path, text)
        typer.echo(f"wrote {path}")
    else:
        typer.echo(text, nl=False)


def _cmd(path: Path) -> str:
    if path.parent.name == "plots" and path.parent.parent.name == ".dvc":
        return "dvc-yaml"
    return {"dvc.yaml": "dvc-yaml", "README.md": "verdicts", "prefect.yaml": "deployments-yaml"}.get(
        path.name, "params"
    )


def write_index(paths: Paths) -> Path:
    """reports/index.html over every paper."""
    from components.io import write_text
    from components.reporting.index import load_entry, render_index

    out = paths.reports / "index.html"
    entries = []
    for i, s in enumerate(paper_slugs()):
        paper = {"slug": s, "title": get_paper(s).title, "stages": [st.name for st in get_paper(s).stages]}
        entry = load_entry(paths.reports, paper, out.parent, i)
        problem = report_problem(paths, s)
        if problem:  # an interrupted publish: a mix of two runs is never listed
            entry.status, entry.error, entry.claims, entry.report_href = "error", problem, [], None
        entries.append(entry)
    write_text(out, render_index(entries))
    return out


def reportable(paths: Paths, only: str | None = None) -> tuple[list[str], dict[str, str]]:
    """Papers whose report stage can be rebuilt from stored outputs, and why the others cannot.

    A report stage can run when every data path it reads exists; nothing upstream is rerun.
    """
    from flows.registry import SHARED, get_paper, papers

    slugs = [get_paper(only).slug] if only else [s for s, spec in papers().items() if spec.implemented and s != SHARED]
    todo, missing = [], {}
    for slug in slugs:
        stage = get_paper(slug).stage("report")
        absent = [d for d in stage.deps if d.startswith("data/") and not (paths.root / d).exists()]
        if absent:
            missing[slug] = f"not run yet: {absent[0]} is missing"
        else:
            todo.append(slug)
    return todo, missing
