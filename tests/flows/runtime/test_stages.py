"""Stage outputs appear only when a stage finishes; markers skip fresh stages and catch changes."""

import json
import sys
import types

import pytest

from flows.registry import PaperSpec, StageSpec
from flows.runtime.params import Section
from flows.runtime.settings import Paths
from flows.runtime.stages import StageContext, execute, fingerprint


class Params(Section):
    value: int = 1


def make_stage(tmp_path, body):
    module = types.ModuleType("fake_stage_module")
    module.run = body
    sys.modules["fake_stage_module"] = module
    (tmp_path / "code.py").write_text("x = 1\n")
    stage = StageSpec(
        "make",
        "fake_stage_module",
        deps=("code.py",),
        params=("profile", "fake.value"),
        outs=("data/fake/out", "data/fake/one.json"),
    )
    paper = PaperSpec("fake", 99, "Fake", None, (stage,))
    return StageContext(paper, stage, Params(), "smoke", Paths(tmp_path))


def writer(calls):
    def run(ctx):
        calls.append(1)
        folder = ctx.output("data/fake/out")
        folder.mkdir()
        (folder / "a.txt").write_text("a")
        ctx.output("data/fake/one.json").write_text(json.dumps({"n": len(calls)}))
        return {"n": len(calls)}

    return run


def test_outputs_published_and_second_run_skipped(tmp_path):
    calls = []
    ctx = make_stage(tmp_path, writer(calls))
    assert execute(ctx)["skipped"] is False
    assert (tmp_path / "data/fake/out/a.txt").read_text() == "a"
    assert execute(ctx)["skipped"] is True
    assert len(calls) == 1


def test_code_params_or_damaged_output_rerun_the_stage(tmp_path):
    calls = []
    ctx = make_stage(tmp_path, writer(calls))
    execute(ctx)
    first = fingerprint(ctx)
    (tmp_path / "code.py").write_text("x = 2\n")
    assert fingerprint(ctx) != first
    execute(ctx)
    ctx.params.value = 5
    execute(ctx)
    (tmp_path / "data/fake/out/a.txt").write_text("tampered")
    execute(ctx)
    assert len(calls) == 4


def test_failing_stage_leaves_previous_outputs_and_no_staging(tmp_path):
    calls = []
    ctx = make_stage(tmp_path, writer(calls))
    execute(ctx)

    def boom(ctx):
        ctx.output("data/fake/out").mkdir()
        (ctx.output("data/fake/out") / "a.txt").write_text("half")
        raise RuntimeError("killed")

    bad = make_stage(tmp_path, boom)
    bad.params.value = 2
    with pytest.raises(RuntimeError):
        execute(bad)
    assert (tmp_path / "data/fake/out/a.txt").read_text() == "a"
    assert not [p for p in (tmp_path / "data/fake").iterdir() if p.name.startswith(".tmp-")]


def test_undeclared_output_is_refused(tmp_path):
    def sneaky(ctx):
        ctx.output("data/elsewhere.txt")

    with pytest.raises(Exception, match="not a declared output"):
        execute(make_stage(tmp_path, sneaky))


def test_output_dir_is_a_created_staging_folder_published_on_success(tmp_path):
    def folders(ctx):
        out = ctx.output_dir("data/fake/out")
        assert out.is_dir() and out == ctx.output("data/fake/out")  # the same staging path, made once
        (out / "a.txt").write_text("a")
        ctx.output("data/fake/one.json").write_text("{}")
        return {}

    execute(make_stage(tmp_path, folders))
    assert (tmp_path / "data/fake/out/a.txt").read_text() == "a"
    (tmp_path / "other").mkdir()
    with pytest.raises(Exception, match="not a declared output"):
        execute(make_stage(tmp_path / "other", lambda ctx: ctx.output_dir("data/elsewhere")))


def test_stage_metrics_leave_out_the_champion_rules():
    """A stage's numbers become parent-run metrics; its champion candidate (tolerances are settings) does not."""
    from flows.runtime.pipeline import _numbers

    summary = {
        "seconds": 1.5,
        "skipped": False,
        "runs": {"count": 3},
        "champion": {"metrics": {"acc": 0.9}, "rules": {"acc": {"tolerance": 0.02}}},
        "name": "x",
    }
    assert _numbers(summary) == {"seconds": 1.5, "runs": {"count": 3}}


def test_a_variant_report_names_the_params_that_differ_from_the_preset(tmp_path):
    """Params set by --set, params.yaml or `dvc exp run -S` that change results are listed at the report's top;
    execution-only params (resources, progress) are not, and the profile as shipped is no variant."""
    from components.reporting.paper_report import banners
    from flows.registry import get_paper
    from flows.runtime import params as P
    from flows.runtime.report_stage import variant
    from flows.runtime.settings import Paths
    from flows.runtime.stages import StageContext

    paper = get_paper("optimistic-o2nc")
    import importlib

    module = importlib.import_module(paper.params_module)

    def ctx(overrides):
        params = P.resolve(module.Params, module.PRESETS, slug=paper.slug, profile="smoke", overrides=overrides)
        return StageContext(paper, paper.stage("report"), params, "smoke", Paths(tmp_path))

    assert variant(ctx(())) == {}
    assert variant(ctx(("resources.workers=2",))) == {}
    changed = variant(ctx(("claims.n_resamples=3000",)))
    assert list(changed) == ["claims.n_resamples"] and changed["claims.n_resamples"]["value"] == 3000
    doc = {"profile": "smoke", "provenance": {"variant": changed}}
    assert any(b.startswith("Variant:") and "claims.n_resamples = 3000 (preset 2000)" in b for b in banners(doc))
    assert not any(b.startswith("Variant:") for b in banners({"profile": "smoke", "provenance": {"variant": {}}}))
