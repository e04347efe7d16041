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
from flows.specs import PLANNED, SHARED, StageSpec


@dataclass(frozen=True)
class PaperSpec:
    slug: str
    number: int
    title: str
    params_module: str | None = None  # module with ``Params`` and ``PRESETS``
    stages: tuple[StageSpec, ...] = field(default_factory=tuple)
    card: str = ""  # file under ../shared/papers/, empty for a paper without a card
    error: str | None = None  # why its pipeline could not be read (a broken ``spec.py``)

    @property
    def implemented(self) -> bool:
        return bool(self.stages) and self.error is None

    @property
    def broken(self) -> bool:
        return self.error is not None

    @property
    def status(self) -> str:
        return "broken" if self.broken else "implemented" if self.implemented else "planned"

    def require(self) -> PaperSpec:
        """This paper, if its pipeline can run; else a clear error (broken: its error; planned: how to start it)."""
        if self.broken:
            raise ParamsError(f"{self.slug}: its pipeline flows/{self.module_name}/spec.py is broken: {self.error}")
        if not self.implemented:
            raise ParamsError(f"paper {self.slug!r} has no pipeline yet (start one: `paperline new {self.slug}`)")
        return self

    @property
    def module_name(self) -> str:
        return self.slug.replace("-", "_")

    def stage(self, name: str) -> StageSpec:
        for st in self.stages:
            if st.name == name:
                return st
        self.require()
        raise ParamsError(f"{self.slug}: unknown stage {name!r}; stages: {', '.join(s.name for s in self.stages)}")


def dvc_stage_name(owner: str, stage: str) -> str:
    return stage if owner == SHARED else f"{owner}-{stage}"


def _build() -> dict[str, PaperSpec]:
    """Planned cards, then every pipeline found under ``flows/`` (its own ``PAPER`` wins), ordered by number."""
    declared = stage_specs.discover()
    found: dict[str, PaperSpec] = {p.slug: PaperSpec(p.slug, p.number, p.title, card=p.card) for p in PLANNED}
    for package, d in declared.items():
        if package == SHARED:
            continue
        if d.paper is None:  # broken: keep what the planned card (if any) says, and the error
            slug = package.replace("_", "-")
            base = found.get(slug, PaperSpec(slug, 0, f"(pipeline flows/{package} is broken)"))
            found[slug] = PaperSpec(slug, base.number, base.title, card=base.card, error=d.error)
            continue
        p = d.paper
        found[p.slug] = PaperSpec(p.slug, p.number, p.title, f"flows.{package}.params", d.stages, card=p.card)
    owners: dict[int, str] = {}
    for slug, spec in sorted(found.items(), key=lambda kv: (kv[1].broken, kv[1].number, kv[0])):
        if spec.broken or spec.number <= 0:
            continue
        if spec.number in owners:  # two papers claim one number: the second is broken, the first keeps working
            found[slug] = PaperSpec(
                slug, spec.number, spec.title, card=spec.card, error=f"number {spec.number} is {owners[spec.number]}'s"
            )
        else:
            owners[spec.number] = slug
    papers = dict(sorted(found.items(), key=lambda kv: (kv[1].number <= 0, kv[1].number, kv[0])))
    shared = declared.get(SHARED, stage_specs.Declared(SHARED, error="flows/shared/spec.py is missing"))
    papers[SHARED] = PaperSpec(
        SHARED, 0, "Shared data stages", "flows.shared.params", shared.stages, error=shared.error
    )
    return papers


_PAPERS: dict[str, PaperSpec] | None = None


def papers() -> dict[str, PaperSpec]:
    """All papers by slug (plus the ``shared`` owner of shared data stages)."""
    global _PAPERS
    if _PAPERS is None:
        _PAPERS = _build()
    return _PAPERS


def paper_slugs() -> list[str]:
    """Every paper's slug (planned, implemented and broken), in number order; ``shared`` is not a paper."""
    return [slug for slug in papers() if slug != SHARED]


def next_number() -> int:
    """The number a new paper takes: one more than the largest in use."""
    return max((spec.number for spec in papers().values()), default=0) + 1


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
