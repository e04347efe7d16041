"""The pipeline kit's parts: Layout stages, base params with presets, declared claims, the report's ending."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from pydantic import Field

from components.errors import DataError, PaperlineError, ParamsError
from components.evaluation.claim_spec import ClaimSpec, check_results
from flows.registry import SHARED, papers
from flows.runtime.params import ClaimsBase, PaperParams, Replace, Section, presets, resolve
from flows.runtime.report_stage import finish_report
from flows.specs import Layout

L = Layout("my-paper", code=("common",))


def test_layout_declares_each_path_once_and_stages_depend_on_their_code():
    assert L.package == "my_paper" and L.out("runs") == "data/my-paper/runs"
    st = L.stage(
        "fit", code=("components/x",), reads=(L.out("data"),), params=("data", "shared.sources"), writes=("runs",)
    )
    assert st.module == "flows.my_paper.fit"
    assert st.deps == (
        "flows/my_paper/fit.py",
        "flows/my_paper/params.py",
        "flows/my_paper/__init__.py",
        "flows/my_paper/common.py",
        "components/x",
        "data/my-paper/data",
    )
    assert st.params == ("profile", "my-paper.data", "shared.sources")
    assert st.outs == ("data/my-paper/runs",)


def test_report_stage_adds_the_report_outputs_claims_code_and_claims_params():
    st = L.report_stage(reads=("data/my-paper/runs",), plots={"curve.csv": {"x": "step", "y": "loss"}})
    assert st.module == "flows.my_paper.report"
    assert st.outs == tuple(f"reports/my-paper/{f}" for f in ("report.md", "report.html", "claims.json", "figures"))
    assert st.metrics == ("reports/my-paper/metrics.json",)
    assert st.plots == ("reports/my-paper/plots/curve.csv",) and st.plot_axes == {
        "curve.csv": {"x": "step", "y": "loss"}
    }
    assert {
        "flows/my_paper/claims.py",
        "flows/my_paper/report.py",
        "components/evaluation",
        "components/reporting",
        "flows/runtime/report_stage.py",
    } <= set(st.deps)
    assert st.params[-1] == "my-paper.claims"


@pytest.mark.parametrize("slug", [s for s, p in papers().items() if p.implemented and s != SHARED])
def test_every_pipeline_is_declared_through_its_layout(slug):
    """Each pipeline's spec.py builds its stages from one Layout, and its stage modules import the paths from it."""
    import importlib

    spec = importlib.import_module(f"flows.{slug.replace('-', '_')}.spec")
    assert isinstance(spec.L, Layout) and spec.L.slug == slug
    report = next(st for st in spec.STAGES if st.name == "report")
    assert report.outs[:3] == tuple(spec.L.report(f) for f in ("report.md", "report.html", "claims.json"))


class _Data(Section):
    seeds: list[int]
    n: int = 10


class _Claims(ClaimsBase):
    delta: float = Field(0.01, ge=0)


class _Params(PaperParams):
    data: _Data
    methods: dict[str, dict] = Field(default_factory=dict)
    claims: _Claims = Field(default_factory=_Claims)


PRESETS = presets(
    default={"data": {"seeds": [0, 1, 2]}, "methods": {"a": {"lr": 1}, "b": {"lr": 2}}},
    smoke={"data": {"seeds": [0]}, "methods": Replace({"a": {"lr": 1}}), "claims": {"n_resamples": 500}},
    full={"data": {"n": 1000}, "methods": {"b": {"lr": 3}}},
)


def test_presets_state_only_what_differs_from_default():
    smoke, default, full = (resolve(_Params, PRESETS, slug="x", profile=p) for p in ("smoke", "default", "full"))
    assert default.data.seeds == [0, 1, 2] and default.claims.n_resamples == 10_000 and default.resources.workers == 1
    assert smoke.data.seeds == [0] and smoke.data.n == 10 and smoke.claims.n_resamples == 500
    assert smoke.methods == {"a": {"lr": 1}}  # Replace: the whole mapping, not merged
    assert full.data.seeds == [0, 1, 2] and full.data.n == 1000 and full.methods == {"a": {"lr": 1}, "b": {"lr": 3}}


