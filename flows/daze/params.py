"""Params of the daze pipeline (section ``daze`` of params.yaml) and its profiles.

Each entry of ``envs`` is one environment of the experiment: its id, training budget, the methods trained on
it and the attacker's knobs (a+, beta, tau, k). PPO settings are shared by every method (same tuning effort).
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from flows.runtime.params import ClaimsBase, Count, PaperParams, Section, Seed, Seeds, Steps, check_known, presets

ENVS = {"CartPole-v1": "discrete:2", "InvertedPendulum-v5": "box:1", "HalfCheetah-v5": "box:6", "Hopper-v5": "box:3"}
METHODS = ("clean", "daze", "trojdrl")


class AttackParams(Section):
    target: float = Field(description="a+: an action index (discrete) or normalised units in [-1, 1] (continuous)")
    beta: float = Field(ge=0, le=0.5, description="trigger probability per step (card: 0.02 CartPole, 1% MuJoCo)")
    tau: float = Field(0.2, gt=0, le=2, description="null-transition threshold on L_adv (card: 0.2 continuous)")
    k: float = Field(gt=0, le=1000, description="daze length factor: ceil(k * L_adv) random-action steps")


class EnvParams(Section):
    id: str = Field(description=f"one of {list(ENVS)}")
    steps: Steps = Field(ge=500, description="PPO environment steps per run")
    methods: list[str] = Field(
        min_length=2, description=f"methods trained here, from {list(METHODS)}; clean and daze are required"
    )
    attack: AttackParams

    @field_validator("id")
    @classmethod
    def _id(cls, v):
        return check_known([v], ENVS, "env")[0]

    @field_validator("methods")
    @classmethod
    def _methods(cls, v):
        check_known(v, METHODS, "method")
        if len(set(v)) != len(v) or not {"clean", "daze"} <= set(v):
            raise ValueError(f"methods must be distinct and include clean and daze, got {v}")
        return v

    @model_validator(mode="after")
    def _target(self):
        kind, n = ENVS[self.id].split(":")
        t = self.attack.target
        if kind == "discrete" and (t != int(t) or not 0 <= t < int(n)):
            raise ValueError(f"attack.target: {self.id} has actions 0..{int(n) - 1}, got {t}")
        if kind == "box" and not -1 <= t <= 1:
            raise ValueError(f"attack.target: normalised units must lie in [-1, 1], got {t}")
        return self

    @property
    def discrete(self) -> bool:
        return ENVS[self.id].startswith("discrete")


class PPOParams(Section):
    n_steps: int = Field(256, ge=8, le=65_536, description="rollout length per update")
    batch_size: int = Field(64, ge=4, le=65_536)
    n_epochs: int = Field(10, ge=1, le=100)
    gamma: float = Field(0.98, gt=0, lt=1)
    gae_lambda: float = Field(0.8, gt=0, le=1)
    learning_rate: float = Field(1e-3, gt=0, lt=1)
    ent_coef: float = Field(0.0, ge=0, le=1)
    hidden: list[int] = Field(default_factory=lambda: [64, 64], min_length=1, max_length=4)


class TrainParams(Section):
    seeds: Seeds = Field(min_length=1, description="training seeds, the claims' top-level resampling unit")
    ppo: PPOParams = Field(default_factory=PPOParams)
    log_every: int = Field(1000, ge=100, le=1_000_000, description="learning-curve resolution (env steps)")


class EvalParams(Section):
    seed: Seed = Field(10_000, description="reset seeds seed, seed+1, ... shared by every agent")
    episodes: Count = Field(10, ge=1, description="benign evaluation episodes per agent")
    states: Count = Field(200, ge=10, description="triggered states per agent (drawn from its benign episodes)")
    perturb_episodes: Count = Field(4, ge=1, description="episodes per agent and perturbed simulator")
    perturb_states: Count = Field(100, ge=10, description="triggered states per agent and perturbed simulator")
    factors: list[float] = Field(
        default_factory=lambda: [0.8, 1.2],
        min_length=1,
        description="mass and length factors of the transfer proxy (card: +-20%)",
    )

    @field_validator("factors")
    @classmethod
    def _factors(cls, v):
        if any(not 0.1 <= f <= 10 for f in v):
            raise ValueError(f"factors must lie in [0.1, 10], got {v}")
        return v


class ClaimsParams(ClaimsBase):
    asr_mean: float = Field(0.9, gt=0, le=1, description="C1: mean ASR above this")
    asr_lower: float = Field(0.8, gt=0, le=1, description="C1, C4: lower CI bound of ASR above this")
    ratio_point: float = Field(0.95, gt=0, le=1, description="C2: point BR ratio at least this")
    ratio_lower: float = Field(0.90, gt=0, le=1, description="C2: lower CI bound of the BR ratio above this")
    delta_asr: float = Field(0.01, ge=0, le=0.5, description="no-effect band of an ASR difference (1 point)")
    learned: float = Field(
        0.9,
        gt=0,
        le=1,
        description="precondition: clean BR at least this share of the task's maximum return (the clean agent learned)",
    )


class Params(PaperParams):
    envs: list[EnvParams] = Field(min_length=1)
    train: TrainParams
    eval: EvalParams = Field(default_factory=EvalParams)
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @field_validator("envs")
    @classmethod
    def _unique(cls, v):
        ids = [e.id for e in v]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate env ids {ids}")
        return v


_CARTPOLE = {
    "id": "CartPole-v1",
    "steps": 20_000,
    "methods": ["clean", "daze"],
    "attack": {"target": 0, "beta": 0.02, "tau": 0.5, "k": 5},
}
_PENDULUM = {
    "id": "InvertedPendulum-v5",
    "steps": 20_000,
    "methods": ["clean", "daze", "trojdrl"],
    "attack": {"target": -1.0, "beta": 0.01, "tau": 0.2, "k": 10},
}

PRESETS = presets(
    default={
        "envs": [_CARTPOLE, _PENDULUM],
        "train": {"seeds": [0, 1, 2]},
        "resources": {"workers": 2},
        "progress": False,
    },
    smoke={
        "envs": [{**_CARTPOLE, "steps": 4_000}],
        "train": {"seeds": [0]},
        "eval": {"episodes": 3, "states": 60, "perturb_episodes": 1, "perturb_states": 20},
        "claims": {"n_resamples": 1000, "power_sims": 10, "power_resamples": 200},
    },
    full={
        "envs": [
            {**_CARTPOLE, "steps": 100_000, "methods": ["clean", "daze", "trojdrl"]},
            {**_PENDULUM, "steps": 100_000},
            {
                "id": "HalfCheetah-v5",
                "steps": 1_000_000,
                "methods": ["clean", "daze", "trojdrl"],
                "attack": {"target": -1.0, "beta": 0.01, "tau": 0.2, "k": 10},
            },
            {
                "id": "Hopper-v5",
                "steps": 1_000_000,
                "methods": ["clean", "daze", "trojdrl"],
                "attack": {"target": -1.0, "beta": 0.01, "tau": 0.2, "k": 10},
            },
        ],
        "train": {
            "seeds": [0, 1, 2, 3, 4],
            "ppo": {"n_steps": 2048, "batch_size": 64, "gamma": 0.99, "gae_lambda": 0.95, "learning_rate": 3e-4},
        },
        "eval": {"episodes": 20, "states": 500},
    },
)
