"""Params of the got-r1 pipeline (section ``got-r1`` of params.yaml) and its profiles."""

from __future__ import annotations

from pydantic import Field, model_validator

from flows.runtime.params import (
    ClaimsBase,
    Count,
    PaperParams,
    ProjectPath,
    Section,
    Seed,
    Seeds,
    Steps,
    Width,
    presets,
)

KINDS = ("full", "pi", "ri")  # GRPO rewards: the product (GoT-R1), R_PI only, R_RI only


class DataParams(Section):
    source: str = Field("synthetic", description="'synthetic' (the 4 x 6 world) or 'geneval' (a metadata jsonl)")
    geneval_file: ProjectPath | None = Field(None, description="GenEval evaluation_metadata.jsonl (source geneval)")
    image_size: int = Field(8, ge=8, le=32, description="image side S: S x S palette tokens, coordinates 0..S-1")
    n_sft: Count = Field(3000, ge=20, description="SFT examples (planner chains, pictures rendered from them)")
    n_rl: Count = Field(400, ge=8, description="GRPO training prompts")
    n_dev: Count = Field(60, ge=6, description="dev prompts (tuning; never the test split)")
    n_test: Count = Field(240, ge=6, description="held-out test prompts (unseen colour-shape and shape-pair combos)")
    held_colour: int = Field(4, ge=1, le=4, description="colour-shape pairs held out of training")
    held_pairs: int = Field(3, ge=1, le=6, description="ordered shape pairs held out of training")
    relation_noise: float = Field(
        0.25, ge=0, lt=1, description="share of SFT position chains planned with the relation reversed"
    )
    seed: Seed = 0

    @model_validator(mode="after")
    def _check(self):
        if self.source not in ("synthetic", "geneval"):
            raise ValueError(f"source: {self.source!r} is not 'synthetic' or 'geneval'")
        if self.source == "geneval" and self.geneval_file is None:
            raise ValueError("geneval_file: source 'geneval' needs a GenEval evaluation_metadata.jsonl")
        return self


class ModelParams(Section):
    janus_id: str | None = Field(None, description="HF id of the unified AR model in the full profile (Janus-Pro)")
    d_model: Width = Field(128, ge=8)
    n_layers: Width = Field(4, ge=1)
    n_heads: Width = Field(4, ge=1)
    sft_steps: Steps = Field(600, ge=1)
    batch_size: Width = Field(32, ge=1)
    lr: float = Field(3e-3, gt=0, le=1)
    seed: Seed = 0

    @model_validator(mode="after")
    def _heads(self):
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(f"d_model {self.d_model} must split into n_heads {self.n_heads} heads of even width")
        return self


class RLParams(Section):
    seeds: Seeds = Field(min_length=1, description="GRPO seeds (each a trained policy: the claims' clusters)")
    methods: list[str] = Field(default_factory=lambda: list(KINDS), min_length=1, description="GRPO reward kinds")
    steps: Steps = Field(60, ge=1)
    prompts_per_step: Width = Field(8, ge=1)
    group: Width = Field(8, ge=2, description="G: samples (chain + image) per prompt")
    lr: float = Field(1e-4, gt=0, le=1)
    beta: float = Field(0.02, ge=0, description="KL coefficient to the frozen SFT reference")
    temperature: float = Field(1.0, gt=0, le=5)
    hps: bool = Field(False, description="multiply the full reward by the R_HPS stand-in (the paper's note)")

    @model_validator(mode="after")
    def _known(self):
        bad = sorted(set(self.methods) - set(KINDS))
        if bad:
            raise ValueError(f"methods: unknown reward kind(s) {bad}; known: {list(KINDS)}")
        missing = [k for k in KINDS if k not in self.methods]
        if missing:
            raise ValueError(f"methods must include {missing} (claims 1-4 compare full, pi and ri)")
        return self


class ClaimsParams(ClaimsBase):
    delta: float = Field(0.02, ge=0, description="no-effect band for an accuracy difference (2 points)")
    delta_iou: float = Field(0.02, ge=0, description="C4: no-effect band for the chain-image IoU difference")


class Params(PaperParams):
    data: DataParams = Field(default_factory=DataParams)
    model: ModelParams = Field(default_factory=ModelParams)
    rl: RLParams
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _fits(self):
        if self.rl.prompts_per_step > self.data.n_rl:
            raise ValueError(f"rl.prompts_per_step {self.rl.prompts_per_step} exceeds data.n_rl {self.data.n_rl}")
        return self


PRESETS = presets(
    # cut for 2 shared CPU cores: 8x8 pictures and a 64-wide 2-layer decoder (the card: 16x16, d=128, 4 layers)
    default={"model": {"d_model": 64, "n_layers": 2, "sft_steps": 1500}, "rl": {"seeds": [0, 1, 2], "lr": 3e-4}},
    smoke={
        "data": {"n_sft": 200, "n_rl": 40, "n_dev": 12, "n_test": 36},
        "model": {"d_model": 32, "n_layers": 1, "n_heads": 2, "sft_steps": 40, "batch_size": 16},
        "rl": {"seeds": [0, 1], "steps": 2, "prompts_per_step": 4, "group": 4},
        "claims": {"n_resamples": 1000, "power_sims": 10, "power_resamples": 200},
        "progress": False,
    },
    full={
        "data": {"image_size": 16, "n_test": 553},
        "model": {"janus_id": "deepseek-ai/Janus-Pro-1B"},
        "rl": {"seeds": [0, 1, 2, 3, 4], "group": 16, "steps": 1000},
    },
)
