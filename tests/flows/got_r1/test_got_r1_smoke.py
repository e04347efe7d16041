"""The real `paperline run got-r1 --profile smoke`: data and GX checks, GoT-SFT and direct, GRPO with each reward
x seeds, claims 1-4 with verdicts, the report with its image grid; the champion (the full-reward decoder of the first
seed) re-evaluated through the registry to the rl stage's own test numbers."""

from __future__ import annotations

import json

import pytest

from components.got_r1.train import summary
from components.io import read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    run_smoke(project, "got-r1")
    data = project / "data/got-r1"
    for name in ("prompts", "chains"):
        assert json.loads((data / f"data/_checks/{name}.json").read_text())["success"] is True
    prompts = read_jsonl(data / "data/prompts.jsonl")
    assert all(r["held_out"] for r in prompts if r["split"] == "test" and r["tag"] in ("colors", "color_attr"))
    sft = read_jsonl(data / "sft/eval.jsonl")
    assert {r["method"] for r in sft} == {"got-sft", "direct"}
    runs = read_jsonl(data / "runs/eval.jsonl")
    assert {(r["method"], r["seed"]) for r in runs} == {(f"grpo-{k}", s) for k in ("full", "pi", "ri") for s in (0, 1)}
    assert all(0 <= r["iou"] <= 1 and r["correct"] in (0.0, 1.0) for r in runs)
    assert (data / "runs/models/grpo-full-seed0/model.safetensors").is_file()
    assert json.loads((data / "runs/_checks/eval.json").read_text())["success"] is True
    check_smoke_claims(project / "reports/got-r1/claims.json", ["C1", "C2", "C3", "C4"])
    check_smoke_report(
        project,
        "got-r1",
        section="Image grids",
        plots={"accuracy.csv": "task,method,accuracy", "reward.csv": "step,method,reward"},
    )
    # the champion re-evaluates through the registry (allow-listed loader, greedy decoding) to the stage's numbers
    candidate, result = check_champion(project, "got-r1", tmp_path, monkeypatch)
    assert candidate["name"] == "grpo-full-seed0"
    final = summary([r for r in runs if r["method"] == "grpo-full" and r["seed"] == 0])
    for key in ("overall", "acc_position", "acc_color_attr"):
        assert result["metrics"][key] == pytest.approx(final[key], abs=1e-9)
