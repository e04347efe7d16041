"""Params of the ebt pipeline (section ``ebt`` of params.yaml) and its profiles."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from flows.runtime.params import PaperParams, PowerClaims, Section, Seeds, Steps, Width, check_known, presets

NOVELS = ["sensesensibility", "prideprejudice", "mansfieldpark", "emma", "northangerabbey", "persuasion"]
OOD_SOURCES = ["shakespeare", "kjv", "linux_docs", "web", "wordnet", "gcide"]


class DataParams(Section):
    train_novels: list[str] = Field(min_length=1, description="Austen novels trained on (in distribution)")
    test_novel: str = Field("persuasion", description="the Austen novel held out as the in-distribution test set")
    ood_sets: list[str] = Field(min_length=1, description="offline sources used as OOD test sets, nearest first")
    eval_chars: Steps = Field(20_000, ge=1_000, description="characters per evaluation set (evenly spread windows)")
    dev_frac: float = Field(0.02, gt=0, lt=0.5, description="tail share of each training novel held out as dev split")
    hf_dataset: str | None = Field(None, description="full profile: Hugging Face dataset streamed as training text")
    hf_text_field: str = Field("raw_content", description="the text field of hf_dataset's records")
    hf_config: str | None = Field(None, description="config (subset) of hf_dataset")
    hf_tokenizer: str | None = Field(None, description="full profile: Hugging Face tokenizer id (instead of chars)")
    hf_chars: Steps = Field(2_000_000, ge=10_000, description="characters of hf_dataset text to stream")

    @field_validator("train_novels")
    @classmethod
    def _novels(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("train_novels must be distinct")
        return check_known(v, NOVELS, "novel")

    @field_validator("test_novel")
    @classmethod
    def _test(cls, v: str) -> str:
        return check_known([v], NOVELS, "novel")[0]

    @field_validator("ood_sets")
    @classmethod
    def _ood(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("ood_sets must be distinct")
        return check_known(v, OOD_SOURCES, "source")

    @model_validator(mode="after")
    def _held_out(self) -> DataParams:
        if self.test_novel in self.train_novels:
            raise ValueError(f"test_novel {self.test_novel!r} is also in train_novels")
        return self


class ModelParams(Section):
    widths: list[Width] = Field(min_length=1, description="d_model of each model size (same for EBT and Transformer++)")
    n_layers: int = Field(2, ge=1, le=48)
    n_heads: int = Field(4, ge=1, le=64)
    seq_len: int = Field(32, ge=4, le=4096, description="context length (characters)")

    @model_validator(mode="after")
    def _heads(self) -> ModelParams:
        bad = [w for w in self.widths if w % self.n_heads or (w // self.n_heads) % 2]
        if bad:
            raise ValueError(f"widths {bad} do not split into n_heads={self.n_heads} heads of even size")
        return self


class TrainingParams(Section):
    seeds: Seeds = Field(min_length=1, description="model seeds (the claims' top-level resampling unit)")
    steps: Steps = Field(ge=10, description="optimiser steps of the EBT and of the equal-steps Transformer++")
    batch_size: int = Field(16, ge=1, le=4096)
    lr: float = Field(3e-3, gt=0, le=1.0, description="peak learning rate of both models (unless tuned)")
    lr_grid: list[float] = Field(default_factory=list, description="if set: each model picks its lr on the dev split")
    tune_steps: int = Field(100, ge=10, le=1_000_000, description="steps of each tuning run")
    warmup_frac: float = Field(0.05, ge=0, lt=0.5)
    cooldown_frac: float = Field(0.1, gt=0, le=0.5)
    weight_decay: float = Field(0.1, ge=0, le=1)
    grad_clip: float = Field(1.0, gt=0)
    equal_flops: bool = Field(True, description="also train a Transformer++ on the EBT's training FLOPs")
    max_flop_ratio: float = Field(10.0, ge=1, le=100, description="cap on the equal-FLOPs run's steps / steps")

    @field_validator("lr_grid")
    @classmethod
    def _grid(cls, v: list[float]) -> list[float]:
        if any(not 0 < x <= 1 for x in v):
            raise ValueError("every lr_grid value must be in (0, 1]")
        return sorted(set(v))


class EBTParams(Section):
    mcmc_steps: int = Field(2, ge=1, le=64, description="M_train: optimisation steps in training")
    step_size: float = Field(50.0, gt=0, le=1e6, description="alpha at initialisation (learnable; dev-split pick)")
    step_size_grid: list[float] = Field(
        default_factory=list,
        description=("if set: alpha_0 picked on the dev split (with the lr grid, first seed, tune_steps steps)"),
    )
    step_size_learnable: bool = True
    step_size_lr_mult: float = Field(150.0, gt=0, le=1e7, description="alpha's lr multiplier (repo: 3 x alpha)")
    init_scale: float = Field(1.0, gt=0, le=100, description="std of the initial logits y_0")
    detach_between_steps: bool = Field(True, description="repo default (no_mcmc_detach=False)")
    truncate: bool = Field(False, description="loss on the last step only (truncate_mcmc)")
    step_size_scale: float = Field(2.0, ge=1, le=100, description="S2 trick: alpha ~ U(alpha/s, alpha*s); 1 = off")
    random_steps: int = Field(0, ge=0, le=64, description="S2 trick: randomised step count; 0 = off")
    random_steps_min: int = Field(0, ge=0, le=64)
    langevin_noise: float = Field(0.0, ge=0, le=100, description="S2 trick: Langevin noise std; 0 = off")
    replay_buffer: bool = Field(False, description="S2 trick: replay buffer of refined predictions")
    replay_size: int = Field(192, ge=1, le=100_000)
    replay_share: float = Field(0.5, gt=0, le=4)

    @field_validator("step_size_grid")
    @classmethod
    def _alphas(cls, v: list[float]) -> list[float]:
        if any(not 0 < x <= 1e6 for x in v):
            raise ValueError("every step_size_grid value must be in (0, 1e6]")
        return sorted(set(v))


class EvalParams(Section):
    think_steps: list[int] = Field(min_length=1, description="M_inf values (inference steps) of the thinking sweep")
    best_of: list[int] = Field(min_length=1, description="N values of best-of-N self-verification")
    best_of_noise: float = Field(0.0, ge=0, le=100, description="Langevin noise std of best-of-N candidates")
    batch_size: int = Field(64, ge=1, le=4096)

    @field_validator("think_steps", "best_of")
    @classmethod
    def _positive(cls, v: list[int]) -> list[int]:
        if any(x < 1 or x > 256 for x in v):
            raise ValueError("values must be between 1 and 256")
        return sorted(set(v))


class ClaimsParams(PowerClaims):
    think_m: int = Field(4, ge=1, le=256, description="C1/C2: M_inf compared with M_train")
    best_n: int = Field(4, ge=2, le=256, description="C3: N compared with N = 1")
    far_set: str = Field("linux_docs", description="C2: the farthest OOD set")
    delta_log_ppl: float = Field(0.0198, ge=0, description="C1/C3: no-effect band in log PPL (0.0198 = 2% relative)")
    delta_gain: float = Field(0.5, ge=0, description="C2: no-effect band of the gain difference (points)")


class Params(PaperParams):
    data: DataParams
    model: ModelParams
    training: TrainingParams
    energy: EBTParams = Field(default_factory=EBTParams)
    eval: EvalParams
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _claims_fit(self) -> Params:
        m = self.energy.mcmc_steps
        if m not in self.eval.think_steps or self.claims.think_m not in self.eval.think_steps:
            raise ValueError(
                f"eval.think_steps {self.eval.think_steps} must hold energy.mcmc_steps ({m}) and "
                f"claims.think_m ({self.claims.think_m})"
            )
        if 1 not in self.eval.best_of or self.claims.best_n not in self.eval.best_of:
            raise ValueError(f"eval.best_of {self.eval.best_of} must hold 1 and claims.best_n ({self.claims.best_n})")
        if self.claims.far_set not in self.data.ood_sets:
            raise ValueError(f"claims.far_set {self.claims.far_set!r} is not one of data.ood_sets {self.data.ood_sets}")
        return self


_DEFAULT_NOVELS = ["sensesensibility", "prideprejudice", "mansfieldpark", "emma", "northangerabbey"]
PRESETS = presets(
    default={
        "data": {
            "train_novels": _DEFAULT_NOVELS,
            "ood_sets": ["shakespeare", "kjv", "linux_docs"],
            "eval_chars": 20_000,
        },
        "model": {"widths": [64]},
        "training": {"seeds": [0, 1, 2], "steps": 600},
        "eval": {"think_steps": [1, 2, 4, 8], "best_of": [1, 4, 8]},
        "resources": {"threads": 1, "workers": 2},
    },
    smoke={
        "data": {"eval_chars": 2_000, "ood_sets": ["shakespeare", "linux_docs"]},
        "training": {"seeds": [0], "steps": 40, "max_flop_ratio": 1.5},
        "eval": {"think_steps": [1, 2, 4], "best_of": [1, 4]},
        "claims": {"n_resamples": 1000, "power_sims": 10, "power_resamples": 200},
        "resources": {"workers": 1, "threads": 1},
        "progress": False,
    },
    full={
        "data": {
            "hf_dataset": "togethercomputer/RedPajama-Data-V2",
            "hf_config": "sample",
            "hf_tokenizer": "EleutherAI/gpt-neox-20b",
            "eval_chars": 200_000,
        },
        "model": {"widths": [64, 128, 256], "seq_len": 256},
        "training": {"seeds": [0, 1, 2, 3, 4], "steps": 20_000, "batch_size": 32, "lr_grid": [1e-3, 3e-3]},
        "resources": {"threads": 2, "workers": 1},
    },
)
