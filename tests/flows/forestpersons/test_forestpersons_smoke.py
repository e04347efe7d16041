"""The real `paperline run forestpersons --profile smoke`: GX-checked sets, split, detectors, metrics, claims,
report; the train stage again on a process pool; bad input fails with one line and overwrites nothing."""

from __future__ import annotations

import json

import pytest

from components.io import read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.conftest import error_line, paperline
from tests.fanout_checks import assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    run_smoke(project, "forestpersons")
    data = project / "data/forestpersons"
    for check in (
        "scenes/_checks/urban_train.json",
        "scenes/_checks/forest_pool.json",
        "split/_checks/sequences.json",
        "split/_checks/sequence_splits.json",
        "split/_checks/forest_test.json",
        "eval/_checks/metrics.json",
    ):
        assert json.loads((data / check).read_text())["success"] is True, check
    seqs = read_jsonl(data / "split/sequences.jsonl")
    assert {r["split"] for r in seqs} == {"train", "val", "test"} and {r["tier"] for r in seqs} <= {
        "easy",
        "medium",
        "hard",
    }
    runs = read_jsonl(data / "models/runs.jsonl")
    assert sorted(r["name"] for r in runs) == ["aerial-s0", "forest-s0", "forest-s1", "urban-s0", "urban-s1"]
    summary = json.loads((data / "eval/summary.json").read_text())
    assert summary["max_abs_diff_vs_pycocotools"] <= 1e-9 and set(summary["ap"]) == {"hog", *(r["name"] for r in runs)}
    doc = check_smoke_claims(project / "reports/forestpersons/claims.json", ["C1", "C2", "C3", "C4"])
    assert [x["rule"] for x in doc["claims"][2]["parts"]] == ["probability", "standard"]
    assert doc["claims"][0]["n_seeds"] == 2 and doc["claims"][3]["cluster_unit"] is None
    check_smoke_report(
        project,
        "forestpersons",
        section="Subset AP by pose, visibility and tier",
        plots={"ap_by_domain.csv": "detector,domain,ap"},
    )

    # the champion (the forest-trained detector, first seed) re-evaluates through the registry to the evaluate
    # stage's own pycocotools numbers
    candidate, result = check_champion(project, "forestpersons", tmp_path, monkeypatch)
    assert candidate["name"] == "forest-s0" and "pycocotools" in result["versions"]
    row = next(
        r
        for r in read_jsonl(data / "eval/metrics.jsonl")
        if r["id"] == "forest-s0/all/None" and r["test_set"] == "forest"
    )
    assert result["metrics"]["ap"] == pytest.approx(row["coco_ap"], abs=1e-12)
    assert result["metrics"]["ap50"] == pytest.approx(row["coco_ap50"], abs=1e-12)
    assert result["metrics"]["ap"] == pytest.approx(summary["ap"]["forest-s0"], abs=1e-9)

    report = (project / "reports/forestpersons/report.html").read_bytes()
    for bad, key in (
        (["--set", "train.seeds.lake=[0]"], "train.seeds"),
        (["--set", "scenes.train_images=205"], "scenes"),
        (["--set", "tiers.easy_below=0.8"], "tiers"),
    ):
        line = error_line(paperline("run", "forestpersons", "--profile", "smoke", *bad, cwd=project))
        assert f"forestpersons.{key}" in line, line
    assert (project / "reports/forestpersons/report.html").read_bytes() == report  # nothing overwritten

    # the fanned-out stage again on a process pool: the same outputs as the local runner's
    assert_fan_out_matches_local(project, "forestpersons", "train", "data/forestpersons/models")
