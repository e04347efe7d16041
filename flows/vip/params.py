"""Params of the vip pipeline (section ``vip`` of params.yaml) and its profiles."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from flows.runtime.params import (
    Count,
    PaperParams,
    PowerClaims,
    ProjectPath,
    Replace,
    Section,
    Seed,
    Seeds,
    Steps,
    Width,
    presets,
)

SFT_MIX = {
    "add1": 6.0,
    "add2": 5.0,
    "add3": 2.0,
    "add4": 0.7,
    "sub1": 5.0,
    "sub2": 3.0,
    "sub3": 1.0,
    "sub4": 0.4,
    "mul1": 4.0,
    "mul2x1": 1.5,
    "mul2": 0.3,
}
RL_MIX = dict(SFT_MIX)  # RL and held-out prompts drawn as the SFT ones: the SFT policy then starts in the card's 30-60%
FEATURE_SETS = ("minilm", "hashed")
REQUIRED = ("uniform", "vip")


class DataParams(Section):
    source: str = Field("arithmetic", description="'arithmetic' (offline tiers) or 'dapo' (DAPO-Math-17k format)")
    hf_dataset: str | None = Field(None, description="HF id of the training prompts in the full profile")
    local_file: ProjectPath | None = Field(None, description="a local parquet/jsonl in the DAPO-Math-17k format")
    n_train: Count = Field(2000, ge=16, description="RL training prompts")
    n_heldout: Count = Field(300, ge=10, description="held-out prompts for mean@k / pass@k")
    n_sft: Count = Field(20000, ge=100, description="SFT worked examples")
    sft_mix: dict[str, float] = Field(default_factory=lambda: dict(SFT_MIX), description="tier -> SFT weight")
    sft_noise: float = Field(
        0.3,
        ge=0.0,
        lt=1.0,
        description="share of SFT answers with one digit slipped (gives "
        "the SFT policy slips on learnt problems for RL to remove; 0: clean answers)",
    )
    rl_mix: dict[str, float] = Field(default_factory=lambda: dict(RL_MIX), description="tier -> RL/held-out weight")
    features: list[str] = Field(
        default_factory=lambda: list(FEATURE_SETS),
        min_length=1,
        description="prompt feature sets computed for the GP: minilm, hashed",
    )
    embedder: str | None = Field(None, description="a sentence-transformers id/path instead of the offline wheel")
    seed: Seed = 0

    @model_validator(mode="after")
    def _check(self):
        from components.vip.task import TIERS

        for name, mix in (("sft_mix", self.sft_mix), ("rl_mix", self.rl_mix)):
            bad = sorted(set(mix) - set(TIERS))
            if bad:
                raise ValueError(f"{name}: unknown tier(s) {bad}; known: {sorted(TIERS)}")
            if not mix or any(v < 0 for v in mix.values()) or sum(mix.values()) <= 0:
                raise ValueError(f"{name}: weights must be >= 0 with a positive sum")
        bad = sorted(set(self.features) - set(FEATURE_SETS))
        if bad:
            raise ValueError(f"features: unknown feature set(s) {bad}; known: {list(FEATURE_SETS)}")
        if self.source not in ("arithmetic", "dapo"):
            raise ValueError(f"source: {self.source!r} is not 'arithmetic' or 'dapo'")
        return self


class ModelParams(Section):
    hf_model: str | None = Field(None, description="HF causal-LM id for the full profile (None: the tiny LM)")
    d_model: Width = Field(128, ge=8)
    n_layers: Width = Field(4, ge=1)
    n_heads: Width = Field(4, ge=1)
    d_ff: Width = Field(352, ge=8)
    sft_steps: Steps = Field(1200, ge=1)
    batch_size: Width = Field(64, ge=1)
    lr: float = Field(3e-3, gt=0, le=1)
    seed: Seed = 0


class MethodSpec(Section):
    allocation: str = Field(description="uniform | vip | heuristic | dapo")
    advantage: str = Field("drgrpo", description="grpo | drgrpo | rloo")
    predictor: str | None = Field(None, description="gp | beta | running (vip/heuristic only)")
    features: str = Field("minilm", description="GP features: minilm | hashed")

    @model_validator(mode="after")
    def _known(self):
        from components.rl_text import ADVANTAGES as KINDS  # without torch: params are checked before any import
        from components.vip.strategies import Method

        if self.advantage not in KINDS:
            raise ValueError(f"advantage {self.advantage!r} is not one of {KINDS}")
        from components.errors import ParamsError

        try:
            Method("this method", self.allocation, self.advantage, self.predictor, self.features)
        except ParamsError as exc:  # pydantic reports a ValueError under the key path
            raise ValueError(str(exc)) from None
        return self


class RLParams(Section):
    seeds: Seeds = Field(min_length=1)
    steps: Steps = Field(80, ge=1, description="updates of the uniform run (the budget is steps x C)")
    q: Width = Field(16, ge=2, description="prompts per step (Q)")
    budget_per_step: Width = Field(128, ge=4, description="rollouts per step (C)")
    lo: Width = Field(2, ge=2, description="fewest rollouts per prompt (L)")
    hi: Width = Field(24, ge=2, description="most rollouts per prompt (U)")
    lr: float = Field(1e-4, gt=0, le=1)
    beta: float = Field(0.0, ge=0, description="KL coefficient to the frozen SFT reference")
    max_new: Width = Field(7, ge=1, description="completion tokens")
    eval_k: Width = Field(8, ge=1, description="samples per held-out prompt (mean@k, pass@k)")
    n_evals: Width = Field(4, ge=1, description="held-out evaluations along the budget")
    gp_window: Width = Field(256, ge=2, description="sliding window of prompt visits for the GP")
    gp_amplitude: float = Field(2.0, gt=0, description="RBF kernel variance s^2")
    gp_inference: Literal["laplace", "ep"] = Field(
        "laplace",
        description=("GP approximate inference: laplace (default) or ep (moment matching; ~25x the refit time)"),
    )
    dapo_max_rounds: Width = Field(3, ge=0, description="DAPO redraw rounds per step")
    grad_repeats: Width = Field(8, ge=2, description="re-samplings at frozen parameters for the gradient variance")
    methods: dict[str, MethodSpec]

    @model_validator(mode="after")
    def _consistent(self):
        missing = [m for m in REQUIRED if m not in self.methods]
        if missing:
            raise ValueError(f"methods must include {missing} (claims 1-3)")
        if self.hi < self.lo:
            raise ValueError(f"hi ({self.hi}) must be >= lo ({self.lo})")
        if not self.lo * self.q <= self.budget_per_step <= self.hi * self.q:
            raise ValueError(
                f"budget_per_step {self.budget_per_step} must lie in [lo*q, hi*q] = "
                f"[{self.lo * self.q}, {self.hi * self.q}]"
            )
        if self.budget_per_step % self.q:
            raise ValueError(f"budget_per_step {self.budget_per_step} must be a multiple of q {self.q} (uniform)")
        return self


class ClaimsParams(PowerClaims):
    power_deltas: list[float] = Field(
        [0.0, 1.0, 2.0, 3.0, 5.0],
        min_length=1,
        description=(
            "planted effects of C1's and C2's power check, in multiples of their bands (1 point of mean@k; 0.01 of "
            "the zero-variance share): the whole RL gain here is a few points"
        ),
    )
    delta: float = Field(0.01, ge=0, description="C1: no-effect band for mean@k (1 point)")
    delta_zero_var: float = Field(0.01, ge=0, description="C2: no-effect band for the zero-variance fraction")
    delta_brier: float = Field(0.001, ge=0, description="C3: no-effect band for the Brier difference")
    delta_rollouts: float = Field(0.02, ge=0, description="C4: band for rollouts-to-threshold (share of budget)")
    max_seen: Width = Field(1, ge=0, description="C3: prompts seen at most this often before are scored")


class Params(PaperParams):
    data: DataParams = Field(default_factory=DataParams)
    model: ModelParams = Field(default_factory=ModelParams)
    rl: RLParams
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _features_computed(self):
        for name, m in self.rl.methods.items():
            if m.predictor == "gp" and m.features not in self.data.features:
                raise ValueError(
                    f"rl.methods.{name}.features {m.features!r} is not in data.features {self.data.features}"
                )
        if self.model.hf_model and self.data.source != "dapo":
            raise ValueError(
                f"model.hf_model {self.model.hf_model!r}: a Hugging Face policy is scored by DAPO's "
                "answer rule on DAPO-format prompts; set data.source: dapo"
            )
        if not self.model.hf_model and self.data.source == "dapo":
            raise ValueError(
                "data.source 'dapo': the char-level TinyLM cannot read DAPO prompts; set "
                "model.hf_model (a causal LM id or local folder)"
            )
        return self


_DEFAULT_METHODS = {
    "uniform": {"allocation": "uniform"},
    "vip": {"allocation": "vip", "predictor": "gp", "features": "minilm"},
    "dapo": {"allocation": "dapo"},
}
_FULL_METHODS = {
    **_DEFAULT_METHODS,
    "uniform-rloo": {"allocation": "uniform", "advantage": "rloo"},
    "vip-rloo": {"allocation": "vip", "advantage": "rloo", "predictor": "gp", "features": "minilm"},
    "heuristic": {"allocation": "heuristic", "predictor": "running"},
    "vip-beta": {"allocation": "vip", "predictor": "beta"},
}

PRESETS = presets(
    # the card's 80 steps (at 40, C1 and C4 came out differently: see the README) and 2 evaluations along the budget
    default={
        "rl": {"seeds": [0, 1, 2], "methods": _DEFAULT_METHODS, "steps": 80, "n_evals": 2, "grad_repeats": 4},
        "resources": {"workers": 2},
    },
    smoke={
        "data": {"n_train": 200, "n_heldout": 40, "n_sft": 2000, "features": ["hashed"]},
        "model": {"d_model": 32, "n_layers": 1, "n_heads": 2, "d_ff": 64, "sft_steps": 60},
        "rl": {
            "seeds": [0],
            "steps": 6,
            "q": 8,
            "budget_per_step": 32,
            "hi": 8,
            "n_evals": 1,
            "eval_k": 4,
            "grad_repeats": 2,
            "methods": Replace(
                {
                    "uniform": {"allocation": "uniform"},
                    "vip": {"allocation": "vip", "predictor": "gp", "features": "hashed"},
                }
            ),
        },
        "claims": {"n_resamples": 1000, "power_sims": 10, "power_resamples": 200},
        "resources": {"workers": 1},
        "progress": False,
    },
    full={
        "data": {
            "source": "dapo",
            "hf_dataset": "BytedTsinghua-SIA/DAPO-Math-17k",
            "embedder": "sentence-transformers/all-MiniLM-L6-v2",
        },
        "model": {"hf_model": "Qwen/Qwen2.5-Math-1.5B"},
        # completions long enough for a worked solution ending in "Answer: ..." (the paper samples far longer)
        "rl": {
            "seeds": [0, 1, 2, 3, 4],
            "methods": _FULL_METHODS,
            "steps": 80,
            "n_evals": 4,
            "grad_repeats": 8,
            "max_new": 512,
        },
    },
)
