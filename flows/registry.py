"""The registry of papers and their stages: plain data, cheap to import.

``paperline list`` and ``paperline show`` read this without importing Prefect,
MLflow or torch. ``dvc.yaml`` is generated from it (``paperline dvc-yaml``), and a
test checks that the committed ``dvc.yaml`` equals the generated one, so the two
can never disagree on stages, deps, params or outs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from components.errors import ParamsError
from flows import stage_specs
from flows.specs import SHARED, TITLES, StageSpec, paper_slugs


@dataclass(frozen=True)
class PaperSpec:
    slug: str
    number: int
    title: str
    params_module: str | None = None  # module with ``Params`` and ``PRESETS``
    stages: tuple[StageSpec, ...] = field(default_factory=tuple)

    @property
    def implemented(self) -> bool:
        return bool(self.stages)

    @property
    def card(self) -> str:
        return f"{self.number:02d}-{self.slug}.md"

    @property
    def module_name(self) -> str:
        return self.slug.replace("-", "_")

    def stage(self, name: str) -> StageSpec:
        for st in self.stages:
            if st.name == name:
                return st
        raise ParamsError(f"{self.slug}: unknown stage {name!r}; stages: {', '.join(s.name for s in self.stages)}")


def dvc_stage_name(owner: str, stage: str) -> str:
    return stage if owner == SHARED else f"{owner}-{stage}"


def _build() -> dict[str, PaperSpec]:
    papers = {}
    for number, (slug, title) in enumerate(TITLES, 1):
        stages = stage_specs.STAGES.get(slug, ())
        params_module = f"flows.{slug.replace('-', '_')}.params" if stages else None
        papers[slug] = PaperSpec(slug, number, title, params_module, tuple(stages))
    papers[SHARED] = PaperSpec(
        SHARED, 0, "Shared data stages", "flows.shared.params", tuple(stage_specs.STAGES[SHARED])
    )
    return papers


_PAPERS: dict[str, PaperSpec] | None = None


def papers() -> dict[str, PaperSpec]:
    """All papers by slug (plus the ``shared`` owner of shared data stages)."""
    global _PAPERS
    if _PAPERS is None:
        _PAPERS = _build()
    return _PAPERS


def get_paper(slug: str) -> PaperSpec:
    """Look a paper up by slug (underscores accepted), failing with the list of valid slugs."""
    table = papers()
    key = slug.replace("_", "-") if slug.replace("_", "-") in table else slug
    if key not in table:
        from components.errors import closest

        found = closest(slug.replace("_", "-"), paper_slugs())
        hint = f"; did you mean {found!r}?" if found else ""
        raise ParamsError(f"unknown paper {slug!r}{hint} (known papers: {', '.join(paper_slugs())})")
    return table[key]


def upstream(owner: str, stage: str) -> list[tuple[str, str]]:
    """Stages (owner, name) that must run before ``owner:stage``, in run order, itself last."""
    order: list[tuple[str, str]] = []

    def visit(o: str, s: str) -> None:
        if (o, s) in order:
            return
        for ref in get_paper(o).stage(s).after:
            ro, rs = ref.split(":") if ":" in ref else (o, ref)
            visit(ro, rs)
        order.append((o, s))

    visit(owner, stage)
    return order
