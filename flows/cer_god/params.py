"""Params of the cer-god pipeline (section ``cer-god`` of params.yaml) and its profiles."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from components.graph.cergod import CerGodConfig
from components.graph.detectors import CERGOD_VARIANTS, METHODS, NEURAL
from components.graph.inject import MAX_RATE
from components.graph.recon import TrainConfig
from components.graph.sources import PYGOD_NAMES
from flows.runtime.params import (
    ClaimsBase,
    Count,
    PaperParams,
    Section,
    Seed,
    Seeds,
    Steps,
    Width,
    check_known,
    presets,
)


class GraphParams(Section):
    name: str = Field(min_length=1, pattern=r"^[a-z0-9_-]+$", description="file stem under data/cer-god/")
    source: Literal["sbm", "minnesota", "pygod"]
    n: Count = Field(2000, ge=20, description="sbm: nodes")
    communities: Count = Field(5, ge=2, description="sbm: equal blocks")
    p_in: float = Field(0.02, gt=0, le=1, description="sbm: edge probability inside a block")
    p_out: float = Field(0.001, ge=0, le=1, description="sbm: edge probability between blocks")
    dim: int = Field(32, ge=1, le=1024, description="feature dimension (sbm, minnesota)")
    mean_scale: float = Field(1.0, gt=0, description="sbm: std of the community feature means")
    tau: float = Field(10.0, gt=0, description="minnesota: heat-kernel scale of the smooth features")
    dataset: str | None = Field(None, description="pygod: benchmark name (online only)")
    inject: bool = Field(True, description="inject outliers (false for pygod sets that come labelled)")
    injection: Literal["standard", "matched"] = Field(
        "standard",
        description="standard: PyGOD's injection plus trap outliers (leaks through degree and feature "
        "norm); matched: outliers keep their node's degree and feature norm (components/graph/inject_matched.py)",
    )

    @model_validator(mode="after")
    def _dataset(self):
        if self.source == "pygod" and self.dataset not in PYGOD_NAMES:
            raise ValueError(f"dataset: pygod source needs one of {list(PYGOD_NAMES)}, got {self.dataset!r}")
        return self


class InjectionParams(Section):
    contextual_rate: float = Field(0.03, ge=0, le=MAX_RATE)
    structural_rate: float = Field(0.03, ge=0, le=MAX_RATE)
    trap_rate: float = Field(0.02, ge=0, le=MAX_RATE)
    clique_size: Count = Field(15, ge=2, description="PyGOD's m (nodes per injected clique)")
    k: Count = Field(50, ge=2, description="PyGOD's k (candidates for the farthest feature vector)")
    trap_degree: Count = Field(20, ge=1, description="edges from each trap outlier to random normal nodes")

    @model_validator(mode="after")
    def _total(self):
        total = self.contextual_rate + self.structural_rate + self.trap_rate
        if total > MAX_RATE:
            raise ValueError(f"total injection rate {total:.3g} is above {MAX_RATE}")
        return self


class CerGodParams(Section):
    """Mirrors components.graph.cergod.CerGodConfig (checked there too)."""

    epochs: Steps = Field(200, ge=1)
    warmup: Steps = Field(50, ge=0, description="reconstruction-only epochs before k-means initialises the centres")
    lr: float = Field(5e-3, gt=0)
    mask_lr: float = Field(5e-2, gt=0, description="Adam step of the spoiler's edge logits")
    hid: Width = Field(32, ge=2)
    recon_weight: float = Field(0.5, ge=0, le=1, description="attribute share of l_r (DOMINANT's weight)")
    alpha: float = Field(1.0, ge=0, description="weight of l_c = KL(P||Q)")
    beta: float = Field(1.0, ge=0, description="weight of l_dr = -MMD^2")
    gamma: float = Field(1.0, ge=0, description="weight of l_div")
    eps: float = Field(0.02, ge=0, lt=0.5, description="diversity threshold on mean cluster usage")
    div_temperature: float = Field(
        0.1,
        gt=0,
        le=1,
        description="l_div's usage is the mean of q^(1/T) renormalised; "
        "1 = the card's soft usage, which a collapse under Student-t q cannot push below eps",
    )
    sigma: float = Field(0.0, description="Chebyshev-kernel bandwidth; <= 0 uses the median heuristic")
    mask_init: float = Field(3.0, description="initial edge logit (sigmoid(3) = 0.95)")
    mmd_max: Count = Field(256, ge=2, description="nodes sampled per cluster for the MMD")
    cluster_input: Literal["errors", "embedding", "residual"] = Field(
        "errors",
        description="what DEC clusters: the standardised per-node [attribute error, structure error] "
        "(default), the GCN embedding z (the card's literal reading) or [x - x^, structure error]",
    )
    dr_mask_only: bool = Field(True, description="l_dr's gradient reaches only the spoiler")
    collapse_share: float = Field(
        0.01, gt=0, lt=0.5, description="minority share below which a run counts as collapsed"
    )

    @model_validator(mode="after")
    def _warmup(self):
        if self.warmup >= self.epochs:
            raise ValueError(f"warmup ({self.warmup}) must be below epochs ({self.epochs})")
        return self

    def config(self, progress: bool = False) -> CerGodConfig:
        return CerGodConfig(**self.model_dump(), progress=progress)


class BaselineParams(Section):
    epochs: Steps = Field(100, ge=1)
    lr: float = Field(4e-3, gt=0)
    hid: Width = Field(64, ge=2)
    weight: float = Field(0.5, ge=0, le=1, description="attribute share of the score")

    def config(self, progress: bool = False) -> TrainConfig:
        return TrainConfig(**self.model_dump(), progress=progress)


_PYGOD_DEFAULTS = {"dominant": {}, "gae": {}, "anomalydae": {"epochs": 5}}  # PyGOD 1.1.0 defaults


class RunParams(Section):
    methods: list[str] = Field(min_length=1)
    seeds: Seeds = Field(min_length=2, description="seeds of every method (claims 1, 2, 4)")
    collapse_seeds: Seeds = Field(min_length=2, description="seeds of cer-god and cer-god-nodiv (claim 3)")
    dense_max_nodes: Count = Field(5000, ge=0, description="AnomalyDAE's dense structure term up to this size")

    @field_validator("methods")
    @classmethod
    def _methods(cls, v):
        v = check_known(v, METHODS, "method")
        need = [m for m in (*CERGOD_VARIANTS, "dominant", "gae", "leakage-probe") if m not in v]
        if need:
            raise ValueError(f"methods must include {need} (claims 1-4 and the leakage guard)")
        return v

    @field_validator("seeds", "collapse_seeds")
    @classmethod
    def _unique(cls, v):
        if len(set(v)) != len(v) or min(v) < 0:
            raise ValueError("seeds must be distinct and >= 0")
        return v


class ClaimsParams(ClaimsBase):
    delta_auc: float = Field(0.01, ge=0, description="no-practical-effect band for AUC differences (1 point)")
    delta_f1: float = Field(0.01, ge=0, description="non-inferiority margin for claim 4's F1 difference")
    fisher_alpha: float = Field(0.05, gt=0, lt=1)
    contamination: float = Field(0.1, gt=0, lt=0.5, description="baselines' threshold for claim 4 (PyGOD default)")


class Params(PaperParams):
    seed: Seed = 0
    graphs: list[GraphParams] = Field(min_length=1)
    injection: InjectionParams = Field(default_factory=InjectionParams)
    cergod: CerGodParams = Field(default_factory=CerGodParams)
    baselines: dict[str, BaselineParams] = Field(
        default_factory=lambda: {k: BaselineParams(**v) for k, v in _PYGOD_DEFAULTS.items()}
    )
    run: RunParams
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @field_validator("baselines")
    @classmethod
    def _known(cls, v):
        return check_known(list(v), NEURAL, "baseline") and v

    @model_validator(mode="after")
    def _consistent(self):
        names = [g.name for g in self.graphs]
        if len(set(names)) != len(names):
            raise ValueError(f"graphs: names must be distinct, got {names}")
        missing = [m for m in self.run.methods if m in NEURAL and m not in self.baselines]
        if missing:
            raise ValueError(f"baselines: no settings for {missing}")
        return self


_SBM = {"name": "sbm", "source": "sbm", "n": 2000, "communities": 5, "p_in": 0.02, "p_out": 0.001, "dim": 32}
_MINN = {"name": "minnesota", "source": "minnesota", "dim": 16}
# dense enough (mean degree about 21) that every clique member can shed 14 edges and keep its degree
_MATCHED = {
    "name": "sbm-matched",
    "source": "sbm",
    "n": 1000,
    "communities": 5,
    "p_in": 0.1,
    "p_out": 0.002,
    "dim": 32,
    "injection": "matched",
}
_ALL = list(METHODS)

PRESETS = presets(
    default={
        "seed": 0,
        "graphs": [_SBM, _MINN, _MATCHED],
        "baselines": _PYGOD_DEFAULTS,
        "run": {"methods": _ALL, "seeds": list(range(5)), "collapse_seeds": list(range(10))},
        "resources": {"workers": 2},
        "progress": False,
    },
    smoke={
        "graphs": [
            {"name": "sbm", "source": "sbm", "n": 500, "communities": 5, "p_in": 0.08, "p_out": 0.004, "dim": 16}
        ],
        "injection": {"clique_size": 5, "trap_degree": 10},
        "cergod": {"epochs": 50, "warmup": 15},
        "baselines": {"dominant": {"epochs": 50}, "gae": {"epochs": 50}},
        "run": {"seeds": [0, 1], "collapse_seeds": [0, 1]},
        "resources": {"workers": 1},
        "claims": {"n_resamples": 2000, "power_sims": 10, "power_resamples": 200},
    },
    full={
        "graphs": [
            _SBM,
            _MINN,
            _MATCHED,
            *(
                {"name": d, "source": "pygod", "dataset": d, "inject": False}
                for d in ("inj_cora", "inj_amazon", "inj_flickr", "weibo", "reddit", "disney", "books", "enron")
            ),
        ],
    },
)
