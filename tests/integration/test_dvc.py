"""`dvc repro` reruns only what changed; experiments, metrics and the offline plots page work."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.conftest import paperline, tool

pytestmark = [pytest.mark.slow, pytest.mark.integration]

UP_TO_DATE = "Data and pipelines are up to date."


def ran(output: str) -> list[str]:
    return re.findall(r"Running stage '([^']+)'", output)


REPORT = "qualitypajama-report"  # one pipeline keeps this test short; every pipeline's smoke run has its own test


def test_repro_noop_experiment_metrics_and_plots(project, tmp_path):
    # the training grid fans out over a Prefect process pool here (two models at a time)
    params = yaml.safe_load((project / "params.yaml").read_text())
    params["qualitypajama"]["resources"].update(workers=2, threads=1)
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    first = paperline("repro", "qualitypajama", cwd=project)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert (project / "reports/index.html").is_file()
    assert (project / "dvc.lock").is_file()
    assert (project / "data/qualitypajama/grid/summary.json").read_text().count('"models": 9')

    second = tool("dvc", "repro", REPORT, cwd=project)
    assert second.returncode == 0, second.stderr
    assert ran(second.stdout) == [] and UP_TO_DATE in second.stdout

    status = tool("dvc", "status", REPORT, cwd=project)
    assert UP_TO_DATE in status.stdout

    exp = tool("dvc", "exp", "run", "-S", "qualitypajama.fit.bootstrap=30", REPORT, cwd=project)
    assert exp.returncode == 0, exp.stdout[-3000:] + exp.stderr[-3000:]
    assert ran(exp.stdout) == ["qualitypajama-fit", "qualitypajama-report"], exp.stdout

    metrics = tool("dvc", "metrics", "show", "--json", cwd=project)
    assert metrics.returncode == 0 and "reports/qualitypajama/metrics.json" in metrics.stdout

    plots = tool("dvc", "plots", "show", "reports/qualitypajama/plots/loss_vs_compute.csv", "-o", str(tmp_path / "plots"),
                 cwd=project)
    assert plots.returncode == 0, plots.stderr
    page = (tmp_path / "plots" / "index.html").read_text()
    assert "loss_vs_compute" in page
    assert not re.search(r"<script[^>]+src=[\"']https?://", page), "the plots page must not load scripts from a CDN"
    assert "vegaEmbed" in page
