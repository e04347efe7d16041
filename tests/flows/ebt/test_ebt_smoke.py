"""The real `paperline run ebt --profile smoke`: data + GX overlap check, EBT and Transformer++ trained,
thinking and best-of-N sweeps per set, claims C1-C3 and the descriptive claim 4, report with plots; the champion
(the first EBT) re-evaluated through the registry to the evaluate stage's own numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.io import read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import assert_one_model_claims_say_so, check_smoke_claims, check_smoke_report, run_smoke
from tests.fanout_checks import assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    run_smoke(project, "ebt")
    data = project / "data/ebt"
    checks = json.loads((data / "data/_checks/windows.json").read_text())
    assert checks["success"] is True
    assert any(r["column"] == "in_train" and r["success"] for r in checks["results"])  # the overlap check ran
    models = {r["name"]: r for r in read_jsonl(data / "models/models.jsonl")}
    assert set(models) == {"ebt-d64-s0", "tpp-d64-s0", "tppflops-d64-s0"}
    assert models["tppflops-d64-s0"]["steps"] > models["tpp-d64-s0"]["steps"] == models["ebt-d64-s0"]["steps"]
    assert models["ebt-d64-s0"]["train_flops_per_token"] > models["tpp-d64-s0"]["train_flops_per_token"]
    rows = read_jsonl(data / "eval/windows.jsonl")
    assert {r["set"] for r in rows} == {"id", "shakespeare", "linux_docs"}
    assert all(r["ebt_m4"] > 0 and r["bon_4"] > 0 and r["tpp"] > 0 for r in rows)
    doc = check_smoke_claims(project / "reports/ebt/claims.json", ["C1", "C2", "C3"])
    # one seed: a claim is decided for that one model (and says so) or inconclusive; one not reproduced carries
    # its design's power at every planted effect
    assert_one_model_claims_say_so(doc)
    for claim in doc["claims"]:
        if claim["verdict"] != "reproduced" and all(t["passed"] for t in claim["testability"]):
            power = claim["details"]["power"]
            assert len(power["rows"]) == len(power["planted_in_deltas"]) >= 2, claim["id"]
    assert "equal_steps" in doc["descriptive"] and "not tested" in doc["descriptive"]["scaling_rate_claim"]
    metrics = check_smoke_report(
        project,
        "ebt",
        section="Thinking and self-verification per set",
        plots={"thinking.csv": "set,steps,ppl", "best_of_n.csv": "set,n,ppl"},
    )
    assert "Fair to the paper: power and plateau" in (project / "reports/ebt/report.html").read_text()
    assert set(metrics["plateau"]) == set(models)  # a plateau measure per trained model
    # the champion (the first EBT) re-evaluates through the registry to the evaluate stage's own per-window NLLs
    candidate, result = check_champion(project, "ebt", tmp_path, monkeypatch)
    assert candidate["name"] == "ebt-d64-s0"
    first = candidate["eval"]["settings"]["max_windows"]  # the evaluate stage's first batch of ID windows
    id_rows = sorted(
        (r for r in rows if r["set"] == "id" and r["width"] == 64 and r["seed"] == 0), key=lambda r: r["window"]
    )[:first]
    for metric, column in (("id_nll", "ebt_m2"), ("id_nll_think", "ebt_m4"), ("id_nll_best_of", "bon_4")):
        assert result["metrics"][metric] == pytest.approx(np.mean([r[column] for r in id_rows]), rel=1e-6), metric
    # the grid stage again on a process pool: the same models, curves and FLOPs as the local runner's
    assert_fan_out_matches_local(project, "ebt", "train", "data/ebt/models")
