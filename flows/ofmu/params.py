"""Params of the ofmu pipeline (section ``ofmu`` of params.yaml) and its profiles."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from flows.runtime.params import (
    Count,
    PaperParams,
    PowerClaims,
    ProjectPath,
    Section,
    Seed,
    Seeds,
    Steps,
    Width,
    presets,
)

REQUIRED_LM = ("ga", "graddiff", "npo", "ofmu", "ofmu-beta0")
REQUIRED_VISION = ("graddiff", "ofmu")


class DataParams(Section):
    source: str = Field("synthetic", description="'synthetic' (offline TOFU-style authors) or a TOFU id/path (full)")
    tofu_config: str = Field("forget10", description="TOFU forget split when source is the HF dataset")
    n_authors: int = Field(40, ge=2, le=676)
    n_attributes: int = Field(8, ge=1, le=8)
    n_templates: int = Field(2, ge=1, le=4, description="question templates per attribute")
    n_perturbed: int = Field(3, ge=1, le=9)
    forget_frac: float = Field(0.1, gt=0, lt=1, description="share of authors to forget (0.1 = forget10)")
    n_general: Count = Field(100, ge=4, description="WordNet world-knowledge questions")
    n_eval_retain: Count = Field(64, ge=2, description="retain questions evaluated")
    vocab_size: int = Field(1024, ge=300, le=65535, description="byte-level BPE trained on the QA text")
    sources_dir: ProjectPath = Field(".paperline/sources")
    seed: Seed = 0


class ModelParams(Section):
    hf_model: str | None = Field(None, description="HF causal-LM id for the full profile (None: the tiny LM)")
    d_model: Width = Field(128, ge=8)
    n_layers: Width = Field(2, ge=1)
    n_heads: Width = Field(4, ge=1)
    d_ff: Width = Field(352, ge=8)
    max_seq_len: Width = Field(96, ge=16)
    train_steps: Steps = Field(400, ge=10)
    batch_size: Width = Field(32, ge=1)
    lr: float = Field(3e-3, gt=0)
    seed: Seed = 0


class MethodSpec(Section):
    kind: str = Field(description="ga | graddiff | npo | ofmu")
    options: dict[str, Any] = Field(default_factory=dict, description="fields of the method's Config")

    @model_validator(mode="after")
    def _known(self):
        from components.unlearning import make_config

        bad = [k for k, v in self.options.items() if isinstance(v, float) and not math.isfinite(v)]
        if bad:
            raise ValueError(f"options {bad}: must be finite numbers")
        make_config(self.kind, self.options)  # raises naming the unknown kind or option
        return self


def _check_budget(budget: int, methods: dict[str, MethodSpec]) -> None:
    from components.unlearning import make_config, step_cost

    for name, m in methods.items():
        cost = step_cost(m.kind, make_config(m.kind, m.options))
        if budget % cost:
            raise ValueError(f"budget {budget} is not a multiple of method {name!r}'s step cost {cost}")


def checkpoint_grid(methods: dict[str, MethodSpec]) -> int:
    """The least common multiple of the methods' step costs: the finest checkpoint grid all methods share."""
    from components.unlearning import make_config, step_cost

    return math.lcm(*(step_cost(m.kind, make_config(m.kind, m.options)) for m in methods.values()))


def _check_tune(
    section: str,
    tune: dict[str, list[dict]],
    methods: dict[str, MethodSpec],
    budget: int,
    seeds: list[int],
    tune_seeds: list[int],
) -> None:
    """A tuning grid names known methods, gives each the same number of settings (equal tuning effort), every
    setting is a valid config whose step cost divides the budget, and the tuning seeds are not claim seeds."""
    if not tune:
        return
    unknown = sorted(set(tune) - set(methods))
    if unknown:
        raise ValueError(f"{section}.tune: unknown method(s) {unknown}; known: {sorted(methods)}")
    sizes = {name: len(grid) for name, grid in tune.items()}
    if len(set(sizes.values())) != 1 or 0 in sizes.values():
        raise ValueError(f"{section}.tune: every method needs the same non-zero number of settings, got {sizes}")
    for name, grid in tune.items():
        m = methods[name]
        _check_budget(
            budget, {f"{name}[{i}]": MethodSpec(kind=m.kind, options={**m.options, **o}) for i, o in enumerate(grid)}
        )
    if set(seeds) & set(tune_seeds):
        raise ValueError(f"{section}.tune_seeds must not overlap the claims' seeds {seeds}")


def _grid(**axes) -> list[dict]:
    """The full factorial of ``axes`` (name -> values), as a list of option overrides."""
    import itertools

    keys = list(axes)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(axes[k] for k in keys))]


def _ofmu_grid(lrs) -> list[dict]:
    return [
        {"lr_inner": lr, "lr_outer": lr, "beta": b, "inner_steps": t, "rho0": r, "rho_growth": c}
        for lr in lrs
        for b in (1.0, 0.1)
        for t, r, c in ((3, 0.01, 1.1), (1, 0.1, 1.5))
    ]


