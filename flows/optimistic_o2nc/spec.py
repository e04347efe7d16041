"""optimistic-o2nc's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    8, "optimistic-o2nc", "Online-to-nonconvex conversion with a doubly optimistic hint (ODOG)", "08-optimistic-o2nc.md"
)

L = Layout("optimistic-o2nc")
RUNS = L.out("runs")
_OPTIM = ("components/optim",)

STAGES = (
    L.stage(
        "measure",
        code=(*_OPTIM, "components/data/validate.py"),
        params=("seed", "functions", "grid", "methods", "resources"),
        writes=(RUNS,),
        summary="every method over the eps and sigma grids and seeds: counted gradient calls to reach eps",
    ),
    L.report_stage(
        reads=(RUNS,),
        code=_OPTIM,
        params=("seed", "grid"),
        plots={
            "calls_vs_eps.csv": {
                "x": "eps_rel",
                "y": "median_calls",
                "template": "scatter",
                "color": "method",
                "x_scale": "log",
                "y_scale": "log",
            }
        },
        after=("measure",),
        summary="claims 1-3 with verdicts; log-log calls vs eps with theoretical slopes; calls vs sigma",
    ),
)
