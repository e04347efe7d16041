"""cer-god's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(11, "cer-god", "CER-GOD: clustering-guided edge reweighting for graph outlier detection", "11-cer-god.md")

L = Layout("cer-god", code=("common",))
CLEAN, GRAPHS, RUNS, EVAL = (L.out(n) for n in ("clean", "graphs", "runs", "eval"))
PYGOD_CACHE = L.out("pygod-cache")  # not a stage output: PyGOD benchmark files (full profile, online or placed)
_CODE = ("components/graph", "components/data/validate.py")

STAGES = (
    L.stage(
        "build",
        code=_CODE,
        params=("seed", "graphs"),
        writes=(CLEAN,),
        summary="clean graphs: attributed SBM, Minnesota road graph (pygsp), PyGOD benchmarks online; GX checks",
    ),
    L.stage(
        "inject",
        code=_CODE,
        reads=(CLEAN,),
        params=("seed", "graphs", "injection"),
        writes=(GRAPHS,),
        after=("build",),
        summary="contextual, structural (clique) and trap outliers; GX: label rate = injected rate, symmetric, finite",
    ),
    L.stage(
        "fit",
        code=_CODE,
        reads=(GRAPHS,),
        params=("seed", "graphs", "cergod", "baselines", "run", "resources", "progress"),
        writes=(RUNS,),
        after=("inject",),
        summary="CER-GOD, its no-mask / no-diversity ablations, DOMINANT, AnomalyDAE, GAE, IsolationForest, "
        "probes over seeds",
    ),
    L.stage(
        "evaluate",
        code=_CODE,
        reads=(RUNS, GRAPHS),
        params=("graphs", "claims.contamination"),
        writes=(EVAL,),
        after=("fit",),
        summary="AUC, AP, Recall@k, trap/rest AUC, F1 per run; MLflow child run per graph and method",
    ),
    L.report_stage(
        reads=(EVAL, RUNS),
        code=("components/graph",),
        params=("seed", "graphs", "run", "cergod.collapse_share"),
        plots={"auc_by_method.csv": {"x": "mean_auc", "y": "method", "template": "bar_horizontal", "color": "graph"}},
        after=("evaluate",),
        summary="claims 1-4 with the leakage guard (max of degree and feature-norm ranks); "
        "scores per method and graph; edge weights; collapse rates",
    ),
)
