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
    # smoke grid: 3 sizes x 3 interventions x 2 seeds (runs are the fit's bootstrap unit)
    assert (project / "data/qualitypajama/grid/summary.json").read_text().count('"models": 18')

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

    plots = tool(
        "dvc",
        "plots",
        "show",
        "reports/qualitypajama/plots/loss_vs_compute.csv",
        "-o",
        str(tmp_path / "plots"),
        cwd=project,
    )
    assert plots.returncode == 0, plots.stderr
    page = (tmp_path / "plots" / "index.html").read_text()
    assert "loss_vs_compute" in page
    assert not re.search(r"<script[^>]+src=[\"']https?://", page), "the plots page must not load scripts from a CDN"
    assert "vegaEmbed" in page
    assert '"field": "intervention"' in page and '"type": "log"' in page  # coloured by intervention, log compute axis


def test_paperline_run_records_its_stages_so_dvc_status_is_clean(project):
    """A `paperline run` with params.yaml's own params leaves dvc.lock as `dvc repro` would (assomem: the shortest
    smoke run); a run with --set leaves dvc.lock alone and says why."""
    run = paperline("run", "assomem", "--profile", "smoke", cwd=project)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "dvc.lock: recorded" in run.stdout
    status = tool("dvc", "status", "assomem-report", cwd=project)  # the report and every stage it reads
    assert status.returncode == 0 and UP_TO_DATE in status.stdout, status.stdout + status.stderr
    lock = (project / "dvc.lock").read_text()
    assert "assomem-report" in lock and "reports/assomem/claims.json" in lock

    again = paperline("run", "assomem", "--stage", "report", "--set", "assomem.claims.level=0.9", cwd=project)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "dvc.lock not updated: the run used --set" in again.stderr
    assert (project / "dvc.lock").read_text() == lock
