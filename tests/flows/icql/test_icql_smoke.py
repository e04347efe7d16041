"""The real `paperline run icql --profile smoke`: datasets and their GX checks, models, evaluation, claims, report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.io import read_json, read_jsonl
from components.rl.dataset import load
from tests.champion_checks import check_champion
from tests.claims_checks import assert_one_model_claims_say_so, check_smoke_claims, check_smoke_report, run_smoke
from tests.conftest import paperline
from tests.fanout_checks import assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    run_smoke(project, "icql")
    ds = project / "data/icql/datasets"
    for task, width in ((1, 5), (4, 8)):
        data = load(ds / f"t{task}/transitions.npz")
        assert data.observations.shape[1] == width and np.isfinite(data.rewards).all()
        ctx = np.load(ds / f"t{task}/ctx_nearest.npy")
        assert ctx.shape == (len(data), 5) and not (ctx == np.arange(len(data))[:, None]).any()
        assert json.loads((ds / f"_checks/t{task}.json").read_text())["success"] is True
        refs = read_json(ds / f"t{task}/meta.json")["references"]
        assert refs["expert"] > refs["random"]

    runs = read_json(project / "data/icql/models/runs.json")
    assert {r["name"] for r in runs} == {"t4-iql-s0", "t4-icql-s0", "t4-icql-random-s0", "t1-iql-s0", "t1-icql-s0"}
    assert all((project / "data/icql/models" / r["name"] / "model.pt").is_file() for r in runs)
    ev = project / "data/icql/eval"
    assert json.loads((ev / "_checks/episodes.json").read_text())["success"] is True
    episodes = read_jsonl(ev / "episodes.jsonl")
    assert len(episodes) == 5 * 5 and all(np.isfinite(e["score"]) for e in episodes)
    assert all(-1 <= r["q_spearman"] <= 1 for r in read_jsonl(ev / "runs.jsonl"))

    doc = check_smoke_claims(project / "reports/icql/claims.json", ["C1", "C2", "C3", "C4"])
    for claim in doc["claims"]:
        assert claim["rule"] == "standard" and claim["ci_low"] <= claim["ci_high"]
    assert_one_model_claims_say_so(doc)  # the smoke profile trains one seed: no claim speaks beyond that model

    check_smoke_report(project, "icql", section="Retrieval ablation", plots={"scores.csv": "group,score"})

    # the champion (ICQL on C1's 4-subtask task, first seed) re-evaluates through the registry to the evaluate
    # stage's own numbers
    assert (project / "data/icql/models/champion/model.safetensors").is_file()
    candidate, result = check_champion(project, "icql", tmp_path, monkeypatch)
    assert candidate["name"] == "t4-icql-s0" and set(candidate["metrics"]) == {"score", "q_spearman", "q_mae"}
    n = candidate["eval"]["settings"]["episodes"]
    own = [e["score"] for e in episodes if e["run"] == candidate["name"] and e["episode"] < n]
    assert n == 5 and len(own) == n and result["metrics"]["score"] == pytest.approx(np.mean(own), rel=1e-9)
    row = next(r for r in read_jsonl(ev / "runs.jsonl") if r["run"] == candidate["name"])
    assert result["metrics"]["q_spearman"] == pytest.approx(row["q_spearman"], rel=1e-9)
    assert result["metrics"]["q_mae"] == pytest.approx(row["q_mae"], rel=1e-6)
    assert {"gymnasium", "safetensors"} <= set(result["versions"])

    # the grid stage again on a process pool: the same outputs as the local runner's
    assert_fan_out_matches_local(project, "icql", "train", "data/icql/models")


def test_retrieval_larger_than_the_dataset_fails_clearly(project):
    proc = paperline(
        "run",
        "icql",
        "--profile",
        "smoke",
        "--set",
        "data.episodes=2",
        "--set",
        "eval.q_episodes=2",
        "--set",
        "retrieval.k=400",
        cwd=project,
    )
    assert proc.returncode != 0
    assert "retrieval.k=400 is larger than the dataset" in proc.stdout + proc.stderr
    assert not (project / "data/icql/datasets").exists()  # the failed stage published nothing
