"""Params of the dka pipeline (section ``dka`` of params.yaml) and its profiles."""

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

METHODS = ("linear", "full", "bottleneck", "bottleneck-matched", "convpass", "lora", "dka", "dka-large", "dka-small")
SOURCES = ("mni152", "medmnist", "imagefolder")
LOW_METHODS = ("linear", "bottleneck", "dka", "bottleneck-matched")  # claims 1, 2 and 4 at the low fraction
HIGH_METHODS = ("bottleneck",)  # claim 3 (the adapter's ERF at the high fraction)


class DataParams(Section):
    source: str = Field("mni152", description="'mni152' (offline lesion task) | 'medmnist' (.npz) | 'imagefolder'")
    path: ProjectPath | None = Field(None, description="medmnist .npz / ImageFolder root for the full profile")
    n_train: Count = Field(6000, ge=40, description="training pool (images from the train slices)")
    n_dev: Count = Field(200, ge=8, description="dev images for the learning-rate sweep (train slices, own draw)")
    n_test: Count = Field(2000, ge=20, description="fixed test set (images from the held-out test slices)")
    z_lo: int = Field(50, ge=0, le=188, description="first axial slice index of the MNI152 volume (197x233x189)")
    z_hi: int = Field(130, ge=16, le=189, description="one past the last axial slice index")
    lesion_contrast: float = Field(0.35, gt=0, le=1, description="lesion depth as a share of the local intensity")
    lesion_sigma: float = Field(1.4, gt=0, le=8, description="lesion Gaussian sigma in px (72-px scale)")
    max_rotation: float = Field(10.0, ge=0, le=45, description="affine augmentation: rotation up to +- degrees")
    max_shift: float = Field(4.0, ge=0, le=8, description="affine augmentation: shift up to +- px (moves the midline)")
    scale_range: float = Field(0.08, ge=0, le=0.3, description="affine augmentation: scale 1 +- this")
    fashion_dir: ProjectPath = Field("/usr/share/datasets/fashion-mnist", description="Fashion-MNIST idx files")
    seed: Seed = 0

    @field_validator("source")
    @classmethod
    def _source(cls, v):
        return check_known([v], SOURCES, "source")[0]

    @model_validator(mode="after")
    def _range(self):
        if self.z_hi - self.z_lo < 16:
            raise ValueError(f"z_hi - z_lo = {self.z_hi - self.z_lo}: need at least 16 axial slices")
        if self.source != "mni152" and not self.path:
            raise ValueError(f"source {self.source!r} needs path (the local file or folder)")
        return self


class PretrainParams(Section):
    hf_model: str | None = Field(None, description="timm id of the full profile's backbone (None: the tiny ViT)")
    img_size: Width = Field(64, ge=16)
    patch: Width = Field(8, ge=2)
    dim: Width = Field(96, ge=8)
    depth: Width = Field(6, ge=1, le=48)
    heads: Width = Field(4, ge=1)
    steps: Steps = Field(500, ge=10, description="pretraining steps on Fashion-MNIST")
    batch: Width = Field(64, ge=8)
    lr: float = Field(2e-3, gt=0, le=1)
    eval_images: Count = Field(2000, ge=10, le=10000, description="Fashion-MNIST test images the backbone is scored on")
    seed: Seed = 0

    @model_validator(mode="after")
    def _shape(self):
        if self.img_size % self.patch:
            raise ValueError(f"img_size {self.img_size} is not a multiple of patch {self.patch}")
        if self.dim % self.heads:
            raise ValueError(f"dim {self.dim} does not split into {self.heads} heads")
        return self


class Regime(Section):
    fraction: float = Field(gt=0, le=1, description="share of the training pool with labels")
    seeds: Seeds = Field(min_length=1, description="label draws x initialisations (the claims' clusters)")
    steps: Steps = Field(ge=1, description="optimisation steps per run")
    batch: Width | None = Field(None, ge=1, description="batch size here (None: adapt.batch)")
    methods: list[str] | None = Field(None, description="methods run at this fraction (None: all of adapt.methods)")
    side_seeds: int | None = Field(
        None,
        ge=1,
        description="methods no claim compares at this fraction run only "
        "the first side_seeds seeds (None: every seed); the claims' methods run them all",
    )


