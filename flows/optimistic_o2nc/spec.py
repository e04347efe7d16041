"""optimistic-o2nc's DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import StageSpec

O2 = "data/optimistic-o2nc"
_O2_CODE = ("flows/optimistic_o2nc/params.py", "flows/optimistic_o2nc/__init__.py", "components/optim")

STAGES = (
    StageSpec(
        name="measure",
        module="flows.optimistic_o2nc.measure",
        deps=("flows/optimistic_o2nc/measure.py", *_O2_CODE, "components/data/validate.py"),
        params=("profile", "optimistic-o2nc.seed", "optimistic-o2nc.functions", "optimistic-o2nc.grid",
                "optimistic-o2nc.methods"),
        outs=(f"{O2}/runs",),
        summary="every method over the eps and sigma grids and seeds: counted gradient calls to reach eps",
    ),
    StageSpec(
        name="report",
        module="flows.optimistic_o2nc.report",
        deps=("flows/optimistic_o2nc/report.py", "flows/optimistic_o2nc/claims.py", *_O2_CODE, f"{O2}/runs",
              "components/reporting", "components/evaluation", "flows/runtime/report_stage.py"),
        params=("profile", "optimistic-o2nc.seed", "optimistic-o2nc.grid", "optimistic-o2nc.claims"),
        outs=(
            "reports/optimistic-o2nc/report.md",
            "reports/optimistic-o2nc/report.html",
            "reports/optimistic-o2nc/claims.json",
            "reports/optimistic-o2nc/figures",
        ),
        metrics=("reports/optimistic-o2nc/metrics.json",),
        plots=("reports/optimistic-o2nc/plots/calls_vs_eps.csv",),
        plot_axes={"calls_vs_eps.csv": {"x": "eps_rel", "y": "median_calls", "template": "scatter"}},
        after=("measure",),
        summary="claims 1-3 with verdicts; log-log calls vs eps with theoretical slopes; calls vs sigma",
    ),
)
