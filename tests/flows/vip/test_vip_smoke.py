"""The real `paperline run vip --profile smoke`: a bad value first exits 2 with one line and writes nothing; then
data and GX checks, SFT, uniform Dr.GRPO and VIP runs, claims C1-C4, the report; the champion (VIP's first-seed
policy) re-evaluated through the registry to the rl stage's own final mean@k; the RL stage again on a process
pool gives the same outputs."""

from __future__ import annotations

import json

import pytest

from components.io import read_json, read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.conftest import error_line, paperline
from tests.fanout_checks import assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    bad = paperline("run", "vip", "--profile", "smoke", "--set", "rl.budget_per_step=1000", cwd=project)
    assert bad.returncode == 2 and "vip.rl" in error_line(bad) and "budget_per_step" in error_line(bad)
    assert not (project / "data/vip").exists()
    run_smoke(project, "vip")
    data = project / "data/vip"
    for name in ("sft", "train", "heldout", "features"):
        assert json.loads((data / f"data/_checks/{name}.json").read_text())["success"] is True
    assert (data / "sft/model/model.safetensors").is_file()
    sft = read_json(data / "sft/sft.json")
    assert 0.0 <= sft["competence"]["overall"] <= 1.0 and sft["competence"]["per_tier"]
    steps = read_jsonl(data / "runs/steps.jsonl")
    assert {s["method"] for s in steps} == {"uniform", "vip"}
    assert all(sum(s["sizes"]) == 32 and min(s["sizes"]) >= 2 and max(s["sizes"]) <= 8 for s in steps)
    assert all(s["sizes"] == [4] * 8 for s in steps if s["method"] == "uniform")
    curves = read_jsonl(data / "runs/curves.jsonl")
    assert {c["rollouts"] for c in curves} == {0, 6 * 32}
    check_smoke_claims(project / "reports/vip/claims.json", ["C1", "C2", "C3", "C4"])
    check_smoke_report(
        project,
        "vip",
        section="Allocations",
        plots={"accuracy.csv": "method,rollouts,mean_at_k,lo,hi", "allocation.csv": "method,n,count"},
    )
    # the champion (VIP's policy of the first seed) re-evaluates through the registry to the rl stage's final point
    candidate, result = check_champion(project, "vip", tmp_path, monkeypatch)
    final = [c for c in curves if c["method"] == "vip" and c["seed"] == 0 and c["rollouts"] == 6 * 32]
    assert candidate["name"] == "vip-seed0" and len(final) == 1
    assert result["metrics"]["mean_at_k"] == pytest.approx(final[0]["mean@k"], rel=1e-6, abs=1e-9)
    assert result["metrics"]["pass_at_k"] == pytest.approx(final[0]["pass@4"], rel=1e-6, abs=1e-9)
    assert_fan_out_matches_local(project, "vip", "rl", "data/vip/runs")
