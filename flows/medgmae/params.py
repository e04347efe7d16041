"""Params of the medgmae pipeline (section ``medgmae`` of params.yaml) and its profiles."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

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
    check_known,
    presets,
)

SOURCES = ("mni152", "nifti")
OBJECTIVES = ("medgmae", "voxel-mae")
INITS = ("medgmae", "voxel-mae", "scratch")


class DataParams(Section):
    source: str = Field("mni152", description="'mni152' (nilearn templates, offline) | 'nifti' (a folder, full)")
    path: ProjectPath | None = Field(None, description="nifti: folder with imagesTr/ and labelsTr/ (*.nii.gz)")
    size: Width = Field(32, ge=8, le=256, description="crop edge in voxels (2 mm MNI152 voxels)")
    test_share: float = Field(
        0.35,
        gt=0.05,
        lt=0.8,
        description="top share of z reserved for test crops (the card's 0.30 leaves 28 slices, fewer than a 32 crop)",
    )
    min_brain: float = Field(0.3, ge=0, le=1, description="a crop needs this share of brain-mask voxels")
    n_train: Count = Field(600, ge=4, description="labelled training crops (100% labels); augmented with MONAI")
    n_dev: Count = Field(24, ge=2, description="dev crops (train slab, own draw, no augmentation): the lr sweep")
    n_test: Count = Field(48, ge=2, description="test crops (test slab, no augmentation)")
    elastic: float = Field(0.25, ge=0, le=1, description="probability of the elastic deformation per crop")
    phantom_share: float = Field(0.5, ge=0, lt=1, description="share of ellipsoid phantoms in the pretraining pool")
    seed: Seed = 0

    @field_validator("source")
    @classmethod
    def _source(cls, v):
        return check_known([v], SOURCES, "source")[0]

    @model_validator(mode="after")
    def _path(self):
        if self.source == "nifti" and not self.path:
            raise ValueError("source 'nifti' needs path (a folder with imagesTr/ and labelsTr/)")
        return self


class ModelParams(Section):
    patch: Width = Field(8, ge=2, description="ViT patch edge (the light UNETR head needs 8)")
    dim: Width = Field(96, ge=8)
    depth: Width = Field(4, ge=1, le=24)
    heads: Width = Field(4, ge=1)
    dec_dim: Width = Field(96, ge=8)
    dec_depth: Width = Field(2, ge=1, le=12)
    dec_heads: Width = Field(4, ge=1)
    n_gaussians: Width = Field(64, ge=1, le=4096, description="K Gaussian queries of the MedGMAE decoder")
    gain: float = Field(0.1, gt=0, le=10, description="rendered intensity gain (official rendering2: 0.1)")

    @model_validator(mode="after")
    def _heads(self):
        for d, h in (("dim", "heads"), ("dec_dim", "dec_heads")):
            if getattr(self, d) % getattr(self, h):
                raise ValueError(f"{d} {getattr(self, d)} does not split into {getattr(self, h)} heads")
        return self


class PretrainParams(Section):
    objectives: list[str] = Field(list(OBJECTIVES), min_length=1, description=f"from {list(OBJECTIVES)}")
    seeds: Seeds = Field([0], min_length=1, description="pretraining runs per objective (1 in default, 3 in full)")
    steps: Steps = Field(300, ge=1, description="optimiser steps, the same for both objectives")
    batch: Width = Field(8, ge=1)
    lr: float = Field(1.5e-3, gt=0, le=1, description="the same for both objectives")
    warmup: int = Field(20, ge=0)
    mask_ratio: float = Field(0.75, gt=0, lt=1)
    eval_volumes: Count = Field(16, ge=1, description="test crops the masked-voxel loss is measured on")

    @field_validator("objectives")
    @classmethod
    def _objectives(cls, v):
        bad = [o for o in v if o not in OBJECTIVES]
        if bad:
            raise ValueError(f"unknown objective(s) {bad}; use {list(OBJECTIVES)}")
        return v


class FinetuneParams(Section):
    inits: list[str] = Field(list(INITS), min_length=1, description=f"encoder initialisations, from {list(INITS)}")
    fractions: list[float] = Field([0.01, 0.1, 1.0], min_length=1, description="label fractions of the pool")
    seeds: Seeds = Field([0, 1, 2], min_length=1, description="label draw + decoder initialisation per seed")
    steps: Steps = Field(60, ge=1, description="fine-tuning steps per run (every fraction and init)")
    batch: Width = Field(4, ge=1)
    lrs: list[float] = Field([1e-3, 3e-4], min_length=1, description="learning rates swept on dev, per init")
    sweep_steps: Steps = Field(40, ge=1, description="steps of each sweep run (low fraction, dev split)")
    sweep_seed: Seed = Field(1000, description="label draw of the sweep (not an evaluation seed)")
    feature_size: Width = Field(8, ge=2, le=64, description="UNETR decoder width (MONAI default 16)")

    @field_validator("inits")
    @classmethod
    def _inits(cls, v):
        bad = [i for i in v if i not in INITS]
        if bad:
            raise ValueError(f"unknown init(s) {bad}; use {list(INITS)}")
        return v

    @field_validator("fractions")
    @classmethod
    def _fractions(cls, v):
        if any(not 0 < f <= 1 for f in v) or len(set(v)) != len(v):
            raise ValueError(f"fractions {v}: each in (0, 1], no repeats")
        return sorted(v)

    @field_validator("lrs")
    @classmethod
    def _lrs(cls, v):
        if any(not 0 < x <= 1 for x in v):
            raise ValueError(f"learning rates {v}: each must be in (0, 1]")
        return v


class ReconParams(Section):
    volumes: Count = Field(8, ge=1, description="held-out test crops fitted")
    iters: Steps = Field(150, ge=1, description="iteration cap of each fit (a unit that does not reach it is censored)")
    lr: float = Field(0.05, gt=0, le=1)
    target_psnr: float = Field(
        18.0,
        gt=0,
        le=80,
        description="PSNR (dB, data range 1) a fit must reach; the card's 30 dB is out of reach for 64 Gaussians on a "
        "32^3 crop (a random-start pilot plateaued at 19.7 dB after 300 iterations)",
    )
    mask_ratio: float = Field(0.75, ge=0, lt=1, description="masking of the decoder's input for the warm start")
    seed: Seed = 7


class ClaimsParams(ClaimsBase):
    low_fraction: float = Field(0.01, gt=0, le=1, description="C1, C2: the low label fraction")
    high_fraction: float = Field(1.0, gt=0, le=1, description="C2: the high label fraction")
    delta_dice: float = Field(0.01, ge=0, description="no-effect band for Dice differences (1 point)")
    delta_ratio: float = Field(0.02, ge=0, description="C3: no-effect band around a ratio of 1")


class Params(PaperParams):
    data: DataParams = Field(default_factory=DataParams)
    model: ModelParams = Field(default_factory=ModelParams)
    pretrain: PretrainParams = Field(default_factory=PretrainParams)
    finetune: FinetuneParams = Field(default_factory=FinetuneParams)
    recon: ReconParams = Field(default_factory=ReconParams)
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _consistent(self):
        if self.data.size % self.model.patch:
            raise ValueError(f"model.patch {self.model.patch} does not divide data.size {self.data.size}")
        if self.model.patch != 8:
            raise ValueError(f"model.patch {self.model.patch}: the light UNETR decoder has three 2x levels (patch 8)")
        fr = self.finetune.fractions
        for name in ("low_fraction", "high_fraction"):
            if getattr(self.claims, name) not in fr:
                raise ValueError(f"claims.{name} {getattr(self.claims, name)} is not in finetune.fractions {fr}")
        for need in ("medgmae", "voxel-mae"):
            if need not in self.finetune.inits or need not in self.pretrain.objectives:
                raise ValueError(f"finetune.inits and pretrain.objectives must include {need!r} (claims 1-3)")
        return self


PRESETS = presets(
    default={},
    smoke={
        "data": {"size": 16, "n_train": 24, "n_dev": 4, "n_test": 8},
        "model": {"dim": 32, "depth": 2, "heads": 2, "dec_dim": 32, "dec_depth": 1, "dec_heads": 2, "n_gaussians": 16},
        "pretrain": {"steps": 30, "batch": 4, "warmup": 3, "eval_volumes": 4},
        "finetune": {
            "fractions": [0.1, 1.0],
            "seeds": [0, 1],
            "steps": 8,
            "batch": 2,
            "lrs": [1e-3],
            "sweep_steps": 4,
            "feature_size": 4,
        },  # fmt: skip
        "recon": {"volumes": 3, "iters": 20, "target_psnr": 11.0},
        "claims": {"low_fraction": 0.1, "n_resamples": 1000},
        "progress": False,
    },
    full={
        "data": {"size": 96, "n_train": 5000, "n_dev": 100, "n_test": 200},
        "model": {
            "dim": 384,
            "depth": 12,
            "heads": 12,
            "dec_dim": 384,
            "dec_depth": 8,
            "dec_heads": 12,
            "n_gaussians": 512,
        },  # fmt: skip
        "pretrain": {"seeds": [0, 1, 2], "steps": 20000, "batch": 4},
        "finetune": {"seeds": [0, 1, 2, 3, 4], "steps": 2000, "feature_size": 16},
        "recon": {"volumes": 50, "iters": 2000, "target_psnr": 30.0},
    },
)
