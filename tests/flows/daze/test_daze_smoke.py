"""The real `paperline run daze --profile smoke`: PPO agents (clean, Daze) on CartPole, GX checks on the logged
transitions and evaluations, claims 1-4, the report; then the evaluation fan-out on a process pool."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.io import read_json, read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.fanout_checks import assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    run_smoke(project, "daze")
    data = project / "data/daze"
    for check in (
        "models/_checks/transitions.json",
        "models/_checks/runs.json",
        "eval/_checks/episodes.json",
        "eval/_checks/states.json",
    ):
        assert json.loads((data / check).read_text())["success"] is True, check
    runs = read_json(data / "models/runs.json")
    assert {r["method"] for r in runs} == {"clean", "daze"}
    daze = next(r for r in runs if r["method"] == "daze")
    assert daze["counts"]["trigger"] > 0 and daze["counts"].get("daze", 0) + daze["counts"].get("null", 0) > 0
    assert (data / "models" / daze["name"] / "policy.safetensors").is_file()
    states = read_jsonl(data / "eval/states.jsonl")
    assert {s["condition"] for s in states} == {"clean", "mass x0.8", "mass x1.2", "length x0.8", "length x1.2"}
    doc = check_smoke_claims(project / "reports/daze/claims.json", ["C1", "C2", "C3", "C4"])
    integrity = doc["claims"][0]["parts"][-1]
    assert integrity["id"] == "C1/reward-integrity" and integrity["verdict"] == "reproduced"
    check_smoke_report(
        project,
        "daze",
        section="Attack success and stealth",
        plots={"asr.csv": "method,asr", "asr_perturbed.csv": "condition,asr"},
    )
    # the champion (the first Daze actor) re-evaluates through the registry to the evaluate stage's own numbers
    candidate, result = check_champion(project, "daze", tmp_path, monkeypatch)
    hits = [s["hit"] for s in states if s["condition"] == "clean" and s["name"] == candidate["name"]]
    assert result["metrics"]["asr"] == pytest.approx(np.mean(hits)) and {"gymnasium", "mujoco"} <= set(
        result["versions"]
    )
    # the evaluation again on a process pool: the same outputs as the local runner's
    assert_fan_out_matches_local(project, "daze", "evaluate", "data/daze/eval")
