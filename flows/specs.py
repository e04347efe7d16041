"""Plain data shared by the stage declarations and the registry: the stage record, the paper list.

A leaf module (imports nothing of paperline's), so every ``flows/<package>/spec.py``,
``flows.stage_specs`` and ``flows.registry`` can import it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


TITLES = [
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


def paper_slugs() -> list[str]:
    return [slug for slug, _ in TITLES]
