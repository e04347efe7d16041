"""QualityPajama's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import SHARED, Layout, Paper

PAPER = Paper(3, "qualitypajama", "How text-quality interventions reshape neural scaling laws", "03-qualitypajama.md")

L = Layout("qualitypajama", code=("common",))
CORPUS, CURATED, REWRITE, TOKENS, GRID, FITS = (
    L.out(n) for n in ("corpus", "curated", "rewrite", "tokens", "grid", "fits")
)
_ALL = ("seed", "interventions")  # params every stage depends on

STAGES = (
    L.stage(
        "corpus",
        code=("components/data/corpus", "components/data/validate.py"),
        reads=("data/sources",),
        params=(*_ALL, "corpus"),
        writes=(CORPUS,),
        after=(f"{SHARED}:sources",),
        summary="sample the raw pool, inject labelled near-copies and junk, hold out validation sets",
    ),
    L.stage(
        "curate",
        code=("components/data/dedup", "components/data/filters", "components/data/validate.py"),
        reads=(CORPUS,),
        params=(*_ALL, "curation"),
        writes=(CURATED,),
        after=("corpus",),
        summary="exact dedup, MinHash-LSH dedup at each threshold, heuristic filters; score against injected truth",
    ),
    L.stage(
        "rewrite",
        code=("components/data/rewrite", "components/models/causal_lm.py"),
        reads=(CORPUS,),
        params=(*_ALL, "rewrite"),
        writes=(REWRITE,),
        after=("corpus",),
        summary="LLM-guided rewriting (SmolLM2) with a labelled template stand-in; synthetic:natural mixes",
    ),
    L.stage(
        "tokenize",
        code=("components/training/tokenizer.py",),
        reads=(CORPUS, CURATED, REWRITE),
        params=(*_ALL, "tokenizer"),
        writes=(TOKENS,),
        after=("curate", "rewrite"),
        summary="train the byte-level BPE on the raw pool; encode every intervention and validation set",
    ),
    L.stage(
        "train",
        code=("components/models/tiny_lm.py", "components/training"),
        reads=(TOKENS,),
        params=(*_ALL, "grid", "training", "resources"),
        writes=(GRID,),
        after=("tokenize",),
        summary="train the tiny-LM grid per intervention (WSD runs with cooldown branches); evaluate on held-out sets",
    ),
    L.stage(
        "fit",
        code=("components/scaling",),
        reads=(GRID,),
        params=(*_ALL, "fit"),
        writes=(FITS,),
        after=("train",),
        summary="approach-3 laws with one shared E, bootstrapped over runs; fitter power on the run's grid; allocation",
    ),
    L.report_stage(
        reads=(FITS, GRID, CURATED, REWRITE),
        code=("components/scaling/sanity.py", "components/scaling/gap_slope.py"),
        params=_ALL,
        plots={
            "loss_vs_compute.csv": {
                "x": "flops",
                "y": "loss",
                "template": "scatter",
                "color": "intervention",
                "x_scale": "log",
            }
        },
        after=("fit",),
        summary="claims 1-4 with verdicts; report with plots",
    ),
)