def test_base_sections_are_validated_and_a_null_in_params_yaml_keeps_the_preset():
    p = resolve(
        _Params,
        PRESETS,
        slug="x",
        profile="default",
        file_section={"resources": {"workers": None, "threads": None}, "progress": None},
    )
    assert p.resources.workers == 1 and p.progress is True
    with pytest.raises(ParamsError, match=r"x\.resources\.workers"):
        resolve(_Params, PRESETS, slug="x", profile="default", overrides=["resources.workers=0"])
    with pytest.raises(ParamsError, match=r"x\.claims\.level"):
        resolve(_Params, PRESETS, slug="x", profile="default", overrides=["claims.level=2"])


C1 = ClaimSpec(
    "C1",
    "A beats B",
    metric="score difference",
    method="A",
    baseline="B",
    unit="items x seeds",
    paper_value="+3 points (Table 2)",
    scale_note="tiny",
)
C2 = ClaimSpec("C2", "A and B both", metric="parts", method="A", baseline="B", rule="composite", unit="items")


def _values(shift: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    base = rng.normal(0, 1, 300)
    return base + shift + rng.normal(0, 0.1, 300), base, np.repeat([0, 1, 2], 100)


def test_a_declared_claim_carries_its_declaration_into_the_record():
    a, b, seeds = _values(0.5)
    r = C1.standard(method_values=a, baseline_values=b, clusters=seeds, delta=0.05, seed=0, n_resamples=500)
    assert (r.id, r.statement, r.metric, r.method, r.baseline, r.unit, r.paper_value, r.scale_note, r.rule) == (
        "C1",
        "A beats B",
        "score difference",
        "A",
        "B",
        "items x seeds",
        "+3 points (Table 2)",
        "tiny",
        "standard",
    )
    assert r.verdict == "reproduced" and r.cluster_unit == "seed" and r.n_seeds == 3
    a, b, seeds = _values(-0.5)
    assert (
        C1.standard(method_values=a, baseline_values=b, clusters=seeds, delta=0.05, seed=0, n_resamples=500).verdict
        == "not reproduced"
    )


def test_per_run_overrides_parts_and_composites():
    a, b, seeds = _values(0.5)
    part = C2.part("x", "A beats B on x", rule="standard").standard(
        method_values=a, baseline_values=b, clusters=seeds, delta=0.05, seed=0, n_resamples=500, baseline="B2"
    )
    assert part.id == "C2/x" and part.baseline == "B2" and part.statement == "A beats B on x"
    whole = C2.composite([part], how="all", statement="A and B both (run 7)")
    assert whole.id == "C2" and whole.rule == "composite" and whole.statement == "A and B both (run 7)"
    assert whole.verdict == part.verdict == "reproduced"
    assert C2.composite([part]).verdict == "reproduced"
    with pytest.raises(ParamsError, match="rule 'bogus'"):
        ClaimSpec("C9", "x", metric="m", method="a", baseline="b", rule="bogus")


def test_results_must_be_exactly_the_declared_claims():
    a, b, seeds = _values(0.5)
    r1 = C1.standard(method_values=a, baseline_values=b, clusters=seeds, delta=0.05, seed=0, n_resamples=200)
    r2 = C2.composite([r1])
    check_results([C1, C2], [r1, r2], "x:report")
    with pytest.raises(DataError, match=r"\['C1'\] were computed but \['C1', 'C2'\] are declared"):
        check_results([C1, C2], [r1], "x:report")
    with pytest.raises(DataError, match="declared"):
        check_results([C1, C2], [r2, r1], "x:report")
    with pytest.raises(DataError, match="declared with rule 'composite'"):
        check_results([C2], [dataclasses.replace(r1, id="C2")], "x:report")


def test_finish_report_refuses_undeclared_or_missing_plots_before_writing():
    a, b, seeds = _values(0.5)
    r1 = C1.standard(method_values=a, baseline_values=b, clusters=seeds, delta=0.05, seed=0, n_resamples=200)
    ctx = SimpleNamespace(
        slug="x", profile="smoke", stage=SimpleNamespace(name="report", plots=("reports/x/plots/a.csv",))
    )
    with pytest.raises(PaperlineError, match=r"plots \['b.csv'\] were computed but \['a.csv'\] are declared"):
        finish_report(ctx, [C1], [r1], metrics={}, sections=[], plots={"b.csv": ([], ["c"])})
    with pytest.raises(DataError, match="declared"):
        finish_report(ctx, [C1, C2], [r1], metrics={}, sections=[], plots={"a.csv": ([], ["c"])})
