"""icql's DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import StageSpec

IC = "data/icql"
_CODE = ("flows/icql/params.py", "flows/icql/__init__.py", "flows/icql/common.py", "components/rl")

STAGES = (
    StageSpec(
        name="data",
        module="flows.icql.data",
        deps=("flows/icql/data.py", *_CODE, "components/data/validate.py"),
        params=("profile", "icql.seed", "icql.data", "icql.retrieval"),
        outs=(f"{IC}/datasets",),
        summary="kitchen-lite datasets (1, 4 subtasks) and data.external; GX checks; k-NN contexts",
    ),
    StageSpec(
        name="train",
        module="flows.icql.train",
        deps=("flows/icql/train.py", *_CODE, f"{IC}/datasets"),
        params=("profile", "icql.seed", "icql.agent", "icql.train"),
        outs=(f"{IC}/models",),
        after=("data",),
        summary="BC, TD3+BC, IQL, ICQL and ICQL-random over seeds; one MLflow child run per model",
    ),
    StageSpec(
        name="evaluate",
        module="flows.icql.evaluate",
        deps=("flows/icql/evaluate.py", "flows/icql/evaluate_external.py", "flows/icql/qvalues.py", "flows/icql/train.py", *_CODE,
              f"{IC}/datasets", f"{IC}/models", "components/data/validate.py"),
        params=("profile", "icql.seed", "icql.eval", "icql.data", "icql.agent.gamma"),
        outs=(f"{IC}/eval",),
        after=("train",),
        summary="roll out every policy (same reset seeds), normalised scores; Q-hat vs Monte-Carlo returns",
    ),
    StageSpec(
        name="report",
        module="flows.icql.report",
        deps=("flows/icql/report.py", "flows/icql/claims.py", "flows/icql/report_external.py", *_CODE,
              f"{IC}/eval", f"{IC}/models", f"{IC}/datasets", "components/reporting", "components/evaluation",
              "flows/runtime/report_stage.py"),
        params=("profile", "icql.seed", "icql.claims", "icql.train.seeds", "icql.retrieval.k", "icql.eval"),
        outs=("reports/icql/report.md", "reports/icql/report.html", "reports/icql/claims.json",
              "reports/icql/figures"),
        metrics=("reports/icql/metrics.json",),
        plots=(f"reports/icql/plots/scores.csv",),
        plot_axes={"scores.csv": {"x": "score", "y": "group", "template": "bar_horizontal"}},
        after=("evaluate",),
        summary="claims 1-4 with verdicts; scores with CIs per method and task; Q quality; retrieval ablation",
    ),
)
