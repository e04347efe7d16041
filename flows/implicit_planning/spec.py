"""implicit-planning's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import SHARED, Layout, Paper

PAPER = Paper(
    18,
    "implicit-planning",
    '"What\'s the plan?": steering-based metrics for implicit planning in LMs',
    "18-implicit-planning.md",
)

L = Layout("implicit-planning")
DATA, CONTROLS, STEER, REAL = L.out("data"), L.out("controls"), L.out("steer"), L.out("real")
_METHOD = ("components/implicit_planning", "components/interp")

STAGES = (
    L.stage(
        "data",
        code=("components/implicit_planning", "components/data/validate.py"),
        reads=("data/sources",),
        params=("data", "control.words_per_family", "control.n_families", "control.pairs", "steer.real_pairs"),
        writes=(DATA,),
        after=(f"{SHARED}:sources",),
        summary="real first lines per rhyme family (corpus + CMU dict), control-language lines, QA nouns; GX checks",
    ),
    L.stage(
        "controls",
        code=("components/models", *_METHOD),
        reads=(DATA,),
        params=(
            "data.seeds",
            "data.lines_select",
            "control",
            "steer.control_position",
            "steer.multiplier",
            "steer.max_new_tokens",
            "resources",
        ),
        writes=(CONTROLS,),
        after=("data",),
        summary="the positive and negative control transformers, one per seed, with their loss curves; the champion "
        "(positive control, first seed) re-evaluated greedily on the control lines",
    ),
    L.stage(
        "steer",
        code=_METHOD,
        reads=(DATA, CONTROLS),
        params=("data", "control", "steer", "resources"),
        writes=(STEER,),
        after=("controls",),
        summary="control models: layer choice, steered / unsteered / random line 2s and every planning metric",
    ),
    L.stage(
        "real",
        code=(*_METHOD, "components/models/causal_lm.py"),
        reads=(DATA,),
        params=("data", "steer", "resources"),
        writes=(REAL,),
        after=("data",),
        summary="SmolLM2-135M: couplet steering on real first lines and QA article flips (skipped if data.real is off)",
    ),
    L.report_stage(
        reads=(DATA, CONTROLS, STEER, REAL),
        params=("data.seeds", "claims"),
        plots={"rates.csv": {"x": "rf2_rate", "y": "condition", "template": "bar_horizontal"}},
        after=("steer", "real"),
        summary="claims 1-4 with verdicts; RF2 rates per model and condition, layer sweeps, token breakdown",
    ),
)