class AdaptParams(Section):
    methods: list[str] = Field(min_length=1, description=f"methods, from {list(METHODS)}")
    regimes: list[Regime] = Field(min_length=1)
    batch: Width = Field(32, ge=1)
    mid: Width = Field(16, ge=1, description="adapter width d-hat (paper 16; the code's middle_dim is 10)")
    k_large: int = Field(15, ge=1, le=63, description="DKA large depthwise kernel (odd; 15 covers the 8x8 grid)")
    k_small: int = Field(3, ge=1, le=15, description="DKA small depthwise kernel (odd)")
    adapter_lrs: list[float] = Field(min_length=1, description="adapter (or backbone) learning rates swept")
    head_lrs: list[float] = Field(min_length=1, description="head learning rates swept")
    linear_lrs: list[float] | None = Field(
        None,
        description="the linear probe's (head) learning rates swept: as "
        "many as the adapter x head pairs (the same sweep budget); None: "
        "adapter_lrs + head_lrs",
    )
    sweep_steps: Steps = Field(40, ge=1, description="steps of each sweep run (the low fraction, dev split)")
    sweep_seed: Seed = Field(1000, description="label draw of the sweep (not an evaluation seed)")
    erf_images: Count = Field(32, ge=1, le=2000, description="test images the ERF is averaged over")

    @field_validator("methods")
    @classmethod
    def _methods(cls, v):
        check_known(v, METHODS, "method")
        return v

    @field_validator("adapter_lrs", "head_lrs", "linear_lrs")
    @classmethod
    def _lrs(cls, v):
        if v is not None and any(not 0 < x <= 1 for x in v):
            raise ValueError(f"learning rates {v}: each must be in (0, 1]")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        for name in ("k_large", "k_small"):
            if getattr(self, name) % 2 == 0:
                raise ValueError(f"{name} = {getattr(self, name)}: must be odd")
        n_pairs, n_lin = len(self.adapter_lrs) * len(self.head_lrs), len(self.linear_grid())
        if "linear" in self.methods and n_lin != n_pairs:
            raise ValueError(
                f"linear_lrs: {n_lin} distinct rate(s) but every other method tries {n_pairs} "
                "(adapter, head) pairs; give the linear probe the same sweep budget"
            )
        fr = [r.fraction for r in self.regimes]
        if len(set(fr)) != len(fr):
            raise ValueError(f"regimes: fraction listed twice in {fr}")
        for r in self.regimes:
            bad = [m for m in (r.methods or []) if m not in self.methods]
            if bad:
                raise ValueError(f"regime {r.fraction}: method(s) {bad} are not in adapt.methods")
        return self

    def linear_grid(self) -> list[float]:
        """The linear probe's head learning rates in the sweep (distinct, in the given order)."""
        rates = self.linear_lrs if self.linear_lrs is not None else [*self.adapter_lrs, *self.head_lrs]
        return list(dict.fromkeys(rates))

    def methods_at(self, r: Regime) -> list[str]:
        return list(r.methods) if r.methods is not None else list(self.methods)


def claim_methods(claims: ClaimsParams, fraction: float) -> tuple[str, ...]:
    """The methods a claim compares at ``fraction`` (they run every seed of the regime)."""
    return (LOW_METHODS if fraction == claims.low_fraction else ()) + (
        HIGH_METHODS if fraction == claims.high_fraction else ()
    )


def seeds_of(p: Params, r: Regime, method: str) -> list[int]:
    """The seeds ``method`` runs at regime ``r``: all of them for a claim's method, else the first side_seeds."""
    if r.side_seeds is None or method in claim_methods(p.claims, r.fraction):
        return list(r.seeds)
    return list(r.seeds[: r.side_seeds])


class ClaimsParams(ClaimsBase):
    low_fraction: float = Field(0.01, gt=0, le=1, description="the low-data regime of claims 1-4")
    high_fraction: float = Field(1.0, gt=0, le=1, description="claim 3's data-rich regime")
    delta_acc: float = Field(0.01, ge=0, description="no-effect band for accuracy differences (1 point)")
    margin_acc: float = Field(0.01, ge=0, description="claim 2: 'at least as good' margin (1 point)")
    delta_erf: float = Field(0.01, ge=0, description="claim 3: no-effect band for ERF-area differences")
    thresholds: list[float] = Field([0.05, 0.2], min_length=1, description="ERF thresholds t")

    @field_validator("thresholds")
    @classmethod
    def _t(cls, v):
        if any(not 0 < t < 1 for t in v):
            raise ValueError(f"thresholds {v}: each must be in (0, 1)")
        return v


