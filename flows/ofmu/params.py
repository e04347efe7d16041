"""Params of the ofmu pipeline (section ``ofmu`` of params.yaml) and its profiles."""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field, field_validator, model_validator

from flows.runtime.params import ClaimsBase, Count, PaperParams, Section, Seed, Seeds, Steps, Width, presets

REQUIRED_LM = ("ga", "graddiff", "npo", "ofmu", "ofmu-beta0")
REQUIRED_VISION = ("graddiff", "ofmu")


class DataParams(Section):
    source: str = Field("synthetic", description="'synthetic' (offline TOFU-style authors) or a TOFU id/path (full)")
    tofu_config: str = Field("forget10", description="TOFU forget split when source is the HF dataset")
    n_authors: int = Field(40, ge=2, le=676)
    n_attributes: int = Field(8, ge=1, le=8)
    n_templates: int = Field(2, ge=1, le=4, description="question templates per attribute")
    n_perturbed: int = Field(3, ge=1, le=9)
    forget_frac: float = Field(0.1, gt=0, lt=1, description="share of authors to forget (0.1 = forget10)")
    n_general: Count = Field(100, ge=4, description="WordNet world-knowledge questions")
    n_eval_retain: Count = Field(64, ge=2, description="retain questions evaluated")
    vocab_size: int = Field(1024, ge=300, le=65535, description="byte-level BPE trained on the QA text")
    sources_dir: str = Field(".paperline/sources")
    seed: Seed = 0


class ModelParams(Section):
    hf_model: str | None = Field(None, description="HF causal-LM id for the full profile (None: the tiny LM)")
    d_model: Width = Field(128, ge=8)
    n_layers: Width = Field(2, ge=1)
    n_heads: Width = Field(4, ge=1)
    d_ff: Width = Field(352, ge=8)
    max_seq_len: Width = Field(96, ge=16)
    train_steps: Steps = Field(400, ge=10)
    batch_size: Width = Field(32, ge=1)
    lr: float = Field(3e-3, gt=0)
    seed: Seed = 0


class MethodSpec(Section):
    kind: str = Field(description="ga | graddiff | npo | ofmu")
    options: dict[str, Any] = Field(default_factory=dict, description="fields of the method's Config")

    @model_validator(mode="after")
    def _known(self):
        from components.unlearning import make_config

        bad = [k for k, v in self.options.items() if isinstance(v, float) and not math.isfinite(v)]
        if bad:
            raise ValueError(f"options {bad}: must be finite numbers")
        make_config(self.kind, self.options)  # raises naming the unknown kind or option
        return self


def _check_budget(budget: int, methods: dict[str, MethodSpec]) -> None:
    from components.unlearning import make_config, step_cost

    for name, m in methods.items():
        cost = step_cost(m.kind, make_config(m.kind, m.options))
        if budget % cost:
            raise ValueError(f"budget {budget} is not a multiple of method {name!r}'s step cost {cost}")


class UnlearnParams(Section):
    budget: Steps = Field(gt=0, description="gradient evaluations per method (matched); multiple of every step cost")
    batch_size: Width = Field(16, ge=1, description="forget and retain examples per batch")
    seeds: Seeds = Field(min_length=1)
    methods: dict[str, MethodSpec]
    max_new: Width = Field(16, ge=1, description="greedy tokens generated for ROUGE-L")

    @model_validator(mode="after")
    def _consistent(self):
        missing = [m for m in REQUIRED_LM if m not in self.methods]
        if missing:
            raise ValueError(f"methods must include {missing} (claims 1-3)")
        _check_budget(self.budget, self.methods)
        return self


class VisionParams(Section):
    scenarios: list[str] = Field(min_length=1, description="'class-K' and/or 'random'")
    random_frac: float = Field(0.1, gt=0, lt=1)
    seeds: Seeds = Field(min_length=1)
    hidden: Width = Field(128, ge=1)
    epochs: Steps = Field(30, ge=1)
    lr: float = Field(1e-3, gt=0)
    batch_size: Width = Field(32, ge=1)
    test_frac: float = Field(0.2, gt=0, lt=1)
    budget: Steps = Field(gt=0)
    methods: dict[str, MethodSpec]

    @field_validator("scenarios")
    @classmethod
    def _scen(cls, v):
        bad = [s for s in v if not (s == "random" or (s.startswith("class-") and s[6:].isdigit() and int(s[6:]) < 10))]
        if bad:
            raise ValueError(f"unknown scenario(s) {bad}; use 'class-0'..'class-9' or 'random'")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        missing = [m for m in REQUIRED_VISION if m not in self.methods]
        if missing:
            raise ValueError(f"methods must include {missing} (claim 4)")
        _check_budget(self.budget, self.methods)
        return self


