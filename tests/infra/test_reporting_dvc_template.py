"""The offline `dvc plots show --html-template` page: Vega inlined, nothing from a CDN."""

import re

import pytest

from tests.conftest import ROOT

TEMPLATE = ROOT / "infra" / "dvc" / "plots_offline.html"


@pytest.fixture(scope="module")
def template() -> str:
    assert TEMPLATE.is_file(), f"{TEMPLATE} missing: run scripts/build_vega_template.sh"
    return TEMPLATE.read_text(encoding="utf-8")


def test_has_the_placeholder_dvc_requires(template):
    assert template.count("{plot_divs}") == 1


def test_loads_no_script_from_the_network(template):
    assert not re.search(r"<script[^>]*\bsrc\s*=", template, re.IGNORECASE)
    assert "{scripts}" not in template  # DVC would put its CDN <script src> tags there


def test_inlines_vega_vega_lite_and_vega_embed(template):
    assert template.count("<script") == 3 == template.count("</script>")
    for marker in ("vega-lite", "vegaEmbed"):
        assert marker in template
    assert len(template) > 300_000  # the three minified libraries, not stubs


def test_dvc_renders_a_plot_page_without_cdn_tags(template):
    html_mod = pytest.importorskip("dvc_render.html")
    vega_mod = pytest.importorskip("dvc_render.vega")
    page = html_mod.HTML(template).with_scripts(vega_mod.VegaRenderer.SCRIPTS)
    page.with_element('<div id="plot-1"></div>')
    out = page.embed()
    assert '<div id="plot-1"></div>' in out
    assert not re.search(r"<script[^>]*\bsrc\s*=", out, re.IGNORECASE)