# The dev sweep (``tune: grid``): 8 settings per method, the same budget; lr for every method, plus what each
# method's own knobs are (GradDiff/NPO: the retain weight alpha; OFMU: beta and (T, rho0, c)).
LM_SWEEP = {
    "ga": _grid(lr=[1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2]),
    "graddiff": _grid(lr=[1e-4, 3e-4, 1e-3, 3e-3], alpha=[1.0, 2.0]),
    "npo": _grid(lr=[1e-4, 3e-4, 1e-3, 3e-3], alpha=[1.0, 2.0]),
    "ofmu": _ofmu_grid([3e-4, 1e-3]),
}
VISION_SWEEP = LM_SWEEP


def _expand(v):
    if v == "grid":
        return {k: [dict(o) for o in g] for k, g in LM_SWEEP.items()}
    return v


class UnlearnParams(Section):
    budget: Steps = Field(gt=0, description="gradient evaluations per method (matched); multiple of every step cost")
    batch_size: Width = Field(16, ge=1, description="forget and retain examples per batch")
    seeds: Seeds = Field(min_length=1)
    methods: dict[str, MethodSpec]
    max_new: Width = Field(16, ge=1, description="greedy tokens generated for ROUGE-L")
    ga_stop: Literal["retrain", "none"] = Field(
        "retrain",
        description=(
            "GA's early stop: 'retrain' stops GA once its forget-batch loss exceeds the Retrain model's mean forget "
            "loss (the usual TOFU practice of stopping GA, with a threshold no claim run tunes); 'none' never stops"
        ),
    )
    tune: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description=(
            "dev-split sweep: method -> list of option overrides (same length for every method), or 'grid' for "
            "LM_SWEEP. Empty (default): "
            "the frozen options are used; see the README for the sweep that froze them"
        ),
    )
    tune_seeds: Seeds = Field(default_factory=lambda: [100], min_length=1)
    _grid_name = field_validator("tune", mode="before")(lambda v: _expand(v))
    tune_fq_min: float = Field(
        0.05,
        gt=0,
        le=1,
        description=(
            "tuning rule: per method, the best dev MU among settings whose dev FQ (median over tune seeds) reaches "
            "this; if none does, the highest dev FQ"
        ),
    )

    @model_validator(mode="after")
    def _consistent(self):
        missing = [m for m in REQUIRED_LM if m not in self.methods]
        if missing:
            raise ValueError(f"methods must include {missing} (claims 1-3)")
        _check_budget(self.budget, self.methods)
        _check_tune("unlearn", self.tune, self.methods, self.budget, self.seeds, self.tune_seeds)
        return self


class VisionParams(Section):
    scenarios: list[str] = Field(min_length=1, description="'class-K' and/or 'random'")
    random_frac: float = Field(0.1, gt=0, lt=1)
    seeds: Seeds = Field(min_length=1)
    hidden: Width = Field(128, ge=1)
    epochs: Steps = Field(30, ge=1)
    lr: float = Field(1e-3, gt=0)
    batch_size: Width = Field(32, ge=1)
    test_frac: float = Field(0.2, gt=0, lt=1)
    budget: Steps = Field(gt=0)
    methods: dict[str, MethodSpec]
    checkpoint_every: int | None = Field(
        None,
        ge=1,
        description=(
            "gradient evaluations between the UA-band checks, the same for every method (None: the least common "
            "multiple of the methods' step costs, i.e. one OFMU round)"
        ),
    )
    tune: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description=(
            "dev sweep: method -> list of option overrides (same length for every method), or 'grid' for "
            "VISION_SWEEP; run on tune_scenario"
        ),
    )
    _grid_name = field_validator("tune", mode="before")(lambda v: _expand(v))
    tune_scenario: str = Field("class-8", description="the dev scenario tuning runs on (never a claims scenario)")
    tune_seeds: Seeds = Field(default_factory=lambda: [100], min_length=1)

    @field_validator("scenarios")
    @classmethod
    def _scen(cls, v):
        bad = [s for s in v if not (s == "random" or (s.startswith("class-") and s[6:].isdigit() and int(s[6:]) < 10))]
        if bad:
            raise ValueError(f"unknown scenario(s) {bad}; use 'class-0'..'class-9' or 'random'")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        missing = [m for m in REQUIRED_VISION if m not in self.methods]
        if missing:
            raise ValueError(f"methods must include {missing} (claim 4)")
        _check_budget(self.budget, self.methods)
        _check_tune("vision", self.tune, self.methods, self.budget, self.seeds, self.tune_seeds)
        if self.tune and (self.tune_scenario in self.scenarios or not self._scen([self.tune_scenario])):
            raise ValueError(f"vision.tune_scenario {self.tune_scenario!r} must be a scenario the claims do not use")
        every = self.checkpoint_every
        if every is not None and (self.budget % every or every % checkpoint_grid(self.methods)):
            raise ValueError(
                f"vision.checkpoint_every {every} must divide the budget {self.budget} and be a "
                f"multiple of every method's step cost (their lcm: {checkpoint_grid(self.methods)})"
            )
        return self


