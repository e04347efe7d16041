"""cer-god's DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import StageSpec

D = "data/cer-god"
R = "reports/cer-god"
_CODE = ("flows/cer_god/params.py", "flows/cer_god/common.py", "flows/cer_god/__init__.py", "components/graph")

STAGES = (
    StageSpec(
        name="build", module="flows.cer_god.build",
        deps=("flows/cer_god/build.py", *_CODE, "components/data/validate.py"),
        params=("profile", "cer-god.seed", "cer-god.graphs"),
        outs=(f"{D}/clean",),
        summary="clean graphs: attributed SBM, Minnesota road graph (pygsp), PyGOD benchmarks online; GX checks",
    ),
    StageSpec(
        name="inject", module="flows.cer_god.inject",
        deps=("flows/cer_god/inject.py", *_CODE, f"{D}/clean", "components/data/validate.py"),
        params=("profile", "cer-god.seed", "cer-god.graphs", "cer-god.injection"),
        outs=(f"{D}/graphs",), after=("build",),
        summary="contextual, structural (clique) and trap outliers; GX: label rate = injected rate, symmetric, finite",
    ),
    StageSpec(
        name="fit", module="flows.cer_god.fit",
        deps=("flows/cer_god/fit.py", *_CODE, f"{D}/graphs", "components/data/validate.py"),
        params=("profile", "cer-god.seed", "cer-god.graphs", "cer-god.cergod", "cer-god.baselines", "cer-god.run"),
        outs=(f"{D}/runs",), after=("inject",),
        summary="CER-GOD, its no-mask / no-diversity ablations, DOMINANT, AnomalyDAE, GAE, IsolationForest, probes over seeds",
    ),
    StageSpec(
        name="evaluate", module="flows.cer_god.evaluate",
        deps=("flows/cer_god/evaluate.py", *_CODE, f"{D}/runs", f"{D}/graphs", "components/data/validate.py"),
        params=("profile", "cer-god.graphs", "cer-god.claims.contamination"),
        outs=(f"{D}/eval",), after=("fit",),
        summary="AUC, AP, Recall@k, trap/rest AUC, F1 per run; MLflow child run per graph and method",
    ),
    StageSpec(
        name="report", module="flows.cer_god.report",
        deps=("flows/cer_god/report.py", "flows/cer_god/claims.py", *_CODE, f"{D}/eval", f"{D}/runs",
              "components/reporting", "components/evaluation", "flows/runtime/report_stage.py"),
        params=("profile", "cer-god.seed", "cer-god.graphs", "cer-god.run", "cer-god.cergod.collapse_share",
                "cer-god.claims"),
        outs=(f"{R}/report.md", f"{R}/report.html", f"{R}/claims.json", f"{R}/figures"),
        metrics=(f"{R}/metrics.json",),
        plots=(f"{R}/plots/auc_by_method.csv",),
        plot_axes={"auc_by_method.csv": {"x": "mean_auc", "y": "method", "template": "bar_horizontal"}},
        after=("evaluate",),
        summary="claims 1-4 with the degree-leakage guard; scores per method and graph; edge weights; collapse rates",
    ),
)
