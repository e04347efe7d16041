"""got-r1's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    10, "got-r1", "GoT-R1: RL for semantic-spatial reasoning in autoregressive image generation", "10-got-r1.md"
)

L = Layout("got-r1")
DATA, SFT, RUNS = L.out("data"), L.out("sft"), L.out("runs")
_CORE = ("components/got_r1", "components/rl_text", "components/models")

STAGES = (
    L.stage(
        "data",
        code=("components/got_r1", "components/data/validate.py"),
        params=("data",),
        writes=(DATA,),
        summary="GenEval-style prompts with JSON specs (train / dev / held-out test), planner chains; GX checks",
    ),
    L.stage(
        "sft",
        code=_CORE,
        reads=(DATA,),
        params=("data", "model", "resources"),
        writes=(SFT,),
        after=("data",),
        summary="GoT-SFT (chain then image) and the direct prompt-to-image decoder",
    ),
    L.stage(
        "rl",
        code=_CORE,
        reads=(DATA, SFT),
        params=("data.image_size", "rl", "resources"),
        writes=(RUNS,),
        after=("sft",),
        summary="GRPO from GoT-SFT with each reward (full product, R_PI only, R_RI only) x seeds",
    ),
    L.report_stage(
        reads=(DATA, SFT, RUNS),
        params=("rl.seeds", "claims"),
        plots={
            "accuracy.csv": {"x": "task", "y": "accuracy", "template": "bar", "color": "method"},
            "reward.csv": {"x": "step", "y": "reward", "template": "linear", "color": "method"},
        },
        after=("rl",),
        summary="claims 1-4 with verdicts; per-task accuracy, curves, image grids",
    ),
)
