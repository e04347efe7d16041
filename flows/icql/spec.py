"""icql's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(6, "icql", "ICQL: in-context compositional Q-learning for offline RL", "06-icql.md")

L = Layout("icql", code=("common",))
DATASETS, MODELS, EVAL = (L.out(n) for n in ("datasets", "models", "eval"))
_RL = ("components/rl",)

STAGES = (
    L.stage(
        "data",
        code=(*_RL, "components/data/validate.py"),
        params=("seed", "data", "retrieval"),
        writes=(DATASETS,),
        summary="kitchen-lite datasets (1, 4 subtasks) and data.external; GX checks; k-NN contexts",
    ),
    L.stage(
        "train",
        code=_RL,
        reads=(DATASETS,),
        params=("seed", "agent", "train", "resources", "progress"),
        writes=(MODELS,),
        after=("data",),
        summary="BC, TD3+BC, IQL, ICQL and ICQL-random over seeds; one MLflow child run per model",
    ),
    L.stage(
        "evaluate",
        code=(
            L.module_file("evaluate_external"),
            L.module_file("qvalues"),
            L.module_file("train"),
            *_RL,
            "components/data/validate.py",
        ),
        reads=(DATASETS, MODELS),
        params=("seed", "eval", "data", "agent.gamma"),
        writes=(EVAL,),
        after=("train",),
        summary="roll out every policy (same reset seeds), normalised scores; Q-hat vs Monte-Carlo returns",
    ),
    L.report_stage(
        code=(L.module_file("report_external"), *_RL),
        reads=(EVAL, MODELS, DATASETS),
        params=("seed", "train", "retrieval.k", "eval"),
        plots={"scores.csv": {"x": "score", "y": "group", "template": "bar_horizontal"}},
        after=("evaluate",),
        summary="claims 1-4 with verdicts; scores with CIs per method and task; Q quality; retrieval ablation",
    ),
)
