"""The real `paperline run dka --profile smoke`: GX checks, the pretrained backbone, the sweep and runs, claims
C1-C4, the report; a bad value first exits 2 with one line and writes nothing."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.io import read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.conftest import error_line, paperline
from tests.fanout_checks import assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    bad = paperline("run", "dka", "--profile", "smoke", "--set", "adapt.k_large=4", cwd=project)
    assert bad.returncode == 2 and "dka.adapt" in error_line(bad) and "k_large" in error_line(bad)
    assert not (project / "data/dka").exists()
    run_smoke(project, "dka")
    data = project / "data/dka"
    for name in ("train", "dev", "test", "test-balance"):
        assert json.loads((data / f"data/_checks/{name}.json").read_text())["success"] is True
    assert json.loads((data / "adapt/_checks/fractions.json").read_text())["success"] is True
    assert (data / "pretrain/backbone/model.safetensors").is_file()
    runs = read_jsonl(data / "adapt/runs.jsonl")
    assert {(r["method"], r["fraction"]) for r in runs} >= {("dka", 0.1), ("bottleneck", 1.0)}
    assert all(len(r["correct"]) == 80 and set(r["erf"]) == {"0.05", "0.2"} for r in runs)
    with np.load(data / "adapt/erf_maps.npz") as z:
        assert z["dka|0.1|0"].shape == (64, 64)
    check_smoke_claims(project / "reports/dka/claims.json", ["C1", "C2", "C3", "C4"])
    check_smoke_report(
        project,
        "dka",
        section="Effective receptive field",
        plots={"accuracy.csv": "method,fraction,acc,ci_low,ci_high", "erf.csv": "method,erf_area"},
    )
    # the champion (DKA at the low fraction, first seed) re-evaluates through the registry to the stage's own items
    candidate, result = check_champion(project, "dka", tmp_path, monkeypatch)
    assert candidate["name"] == "dka-f0.1-s0"
    dka0 = next(r for r in runs if (r["method"], r["fraction"], r["seed"]) == ("dka", 0.1, 0))
    assert result["metrics"]["acc"] == pytest.approx(np.mean(dka0["correct"])) == pytest.approx(dka0["acc"])
    assert result["metrics"]["auc"] == pytest.approx(dka0["auc"]) and "scikit-learn" in result["versions"]
    # the fanned-out stage again on a process pool: the same outputs as the local runner's
    assert_fan_out_matches_local(
        project, "dka", "adapt", "data/dka/adapt", ignore=frozenset({"seconds", "run_seconds", "cpu_seconds"})
    )
