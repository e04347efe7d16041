"""Params of the icql pipeline (section ``icql`` of params.yaml) and its profiles."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from components.rl.agents import ACTOR_SCHEDULES
from components.rl.behaviour import MODES
from components.rl.linear_attention import INITS
from components.rl.trainer import METHODS
from flows.runtime.params import (
    Count,
    PaperParams,
    PowerClaims,
    Replace,
    Section,
    Seed,
    Seeds,
    Steps,
    check_known,
    presets,
)


class ExternalSource(Section):
    """A paper-scale dataset loaded only with PAPERLINE_ONLINE=1 (full profile)."""

    source: str = Field(description="minari (D4RL/Minari id) or sac (Gymnasium MuJoCo env id, SAC-collected)")
    id: str = Field(min_length=1, description="e.g. D4RL/kitchen/complete-v2 or HalfCheetah-v5")
    train_steps: Steps = Field(100_000, ge=1, description="SAC training steps before collection (sac only)")
    episodes: Count = Field(100, ge=1, description="episodes collected from the SAC policy (sac only)")
    ref_min_score: float | None = Field(
        None,
        description="random anchor of the normalised score; default: "
        "Minari's published value, else a uniform-random policy measured in the run",
    )
    ref_max_score: float | None = Field(
        None,
        description="expert anchor of the normalised score; default: "
        "Minari's published value, else the behaviour data's mean episode return",
    )

    @field_validator("source")
    @classmethod
    def _source(cls, v):
        check_known([v], ("minari", "sac"), "source")
        return v

    @field_validator("id")
    @classmethod
    def _id(cls, v):
        """The id becomes a folder name (``ext-<id with / as _>``): letters, digits and ``_ . - /`` only, no ``..``."""
        from flows.runtime.paths import UnsafePathError, check_name

        try:
            check_name(v.replace("/", "_"), "id")
        except UnsafePathError as exc:
            raise ValueError(str(exc).removeprefix("id: ")) from None
        return v


class DataParams(Section):
    tasks: list[int] = Field(min_length=1, description="numbers of subtasks of the datasets (card: 1 and 4)")
    episodes: Count = Field(300, ge=2, description="behaviour episodes per dataset (card: 300)")
    max_steps: int = Field(100, ge=5, le=1000, description="episode length cap (card: 100)")
    layout_seed: Seed = Field(0, description="draws the targets and the region drift/friction")
    noise: float = Field(0.3, ge=0, le=2, description="Gaussian action noise of the scripted sub-controllers")
    compensation: float = Field(
        0.5,
        ge=0,
        le=1,
        description="share of the local drift the scripted "
        "sub-controllers cancel (the expert: 1; below 1 the data is systematically suboptimal)",
    )
    drift: float = Field(1.5, ge=0, le=5, description="magnitude of each region's drift (force is 3; was 0.4)")
    radius: float = Field(0.08, gt=0, lt=0.5, description="distance at which a subtask's target counts as reached")
    mode_probs: dict[str, float] = Field(
        default_factory=lambda: {"ordered": 0.3, "partial": 0.4, "shuffled": 0.3},
        description="share of ordered / partial / out-of-order episodes",
    )
    reference_episodes: Count = Field(50, ge=1, description="episodes of the random and expert reference policies")
    external: list[ExternalSource] = Field(
        default_factory=list,
        description="paper-scale datasets (online only): validated, stored, "
        "trained on with train.external_methods and evaluated",
    )

    @field_validator("external")
    @classmethod
    def _external(cls, v):
        ids = [s.id for s in v]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate ids in {ids}")
        return v

    @field_validator("tasks")
    @classmethod
    def _tasks(cls, v):
        if any(not 1 <= t <= 4 for t in v):
            raise ValueError("subtask counts must be in 1..4")
        return sorted(set(v))

    @field_validator("mode_probs")
    @classmethod
    def _modes(cls, v):
        check_known(list(v), MODES, "behaviour mode")
        if any(p < 0 for p in v.values()) or abs(sum(v.values()) - 1) > 1e-6:
            raise ValueError("probabilities must be >= 0 and sum to 1")
        return v


class RetrievalParams(Section):
    k: int = Field(20, ge=1, le=512, description="retrieved transitions per query (card: 20)")
    exclude_self: bool = Field(True, description="a dataset state never retrieves its own transition")


class AgentParams(Section):
    """Shared by every method (IQL and ICQL share all of their IQL part)."""

    hidden: int = Field(128, ge=4, le=1024, description="MLP width (card: 2x128)")
    layers: int = Field(2, ge=1, le=6)
    lr: float = Field(3e-4, gt=0, lt=1)
    gamma: float = Field(0.99, gt=0, lt=1)
    polyak_tau: float = Field(0.005, gt=0, le=1)
    expectile: float = Field(0.7, gt=0.5, lt=1, description="IQL/ICQL expectile tau")
    beta: float = Field(3.0, gt=0, description="IQL/ICQL AWR inverse temperature")
    n_critics: int = Field(2, ge=1, le=4, description="IQL/ICQL twin critics (min over them)")
    actor_schedule: str = Field(
        "cosine",
        description=(
            "IQL/ICQL actor learning-rate schedule over train.steps: cosine (anneal to 0, as IQL's reference code "
            "and CORL) or constant"
        ),
    )
    td3_alpha: float = Field(2.5, gt=0, description="TD3+BC's alpha")
    d: int = Field(32, ge=2, le=256, description="ICQL feature dimension (card: 32)")
    n_layers: int = Field(4, ge=1, le=16, description="ICQL linear-attention layers L (card: 4)")
    init: str = Field("td", description="ICQL P/G initialisation: td (the TD(0) construction) or random")
    alpha: float = Field(1.0, gt=0, le=10, description="ICQL TD step size of the td initialisation")
    fixed_features: bool = Field(False, description="freeze ICQL's feature MLP at its random init")

    @field_validator("init")
    @classmethod
    def _init(cls, v):
        check_known([v], INITS, "init")
        return v

    @field_validator("actor_schedule")
    @classmethod
    def _actor_schedule(cls, v):
        check_known([v], ACTOR_SCHEDULES, "actor schedule")
        return v


class TrainParams(Section):
    runs: dict[str, list[str]] = Field(description="methods per task (key: subtask count as a string)")
    seeds: Seeds = Field(min_length=1)
    steps: Steps = Field(ge=1, description="gradient steps per run (card: 8k default, 50k full)")
    batch_size: int = Field(ge=2, le=4096)
    curve_points: int = Field(20, ge=1, le=1000, description="learning-curve points per run (losses and dev score)")
    dev_episodes: int = Field(10, ge=0, le=1000, description="dev rollouts per learning-curve point (0: losses only)")
    dev_seed: Seed = Field(
        20_000,
        description="dev reset seeds dev_seed..dev_seed+dev_episodes-1 (disjoint from the evaluate stage's test seeds)",
    )
    external_methods: list[str] = Field(
        default_factory=list, description="methods trained on each data.external dataset (train.seeds)"
    )

    @field_validator("runs")
    @classmethod
    def _runs(cls, v):
        for task, methods in v.items():
            if not task.isdigit():
                raise ValueError(f"task key {task!r} must be a subtask count like '4'")
            check_known(methods, METHODS, "method")
        return v

    @field_validator("external_methods")
    @classmethod
    def _external_methods(cls, v):
        check_known(v, METHODS, "method")
        return v


class EvalParams(Section):
    episodes: Count = Field(20, ge=2, description="evaluation episodes per policy (card: 20)")
    seed: Seed = Field(10_000, description="reset seeds seed..seed+episodes-1, shared by every method")
    q_episodes: Count = Field(40, ge=2, description="dataset trajectories for the Q-accuracy claim")


class ClaimsParams(PowerClaims):
    delta_score: float = Field(2.0, ge=0, description="no-practical-effect band, normalised-score points")
    delta_spearman: float = Field(0.02, ge=0, description="no-practical-effect band of a Spearman difference")


class Params(PaperParams):
    seed: Seed = 0
    data: DataParams
    retrieval: RetrievalParams = Field(default_factory=RetrievalParams)
    agent: AgentParams = Field(default_factory=AgentParams)
    train: TrainParams
    eval: EvalParams = Field(default_factory=EvalParams)
    claims: ClaimsParams = Field(default_factory=ClaimsParams)

    @model_validator(mode="after")
    def _consistent(self):
        for task in self.train.runs:
            if int(task) not in self.data.tasks:
                raise ValueError(f"train.runs: task {task} has no dataset (data.tasks = {self.data.tasks})")
        dev = range(self.train.dev_seed, self.train.dev_seed + self.train.dev_episodes)
        test = range(self.eval.seed, self.eval.seed + self.eval.episodes)
        if dev and max(dev.start, test.start) < min(dev.stop, test.stop):
            raise ValueError(
                f"train.dev_seed: dev reset seeds {dev.start}..{dev.stop - 1} overlap the test seeds "
                f"{test.start}..{test.stop - 1} (eval.seed)"
            )
        if self.eval.q_episodes > self.data.episodes:
            raise ValueError(f"eval.q_episodes ({self.eval.q_episodes}) exceeds data.episodes ({self.data.episodes})")
        return self


_FOUR = ["bc", "td3bc", "iql", "icql", "icql-random"]
_SMALL = {"hidden": 64, "d": 16}

PRESETS = presets(
    default={
        "data": {"tasks": [1, 4]},
        "retrieval": {"k": 10},
        "agent": _SMALL,
        "train": {"runs": {"4": _FOUR, "1": ["iql", "icql"]}, "seeds": [0, 1, 2], "steps": 6000, "batch_size": 64},
        "resources": {"workers": 2},
        "progress": False,  # no tqdm bars over gradient steps unless asked for (--set progress=true)
    },
    smoke={
        "data": {"episodes": 40, "max_steps": 60, "reference_episodes": 10},
        "retrieval": {"k": 5},
        "train": {
            "runs": Replace({"4": ["iql", "icql", "icql-random"], "1": ["iql", "icql"]}),
            "seeds": [0],
            "steps": 60,
            "batch_size": 32,
            "curve_points": 4,
            "dev_episodes": 2,
        },
        "eval": {"episodes": 5, "q_episodes": 10},
        "claims": {"n_resamples": 1000, "power_sims": 10, "power_resamples": 200},
        "resources": {"workers": 1},
    },
    full={
        "data": {
            "episodes": 1000,
            "external": [
                {"source": "minari", "id": "D4RL/kitchen/complete-v2"},
                {"source": "minari", "id": "D4RL/kitchen/mixed-v2"},
                {"source": "minari", "id": "D4RL/pen/human-v2"},
                {"source": "minari", "id": "D4RL/door/cloned-v2"},
                {"source": "sac", "id": "HalfCheetah-v5", "train_steps": 200_000, "episodes": 200},
                {"source": "sac", "id": "Hopper-v5", "train_steps": 200_000, "episodes": 200},
            ],
        },
        "retrieval": {"k": 20},
        "agent": Replace({}),
        "train": {
            "runs": Replace({"4": _FOUR, "1": _FOUR}),
            "seeds": [0, 1, 2, 3, 4],
            "steps": 50_000,
            "batch_size": 256,
            "external_methods": ["bc", "td3bc", "iql", "icql"],
        },
        "eval": {"episodes": 50},
    },
)