class ClaimsParams(ClaimsBase):
    delta_mu: float = Field(0.01, ge=0, description="no-effect band for MU differences (1 point)")
    fq_margin_log10: float = Field(0.5, ge=0, description="claim 1: OFMU's FQ counts as 'no lower' above 10^-margin x")
    delta_cos: float = Field(0.01, ge=0, description="claim 3: no-effect band for mean |cos|")
    delta_acc: float = Field(0.01, ge=0, description="claim 4: no-effect band for TA (1 point)")
    ua_band: float = Field(0.02, ge=0, description="claim 4: UA within +- this of Retrain's UA")
    p_hi: float = Field(0.8, gt=0, le=1, description="claim 4: share of runs that must reach the UA band")
    p_lo: float = Field(0.2, ge=0, lt=1)


class Params(PaperParams):
    data: DataParams = Field(default_factory=DataParams)
    model: ModelParams = Field(default_factory=ModelParams)
    unlearn: UnlearnParams
    vision: VisionParams
    claims: ClaimsParams = Field(default_factory=ClaimsParams)


def _ofmu(**kw) -> dict:
    base = {"beta": 1.0, "inner_steps": 3, "lr_inner": 1e-3, "lr_outer": 1e-3, "rho0": 0.01, "rho_growth": 1.1,
            "hvp_mode": "full", "penalty": "cos", "inner_on_copy": False}
    return {"kind": "ofmu", "options": {**base, **kw}}


LM_METHODS = {
    "ga": {"kind": "ga", "options": {"lr": 1e-3}},
    "graddiff": {"kind": "graddiff", "options": {"lr": 1e-3, "gamma": 1.0, "alpha": 1.0}},
    "npo": {"kind": "npo", "options": {"lr": 1e-3, "beta": 0.1, "alpha": 1.0}},
    "ofmu": _ofmu(),
    "ofmu-beta0": _ofmu(beta=0.0),
    "ofmu-cos2": _ofmu(penalty="cos2"),  # variant: penalise cos^2 (drives cos to 0, "decorrelate"); not in claims
    "wsum-0.25": {"kind": "graddiff", "options": {"lr": 1e-3, "gamma": 0.25, "alpha": 0.75}},
    "wsum-0.75": {"kind": "graddiff", "options": {"lr": 1e-3, "gamma": 0.75, "alpha": 0.25}},
}
VISION_METHODS = {k: LM_METHODS[k] for k in ("ga", "graddiff", "npo", "ofmu", "ofmu-cos2")}

PRESETS = presets(
    default={
        "unlearn": {"budget": 90, "seeds": [0, 1, 2], "methods": LM_METHODS},
        "vision": {"scenarios": ["class-3", "random"], "seeds": [0, 1, 2, 3, 4], "budget": 180,
                   "methods": VISION_METHODS},
    },
    smoke={
        "data": {"n_authors": 12, "n_attributes": 4, "n_templates": 1, "forget_frac": 0.17, "n_general": 24,
                 "n_eval_retain": 16, "vocab_size": 512},
        "model": {"d_model": 64, "n_heads": 2, "d_ff": 176, "train_steps": 120, "batch_size": 16},
        "unlearn": {"budget": 18, "batch_size": 8, "seeds": [0], "max_new": 12},
        "vision": {"scenarios": ["class-3"], "seeds": [0], "epochs": 5, "budget": 36},
        "claims": {"n_resamples": 1000},
    },
    full={
        "data": {"source": "locuslab/TOFU", "tofu_config": "forget10", "n_authors": 200, "n_templates": 4,
                 "n_general": 400, "n_eval_retain": 400},
        "model": {"hf_model": "open-unlearning/tofu_Llama-2-7b-chat-hf_full", "train_steps": 2000},
        "unlearn": {"budget": 540, "max_new": 64},
        "vision": {"seeds": list(range(10)), "budget": 900},
    },
)
