"""The real `paperline run neuraldb --profile smoke`: data and its GX checks, the edit runs, claims, report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.io import read_jsonl
from tests.champion_checks import check_champion
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project, tmp_path, monkeypatch):
    run_smoke(project, "neuraldb")
    data = project / "data/neuraldb/data"
    for name in ("facts", "edits_0", "edits_1", "edits_dev", "tokens"):
        assert json.loads((data / f"_checks/{name}.json").read_text())["success"] is True, name
    edits = read_jsonl(data / "edits_seed0.jsonl")
    assert len(edits) == 100 and all(r["target_new"] != r["target_true"] for r in edits)
    other = read_jsonl(data / "edits_seed1.jsonl")
    editable = 200 - 60  # data.n_subjects - data.neighbour_pool: the seeds' first 70 subjects are disjoint
    assert not {r["subject"] for r in edits[: editable // 2]} & {r["subject"] for r in other[: editable // 2]}
    assert (project / "data/neuraldb/model/model.safetensors").is_file()

    runs = read_jsonl(project / "data/neuraldb/edits/runs.jsonl")
    keys = {(r["seed"], r["m"], r["method"]) for r in runs}
    for seed in (0, 1):
        for m in (10, 100):
            assert {(seed, m, meth) for meth in ("memit", "alphaedit", "neuraldb")} <= keys
        assert (seed, 100, "unedited") in keys
    for r in runs:  # m = 10 is evaluated as 10 disjoint batches (editing.small_batches, capped by the 100 requests)
        assert len(r["efficacy"]) == (100 if r["m"] == 10 else r["m"]) and all(0 <= v <= 1 for v in r["efficacy"])
        assert len(r["ppl_nll"]) == 16
        if r["method"] == "neuraldb":  # the store's retrieval accuracy is a reported metric
            assert len(r["retrieval"]) == len(r["efficacy"]) and all(0 <= v <= 1 for v in r["retrieval"])
    nll = {s: next(r for r in runs if r["seed"] == s and r["method"] == "unedited")["ppl_nll"] for s in (0, 1)}
    assert nll[0] != nll[1]  # each seed its own held-out windows
    assert json.loads((project / "data/neuraldb/edits/_checks/runs.json").read_text())["success"] is True
    gamma = json.loads((project / "data/neuraldb/edits/gamma.json").read_text())
    assert gamma["gamma"] in (0.6, 0.8, 0.9) and len(gamma["dev"]) == 3
    # AlphaEdit's null-space threshold and L2 term are tuned on the dev split like gamma and MEMIT's lambda
    assert gamma["alphaedit_tuned"] and len(gamma["alphaedit_dev"]) == 12
    assert gamma["null_threshold"] in (1e-2, 1e-3, 1e-4, 1e-5) and gamma["alpha"] in (1.0, 10.0, 100.0)
    trace = json.loads((project / "data/neuraldb/edits/trace.json").read_text())
    assert all("retrieval" in t for t in trace["trace"]) and 0 < trace["null_space_energy"] < 1

    doc = check_smoke_claims(project / "reports/neuraldb/claims.json", ["C1", "C2", "C3", "C4"])
    c1, *rest = doc["claims"]
    assert [p["id"] for p in c1["parts"]] == ["C1/efficacy-vs-memit", "C1/efficacy-vs-alphaedit", "C1/drop-vs-memit"]
    for c in rest:  # C2-C4 are judged only when the edits took effect
        assert [pre["id"] for pre in c["preconditions"]] == ["P0"]
    for c in rest[1:]:
        assert c["parts"][0]["rule"] == "non-inferiority" and c["parts"][0]["threshold"] == -0.01
    assert all(c["n_seeds"] == 2 for c in doc["claims"])

    metrics = check_smoke_report(project, "neuraldb")
    assert set(metrics["at_max_m"]) == {"unedited", "memit", "alphaedit", "neuraldb"}
    for csv in ("metrics_vs_m.csv", "gamma_sweep.csv"):
        assert (project / f"reports/neuraldb/plots/{csv}").read_text().count("\n") >= 3
    # the champion (NeuralDB's edited LM with its store, seed 0, m = 100) re-evaluates through the registry to the
    # edit stage's own per-fact values for that run
    assert (project / "data/neuraldb/edits/champion/neuraldb.safetensors").is_file()
    candidate, result = check_champion(project, "neuraldb", tmp_path, monkeypatch)
    assert candidate["name"] == "neuraldb-seed0-m100"
    row = next(r for r in runs if (r["seed"], r["m"], r["method"]) == (0, 100, "neuraldb"))
    assert result["metrics"]["efficacy"] == pytest.approx(np.nanmean(row["efficacy"]), rel=1e-9)
    assert result["metrics"]["specificity"] == pytest.approx(np.nanmean(row["specificity"]), rel=1e-9)
    assert result["metrics"]["ppl_nll"] == pytest.approx(np.mean(row["ppl_nll"]), rel=1e-6)
    assert candidate["eval"]["rules"]["ppl_nll"]["higher_is_better"] is False
