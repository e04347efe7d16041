"""got-r1's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    10, "got-r1", "GoT-R1: RL for semantic-spatial reasoning in autoregressive image generation", "10-got-r1.md"
)

L = Layout("got-r1")
DATA, RUNS = L.out("data"), L.out("runs")

STAGES = (
    L.stage("data", code=("components/data/validate.py",), params=("data",), writes=(DATA,),
            summary="synthetic samples per seed around a known centre, a share of them outliers; GX checks"),
    L.stage("evaluate", code=("components/got_r1",), reads=(DATA,), params=("data", "method", "resources"),
            writes=(RUNS,), after=("data",), summary="the method and the baseline on every sample of every seed"),
    L.report_stage(reads=(RUNS,), params=("data.seeds",),
                   plots={"errors.csv": {"x": "seed", "y": "error", "template": "scatter", "color": "estimator"}},
                   after=("evaluate",), summary="claim C1 with its verdict; mean error per seed and estimator"),
)
