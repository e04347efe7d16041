"""A run with overrides writes its report beside the default one (flows/runtime/variants.py)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from flows.runtime.variants import report_rel, route, run_variant, variant_name
from tests.conftest import paperline


def test_a_variant_is_named_for_its_overrides_in_any_order():
    assert variant_name(["training.lr=3e-4"]) == "training.lr-3e-4"
    both = variant_name(["b.x=1", "a.y=[1, 2]"])
    assert both == variant_name(["a.y=[1, 2]", "b.x=1"]) == "a.y-1-2__b.x-1"
    long = variant_name([f"claims.key_{i}=value" for i in range(12)])
    assert len(long) <= 80 and long != variant_name([f"claims.key_{i}=value" for i in range(13)])
    assert re.fullmatch(r"[A-Za-z0-9._+-]+", variant_name(["x.path=/tmp/a b/../c"]))


def test_only_overrides_that_change_results_make_a_variant():
    assert run_variant("vip", [], replace_default=False) is None
    assert run_variant("vip", ["resources.workers=1", "vip.progress=false"], replace_default=False) is None
    assert run_variant("vip", ["resources.workers=1", "rl.seeds=[0]"], replace_default=False) == "rl.seeds-0"
    assert run_variant("vip", ["rl.seeds=[0]"], replace_default=True) is None


def test_only_the_papers_report_outputs_move():
    assert route("vip", "v1", "reports/vip/claims.json") == "reports/vip/variants/v1/claims.json"
    assert route("vip", "v1", "reports/vip/figures") == "reports/vip/variants/v1/figures"
    assert route("vip", "v1", "data/vip/runs") == "data/vip/runs"
    assert route("vip", "v1", "reports/vipx/claims.json") == "reports/vipx/claims.json"
    assert route("vip", None, "reports/vip/claims.json") == "reports/vip/claims.json"
    assert report_rel("vip", "v1") == "reports/vip/variants/v1" and report_rel("vip", None) == "reports/vip"


@pytest.mark.slow
@pytest.mark.integration
def test_a_set_run_keeps_the_default_report_unless_asked_to_replace_it(smoke_run, tmp_path):
    """`paperline run --set` writes reports/<paper>/variants/<overrides>/ with the overrides at its top and
    leaves the default report as it was; `--replace-default` writes over the default."""
    root = shutil.copytree(smoke_run[0], tmp_path / "proj", symlinks=True)
    default = root / "reports/qualitypajama"
    before = {name: (default / name).read_bytes() for name in ("report.html", "claims.json", "metrics.json")}
    override = ["--set", "claims.n_resamples=1000"]
    proc = paperline("run", "qualitypajama", "--profile", "smoke", *override, cwd=root)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    folder = default / "variants/claims.n_resamples-1000"
    assert proc.stdout.strip().splitlines()[-1] == f"report: {folder}/report.html"
    assert {name: (default / name).read_bytes() for name in before} == before
    html = (folder / "report.html").read_text()
    assert (
        "claims.n_resamples" in html
        and "1000" in html
        and "Variant run: written to reports/qualitypajama/variants/" in html
    )
    assert (
        json.loads((folder / "claims.json").read_text())["provenance"]["variant"]["claims.n_resamples"]["value"] == 1000
    )
    links = re.findall(r'href="([^"#]+README\.md)"', html)
    assert links and all((folder / link).resolve().is_file() for link in links), links
    images = re.findall(r'src="(figures/[^"]+)"', html)
    assert all((folder / src).is_file() for src in images), images

    again = paperline("run", "qualitypajama", "--profile", "smoke", *override, cwd=root)
    assert "nothing to do" in again.stderr and again.stdout.strip().endswith(f"{folder}/report.html")

    replaced = paperline("run", "qualitypajama", "--profile", "smoke", *override, "--replace-default", cwd=root)
    assert replaced.returncode == 0, replaced.stdout[-3000:] + replaced.stderr[-3000:]
    doc = json.loads((default / "claims.json").read_text())
    assert doc["provenance"]["variant"]["claims.n_resamples"]["value"] == 1000
    assert replaced.stdout.strip().splitlines()[-1] == f"report: {default}/report.html"
