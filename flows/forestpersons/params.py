"""Params of the forestpersons pipeline (section ``forestpersons`` of params.yaml) and its profiles."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from flows.runtime.params import (
    ClaimsBase,
    Count,
    PaperParams,
    ProjectPath,
    Resamples,
    Section,
    Seed,
    Seeds,
    Steps,
    Width,
    presets,
)

DOMAINS = ("forest", "urban", "aerial")


class ScenesParams(Section):
    seed: Seed = Field(0, description="seed of every generated set (each set and sequence derives its own)")
    size: int = Field(128, ge=64, le=512, description="image side in px (people are 16-70 px tall, aerial 4-10)")
    frames: int = Field(10, ge=1, le=100, description="frames per sequence (the split unit)")
    jitter: int = Field(4, ge=0, le=16, description="camera-jitter range in px (random-walk crop offset)")
    train_images: Count = Field(1000, ge=20, description="training images per domain (urban, aerial, forest)")
    val_images: Count = Field(200, ge=10, description="forest dev images")
    test_images: Count = Field(400, ge=20, description="forest test images")
    urban_test_images: Count = Field(200, ge=10, description="urban test images (claim 4's HOG reference)")

    @model_validator(mode="after")
    def _whole_sequences(self):
        for name in ("train_images", "val_images", "test_images", "urban_test_images"):
            if getattr(self, name) % self.frames:
                raise ValueError(
                    f"{name}: {getattr(self, name)} is not a whole number of {self.frames}-frame sequences"
                )
        return self


class SourceParams(Section):
    kind: Literal["synthetic", "hf"] = Field("synthetic", description="forest images: procedural, or the HF set")
    hf_id: str = Field(
        "etri/ForestPersons",
        min_length=3,
        pattern=r"^[\w.-]+/[\w.-]+$",
        description="Hugging Face dataset id of ForestPersons (full profile)",
    )
    local_dir: ProjectPath | None = Field(
        None, description="a local copy of the HF dataset in its format (tests, offline)"
    )
    max_images: Count = Field(20000, ge=1, description="HF: at most this many images per split, resized to size")


class TierParams(Section):
    easy_below: float = Field(0.45, gt=0, lt=1, description="difficulty (1 - AP50) below this: easy")
    hard_from: float = Field(0.75, gt=0, lt=1, description="difficulty from this: hard")
    reference_seed: Seed = Field(1000, description="seed of the urban reference detector that sets the tiers")

    @model_validator(mode="after")
    def _order(self):
        if self.easy_below >= self.hard_from:
            raise ValueError(f"easy_below ({self.easy_below}) must be below hard_from ({self.hard_from})")
        return self


class AugmentParams(Section):
    """CenterNet's augmentation (Zhou et al. 2019): flip, random scale and crop, colour jitter."""

    flip: bool = Field(True, description="random horizontal flip")
    scale: float = Field(0.4, ge=0, lt=1, description="zoom drawn from [1 - scale, 1 + scale] (CenterNet: 0.4)")
    shift: float = Field(0.2, ge=0, le=0.5, description="random crop: shift of +-shift x image side per axis")
    colour: float = Field(0.4, ge=0, lt=1, description="brightness/contrast/saturation jitter (CenterNet: 0.4)")


class TrainParams(Section):
    seeds: dict[str, Seeds] = Field(description="training seeds per domain (forest and urban: >= 2 for the claims)")
    epochs: Steps = Field(7, ge=1, le=1000)
    batch_size: Width = Field(16, ge=1)
    lr: float = Field(5e-3, gt=0, le=1)
    width: Width = Field(32, ge=4, le=256, description="CenterNet channels at stride 4")
    augment: AugmentParams = Field(default_factory=AugmentParams)

    @field_validator("seeds")
    @classmethod
    def _domains(cls, v):
        bad = [d for d in v if d not in DOMAINS]
        if bad:
            raise ValueError(f"unknown domain(s) {bad}; use {list(DOMAINS)}")
        missing = [d for d in DOMAINS if d not in v or not v[d]]
        if missing:
            raise ValueError(f"every domain needs seeds (claims 1-3); missing {missing}")
        for d in ("forest", "urban"):
            if len(v[d]) < 2:
                raise ValueError(f"{d}: at least 2 seeds (seeds are the claims' resampling unit), got {v[d]}")
        for d, s in v.items():
            if len(set(s)) != len(s):
                raise ValueError(f"{d}: seeds must be distinct, got {s}")
        return v


class HogParams(Section):
    upscale: float = Field(2.5, ge=1, le=8, description="HOG's window is 64x128: small images are upscaled")
    scale: float = Field(1.1, gt=1, le=2, description="pyramid step of detectMultiScale")
    hit_threshold: float = Field(-0.5, ge=-5, le=5, description="SVM score threshold (below 0: a wider PR curve)")
    calibrate: bool = Field(True, description="shrink each window to the person extent inside it")


class EvalParams(Section):
    top_k: int = Field(50, ge=1, le=100, description="CenterNet peaks kept per image (COCO's maxDets is 100)")
    min_score: float = Field(0.02, ge=0, lt=1, description="CenterNet peaks below this score are dropped")
    hog: HogParams = Field(default_factory=HogParams)
    video: str = Field(
        "/usr/share/doc/opencv-doc/examples/data/vtest.avi",
        description="OpenCV's vtest.avi (Debian opencv-doc) for the qualitative check; skipped if absent",
    )
    video_frames: int = Field(6, ge=0, le=100)
    panel: int = Field(6, ge=1, le=24, description="test scenes drawn with ground truth and detections")


class ClaimsParams(ClaimsBase):
    delta: float = Field(0.01, ge=0, le=0.5, description="no-effect band for AP and recall differences (1 point)")
    ap_resamples: Resamples = Field(
        10_000,
        ge=100,
        description="bootstrap resamples of the AP claims (each resample recomputes AP over every detection); "
        "the standard rule's 10,000",
    )
    fppi: float = Field(1.0, gt=0, le=100, description="false positives per image for claim 4's recall")


class Params(PaperParams):
    scenes: ScenesParams = Field(default_factory=ScenesParams)
    source: SourceParams = Field(default_factory=SourceParams)
    tiers: TierParams = Field(default_factory=TierParams)
    train: TrainParams
    eval: EvalParams = Field(default_factory=EvalParams)
    claims: ClaimsParams = Field(default_factory=ClaimsParams)


PRESETS = presets(
    # 2-frame sequences: five times the card's 100 layouts in the same 1,000 images (10-frame sequences were
    # memorised); 20 epochs: the forest detector's dev AP was still ~0.03 after 7 (README, "Default scale")
    default={
        "scenes": {"frames": 2},
        "train": {"seeds": {"forest": [0, 1, 2], "urban": [0, 1, 2], "aerial": [0]}, "epochs": 20},
        "resources": {"workers": 2},
        "progress": False,
    },
    smoke={
        "scenes": {"train_images": 100, "val_images": 20, "test_images": 40, "urban_test_images": 20},
        "train": {"seeds": {"forest": [0, 1], "urban": [0, 1], "aerial": [0]}, "epochs": 1},
        "eval": {"video_frames": 2, "panel": 4},
        "resources": {"workers": 1},
        "claims": {"n_resamples": 200, "ap_resamples": 100, "power_sims": 10, "power_resamples": 200},
    },
    full={
        "source": {"kind": "hf"},
        "train": {"seeds": {"forest": [0, 1, 2, 3, 4], "urban": [0, 1, 2, 3, 4], "aerial": [0, 1, 2]}, "epochs": 30},
    },
)
