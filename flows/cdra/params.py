"""Params of the cdra pipeline (section ``cdra`` of params.yaml) and its profiles."""

from __future__ import annotations

from pydantic import Field, model_validator

from components.cdra.task import N_TOPICS
from components.errors import ParamsError
from flows.runtime.params import ClaimsBase, Count, PaperParams, Section, Seeds, presets


class DataParams(Section):
    seeds: Seeds = Field(min_length=1, description="training seeds, each one SFT policy, two PRMs and four RL arms")
    per_topic: Count = Field(150, ge=2, description="(preference, query) pairs per topic (20 topics: 3,000 pairs)")
    heldout: Count = Field(300, ge=10, description="pairs held out for evaluation (never trained on)")
    task_seed: int = Field(0, ge=0, description="seed of the pair generator (one task for all training seeds)")


class PolicyParams(Section):
    d_model: Count = Field(64, ge=8, description="tiny GPT width")
    n_layers: Count = Field(2, ge=1, le=8, description="tiny GPT layers")
    n_sft: Count = Field(1000, ge=10, description="noisy gold chains the SFT policy (the RFT stand-in) learns from")
    noise: float = Field(0.4, ge=0, le=0.5, description="mean slip rate of the chains' implicit and risk steps")
    sft_steps: Count = Field(600, ge=1, description="SFT optimiser steps")
    batch_size: Count = Field(64, ge=1, description="SFT batch size")
    lr: float = Field(3e-3, gt=0, le=0.1, description="SFT peak learning rate")


class PRMParams(Section):
    d_model: Count = Field(64, ge=8, description="PRM backbone width (both PRMs)")
    n_layers: Count = Field(2, ge=1, le=8, description="PRM backbone layers (both PRMs)")
    n_responses: Count = Field(1000, ge=10, description="training pairs whose SFT-policy responses the PRMs learn")
    steps: Count = Field(600, ge=1, description="PRM SFT optimiser steps (both PRMs: the same budget)")
    batch_size: Count = Field(64, ge=1, description="PRM SFT batch size")
    lr: float = Field(3e-3, gt=0, le=0.1, description="PRM SFT peak learning rate")


class RLParams(Section):
    steps: Count = Field(120, ge=1, description="RL steps per arm")
    prompts_per_step: Count = Field(8, ge=1, description="prompts per RL step")
    group_size: int = Field(5, ge=2, le=64, description="G, completions per prompt")
    lr: float = Field(5e-4, gt=0, le=0.1, description="RL learning rate (every arm)")
    beta: float = Field(0.04, ge=0, le=10, description="KL coefficient to the SFT reference")
    eval_every: Count = Field(40, ge=1, description="held-out evaluation every this many RL steps (plateau check)")


class ClaimsParams(ClaimsBase):
    delta: float = Field(0.01, ge=0, description="C1, C2: no-effect band for accuracy differences (1 point)")
    delta_prm: float = Field(0.01, ge=0, description="C3: no-effect band for the step-accuracy difference")
    delta_zero: float = Field(0.01, ge=0, description="C4: no-effect band for the zero-spread fraction difference")


class Params(PaperParams):
    data: DataParams
    policy: PolicyParams = Field(default_factory=PolicyParams)
    prm: PRMParams = Field(default_factory=PRMParams)
    rl: RLParams = Field(default_factory=RLParams)
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _sizes_fit(self) -> Params:
        total = N_TOPICS * self.data.per_topic
        if self.data.heldout >= total:
            raise ParamsError(
                f"cdra.data: heldout {self.data.heldout} must be below the {total} pairs (20 x per_topic)"
            )
        train = total - self.data.heldout
        for key, n in (
            ("policy.n_sft", self.policy.n_sft),
            ("prm.n_responses", self.prm.n_responses),
            ("rl.prompts_per_step", self.rl.prompts_per_step),
        ):
            if n > train:
                raise ParamsError(f"cdra: {key} {n} exceeds the {train} training pairs")
        return self


PRESETS = presets(
    default={"data": {"seeds": [0, 1, 2]}},
    smoke={
        "data": {"seeds": [0], "per_topic": 20, "heldout": 60},
        "policy": {"n_sft": 300, "sft_steps": 150},
        "prm": {"n_responses": 120, "steps": 100},
        "rl": {"steps": 12, "eval_every": 6},
        "claims": {"n_resamples": 1000, "power_sims": 0},
        "progress": False,
    },
    full={"data": {"seeds": list(range(10))}, "rl": {"steps": 400}},
)
