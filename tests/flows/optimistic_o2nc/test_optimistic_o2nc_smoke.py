"""The real `paperline run optimistic-o2nc --profile smoke`: runs.jsonl and its GX checks, claims, report, the
champion (ODOG's tuned settings) re-evaluated through the registry."""

from __future__ import annotations

import json
import math

import pytest

from components.io import read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report
from tests.conftest import paperline
from tests.fanout_checks import assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    proc = paperline("run", "optimistic-o2nc", "--profile", "smoke", cwd=project)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    runs = project / "data/optimistic-o2nc/runs"
    rows = read_jsonl(runs / "runs.jsonl")
    assert rows and all(isinstance(r["calls"], int) and r["calls"] >= 0 for r in rows)
    assert not any(r["reached"] and r["diverged"] for r in rows)
    assert {r["grid"] for r in rows} == {"det", "stoch"}
    assert json.loads((runs / "_checks/runs.json").read_text())["success"] is True

    doc = check_smoke_claims(project / "reports/optimistic-o2nc/claims.json", ["C1", "C2", "C3"])
    c1, c2, c3 = doc["claims"]
    assert c1["rule"] == c3["rule"] == "composite" and c2["rule"] == "standard"
    assert [q["id"] for q in c3["parts"]] == ["C3/success", "C3/monotone", "C3/sigma0"]
    assert c3["parts"][2]["verdict"] == "inconclusive" and not c3["parts"][2]["testability"][0]["passed"]
    assert c2["n_seeds"] == 3 and c2["details"]["strata"] == ["robust-synthetic"]

    # the run ends with the claims table read from claims.json, and the report path
    out = proc.stdout.splitlines()
    head = out.index(f"claims (smoke profile, {project}/reports/optimistic-o2nc/claims.json):")
    assert out[head + 1].split() == ["id", "verdict", "effect", "CI", "reason"]
    for line, claim in zip(out[head + 2 : head + 5], doc["claims"], strict=True):
        assert line.startswith(f"{claim['id']}  {claim['verdict']} ") and claim["reason"][:40] in line
    assert out[-1] == f"report: {project}/reports/optimistic-o2nc/report.html"
    # one line says what the quiet start-up is doing
    assert "starting a temporary Prefect server" in proc.stderr or "using the Prefect server at" in proc.stderr

    check_smoke_report(project, "optimistic-o2nc", plots={"calls_vs_eps.csv": "function,method,eps_rel,median_calls"})

    # the champion (ODOG's settings) re-evaluates through the registry to the measure stage's own runs
    candidate, result = check_champion(project, "optimistic-o2nc", tmp_path, monkeypatch)
    assert json.loads((runs / "champion/settings.json").read_text())["method"] == "odog"
    s = candidate["eval"]["settings"]
    det = [
        r
        for r in rows
        if r["grid"] == "det" and r["method"] == "odog" and r["function"] == s["function"] and r["seed"] in s["seeds"]
    ]
    assert len(det) == len(s["seeds"]) * len(s["eps"])
    mean_log = sum(math.log(r["calls"] if r["reached"] else 2 * s["budget"]) for r in det) / len(det)
    assert result["metrics"]["log_calls"] == pytest.approx(mean_log, rel=1e-12)
    noisy = [
        r
        for r in rows
        if r["grid"] == "stoch"
        and r["method"] == "odog"
        and r["function"] == s["function"]
        and r["seed"] in s["seeds"]
        and r["sigma_rel"] > 0
    ]
    assert result["metrics"]["noisy_reached"] == pytest.approx(sum(r["reached"] for r in noisy) / len(noisy))

    # the grid stage again on a process pool: the same outputs as the local runner's
    assert_fan_out_matches_local(project, "optimistic-o2nc", "measure", "data/optimistic-o2nc/runs")
