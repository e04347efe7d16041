"""The real `paperline run cer-god --profile smoke`: graphs and their GX checks, runs, metrics, claims, report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.graph.graph import Graph, check_graph
from components.io import read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.conftest import paperline
from tests.fanout_checks import assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    run_smoke(project, "cer-god")
    data = project / "data/cer-god"
    g = check_graph(Graph.load(data / "graphs/sbm.npz"))
    assert g.n == 500 and 0 < g.y.mean() <= 0.5 and set(np.unique(g.kind)) == {0, 1, 2, 3}
    for check in (
        "clean/_checks/sbm-nodes.json",
        "graphs/_checks/sbm-nodes.json",
        "graphs/_checks/sbm-edges.json",
        "runs/_checks/runs.json",
        "eval/_checks/metrics.json",
    ):
        assert json.loads((data / check).read_text())["success"] is True, check

    runs = read_jsonl(data / "runs/runs.jsonl")
    assert {r["method"] for r in runs} >= {
        "cer-god",
        "cer-god-nomask",
        "cer-god-nodiv",
        "dominant",
        "gae",
        "leakage-probe",
    }
    cg = [r for r in runs if r["method"] == "cer-god"]
    assert all(0 <= r["minority_share"] <= 0.5 and isinstance(r["collapsed"], bool) for r in cg)
    weights = np.load(data / "runs/edge_weights.npz")["sbm/edge_weights"]
    assert ((weights >= 0) & (weights <= 1)).all()
    metrics = read_jsonl(data / "eval/metrics.jsonl")
    assert len(metrics) == len(runs) and all(0 <= m["auc"] <= 1 for m in metrics)

    doc = check_smoke_claims(project / "reports/cer-god/claims.json", ["C1", "C2", "C3", "C4"])
    assert set(doc["leakage"]) == {"sbm"} and "leakage_probe_auc" in doc["leakage"]["sbm"]
    for claim in doc["claims"][:2]:  # claims 1-2: one part per graph, guarded by the leakage probe
        assert [g["id"] for g in claim["parts"]] == [f"{claim['id']}/sbm"]
        assert claim["parts"][0]["preconditions"][0]["id"] == f"{claim['id']}/sbm/leakage-guard"
    assert [x["rule"] for x in doc["claims"][2]["parts"]] == ["p-value", "standard"]
    assert doc["claims"][3]["rule"] == "non-inferiority"

    check_smoke_report(
        project, "cer-god", section="Edge weights around outliers", plots={"auc_by_method.csv": "graph,method,mean_auc"}
    )

    # the champion (CER-GOD on the first graph, first seed) re-evaluates through the registry to the evaluate stage's
    # own numbers (computed there from the fit's scores.npz)
    assert (data / "runs/champion/model.safetensors").is_file() and (data / "runs/champion/config.json").is_file()
    candidate, result = check_champion(project, "cer-god", tmp_path, monkeypatch)
    assert candidate["name"] == "sbm/cer-god/0" and set(candidate["metrics"]) == {"auc", "ap", "trap_auc", "f1"}
    row = next(m for m in metrics if m["id"] == candidate["name"])
    for metric in candidate["metrics"]:
        assert result["metrics"][metric] == pytest.approx(row[metric], rel=1e-9, abs=1e-12), metric
    assert "safetensors" in result["versions"]

    # the grid stage again on a process pool: the same outputs as the local runner's
    assert_fan_out_matches_local(project, "cer-god", "fit", "data/cer-god/runs")


def test_bad_injection_rate_fails_before_work(project):
    proc = paperline("run", "cer-god", "--profile", "smoke", "--set", "cer-god.injection.trap_rate=0.45", cwd=project)
    assert proc.returncode != 0
    assert "injection" in (proc.stdout + proc.stderr) and "0.5" in (proc.stdout + proc.stderr)
    assert not (project / "data/cer-god/graphs").exists()
