"""The real `paperline run ofmu --profile smoke`: data and GX checks, models, matched budgets, claims, report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.io import read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    run_smoke(project, "ofmu")
    data = project / "data/ofmu"
    qa = read_jsonl(data / "data/qa.jsonl")
    assert {r["split"] for r in qa} == {"forget", "retain", "general"}
    assert json.loads((data / "data/_checks/qa.json").read_text())["success"] is True
    assert (data / "models/base/model.safetensors").exists() and (data / "models/retain/model.safetensors").exists()

    runs = read_jsonl(data / "unlearn/runs.jsonl")
    assert {r["method"] for r in runs} >= {"ga", "graddiff", "npo", "ofmu", "ofmu-beta0"}
    # matched and exactly spent, except by GA's early stop (at the Retrain model's forget loss)
    assert all(r["budget"] == 20 and (r["used"] == 20 or (r["kind"] == "ga" and r["stopped"])) for r in runs)
    assert json.loads((data / "unlearn/_checks/runs.json").read_text())["success"] is True
    hist = read_jsonl(data / "unlearn/history.jsonl")
    assert {h["phase"] for h in hist if h["method"] == "ofmu"} == {"inner", "outer"}
    vision = read_jsonl(data / "vision/runs.jsonl")
    assert {r["method"] for r in vision} >= {"base", "retain", "ga", "graddiff", "npo", "ofmu"}
    assert all(0 <= r["TA"] <= 1 and 0 <= r["MIA"] <= 1 for r in vision)

    doc = check_smoke_claims(project / "reports/ofmu/claims.json", ["C1", "C2", "C3", "C4"])
    c1, _, _, c4 = doc["claims"]
    assert c1["baseline"] in ("graddiff", "npo") and [p["id"] for p in c1["parts"]] == ["C1/MU", "C1/FQ"]
    assert [p["id"] for p in c4["parts"]] == [f"C4/{sc}" for sc in ("class-3",)]
    # one LM seed and one vision seed in smoke: every sampled part says so
    assert all(c["n_seeds"] == 1 for c in doc["claims"])

    check_smoke_report(
        project,
        "ofmu",
        section="Language: forget quality vs model utility",
        plots={"tradeoff.csv": "method,seed,log10_fq,mu", "cosine.csv": "method,step,abs_cos"},
    )
    # the champion (OFMU's unlearned LM, first seed) re-evaluates through the registry to the stage's own items
    candidate, result = check_champion(project, "ofmu", tmp_path, monkeypatch)
    items = [
        r for r in read_jsonl(data / "unlearn/items.jsonl") if r["model"] == "ofmu" and r["seed"] == runs[0]["seed"]
    ]
    assert result["metrics"]["forget_rouge"] == pytest.approx(
        np.mean([r["rouge"] for r in items if r["split"] == "forget"])
    )
    assert candidate["eval"]["rules"]["forget_rouge"]["higher_is_better"] is False
