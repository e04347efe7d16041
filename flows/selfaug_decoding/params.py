"""Params of the selfaug-decoding pipeline (section ``selfaug-decoding`` of params.yaml) and its profiles."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from components.selfaug_decoding.augment import MENU
from components.selfaug_decoding.decoding import SAS_RULES
from components.selfaug_decoding.scenes import QTYPES, SHAPES
from flows.runtime.params import ClaimsBase, Count, PaperParams, Section, Seed, Seeds, Steps, presets

METHOD_NAMES = ("greedy", "vcd", "vacode", "selfaug", "sas_only", "sat_only")


class DataParams(Section):
    seed: Seed = Field(0, description="seed of the scenes and questions (the same data for every VLM seed)")
    size: int = Field(64, ge=32, le=128, description="image side in pixels (a multiple of 8)")
    n_train_scenes: Count = Field(4000, ge=20, description="training scenes (5 QA examples + a caption each)")
    n_eval_scenes: Count = Field(600, ge=20, description="held-out scenes for POPE, MME-style questions, captions")
    pope_n: Count = Field(500, ge=10, description="POPE questions per split (half yes, half no)")
    n_captions: Count = Field(300, ge=5, description="held-out scenes captioned for CHAIR")
    n_mme_scenes: Count = Field(150, ge=5, description="held-out scenes with MME-style yes/no pairs")
    n_dev_scenes: Count = Field(300, ge=10, description="dev scenes (own generator): blindness check and tuning")
    dev_pope_n: Count = Field(100, ge=4, description="dev POPE questions per split (tuning; never the test split)")
    trigger: str = Field("triangle", description="the shape whose presence biases the partner's")
    partner: str = Field("circle", description="the shape that co-occurs with the trigger")
    cooc: float = Field(0.85, ge=0, le=1, description="P(partner present | trigger present) in every scene set")
    cooc_tolerance: float = Field(0.06, gt=0, le=0.5, description="GX: allowed deviation of the measured cooc")
    radius: tuple[float, float] = Field(
        (6.0, 8.0),
        description="object half-size range in pixels (4-8 left the "
        "shapes too small for the tiny encoder to tell apart)",
    )
    texture_contrast: float = Field(0.35, ge=0, le=1, description="texture contrast of the background")

    @field_validator("trigger", "partner")
    @classmethod
    def _shape(cls, v: str) -> str:
        if v not in SHAPES:
            raise ValueError(f"unknown shape {v!r}; use one of {list(SHAPES)}")
        return v

    @model_validator(mode="after")
    def _check(self):
        if self.trigger == self.partner:
            raise ValueError("trigger and partner must be different shapes")
        if self.size % 8:
            raise ValueError(f"size {self.size} must be a multiple of 8 (the encoder's stride)")
        if not 1 <= self.radius[0] <= self.radius[1] <= self.size / 6:
            raise ValueError(f"radius {list(self.radius)} must satisfy 1 <= low <= high <= size/6")
        if self.n_captions + 0 > self.n_eval_scenes or self.n_mme_scenes > self.n_eval_scenes:
            raise ValueError("n_captions and n_mme_scenes must not exceed n_eval_scenes")

        return self


class ModelParams(Section):
    seeds: Seeds = Field(min_length=1, description="VLM seeds: each one a separately trained model (the clusters)")
    d: int = Field(96, ge=16, le=512, description="width of the visual tokens and the decoder (card: 128)")
    n_layers: int = Field(2, ge=1, le=8, description="decoder layers")
    n_heads: int = Field(4, ge=1, le=16, description="attention heads")
    steps: Steps = Field(1200, ge=1, description="training steps")
    batch: Count = Field(64, ge=1, description="examples per step")
    lr: float = Field(2e-3, gt=0, le=1, description="AdamW peak learning rate")
    encoder_norm: bool = Field(True, description="GroupNorm after each strided conv of the image encoder")
    emb_std: float = Field(0.02, gt=0, le=1, description="init std of the word embeddings (torch default: 1)")
    yesno_share: float = Field(
        0.5,
        ge=0,
        lt=1,
        description="share of each batch drawn from the yes/no questions, "
        "half yes and half no (0: uniform over all training examples)",
    )
    loss_per: Literal["token", "example"] = Field(
        "example",
        description="cross-entropy averaged per answer token, "
        "or per example first (a yes/no answer weighs as a caption)",
    )

    @model_validator(mode="after")
    def _heads(self):
        if self.d % self.n_heads:
            raise ValueError(f"d ({self.d}) must be divisible by n_heads ({self.n_heads})")
        return self


class DecodingParams(Section):
    methods: list[str] = Field(list(METHOD_NAMES), min_length=1, description="decoding methods to run")
    alpha_grid: list[float] = Field(
        [0.5, 1.0, 2.0],
        min_length=1,
        description="contrast strengths tuned on the dev split for every contrastive method (the card: 1)",
    )
    beta_grid: list[float] = Field(
        [0.05, 0.1, 0.2],
        min_length=1,
        description="fixed plausibility cut-offs tuned on dev for VCD, VACoDe, SAS-only (the card: 0.1)",
    )
    tau_grid: list[float] = Field(
        [0.25, 0.5, 1.0],
        min_length=1,
        description="SAT temperatures (beta = sigmoid(-tau H2)) tuned on dev for Self-Aug, SAT-only (the card: 0.5)",
    )
    noise_step: int = Field(500, ge=0, le=999, description="diffusion step of the noise augmentation")
    crop_ratio: float = Field(2.0, ge=1, le=8, description="random crop side = min(H, W) // crop_ratio")
    mask_ratio: float = Field(2.0, ge=1, le=8, description="random mask side = min(H, W) // mask_ratio (half)")
    max_new: int = Field(20, ge=1, le=30, description="caption length cap in tokens")
    sas_rules: dict[str, str] = Field(dict(SAS_RULES), description="SAS stand-in: question type -> augmentation")
    batch: Count = Field(250, ge=1, description="questions decoded together")

    @field_validator("alpha_grid", "beta_grid", "tau_grid")
    @classmethod
    def _grid(cls, v: list[float], info) -> list[float]:
        hi = {"alpha_grid": 10.0, "beta_grid": 1.0, "tau_grid": 10.0}[info.field_name]
        bad = [x for x in v if not (0 <= x <= hi if info.field_name == "alpha_grid" else 0 < x <= hi)]
        if bad:
            raise ValueError(f"values {bad} out of range ({'[0' if info.field_name == 'alpha_grid' else '(0'}, {hi}])")
        if len(set(v)) != len(v):
            raise ValueError(f"repeated values in {v}")
        if info.field_name != "alpha_grid" and len(v) != len(info.data.get("beta_grid", v)):
            raise ValueError("tau_grid and beta_grid must have the same length (the same tuning effort)")
        return v

    @field_validator("methods")
    @classmethod
    def _methods(cls, v: list[str]) -> list[str]:
        bad = [m for m in v if m not in METHOD_NAMES]
        if bad:
            raise ValueError(f"unknown method(s) {bad}; use {list(METHOD_NAMES)}")
        if "greedy" not in v:
            raise ValueError("greedy must be among the methods (every claim's baseline chain starts there)")
        return v

    @field_validator("sas_rules")
    @classmethod
    def _rules(cls, v: dict[str, str]) -> dict[str, str]:
        need = set(QTYPES) | {"caption"}
        if set(v) != need:
            raise ValueError(f"sas_rules must map exactly {sorted(need)} (got {sorted(v)})")
        bad = {k: a for k, a in v.items() if a not in MENU}
        if bad:
            raise ValueError(f"sas_rules: unknown augmentation(s) {bad}; use {list(MENU)}")
        return v


class PaperScaleParams(Section):
    model_id: str | None = Field(
        None,
        description="Hugging Face LLaVA id decoded with the contrastive "
        "LogitsProcessor (full profile: llava-hf/llava-1.5-7b-hf); None: the tiny VLM only",
    )
    pope_jsonl: str | None = Field(None, description="POPE questions in the official JSONL format (paper scale)")

    @field_validator("model_id")
    @classmethod
    def _id(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[\w.-]+/[\w.-]+", v):
            raise ValueError(f"{v!r} is not a Hugging Face id (owner/name)")
        return v


class ClaimsParams(ClaimsBase):
    delta: float = Field(1.0, ge=0, description="no-effect band for F1 differences, in F1 points (0-100)")
    delta_chair: float = Field(1.0, ge=0, description="C3: no-effect band of the CHAIR_i difference, in points")
    f1_margin: float = Field(1.0, ge=0, description="C3 and C4: non-inferiority margin on POPE F1, in points")
    min_false_yes: float = Field(0.05, ge=0, le=1, description="precondition: greedy's false-yes rate floor")


class Params(PaperParams):
    data: DataParams = Field(default_factory=DataParams)
    model: ModelParams
    decoding: DecodingParams = Field(default_factory=DecodingParams)
    claims: ClaimsParams = Field(default_factory=ClaimsParams)
    paper_scale: PaperScaleParams = Field(default_factory=PaperScaleParams)


PRESETS = presets(
    default={"model": {"seeds": [0]}},
    smoke={
        "data": {
            "n_train_scenes": 400,
            "n_eval_scenes": 100,
            "pope_n": 40,
            "n_captions": 10,
            "n_mme_scenes": 10,
            "n_dev_scenes": 40,
            "dev_pope_n": 20,
        },
        "model": {"steps": 40, "batch": 32, "d": 64},
        "decoding": {"max_new": 10, "alpha_grid": [1.0, 2.0], "beta_grid": [0.1], "tau_grid": [0.5]},
        "claims": {"n_resamples": 500, "power_sims": 10, "power_resamples": 200},
        "progress": False,
    },
    full={
        "model": {"seeds": [0, 1, 2]},
        "data": {"n_train_scenes": 6000},
        "paper_scale": {"model_id": "llava-hf/llava-1.5-7b-hf"},
    },
)
