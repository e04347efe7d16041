"""Stage declarations per owner, collected from each pipeline's ``flows/<package>/spec.py``.

Every pipeline declares its DVC stages (what each reads, which params it uses, what it
writes) in its own ``spec.py`` as a tuple ``STAGES``; a paper without one is listed as
not implemented. This is the single source for ``dvc.yaml`` (``paperline dvc-yaml``).
Each stage lists its own code as a dependency (DVC's example-get-started habit), so
``dvc repro`` reruns exactly what a change touches. Spec modules hold plain data only,
so ``paperline list`` stays cheap.
"""

from __future__ import annotations

import importlib
import importlib.util

from flows.specs import SHARED, StageSpec, paper_slugs


def _load(package: str) -> tuple[StageSpec, ...] | None:
    name = f"flows.{package}.spec"
    if importlib.util.find_spec(f"flows.{package}") is None or importlib.util.find_spec(name) is None:
        return None
    return tuple(importlib.import_module(name).STAGES)


def _collect() -> dict[str, tuple[StageSpec, ...]]:
    out = {SHARED: _load(SHARED) or ()}
    for slug in paper_slugs():
        stages = _load(slug.replace("-", "_"))
        if stages:
            out[slug] = stages
    return out


STAGES: dict[str, tuple[StageSpec, ...]] = _collect()
