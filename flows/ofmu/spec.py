"""ofmu's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(1, "ofmu", "OFMU: penalty-based bi-level unlearning that puts forgetting first", "01-ofmu.md")

L = Layout("ofmu", code=("common", "tune"))
DATA, MODELS, UNLEARN, VISION = (L.out(n) for n in ("data", "models", "unlearn", "vision"))
_UNL = ("components/unlearning",)

STAGES = (
    L.stage(
        "data",
        code=(
            "components/unlearning/tofu.py",
            "components/data/validate.py",
            "components/training/tokenizer.py",
            "components/training/qa_lm.py",
        ),
        params=("data",),
        writes=(DATA,),
        summary="synthetic TOFU authors (forget/retain) + WordNet world facts, BPE tokenizer, GX checks",
    ),
    L.stage(
        "train",
        code=(*_UNL, "components/models/tiny_lm.py", "components/training"),
        reads=(DATA,),
        params=("data", "model", "resources"),
        writes=(MODELS,),
        after=("data",),
        summary="the base LM (all data) and the Retrain LM (retain + world facts only)",
    ),
    L.stage(
        "unlearn",
        code=(*_UNL, "components/training/qa_lm.py", L.module_file("train")),
        reads=(DATA, MODELS),
        params=("model", "unlearn", "data", "resources"),
        writes=(UNLEARN,),
        after=("train",),
        summary="each method at the matched gradient-evaluation budget per seed; TOFU metrics per question",
    ),
    L.stage(
        "vision",
        code=(*_UNL, "components/data/validate.py"),
        params=("vision",),
        writes=(VISION,),
        summary="digits MLP: base and Retrain per scenario and seed, each method, UA/RA/TA/MIA",
    ),
    L.report_stage(
        reads=(UNLEARN, VISION),
        params=("unlearn.seeds", "vision.seeds"),
        plots={
            "tradeoff.csv": {"x": "log10_fq", "y": "mu", "template": "scatter", "color": "method"},
            "cosine.csv": {"x": "step", "y": "abs_cos", "template": "linear", "color": "method"},
        },
        after=("unlearn", "vision"),
        summary="claims 1-4 with verdicts; FQ-MU trade-off, gradient cosine, vision table",
    ),
)
