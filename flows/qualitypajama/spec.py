"""QualityPajama's DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import SHARED, StageSpec

QP = "data/qualitypajama"


def _qp(name: str, deps: tuple[str, ...], params: tuple[str, ...], outs: tuple[str, ...], **kw) -> StageSpec:
    code = (f"flows/qualitypajama/{name}.py", "flows/qualitypajama/params.py")
    return StageSpec(
        name=name,
        module=f"flows.qualitypajama.{name}",
        deps=code + deps,
        params=("profile", "qualitypajama.seed", "qualitypajama.interventions", *params),
        outs=outs,
        **kw,
    )


STAGES = (
    _qp(
        "corpus",
        ("data/sources", "components/data/corpus", "components/data/validate.py"),
        ("qualitypajama.corpus",),
        (f"{QP}/corpus",),
        after=(f"{SHARED}:sources",),
        summary="sample the raw pool, inject labelled near-copies and junk, hold out validation sets",
    ),
    _qp(
        "curate",
        (f"{QP}/corpus", "components/data/dedup", "components/data/filters", "components/data/validate.py"),
        ("qualitypajama.curation",),
        (f"{QP}/curated",),
        after=("corpus",),
        summary="exact dedup, MinHash-LSH dedup at each threshold, heuristic filters; score against injected truth",
    ),
    _qp(
        "rewrite",
        (f"{QP}/corpus", "components/data/rewrite", "components/models/causal_lm.py"),
        ("qualitypajama.rewrite",),
        (f"{QP}/rewrite",),
        after=("corpus",),
        summary="LLM-guided rewriting (SmolLM2) with a labelled template stand-in; synthetic:natural mixes",
    ),
    _qp(
        "tokenize",
        (f"{QP}/corpus", f"{QP}/curated", f"{QP}/rewrite", "components/training/tokenizer.py"),
        ("qualitypajama.tokenizer",),
        (f"{QP}/tokens",),
        after=("curate", "rewrite"),
        summary="train the byte-level BPE on the raw pool; encode every intervention and validation set",
    ),
    _qp(
        "train",
        (f"{QP}/tokens", "components/models/tiny_lm.py", "components/training"),
        ("qualitypajama.grid", "qualitypajama.training"),
        (f"{QP}/grid",),
        after=("tokenize",),
        summary="train the tiny-LM grid per intervention (WSD runs with cooldown branches); evaluate on held-out sets",
    ),
    _qp(
        "fit",
        (f"{QP}/grid", "components/scaling"),
        ("qualitypajama.fit",),
        (f"{QP}/fits",),
        after=("train",),
        summary="Chinchilla approach-3 fits per intervention with bootstrap CIs; compute-optimal allocation",
    ),
    _qp(
        "report",
        (f"{QP}/fits", f"{QP}/grid", f"{QP}/curated", f"{QP}/rewrite", "components/reporting", "components/evaluation",
         "components/scaling/sanity.py", "flows/runtime/report_stage.py"),
        ("qualitypajama.claims",),
        (
            "reports/qualitypajama/report.md",
            "reports/qualitypajama/report.html",
            "reports/qualitypajama/claims.json",
            "reports/qualitypajama/figures",
        ),
        metrics=("reports/qualitypajama/metrics.json",),
        plots=("reports/qualitypajama/plots/loss_vs_compute.csv",),
        plot_axes={"loss_vs_compute.csv": {"x": "flops", "y": "loss", "template": "scatter"}},
        after=("fit",),
        summary="claims 1-4 with verdicts; report with plots",
    ),
)
