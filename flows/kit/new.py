"""``paperline new <slug>``: render a working pipeline skeleton from the kit's templates.

The skeleton is a complete pipeline on the kit (a :class:`flows.specs.Layout` spec,
``PaperParams`` with presets, declared claims and ``finish_report``): three stages
(data with Great Expectations checks, a fanned-out evaluation, the report), a toy
method in ``components/<package>/`` with its known-answer and sabotage test, a
smoke test and a benchmark. Its README starts from the pipeline template with the
checklist. After rendering, ``dvc.yaml`` and ``params.yaml`` are regenerated, so
``paperline run <slug> --profile smoke`` works at once; then replace the toy method,
data and claims with the paper's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from string import Template

from components.errors import ParamsError
from components.io import write_text
from flows.specs import PLANNED

TEMPLATES = Path(__file__).with_name("templates")


class _Template(Template):
    delimiter = "@@"  # Python and Markdown rarely contain it, unlike $ and {}


def targets(slug: str) -> dict[str, str]:
    """Template file (relative to the templates folder) -> path in the checkout."""
    pkg = slug.replace("-", "_")
    out = {
        f"pipeline/{name}.tmpl": f"flows/{pkg}/{name}"
        for name in (
            "__init__.py",
            "spec.py",
            "params.py",
            "data.py",
            "evaluate.py",
            "claims.py",
            "report.py",
            "README.md",
        )
    }
    out.update(
        {
            "component/__init__.py.tmpl": f"components/{pkg}/__init__.py",
            "component/method.py.tmpl": f"components/{pkg}/method.py",
            "tests/test_smoke.py.tmpl": f"tests/flows/{pkg}/test_{pkg}_smoke.py",
            "tests/test_known_answer.py.tmpl": f"tests/unit/{pkg}/test_{pkg}_known_answer.py",
            "benchmark.py.tmpl": f"benchmarks/{pkg}.py",
        }
    )
    return out


SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
RESERVED = {"shared", "kit", "runtime", "recurring"}  # packages under flows/ that are not papers


def _values(slug: str, title: str | None = None) -> dict[str, str]:
    """Template values: a planned card's number and title, or the next free number and ``title`` for a paper of
    your own (``--title``)."""
    from flows.registry import next_number, papers

    if not SLUG.match(slug) or slug.replace("-", "_") in RESERVED:
        raise ParamsError(
            f"new: {slug!r} is not a usable slug: lower-case words joined by '-' (e.g. toy-median), "
            f"not one of {', '.join(sorted(RESERVED))}"
        )
    known = papers().get(slug)
    if known is not None and (known.implemented or known.broken):
        raise ParamsError(
            f"new: {slug} already has files (flows/{known.module_name}); remove them or edit the pipeline"
        )
    planned = next((p for p in PLANNED if p.slug == slug), None)
    if planned is None and not (title and title.strip()):
        raise ParamsError(
            f"new: {slug!r} is not one of the planned cards ({', '.join(p.slug for p in PLANNED)}): "
            'give its title with --title "..." to start a paper of your own'
        )
    number = planned.number if planned else next_number()
    title = (title or "").strip() or planned.title
    card = planned.card if planned else ""
    return {
        "slug": slug,
        "package": slug.replace("-", "_"),
        "title": title,
        "number": str(number),
        "slug_literal": repr(slug),
        "title_literal": string_literal(title),
        "card_literal": repr(card),
        "card_ref": f"`../shared/papers/{card}`" if card else "no card (a paper of your own)",
    }


def string_literal(text: str, width: int = 72) -> str:
    """``repr(text)``, or for a long text a parenthesised run of adjacent literals of at most ``width`` characters
    each (a long title would otherwise break the style check's line limit in the rendered ``spec.py``)."""
    if len(text) <= width:
        return repr(text)
    pieces, rest = [], text
    while rest:
        cut = rest.rfind(" ", 0, width) + 1 if len(rest) > width else len(rest)
        cut = cut if cut > 0 else width  # one word longer than the width: cut inside it
        pieces.append(repr(rest[:cut]))
        rest = rest[cut:]
    return "(" + " ".join(pieces) + ")"


def render(root: Path, slug: str, title: str | None = None) -> list[Path]:
    """Write the skeleton's files under ``root``; refuses (before writing anything) if any of them exists."""
    values = _values(slug, title)
    plan = targets(slug)
    existing = [rel for rel in plan.values() if (root / rel).exists()]
    if existing or (root / f"flows/{values['package']}").exists():
        raise ParamsError(
            f"new: {slug} already has files ({', '.join(existing) or 'flows/' + values['package']}); "
            "remove them first or edit the pipeline"
        )
    written = []
    for template, rel in plan.items():
        text = _Template((TEMPLATES / template).read_text(encoding="utf-8")).substitute(values)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        written.append(write_text(root / rel, text))
    return written


def regenerate(root: Path) -> None:
    """Rewrite dvc.yaml, params.yaml, prefect.yaml and the README's papers table in a fresh process (this one
    imported the stage registry before the new package existed)."""
    env = {
        **os.environ,
        "PAPERLINE_ROOT": str(root),
        "PYTHONPATH": os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p),
    }
    for command in ("dvc-yaml", "params", "deployments-yaml", "verdicts"):
        proc = subprocess.run(
            [sys.executable, "-m", "flows.cli", command, "--write"], cwd=root, env=env, capture_output=True, text=True
        )
        if proc.returncode:
            raise ParamsError(
                f"new: `paperline {command} --write` failed: {(proc.stderr or proc.stdout).strip()[-800:]}"
            )


def tidy(root: Path, written: list[Path]) -> bool:
    """Format and lint-fix the rendered Python files with ruff (the suite's style test checks every file), when
    ruff is installed (``make setup`` installs it); True if it ran."""
    files = [str(p) for p in written if p.suffix == ".py"]
    if not files:
        return False
    # format first: it wraps a long title's literals onto lines of their own, which `check` would call too long
    for args in (["format", "--quiet", *files], ["check", "--fix", "--quiet", *files], ["format", "--quiet", *files]):
        proc = subprocess.run([sys.executable, "-m", "ruff", *args], cwd=root, capture_output=True, text=True)
        if proc.returncode and "No module named ruff" in proc.stderr:
            return False
        if proc.returncode:
            raise ParamsError(f"new: `ruff {args[0]}` on the rendered files failed: {proc.stdout.strip()[-800:]}")
    return True
