"""Pipelines found under ``flows/``: each package with a ``spec.py`` declares its paper and its DVC stages.

A pipeline's ``flows/<package>/spec.py`` holds plain data: ``PAPER`` (a :class:`flows.specs.Paper`: number,
slug, title, card) and ``STAGES`` (what each stage reads, which params it uses, what it writes). Nothing
lists the pipelines by hand: a new package with a ``spec.py`` is a new paper (``paperline new`` writes one).
This is the single source for ``dvc.yaml`` (``paperline dvc-yaml``); each stage lists its own code as a
dependency (DVC's example-get-started habit), so ``dvc repro`` reruns exactly what a change touches.

Discovery is lazy (on first use) and cheap: spec modules import nothing heavy, so ``paperline list`` never
imports torch. A package whose ``spec.py`` fails to import, or declares no valid ``PAPER``, is kept as
*broken* with its error, so one broken pipeline never stops the commands about the others.
"""

from __future__ import annotations

import functools
import importlib
import traceback
from dataclasses import dataclass
from pathlib import Path

from flows.specs import SHARED, Paper, StageSpec

FLOWS = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Declared:
    """What one ``flows/<package>/spec.py`` declares, or why it could not be read (``error``)."""

    package: str
    paper: Paper | None = None
    stages: tuple[StageSpec, ...] = ()
    error: str | None = None


def packages(folder: Path = FLOWS) -> list[str]:
    """Packages under ``flows/`` that hold a ``spec.py`` (pipelines, and ``shared``)."""
    return sorted(
        d.name
        for d in folder.iterdir()
        if d.is_dir() and (d / "spec.py").is_file() and (d / "__init__.py").is_file() and d.name.isidentifier()
    )


def _error(exc: BaseException) -> str:
    """The exception and the line of ``spec.py`` (or what it imports) that raised it, in one line."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = next((f for f in reversed(frames) if "/flows/" in f.filename or "/components/" in f.filename), None)
    at = f" ({Path(where.filename).relative_to(FLOWS.parent)}:{where.lineno})" if where else ""
    return f"{type(exc).__name__}: {exc}{at}"


def load(package: str) -> Declared:
    """Import ``flows.<package>.spec``; any failure (a syntax error, a bad import, a wrong declaration) is kept."""
    try:
        module = importlib.import_module(f"flows.{package}.spec")
        stages = tuple(module.STAGES)
        if not all(isinstance(s, StageSpec) for s in stages):
            raise TypeError("STAGES must hold StageSpec records (Layout.stage / Layout.report_stage)")
        if package == SHARED:
            return Declared(package, None, stages)
        paper = getattr(module, "PAPER", None)
        if not isinstance(paper, Paper):
            raise TypeError("spec.py declares no PAPER = Paper(number, slug, title, card)")
        if paper.package != package:
            raise ValueError(f"PAPER slug {paper.slug!r} does not match the package flows/{package}")
        if not stages:
            raise ValueError("STAGES is empty")
        return Declared(package, paper, stages)
    except Exception as exc:
        return Declared(package, None, (), _error(exc))


@functools.cache
def discover() -> dict[str, Declared]:
    """Every package's declaration, by package name (read once per process)."""
    return {package: load(package) for package in packages()}
