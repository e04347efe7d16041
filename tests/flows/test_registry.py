"""The registry is the single source of dvc.yaml and params.yaml; the committed files must match it."""

import yaml

from flows.cli_views import params_yaml
from flows.dvcgen import render, stage_entries
from flows.registry import get_paper, paper_slugs, upstream
from flows.runtime.settings import Paths
from flows.specs import PLANNED
from tests.conftest import ROOT


def test_committed_dvc_yaml_equals_the_registry():
    assert (ROOT / "dvc.yaml").read_text() == render()


def test_committed_params_yaml_has_exactly_the_model_keys():
    assert (ROOT / "params.yaml").read_text() == params_yaml(Paths(ROOT))


def test_every_stage_declares_its_code_params_and_outs():
    for name, entry in stage_entries().items():
        owner_module = entry["cmd"].split()[2]
        assert entry["cmd"].startswith("paperline stage "), name
        assert any(dep.startswith("flows/") for dep in entry["deps"]), name
        assert "profile" in entry["params"], name
        assert entry["outs"], name
        assert owner_module


def test_stage_order_follows_the_data():
    for name, entry in stage_entries().items():
        produced_before = set()
        for other, e in stage_entries().items():
            if other == name:
                break
            produced_before.update(e["outs"])
        for dep in entry["deps"]:
            if dep.startswith("data/"):
                assert dep in produced_before, f"{name} reads {dep} before any stage writes it"


def test_every_pipeline_package_is_a_paper_in_number_order_and_planned_cards_stay_listed():
    packages = {d.name for d in (ROOT / "flows").iterdir() if (d / "spec.py").is_file()} - {"shared"}
    slugs = paper_slugs()
    assert {s.replace("-", "_") for s in slugs} >= packages  # every pipeline found, none listed by hand
    assert {p.slug for p in PLANNED} <= set(slugs)  # cards without a pipeline yet are still listed
    numbers = [get_paper(s).number for s in slugs]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert not [s for s in slugs if get_paper(s).broken]


def test_upstream_chain():
    assert get_paper("optimistic_o2nc").slug == "optimistic-o2nc"
    chain = upstream("qualitypajama", "report")
    assert chain[0] == ("shared", "sources") and chain[-1] == ("qualitypajama", "report")
    assert len(chain) == len(set(chain))


def test_dvc_yaml_parses_and_lists_params_present_in_params_yaml():
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for entry in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"].values():
        for key in entry["params"]:
            node = params
            for part in key.split("."):
                assert part in node, key
                node = node[part]


def test_dvc_exp_run_set_param_changes_only_the_keys_it_sets(tmp_path):
    """`dvc exp run -S key=value` rewrites params.yaml through DVC's own override writer; unset keys (empty values,
    which YAML reads as null: "the preset") and the user's own values must come back byte for byte."""
    from dvc.utils.hydra import apply_overrides

    (tmp_path / "params.yaml").write_text(
        "profile: smoke\nofmu:\n  model:\n    lr: 0.003\n  unlearn:\n    seeds: [0, 1]\n"
        "    methods:\n      ga:\n        options:\n          lr: 1.0e-05\n"
    )
    before = params_yaml(Paths(tmp_path))
    (tmp_path / "params.yaml").write_text(before)
    apply_overrides(str(tmp_path / "params.yaml"), ["ofmu.model.d_model=64", "assomem.claims.level=0.9"])
    after = (tmp_path / "params.yaml").read_text()
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert changed == [("    d_model:", "    d_model: 64"), ("    level:", "    level: 0.9")]
    assert yaml.safe_load(after)["ofmu"]["unlearn"]["seeds"] == [0, 1]


def test_committed_plot_templates_equal_the_generated_ones_and_colour_by_a_column_with_log_axes():
    from flows.dvcgen import PLOT_TEMPLATE_DIR, plot_templates

    templates = plot_templates()
    committed = {p.name for p in (ROOT / PLOT_TEMPLATE_DIR).glob("*.json")}
    assert committed == set(templates)
    for name, text in templates.items():
        assert (ROOT / PLOT_TEMPLATE_DIR / name).read_text() == text, name
    for entry in stage_entries().values():
        for plot in entry.get("plots", []):
            (props,) = plot.values()
            assert "color" not in props and "x_scale" not in props  # DVC knows only its own properties
            assert f"{props['template']}.json" in templates  # every plot has a template of ours
    qp = yaml.safe_load(templates["paperline-scatter-by-intervention-logx.json"])
    assert qp["encoding"]["color"] == {"field": "intervention", "type": "nominal", "legend": {"title": "intervention"}}
    assert qp["encoding"]["x"]["scale"] == {"type": "log"} and qp["encoding"]["y"]["scale"] == {"zero": False}
