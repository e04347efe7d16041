"""The real `paperline run cdra --profile smoke`: a bad value first exits 2 with one line and writes nothing; then the
pairs and their GX checks, the SFT policy, both PRMs and the three RL arms with the GX checks of their tables,
claims C1-C4 and the report; the champion (CDRA's first-seed policy) re-evaluated through the registry to the train
stage's own final numbers."""

from __future__ import annotations

import json

import pytest

from components.cdra.cdpa import summary
from components.io import read_json, read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.conftest import error_line, paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    bad = paperline("run", "cdra", "--profile", "smoke", "--set", "rl.group_size=1", cwd=project)
    assert bad.returncode == 2 and "cdra.rl" in error_line(bad) and "group_size" in error_line(bad)
    assert not (project / "data/cdra").exists()
    run_smoke(project, "cdra")
    data = project / "data/cdra"
    for name in ("train", "heldout"):
        assert json.loads((data / f"data/_checks/{name}.json").read_text())["success"] is True
    for name in ("eval", "prm_steps", "rl_steps"):  # the run's own tables were checked before they were written
        assert json.loads((data / f"runs/_checks/{name}.json").read_text())["success"] is True
    ev = read_jsonl(data / "runs/eval.jsonl")
    assert {r["arm"] for r in ev} == {"sft", "grpo_outcome", "prm_score_only", "cdra"}
    assert {len([r for r in ev if r["arm"] == a]) for a in ("sft", "cdra")} == {60}
    steps = read_jsonl(data / "runs/rl_steps.jsonl")
    assert len(steps) == 3 * 12 and all(0 <= s["zero_process"] <= 1 for s in steps)
    prm = read_jsonl(data / "runs/prm_steps.jsonl")
    assert prm and all(r["gold"] in (-1, 0, 1) and r["genprm"] in (-1, 0, 1) for r in prm)
    for name in ("sft", "genprm", "score_only", "cdra"):
        assert (data / f"runs/models/0/{name}/model.safetensors").is_file()
    info = read_json(data / "runs/info.json")
    assert set(info["seeds"][0]["rl_seconds"]) == {"grpo_outcome", "prm_score_only", "cdra"}
    check_smoke_claims(project / "reports/cdra/claims.json", ["C1", "C2", "C3", "C4"])
    check_smoke_report(project, "cdra", section="Held-out accuracy", plots={"curves.csv": "seed,arm,step,pf,da"})
    # the champion (CDRA's policy of the first seed) re-evaluates through the registry to the stage's final numbers
    candidate, result = check_champion(project, "cdra", tmp_path, monkeypatch)
    final = summary([r for r in ev if r["arm"] == "cdra" and r["seed"] == 0])
    assert candidate["name"] == "cdra-seed0"
    for key in ("pf", "implicit", "da"):
        assert result["metrics"][key] == pytest.approx(final[key], abs=1e-9)
