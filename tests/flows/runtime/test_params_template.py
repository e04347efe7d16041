"""params.yaml lists map-valued params with their entries, so `dvc exp run -S` can set any key, and the filled-in
template still resolves to exactly each profile's preset."""

from __future__ import annotations

import importlib

import pytest
import yaml

from components.errors import ParamsError
from flows.cli_views import params_yaml
from flows.registry import papers
from flows.runtime import params as P
from flows.runtime.settings import Paths
from tests.conftest import ROOT


def sections() -> list[tuple[str, object]]:
    return [
        (slug, importlib.import_module(spec.params_module)) for slug, spec in papers().items() if spec.params_module
    ]


@pytest.fixture(scope="module")
def template() -> dict:
    return yaml.safe_load(params_yaml(Paths(ROOT)))


@pytest.mark.parametrize("slug,module", sections(), ids=[s for s, _ in sections()])
def test_the_template_resolves_to_each_profiles_preset(template, slug, module):
    for profile in P.PROFILES:
        if profile not in getattr(module, "PRESETS", {}):
            continue
        kw = {"slug": slug, "profile": profile}
        bare = P.resolve(module.Params, module.PRESETS, **kw)
        filled = P.resolve(module.Params, module.PRESETS, file_section=template[slug], **kw)
        assert filled.model_dump() == bare.model_dump(), (slug, profile)


def test_map_valued_params_list_their_entries(template):
    o2nc, cer = template["optimistic-o2nc"], template["cer-god"]
    assert set(o2nc["methods"]) >= {"gd", "odog", "cmo23"} and o2nc["methods"]["odog"]["eta"] is None
    assert set(cer["baselines"]) >= {"dominant", "gae"} and cer["baselines"]["gae"]["epochs"] is None
    assert cer["graphs"] is None  # a list is one value: -S sets it whole


def test_dvc_exp_run_set_reaches_a_map_entry(tmp_path):
    """What `dvc exp run -S optimistic-o2nc.methods.odog.eta=1.0` does to params.yaml (DVC's own function), then
    the params that run resolves: odog's eta changed, every other method as the preset says."""
    from dvc.utils.hydra import apply_overrides

    path = tmp_path / "params.yaml"
    path.write_text((ROOT / "params.yaml").read_text())
    apply_overrides(path, ["optimistic-o2nc.methods.odog.eta=1.0", "cer-god.baselines.gae.epochs=7"])
    doc = yaml.safe_load(path.read_text())
    module = importlib.import_module(papers()["optimistic-o2nc"].params_module)
    kw = {"slug": "optimistic-o2nc", "profile": "smoke"}
    got = P.resolve(module.Params, module.PRESETS, file_section=doc["optimistic-o2nc"], **kw)
    preset = P.resolve(module.Params, module.PRESETS, **kw)
    assert got.methods["odog"].eta == 1.0
    assert {k: v for k, v in got.methods.items() if k != "odog"} == {
        k: v for k, v in preset.methods.items() if k != "odog"
    }
    cer = importlib.import_module(papers()["cer-god"].params_module)
    got = P.resolve(cer.Params, cer.PRESETS, slug="cer-god", profile="smoke", file_section=doc["cer-god"])
    assert got.baselines["gae"].epochs == 7


def test_regenerating_keeps_a_users_own_map_entries(tmp_path):
    from flows.cli_views import params_yaml as render

    (tmp_path / "params.yaml").write_text(
        "profile: smoke\noptimistic-o2nc:\n  methods:\n    odog:\n      eta: 1.0\n    mine:\n      lr: 0.5\n"
    )
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    doc = yaml.safe_load(render(Paths(tmp_path)))
    assert doc["optimistic-o2nc"]["methods"]["odog"]["eta"] == 1.0
    assert doc["optimistic-o2nc"]["methods"]["mine"] == {"lr": 0.5}


def test_an_entry_set_for_a_method_the_profile_lacks_still_fails_loudly():
    module = importlib.import_module(papers()["optimistic-o2nc"].params_module)
    with pytest.raises(ParamsError, match="methods"):
        P.resolve(
            module.Params,
            module.PRESETS,
            slug="optimistic-o2nc",
            profile="smoke",
            file_section={"methods": {"no-such-method": {"eta": 1.0}}},
        )
