"""The registry of papers and their stages: plain data, cheap to import.

``paperline list`` and ``paperline show`` read this without importing Prefect,
MLflow or torch. ``dvc.yaml`` is generated from it (``paperline dvc-yaml``), and a
test checks that the committed ``dvc.yaml`` equals the generated one, so the two
can never disagree on stages, deps, params or outs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from components.errors import ParamsError

SHARED = "shared"  # owner of data stages that several papers reuse


@dataclass(frozen=True)
class StageSpec:
    """One DVC stage = one Prefect (sub)flow run of a paper's flow, restricted to this stage."""

    name: str
    module: str  # module holding ``run(ctx)``
    deps: tuple[str, ...]  # code and data paths (files or folders)
    params: tuple[str, ...]  # params.yaml keys (dotted)
    outs: tuple[str, ...]
    metrics: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()
    # DVC plot properties per plots CSV file name, e.g. {"curve.csv": {"x": "step", "y": "loss", "template": "linear"}}
    plot_axes: dict[str, dict[str, str]] = field(default_factory=dict)
    after: tuple[str, ...] = ()  # "owner:stage" this stage reads from (also implied by deps)
    summary: str = ""


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


_TITLES = [
    ("ofmu", "OFMU: penalty-based bi-level unlearning that puts forgetting first"),
    ("assomem", "AssoMem: associative memory graph with MI-fused relevance, importance and time"),
    ("qualitypajama", "How text-quality interventions reshape neural scaling laws"),
    ("forestpersons", "ForestPersons: an under-canopy missing-person detection benchmark"),
    ("ebt", "Energy-Based Transformers: System 2 thinking from unsupervised learning"),
    ("icql", "ICQL: in-context compositional Q-learning for offline RL"),
    ("anthrobench", "AnthroBench: multi-turn evaluation of anthropomorphic LLM behaviours"),
    ("optimistic-o2nc", "Online-to-nonconvex conversion with a doubly optimistic hint (ODOG)"),
    ("cdra", "CDRA: critique-driven reasoning alignment with a personalised generative PRM"),
    ("got-r1", "GoT-R1: RL for semantic-spatial reasoning in autoregressive image generation"),
    ("cer-god", "CER-GOD: clustering-guided edge reweighting for graph outlier detection"),
    ("milco", "MILCO: multilingual learned sparse retrieval through an English lexical pivot"),
    ("dka", "Dual-Kernel Adapter: widening the receptive field for low-data medical adaptation"),
    ("vip", "VIP: variance-informed predictive rollout allocation for group RL"),
    ("daze", "Daze: reward-free backdoors implanted through malicious simulator dynamics"),
    ("medgmae", "MedGMAE: masked autoencoding that reconstructs 3D Gaussians instead of voxels"),
    ("selfaug-decoding", "Self-Aug: query-aligned visual contrastive decoding with entropy-adaptive thresholding"),
    ("implicit-planning", '"What\'s the plan?": steering-based metrics for implicit planning in LMs'),
    ("neuraldb", "NeuralDB: edited facts stored as a gated neural key-value database"),
]


def _build() -> dict[str, PaperSpec]:
    from flows import stage_specs  # local import: the spec modules import this module's dataclasses

    papers = {}
    for number, (slug, title) in enumerate(_TITLES, 1):
        stages = stage_specs.STAGES.get(slug, ())
        params_module = f"flows.{slug.replace('-', '_')}.params" if stages else None
        papers[slug] = PaperSpec(slug, number, title, params_module, tuple(stages))
    papers[SHARED] = PaperSpec(SHARED, 0, "Shared data stages", "flows.shared.params", tuple(stage_specs.STAGES[SHARED]))
    return papers


_PAPERS: dict[str, PaperSpec] | None = None


def papers() -> dict[str, PaperSpec]:
    """All papers by slug (plus the ``shared`` owner of shared data stages)."""
    global _PAPERS
    if _PAPERS is None:
        _PAPERS = _build()
    return _PAPERS


def paper_slugs() -> list[str]:
    return [slug for slug, _ in _TITLES]


def get_paper(slug: str) -> PaperSpec:
    """Look a paper up by slug (underscores accepted), failing with the list of valid slugs."""
    table = papers()
    key = slug.replace("_", "-") if slug.replace("_", "-") in table else slug
    if key not in table:
        raise ParamsError(f"unknown paper {slug!r}; known papers: {', '.join(paper_slugs())}")
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
