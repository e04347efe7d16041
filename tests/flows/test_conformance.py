"""Layering and conformance: what every pipeline must have, and which imports are allowed.

Imports are read from the source (module level and inside functions alike), so a
cycle hidden behind a function-level import still counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flows.registry import SHARED, papers
from tests.conftest import ROOT

FRAMEWORKS = ("prefect", "mlflow", "dvc", "flows")
CHECKLIST = "## Checklist"


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names imported anywhere in the file (``from x import y`` counts as x and x.y)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


SOURCES = {_module(p): p for pkg in ("components", "flows") for p in (ROOT / pkg).rglob("*.py")}


def _ancestor(pkg: str, module: str) -> bool:
    return module.startswith(pkg + ".")  # a submodule naming its own package (``from pkg import sibling``)


GRAPH = {m: {i for i in _imports(p) if i in SOURCES and i != m and not _ancestor(i, m)} for m, p in SOURCES.items()}


def test_components_never_import_frameworks_or_flows():
    bad = {
        m: sorted(i for i in _imports(p) if i.split(".")[0] in FRAMEWORKS)
        for m, p in SOURCES.items()
        if m.startswith("components")
    }
    assert {m: v for m, v in bad.items() if v} == {}


def test_pipelines_never_import_each_other():
    pipes = {slug.replace("-", "_") for slug, spec in papers().items() if spec.implemented and slug != SHARED}

    def pipeline_of(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if parts[0] == "flows" and len(parts) > 2 and parts[1] in pipes else None

    bad = [
        (m, d)
        for m, deps in GRAPH.items()
        if pipeline_of(m)
        for d in deps
        if pipeline_of(d) and pipeline_of(d) != pipeline_of(m)
    ]
    assert bad == []


def _cycle_from(start: str) -> list[str] | None:
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in GRAPH.get(node, ()):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


def test_no_import_cycles():
    cycles = {tuple(sorted(c[:-1])): c for m in GRAPH if (c := _cycle_from(m))}
    assert list(cycles.values()) == []


IMPLEMENTED = [slug for slug, spec in papers().items() if spec.implemented and slug != SHARED]


@pytest.mark.parametrize("slug", IMPLEMENTED)
def test_every_pipeline_has_its_parts(slug):
    package = slug.replace("-", "_")
    folder = ROOT / "flows" / package
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert CHECKLIST in readme, f"flows/{package}/README.md has no '{CHECKLIST}' section (see the template)"
    assert (folder / "claims.py").is_file(), f"flows/{package}/claims.py: the card's claims are declared there"
    assert (folder / "spec.py").is_file() and (folder / "params.py").is_file()
    smoke = ROOT / "tests" / "flows" / package / f"test_{package}_smoke.py"
    text = smoke.read_text(encoding="utf-8") if smoke.is_file() else ""
    assert f'"run", "{slug}"' in text or f'run_smoke(project, "{slug}"' in text, (
        f"{smoke.relative_to(ROOT)} must run `paperline run {slug}` (the smoke test)"
    )
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests" / "unit").rglob("*known_answer*.py"))
    assert (
        package.replace("_", "") in tests.replace("_", "").replace("-", "").lower()
        or slug.replace("-", "") in tests.replace("-", "").lower()
    ), f"no known-answer test mentions {slug}"
    bench = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "benchmarks").glob("*.py"))
    assert slug in bench or package in bench, f"no benchmark in benchmarks/ runs {slug}"


@pytest.mark.parametrize("slug", IMPLEMENTED)
def test_every_stage_is_typed_by_its_papers_params(slug):
    """``run(ctx: StageContext[Params])`` with the paper's own Params, so a type checker sees the stage's params."""
    import importlib
    import typing

    from flows.runtime.stages import StageContext

    paper = papers()[slug]
    params_model = importlib.import_module(paper.params_module).Params
    for stage in paper.stages:
        run = importlib.import_module(stage.module).run
        hint = typing.get_type_hints(run)["ctx"]
        assert typing.get_origin(hint) is StageContext and typing.get_args(hint) == (params_model,), (
            f"{stage.module}.run: annotate ctx as StageContext[Params] (got {hint})"
        )