class ClaimsParams(PowerClaims):
    delta_mu: float = Field(0.01, ge=0, description="no-effect band for MU differences (1 point)")
    fq_margin_log10: float = Field(0.5, ge=0, description="claim 1: OFMU's FQ counts as 'no lower' above 10^-margin x")
    delta_cos: float = Field(0.01, ge=0, description="claim 3: no-effect band for mean |cos|")
    delta_acc: float = Field(0.01, ge=0, description="claim 4: no-effect band for TA (1 point)")
    ua_band: float = Field(0.02, ge=0, description="claim 4: UA within +- this of Retrain's UA")
    p_hi: float = Field(0.8, gt=0, le=1, description="claim 4: share of runs that must reach the UA band")
    p_lo: float = Field(0.2, ge=0, lt=1)


class Params(PaperParams):
    data: DataParams = Field(default_factory=DataParams)
    model: ModelParams = Field(default_factory=ModelParams)
    unlearn: UnlearnParams
    vision: VisionParams
    claims: ClaimsParams = Field(default_factory=ClaimsParams)


def _ofmu(**kw) -> dict:
    base = {
        "beta": 1.0,
        "inner_steps": 3,
        "lr_inner": 1e-3,
        "lr_outer": 1e-3,
        "rho0": 0.01,
        "rho_growth": 1.1,
        "hvp_mode": "full",
        "penalty": "cos",
        "inner_on_copy": False,
    }
    return {"kind": "ofmu", "options": {**base, **kw}}


# Frozen from the dev sweep (README, "Tuning"): `tune: grid` on the dev split, the rule in flows/ofmu/tune.py.
_LM_OFMU = {"beta": 0.1, "inner_steps": 1, "lr_inner": 1e-3, "lr_outer": 1e-3, "rho0": 0.1, "rho_growth": 1.5}
LM_METHODS = {
    "ga": {"kind": "ga", "options": {"lr": 1e-2}},  # + early stop at Retrain's forget loss (unlearn.ga_stop)
    "graddiff": {"kind": "graddiff", "options": {"lr": 1e-4, "gamma": 1.0, "alpha": 1.0}},
    "npo": {"kind": "npo", "options": {"lr": 3e-4, "beta": 0.1, "alpha": 2.0}},
    "ofmu": _ofmu(**_LM_OFMU),
    "ofmu-beta0": _ofmu(**{**_LM_OFMU, "beta": 0.0}),
    "ofmu-cos2": _ofmu(**_LM_OFMU, penalty="cos2"),  # variant: penalise cos^2 (drives cos to 0); not in claims
    "wsum-0.25": {"kind": "graddiff", "options": {"lr": 1e-4, "gamma": 0.25, "alpha": 0.75}},  # GradDiff's lr
    "wsum-0.75": {"kind": "graddiff", "options": {"lr": 1e-4, "gamma": 0.75, "alpha": 0.25}},
}
_V_OFMU = {"beta": 0.1, "inner_steps": 3, "lr_inner": 1e-3, "lr_outer": 1e-3, "rho0": 0.01, "rho_growth": 1.1}
VISION_METHODS = {
    "ga": {"kind": "ga", "options": {"lr": 1e-4}},
    "graddiff": {"kind": "graddiff", "options": {"lr": 1e-3, "gamma": 1.0, "alpha": 2.0}},
    "npo": {"kind": "npo", "options": {"lr": 3e-4, "beta": 0.1, "alpha": 2.0}},
    "ofmu": _ofmu(**_V_OFMU),
    "ofmu-cos2": _ofmu(**_V_OFMU, penalty="cos2"),
}

PRESETS = presets(
    default={
        "unlearn": {"budget": 90, "seeds": [0, 1, 2], "methods": LM_METHODS},
        "vision": {
            "scenarios": ["class-3", "random"],
            "seeds": [0, 1, 2, 3, 4],
            "budget": 180,
            "methods": VISION_METHODS,
        },
    },
    smoke={
        "data": {
            "n_authors": 12,
            "n_attributes": 4,
            "n_templates": 1,
            "forget_frac": 0.17,
            "n_general": 24,
            "n_eval_retain": 16,
            "vocab_size": 512,
        },
        "model": {"d_model": 64, "n_heads": 2, "d_ff": 176, "train_steps": 120, "batch_size": 16},
        "unlearn": {"budget": 20, "batch_size": 8, "seeds": [0], "max_new": 12},
        "vision": {"scenarios": ["class-3"], "seeds": [0], "epochs": 5, "budget": 36},
        "claims": {"n_resamples": 1000, "power_sims": 10, "power_resamples": 200},
    },
    full={
        "data": {
            "source": "locuslab/TOFU",
            "tofu_config": "forget10",
            "n_authors": 200,
            "n_templates": 4,
            "n_general": 400,
            "n_eval_retain": 400,
        },
        "model": {"hf_model": "open-unlearning/tofu_Llama-2-7b-chat-hf_full", "train_steps": 2000},
        "unlearn": {"budget": 540, "max_new": 64},
        "vision": {"seeds": list(range(10)), "budget": 900},
    },
)
