"""The list of papers is open: pipelines are found, not listed; one broken pipeline never stops the others."""

from __future__ import annotations

import json

import pytest

from flows import stage_specs
from flows.kit.new import _values
from flows.registry import get_paper, next_number, papers
from flows.specs import PLANNED
from tests.conftest import copy_project, error_line, paperline


@pytest.fixture
def broken_vip(tmp_path):
    """A copy of the project whose VIP spec.py raises on import."""
    root = copy_project(tmp_path / "proj")
    spec = root / "flows/vip/spec.py"
    spec.write_text(spec.read_text() + '\nraise RuntimeError("planted import error")\n')
    return root


def test_a_broken_pipeline_is_listed_with_its_error_and_the_others_still_work(broken_vip):
    env = {"PYTHONPATH": str(broken_vip)}
    listed = paperline("list", "--json", cwd=broken_vip, env=env)
    assert listed.returncode == 0, listed.stderr[-2000:]
    rows = {r["slug"]: r for r in json.loads(listed.stdout)}
    assert rows["vip"]["status"] == "broken" and "planted import error" in rows["vip"]["error"]
    assert "flows/vip/spec.py" in rows["vip"]["error"]  # where it failed
    assert rows["ofmu"]["status"] == "implemented" and rows["ofmu"]["stages"]

    table = paperline("list", cwd=broken_vip, env=env)
    assert table.returncode == 0 and "broken" in table.stdout

    shown = paperline("show", "ofmu", cwd=broken_vip, env=env)
    assert shown.returncode == 0 and "stages:" in shown.stdout, shown.stderr[-2000:]

    line = error_line(paperline("run", "vip", "--profile", "smoke", cwd=broken_vip, env=env))
    assert "vip" in line and "broken" in line and "planted import error" in line
    # dvc.yaml without VIP's stages would drop them silently: generating it refuses, naming the pipeline
    line = error_line(paperline("dvc-yaml", "--check", cwd=broken_vip, env=env))
    assert "vip" in line and "planted import error" in line


def test_a_spec_without_its_paper_declaration_is_broken_not_ignored(monkeypatch, tmp_path):
    import types

    module = types.ModuleType("flows.fake_pipeline.spec")
    module.STAGES = get_paper("ofmu").stages
    monkeypatch.setitem(__import__("sys").modules, "flows.fake_pipeline.spec", module)
    declared = stage_specs.load("fake_pipeline")
    assert declared.paper is None and "declares no PAPER" in declared.error


def test_a_planned_card_keeps_its_number_and_title_and_a_new_paper_takes_the_next_number(monkeypatch):
    from flows.kit import new
    from flows.specs import Paper

    card = Paper(99, "toy-planned", "A planned card", "99-toy-planned.md")  # every real card has a pipeline now
    monkeypatch.setattr(new, "PLANNED", (*PLANNED, card))
    values = _values(card.slug)
    assert values["number"] == str(card.number) and values["title"] == card.title and card.card in values["card_ref"]
    mine = _values("toy-median", "Toy median")
    assert int(mine["number"]) == next_number() > max(p.number for p in papers().values())
    assert mine["card_ref"].startswith("no card")


@pytest.mark.parametrize(
    ("slug", "title", "message"),
    [
        ("toy-median", None, "give its title with --title"),
        ("Toy_Median", "x", "not a usable slug"),
        ("runtime", "x", "not a usable slug"),
        ("ofmu", None, "already has files"),
    ],
)
def test_new_refuses_what_it_cannot_scaffold(slug, title, message):
    from components.errors import ParamsError

    with pytest.raises(ParamsError, match=message):
        _values(slug, title)
