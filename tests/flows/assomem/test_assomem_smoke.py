"""The real `paperline run assomem --profile smoke`: memories and their GX checks, rankings, metrics, claims, report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.io import read_json, read_jsonl
from flows.assomem.params import METHODS
from tests.champion_checks import check_champion
from tests.claims_checks import assert_one_model_claims_say_so, check_smoke_claims, check_smoke_report, run_smoke

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    run_smoke(project, "assomem")
    data = project / "data/assomem"
    units = read_json(data / "memories/units.json")
    assert [u["size"] for u in units] == [300, 1000]
    checks = sorted((data / "memories/_checks").glob("*.json"))
    assert len(checks) == 4 and all(json.loads(c.read_text())["success"] for c in checks)
    assert json.loads((data / "eval/_checks/metrics.json").read_text())["success"] is True

    rows = read_jsonl(data / "eval/metrics.jsonl")
    assert {r["method"] for r in rows} == set(METHODS)
    assert all(0.0 <= r["R@10"] <= 1.0 and 0.0 <= r["S-nDCG@10"] <= 1.0 for r in rows)
    assert {r["split"] for r in rows} == {"calibration", "test"}
    weights = read_json(data / "runs/weights.json")
    for info in weights.values():
        for per_type in info["weights"]["assomem"].values():
            assert abs(sum(per_type.values()) - 1.0) < 1e-9 and min(per_type.values()) >= 0

    doc = check_smoke_claims(project / "reports/assomem/claims.json", ["C1", "C2", "C3", "C4"])
    for claim in doc["claims"]:  # one generator seed: every claim is about one memory draw
        assert claim["n_units"] > 0 and claim["n_seeds"] == 1
    assert_one_model_claims_say_so(doc)  # decided for that one draw, and saying so, or inconclusive
    assert [x["rule"] for x in doc["claims"][2]["parts"]] == ["standard", "probability"]

    metrics = check_smoke_report(
        project, "assomem", section="Fusion weights", plots={"recall_vs_size.csv": "method,size,R@10,R@6,nDCG@10"}
    )
    assert "dense@1000" in metrics["by_size"] and "assomem@1000" in metrics["by_size"]
    csv = (project / "reports/assomem/plots/recall_vs_size.csv").read_text().splitlines()
    assert csv[0] == "method,size,R@10,R@6,nDCG@10" and len(csv) == 1 + 2 * len(METHODS)
    # the champion (AssoMem's index of seed 0's largest memory, with its CMI weights) re-evaluates through the
    # registry to the evaluate stage's own per-question scores of that unit's test questions
    assert (data / "runs/champion/index.npz").is_file()
    candidate, result = check_champion(project, "assomem", tmp_path, monkeypatch)
    assert candidate["name"] == "assomem-seed0-n1000" and candidate["eval"]["settings"]["unit"] == "seed0-n1000"
    held = [r for r in rows if (r["unit"], r["method"], r["split"]) == ("seed0-n1000", "assomem", "test")]
    assert held and result["metrics"]["recall_at_10"] == pytest.approx(np.mean([r["R@10"] for r in held]), rel=1e-9)
    assert result["metrics"]["ndcg_at_10"] == pytest.approx(np.mean([r["nDCG@10"] for r in held]), rel=1e-9)
    assert {"scipy", "ir-measures"} <= set(result["versions"])
