"""Params of the milco pipeline (section ``milco`` of params.yaml) and its profiles."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

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

VARIANTS = ("milco", "no_sap", "no_echo", "dense")
OSIS_BOOKS_HINT = "OSIS names such as Gen, Exod, Matt, Mark, Luke, John, Acts"


class DataParams(Section):
    lo_en: str = Field(
        "/usr/share/libreoffice/help/en-US", description="LibreOffice help, English (Debian libreoffice-help-en-us)"
    )
    lo_es: str = Field("/usr/share/libreoffice/help/es", description="LibreOffice help, Spanish (libreoffice-help-es)")
    max_files: Count | None = Field(None, ge=10, description="help files parsed, in path order (null: all)")
    sword: str = Field("/usr/share/sword", description="SWORD library with engWEB2015eb and spaRV1909eb")
    bible_books: list[str] = Field(["Mark", "John"], min_length=1, description=f"Bible books ({OSIS_BOOKS_HINT})")
    sap_pairs: Count = Field(10_000, ge=50, description="LibreOffice pairs for Sparse Alignment Pretraining")
    contrastive_pairs: Count = Field(4_000, ge=50, description="of the SAP pairs, those used for stage-2 training")
    dev_pairs: Count = Field(200, ge=10, description="held-out LibreOffice pairs for the dev split")
    bench_pairs: Count = Field(2_000, ge=20, description="held-out LibreOffice pairs of the benchmark")
    bible_pairs: Count = Field(1_000, ge=20, description="Bible verse pairs of the second benchmark")
    bpe_vocab: Width = Field(8_000, ge=200, description="shared EN+ES BPE vocabulary")
    english_vocab: Width = Field(8_000, ge=100, description="English lexical space: top English words (count >= 2)")
    query_words: tuple[int, int] = Field((6, 12), description="min and max words of a query span")
    seed: Seed = Field(0, description="seed of the splits and query spans")

    @field_validator("query_words")
    @classmethod
    def _words(cls, v):
        if not 1 <= v[0] <= v[1] <= 64:
            raise ValueError(f"need 1 <= min <= max <= 64, got {list(v)}")
        return v

    @model_validator(mode="after")
    def _subset(self):
        if self.contrastive_pairs > self.sap_pairs:
            raise ValueError(
                f"contrastive_pairs ({self.contrastive_pairs}) must not exceed sap_pairs "
                f"({self.sap_pairs}): stage 2 reuses SAP pairs"
            )
        return self


class ModelParams(Section):
    d_model: Width = Field(128, ge=8, description="encoder width")
    n_layers: int = Field(2, ge=1, le=24, description="encoder layers")
    n_heads: int = Field(4, ge=1, le=64, description="attention heads")
    d_ff: Width = Field(256, ge=8, description="feed-forward width")
    d_en: Width = Field(
        128,
        ge=8,
        description="connector output / English MLM head width (4,000 terms' lexical "
        "head rows need room: at 32 they overlap and every text switches on ~1,600 terms)",
    )
    query_len: Width = Field(16, ge=4, le=512, description="query tokens")
    doc_len: Width = Field(32, ge=8, le=512, description="document tokens")

    @model_validator(mode="after")
    def _heads(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        return self


class TrainParams(Section):
    seeds: Seeds = Field([0, 1, 2], min_length=1, description="model seeds (the claims' clusters)")
    variants: list[str] = Field(list(VARIANTS), min_length=1, description=f"models trained per seed: {VARIANTS}")
    sap_steps: Steps = Field(150, ge=1, description="SAP steps")
    sap_batch: Width = Field(32, ge=2, description="SAP batch")
    sap_lr: float = Field(3e-3, gt=0, le=1, description="SAP learning rate")
    steps: Steps = Field(80, ge=1, description="stage-2 steps")
    batch: Width = Field(64, ge=2, description="stage-2 batch (in-batch negatives)")
    lr_grid: list[float] = Field(
        [1e-3, 3e-3],
        min_length=1,
        max_length=4,
        description="stage-2 learning rates tried on seed 0 for every model alike; each "
        "model keeps the one with the best dev nDCG@10 (ES->EN) for all seeds",
    )
    head_bias: float = Field(
        -3.0,
        ge=-20,
        le=0,
        description="initial bias of the lexical MLM head (every sparse model): unrelated terms start below 0",
    )
    teacher_floor: float = Field(
        -1.0,
        ge=-20,
        le=0,
        description="SAP teacher's max-logit for absent terms "
        "(SPLADE's are negative; 0 lets the masked mean "
        "be gamed by many tiny active terms)",
    )
    reg: Literal["flops", "l1"] = Field("flops", description="sparsity regulariser")
    lambda_q: float = Field(1e-3, ge=0, le=10, description="query regulariser weight")
    lambda_d: float = Field(1e-3, ge=0, le=10, description="document regulariser weight")
    kl_weight: float = Field(1.0, ge=0, le=100, description="KL distillation from USE-multilingual (0: off)")
    kl_temperature: float = Field(0.05, gt=0, le=10, description="temperature of the USE teacher's scores")

    @field_validator("lr_grid")
    @classmethod
    def _lrs(cls, v):
        if any(not 0 < x <= 1 for x in v):
            raise ValueError(f"learning rates must lie in (0, 1], got {v}")
        return sorted(set(v))

    @field_validator("variants")
    @classmethod
    def _variants(cls, v):
        if "milco" not in v:
            raise ValueError("variants must include 'milco' (the method)")
        return check_known(v, VARIANTS, "variant")


class EvalParams(Section):
    k: int = Field(100, ge=10, le=1000, description="retrieval depth (R@100 needs 100)")
    target_dims: float = Field(30.0, gt=0, le=10_000, description="C3: average active dimensions per document")
    topk_grid: list[int] = Field([5, 10, 20, 30, 50, 100], min_length=2, description="top-k pruning sweep")
    mass_grid: list[float] = Field(
        [0.3, 0.5, 0.7, 0.8, 0.9, 0.95], min_length=2, description="mass-pruning fractions of the sweep"
    )

    @field_validator("topk_grid")
    @classmethod
    def _k(cls, v):
        if any(k < 1 for k in v):
            raise ValueError(f"top-k values must be >= 1, got {v}")
        return sorted(set(v))

    @field_validator("mass_grid")
    @classmethod
    def _mass(cls, v):
        if any(not 0 < f <= 1 for f in v):
            raise ValueError(f"mass fractions must lie in (0, 1], got {v}")
        return sorted(set(v))


class FullParams(Section):
    """Paper-scale sources and models (``full`` profile; downloaded only with PAPERLINE_ONLINE=1)."""

    miracl: str | None = Field(None, description="MIRACL dataset id or local folder (miracl/miracl)")
    miracl_corpus: str | None = Field(None, description="MIRACL corpus id or local folder (miracl/miracl-corpus)")
    mkqa: str | None = Field(None, description="MKQA dataset id or local file (apple/mkqa)")
    language: str = Field("es", pattern=r"^[a-z]{2}$", description="MIRACL/MKQA language")
    milco_model: str | None = Field(None, description="released MILCO checkpoint (omai-research/milco-650m)")
    encoder: str | None = Field(None, description="multilingual backbone (BAAI/bge-m3)")
    teacher: str | None = Field(None, description="English SPLADE teacher (naver/splade-v3)")


class ClaimsParams(ClaimsBase):
    delta: float = Field(0.01, ge=0, le=1, description="no-effect band for nDCG@10 / grounding (1 point)")
    margin: float = Field(0.01, ge=0, le=1, description="C2b/C4 non-inferiority margin (1 nDCG point)")


class Params(PaperParams):
    data: DataParams = Field(default_factory=DataParams)
    model: ModelParams = Field(default_factory=ModelParams)
    train: TrainParams = Field(default_factory=TrainParams)
    eval: EvalParams = Field(default_factory=EvalParams)
    full: FullParams = Field(default_factory=FullParams)
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _fits(self):
        if self.train.batch > self.data.contrastive_pairs:
            raise ValueError(
                f"train.batch ({self.train.batch}) exceeds data.contrastive_pairs ({self.data.contrastive_pairs})"
            )
        return self


PRESETS = presets(
    default={
        "data": {"english_vocab": 4_000, "contrastive_pairs": 2_000},
        "train": {"seeds": [0, 1, 2], "steps": 60},
        "resources": {"workers": 2},
    },
    smoke={
        "data": {
            "max_files": 300,
            "sap_pairs": 1_000,
            "contrastive_pairs": 600,
            "dev_pairs": 50,
            "bench_pairs": 200,
            "bible_books": ["Jude", "Titus"],
            "bible_pairs": 60,
            "bpe_vocab": 3_000,
            "english_vocab": 3_000,
        },
        "train": {"seeds": [0], "sap_steps": 12, "steps": 10, "batch": 32, "kl_weight": 0.0},
        "resources": {"workers": 1},
        "eval": {"topk_grid": [5, 10, 30], "mass_grid": [0.5, 0.8, 0.95]},
        "claims": {"n_resamples": 1000, "power_sims": 10, "power_resamples": 200},
        "progress": False,
    },
    full={
        "data": {
            "english_vocab": 8_000,
            "sap_pairs": 20_000,
            "contrastive_pairs": 10_000,
            "bible_books": ["Matt", "Mark", "Luke", "John", "Acts"],
            "bible_pairs": 5_000,
        },
        "model": {"d_en": 128},
        "train": {"seeds": [0, 1, 2, 3, 4], "sap_steps": 3_000, "steps": 2_000},
        "full": {
            "miracl": "miracl/miracl",
            "miracl_corpus": "miracl/miracl-corpus",
            "mkqa": "apple/mkqa",
            "milco_model": "omai-research/milco-650m",
            "encoder": "BAAI/bge-m3",
            "teacher": "naver/splade-v3",
        },
    },
)