class Params(PaperParams):
    data: DataParams = Field(default_factory=DataParams)
    pretrain: PretrainParams = Field(default_factory=PretrainParams)
    adapt: AdaptParams
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _claims_covered(self):
        c, a = self.claims, self.adapt
        by = {r.fraction: r for r in a.regimes}
        for frac, need in ((c.low_fraction, LOW_METHODS), (c.high_fraction, HIGH_METHODS)):
            if frac not in by:
                raise ValueError(f"claims fraction {frac} is not one of adapt.regimes' fractions {sorted(by)}")
            missing = [m for m in need if m not in a.methods_at(by[frac])]
            if missing:
                raise ValueError(f"regime {frac} must run {missing} (claims 1-4)")
        if a.erf_images > self.data.n_test:
            raise ValueError(f"adapt.erf_images {a.erf_images} exceeds data.n_test {self.data.n_test}")
        return self


MAIN = ["linear", "full", "bottleneck", "convpass", "lora", "dka"]

PRESETS = presets(
    default={
        # lesion knobs chosen by the learnability check on the dev split (flows/dka/learnability.py; README)
        "data": {
            "n_train": 6000,
            "n_dev": 200,
            "n_test": 400,
            "z_lo": 82,
            "z_hi": 106,
            "lesion_contrast": 0.9,
            "lesion_sigma": 6.0,
            "max_rotation": 5.0,
            "max_shift": 2.0,
            "scale_range": 0.04,
        },
        "pretrain": {"steps": 700, "batch": 64, "lr": 3e-3},
        "adapt": {
            "methods": list(METHODS),
            "regimes": [
                {"fraction": 0.01, "seeds": [0, 1, 2, 3, 4], "side_seeds": 2, "steps": 40, "batch": 16},
                {"fraction": 0.1, "seeds": [0, 1], "steps": 20, "batch": 32, "methods": MAIN},
                {
                    "fraction": 1.0,
                    "seeds": [0, 1],
                    "steps": 50,
                    "batch": 32,
                    "methods": ["linear", "full", "bottleneck", "dka"],
                },
            ],
            "adapter_lrs": [1e-3, 1e-5],
            "head_lrs": [1e-4, 1e-2],
            "linear_lrs": [1e-3, 1e-2, 3e-2, 1e-1],
            "sweep_steps": 20,
        },
        "resources": {"workers": 2, "threads": 1},
    },
    smoke={  # wiring only: every stage, method family of the claims and check runs, on a few images and steps
        "data": {"n_train": 200, "n_dev": 40, "n_test": 80},
        "pretrain": {"steps": 20, "batch": 8, "eval_images": 100},
        "adapt": {
            "methods": list(LOW_METHODS),
            "regimes": [
                {
                    "fraction": 0.1,
                    "seeds": [0, 1],
                    "steps": 2,
                    "batch": 8,
                    "methods": ["linear", "bottleneck", "dka", "bottleneck-matched"],
                },
                {"fraction": 1.0, "seeds": [0, 1], "steps": 2, "batch": 8, "methods": ["bottleneck"]},
            ],
            "adapter_lrs": [1e-3],
            "head_lrs": [1e-2],
            "linear_lrs": [1e-2],
            "sweep_steps": 1,
            "erf_images": 4,
        },
        "claims": {"n_resamples": 500, "low_fraction": 0.1, "power_sims": 10, "power_resamples": 200},
        "resources": {"workers": 1, "threads": 2},
        "progress": False,
    },
    full={
        "data": {"source": "medmnist", "path": "data/dka/external/breastmnist_64.npz"},
        "pretrain": {"hf_model": "timm/vit_base_patch16_224.augreg2_in21k_ft_in1k"},
        "adapt": {
            "regimes": [
                {"fraction": 0.0063, "seeds": [0, 1, 2, 3, 4], "steps": 500},
                {"fraction": 0.01, "seeds": [0, 1, 2, 3, 4], "steps": 500},
                {"fraction": 0.1, "seeds": [0, 1, 2], "steps": 1000},
                {"fraction": 1.0, "seeds": [0, 1], "steps": 3000},
            ],
            "mid": 16,
            "k_large": 51,
            "k_small": 5,
        },
    },
)
