"""selfaug-decoding's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    17,
    "selfaug-decoding",
    "Self-Aug: query-aligned visual contrastive decoding with entropy-adaptive thresholding",
    "17-selfaug-decoding.md",
)

L = Layout("selfaug-decoding")
DATA, MODELS, RUNS = L.out("data"), L.out("models"), L.out("runs")
_PKG = "components/selfaug_decoding"

STAGES = (
    L.stage(
        "data",
        code=(f"{_PKG}/scenes.py", "components/scenes/textures.py", "components/data/validate.py"),
        params=("data", "paper_scale"),
        writes=(DATA,),
        summary="shape scenes with the designed co-occurrence bias; QA, captions, POPE splits, MME pairs; GX checks",
    ),
    L.stage(
        "train",
        code=(f"{_PKG}/model.py", f"{_PKG}/scenes.py", f"{_PKG}/augment.py"),
        reads=(DATA,),
        params=("model", "resources"),
        writes=(MODELS,),
        after=("data",),
        summary="the tiny VLM (CNN to 64 visual tokens + prefix decoder), once per seed; loss curve, QA accuracy",
    ),
    L.stage(
        "decode",
        code=(_PKG,),
        reads=(DATA, MODELS),
        params=("model.seeds", "decoding", "resources"),
        writes=(RUNS,),
        after=("train",),
        summary="every decoding method x seed on POPE, MME-style pairs and captions (no further training)",
    ),
    L.report_stage(
        reads=(DATA, MODELS, RUNS),
        params=("model.seeds", "decoding.methods", "claims"),
        plots={"pope.csv": {"x": "f1", "y": "method", "template": "bar_horizontal", "color": "split"}},
        after=("decode",),
        summary="claims 1-4 with verdicts; POPE / CHAIR / MME tables, examples, per-question-type gains",
    ),
)
