"""cdra's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    9,
    "cdra",
    "CDRA: critique-driven reasoning alignment with a personalised generative PRM",
    "09-cdra.md",
)

L = Layout("cdra")
DATA, RUNS = L.out("data"), L.out("runs")

STAGES = (
    L.stage(
        "data",
        code=("components/cdra/task.py", "components/data/validate.py"),
        params=("data",),
        writes=(DATA,),
        summary="synthetic persona preferences: 20 topics x pairs, explicit + value-implied constraints; GX checks",
    ),
    L.stage(
        "train",
        code=("components/cdra", "components/rl_text"),
        reads=(DATA,),
        params=("data", "policy", "prm", "rl", "resources"),
        writes=(RUNS,),
        after=("data",),
        summary="per seed: SFT policy, Pers-GenPRM and score-only PRM, outcome GRPO / score-only PRM / CDRA arms",
    ),
    L.report_stage(
        reads=(RUNS,),
        params=("data.seeds", "claims"),
        plots={"curves.csv": {"x": "step", "y": "pf", "template": "linear", "color": "arm"}},
        after=("train",),
        summary="claims C1-C4 with verdicts; held-out accuracies per arm; PRM step accuracy; zero-spread groups",
    ),
)
