"""The real `paperline run medgmae --profile smoke`: a bad value first exits 2 with one line and writes nothing;
then GX checks, both pretrained models, the sweep and every (init, fraction, seed) run with per-crop Dice, the
fits, claims C1-C3, the report with its slices and plots, and the champion's re-evaluation."""

from __future__ import annotations

import json

import pytest

from components.io import read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.conftest import error_line, paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    bad = paperline("run", "medgmae", "--profile", "smoke", "--set", "pretrain.mask_ratio=1.5", cwd=project)
    assert bad.returncode == 2 and "medgmae.pretrain" in error_line(bad) and "mask_ratio" in error_line(bad)
    assert not (project / "data/medgmae").exists()
    run_smoke(project, "medgmae")
    data = project / "data/medgmae"
    for name in ("train", "dev", "test", "train-labels", "test-labels", "phantoms"):
        assert json.loads((data / f"data/_checks/{name}.json").read_text())["success"] is True, name
    for name in ("medgmae-s0", "voxel-mae-s0"):
        assert (data / f"pretrain/{name}/model.safetensors").is_file()
    runs = read_jsonl(data / "finetune/runs.jsonl")
    assert {(r["init"], r["fraction"], r["seed"]) for r in runs} == {
        (i, f, s) for i in ("medgmae", "voxel-mae", "scratch") for f in (0.1, 1.0) for s in (0, 1)
    }
    assert all(len(r["dice"]) == 8 and 0 <= r["mean_dice"] <= 1 for r in runs)
    assert (data / "finetune/champion/model.safetensors").is_file()
    fits = read_jsonl(data / "recon/fits.jsonl")
    assert {f["start"] for f in fits} == {"pretrained", "random"} and len(fits) == 6
    check_smoke_claims(project / "reports/medgmae/claims.json", ["C1", "C2", "C3"])
    check_smoke_report(
        project,
        "medgmae",
        section="Reconstructions",
        plots={"dice.csv": "fraction,init,dice", "recon.csv": "volume,start,iters"},
    )
    # the champion (MedGMAE at the low fraction, first seed) re-evaluates through the registry to the stage's Dice
    candidate, result = check_champion(project, "medgmae", tmp_path, monkeypatch)
    assert candidate["name"] == "finetune-medgmae-f0.1-s0"
    g0 = next(r for r in runs if (r["init"], r["fraction"], r["seed"]) == ("medgmae", 0.1, 0))
    assert result["metrics"]["mean_dice"] == pytest.approx(g0["mean_dice"]) and "monai" in result["versions"]
