"""Params of the implicit-planning pipeline (section ``implicit-planning`` of params.yaml) and its profiles."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from components.implicit_planning.couplets import RIMES
from components.implicit_planning.rhymes import FAMILIES
from flows.runtime.params import ClaimsBase, Count, PaperParams, Section, Seeds, presets

Pair = tuple[str, str]


class DataParams(Section):
    seeds: Seeds = Field(min_length=1, description="sampling seeds (and control-model seeds): the claims' clusters")
    real: bool = Field(True, description="build the real first lines (corpus + CMU dict) and the QA set")
    sources: list[Literal["shakespeare", "austen", "kjv"]] = Field(
        ["shakespeare", "austen", "kjv"], min_length=1, description="offline corpus sources of the real first lines"
    )
    families: list[str] = Field(list(FAMILIES), min_length=2, description="the card's rhyme families")
    lines_train: Count = Field(40, ge=2, description="training first lines per family (steering vectors); card: 85")
    lines_test: Count = Field(10, ge=1, description="test first lines per family; card: 20")
    lines_select: Count = Field(20, ge=1, description="training prompts of RF1 for the layer choice (logit metric)")
    qa_file: str | None = Field(None, description="QA nouns JSON in the paper's form (None: the built-in 20 pairs)")
    rhyme_file: str | None = Field(
        None,
        description="first lines per family, JSON {family: [line, ...]} (the paper's rhyme-family file; "
        "None: lines from the offline corpus)",
    )
    qa_pairs: Count = Field(20, ge=1, le=20, description="QA noun pairs used (each in both directions)")

    @field_validator("families")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        bad = [f for f in v if f not in FAMILIES]
        if bad:
            raise ValueError(f"unknown rhyme families {bad}; choose from {list(FAMILIES)}")
        if len(set(v)) != len(v):
            raise ValueError("families must not repeat")
        return v


class ControlParams(Section):
    steps: Count = Field(600, ge=1, description="training steps of each control model")
    batch_size: Count = Field(32, ge=1)
    lr: float = Field(5e-3, gt=0, le=1)
    n_sequences: Count = Field(8000, ge=100, description="training couplets per model")
    d_model: Count = Field(128, ge=8, description="width (card: 128)")
    n_layers: Count = Field(4, ge=1, description="depth (card: 4)")
    words_per_family: Count = Field(5, ge=2, le=7)
    n_families: Count = Field(8, ge=2, le=len(RIMES))
    pairs: list[Pair] = Field(
        [("ight", "ee"), ("ake", "ip")], min_length=1, description="RF1 -> RF2 family pairs of the control language"
    )

    @model_validator(mode="after")
    def _pairs_known(self) -> ControlParams:
        fams = RIMES[: self.n_families]
        for a, b in self.pairs:
            if a not in fams or b not in fams or a == b:
                raise ValueError(f"pairs: ({a!r}, {b!r}) must be two different families of {list(fams)}")
        return self


class SteerParams(Section):
    multiplier: float = Field(1.5, gt=0, le=100, description="m of the steering vector (the card's value)")
    multipliers: list[float] = Field(
        [1.5, 4.0, 10.0],
        min_length=1,
        description="m swept with the layer on training prompts (logit metric); the card's 1.5 must be among them",
    )
    position: Literal["newline", "last"] = Field(
        "newline", description="where s is added: newline or line 1's last token"
    )
    control_position: Literal["newline", "last"] = Field(
        "last", description="where s is added in the control models (their newline carries no plan: README)"
    )
    samples: Count = Field(5, ge=1, description="line 2 samples per test prompt and condition")
    max_new_tokens: Count = Field(12, ge=2, le=64)
    temperature: float = Field(1.0, ge=0, le=5)
    kl_threshold: float = Field(1.0, gt=0, description="KL(steered || unsteered) threshold in nats")
    batch_size: Count = Field(50, ge=1)
    real_model: str = Field("smollm2-135m-instruct", min_length=1, description="causal LM spec (causal_lm loader)")
    gemma3: bool = Field(
        False, description="also run Gemma3-270M (google/gemma-3-270m, Gemma terms; hub id: online only)"
    )
    real_pairs: list[Pair] = Field([("ight", "ee"), ("ing", "air")], min_length=1, description="RF1 -> RF2 pairs")
    real_layers: list[int] = Field(list(range(2, 30, 3)), min_length=1, description="layers swept (0 = embeddings)")
    qa_samples: Count = Field(3, ge=1, description="answers sampled per QA test question and condition")

    @model_validator(mode="after")
    def _multipliers(self) -> SteerParams:
        if any(m <= 0 or m > 100 for m in self.multipliers):
            raise ValueError(f"multipliers: every m must lie in (0, 100], got {self.multipliers}")
        if self.multiplier not in self.multipliers:
            raise ValueError(f"multipliers: must include steer.multiplier ({self.multiplier}), got {self.multipliers}")
        return self

    @field_validator("real_layers")
    @classmethod
    def _layers(cls, v: list[int]) -> list[int]:
        if any(x < 0 for x in v):
            raise ValueError("layers must be >= 0")
        return v


class ClaimsParams(ClaimsBase):
    engaged_kl: float = Field(
        0.05,
        gt=0,
        description="mechanism engaged: mean largest KL(steered || unsteered) before the rhyme word, in nats",
    )
    delta: float = Field(0.01, ge=0, description="no-effect band for rate differences (1 point)")
    article_margin: float = Field(
        0.1, gt=0, le=1, description="C1 negative control: steering may raise the RF2-article share by at most this"
    )


class Params(PaperParams):
    data: DataParams
    control: ControlParams = Field(default_factory=ControlParams)
    steer: SteerParams = Field(default_factory=SteerParams)
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _real_pairs(self) -> Params:
        for a, b in self.steer.real_pairs:
            if a not in self.data.families or b not in self.data.families or a == b:
                raise ValueError(f"steer.real_pairs: ({a!r}, {b!r}) must be two different families of data.families")
        return self


PRESETS = presets(
    # default: cut to the card's ~600 CPU-s (README "Default profile"): one real pair, 5 swept layers x 3 m, 8 test
    # lines x 3 samples, 10 QA pairs x 2 samples; the control models keep the card's shape and steps
    default={
        "data": {"seeds": [0, 1, 2], "lines_test": 8, "qa_pairs": 10},
        "steer": {"samples": 3, "real_pairs": [("ight", "ee")], "real_layers": [3, 9, 15, 21, 27], "qa_samples": 2},
    },
    smoke={
        "data": {"seeds": [0, 1], "real": False, "lines_train": 16, "lines_test": 4, "lines_select": 8},
        "control": {
            "steps": 150,
            "n_sequences": 2000,
            "d_model": 64,
            "n_layers": 2,
            "lr": 1e-2,
            "pairs": [("ight", "ee")],
        },
        "steer": {"samples": 3, "max_new_tokens": 8},
        "claims": {"n_resamples": 1000, "power_sims": 10, "power_resamples": 200},
        "progress": False,
    },
    full={
        "data": {"seeds": list(range(5)), "lines_train": 85, "lines_test": 20},
        "steer": {
            "samples": 50,
            "real_pairs": [("ight", "ee"), ("ing", "air")],
            "real_layers": list(range(0, 31)),
            "qa_samples": 3,
        },
    },
)
