"""The real `paperline run milco --profile smoke`: data and GX checks, USE embeddings, the four trained models,
the index evaluation with pruning and baselines, claims C1-C4, the report, the champion (the first seed's MILCO
encoder with its index) re-evaluated through the registry; then the evaluate stage on a process pool (same
outputs), and a bad value that exits 2 naming the key with the report left untouched."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.io import read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.conftest import error_line, paperline
from tests.fanout_checks import TIMING, assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    run_smoke(project, "milco")
    data = project / "data/milco"
    for check in ("pairs", "queries", "leakage"):
        assert json.loads((data / f"data/_checks/{check}.json").read_text())["success"] is True
    assert json.loads((data / "embed/_checks/use.json").read_text())["success"] is True
    assert json.loads((data / "eval/_checks/per_query.json").read_text())["success"] is True
    for variant in ("milco", "no_sap", "no_echo", "dense"):
        assert (data / f"models/seed_0/{variant}/model.safetensors").is_file()
    rows = read_jsonl(data / "eval/per_query.jsonl")
    systems = {(r["system"], r["task"]) for r in rows}
    for s in ("milco", "no_sap", "no_echo", "dense", "bm25", "use"):
        assert {(s, "es-en"), (s, "es-es"), (s, "bible-es-en")} <= systems, s
    assert {"milco-mass@target", "milco-topk@target", "milco-mass@dense-bytes"} <= {r["system"] for r in rows}
    check_smoke_claims(project / "reports/milco/claims.json", ["C1", "C2", "C3", "C4"])
    check_smoke_report(
        project,
        "milco",
        section="Pruning",
        plots={"pruning.csv": "method,param,avg_doc_dims,ndcg10", "bytes.csv": "model,index_bytes,ndcg10"},
    )
    # the champion (seed 0's MILCO encoder + its ES->EN index) re-evaluates through the registry to the stage's rows
    candidate, result = check_champion(project, "milco", tmp_path, monkeypatch)
    assert candidate["name"] == "milco-seed0" and (data / "eval/champion/index.npz").is_file()
    weights = "model.safetensors"
    assert (data / "eval/champion" / weights).read_bytes() == (data / "models/seed_0/milco" / weights).read_bytes()
    mine = [r for r in rows if r["system"] == "milco" and r["task"] == "es-en" and r["seed"] == 0]
    assert result["metrics"]["ndcg10"] == pytest.approx(np.mean([r["nDCG@10"] for r in mine]), rel=1e-9)
    assert result["metrics"]["recall100"] == pytest.approx(np.mean([r["R@100"] for r in mine]), rel=1e-9)
    assert {"ir-measures", "scipy"} <= set(result["versions"])
    assert_fan_out_matches_local(project, "milco", "evaluate", "data/milco/eval", ignore=TIMING | {"latency_ms"})

    report = project / "reports/milco/claims.json"
    before = report.read_bytes()
    proc = paperline("run", "milco", "--profile", "smoke", "--set", "train.variants=[milco,splade]", cwd=project)
    assert "milco.train.variants" in error_line(proc)
    assert report.read_bytes() == before
