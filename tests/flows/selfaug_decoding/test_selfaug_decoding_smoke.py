"""The real `paperline run selfaug-decoding --profile smoke`: scenes and GX checks, the tiny VLM, every decoding
method on POPE / MME-style pairs / captions, claims C1-C4 and the report; then the decode grid again on a
process pool must give the same answers."""

from __future__ import annotations

import json

import pytest

from components.io import read_jsonl
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.fanout_checks import assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]

METHODS = {"greedy", "vcd", "vacode", "selfaug", "sas_only", "sat_only"}


def test_smoke_profile_end_to_end(project):
    run_smoke(project, "selfaug-decoding")
    data = project / "data/selfaug-decoding"
    for check in ("scenes", "cooccurrence_train", "cooccurrence_eval", "train_qa", "pope_random", "pope_popular",
                  "pope_adversarial", "mme", "dev_scenes", "pope_dev"):  # fmt: skip
        assert json.loads((data / f"data/_checks/{check}.json").read_text())["success"] is True, check
    pope = read_jsonl(data / "runs/pope.jsonl")
    assert {r["method"] for r in pope} == METHODS
    assert {r["split"] for r in pope} == {"random", "popular", "adversarial"}
    by_method = {m: [r for r in pope if r["method"] == m] for m in METHODS}
    assert len({len(v) for v in by_method.values()}) == 1  # every method answers every question
    assert {r["aug"] for r in by_method["vcd"]} == {"noise"} and {r["aug"] for r in by_method["greedy"]} == {None}
    assert {r["aug"] for r in by_method["sas_only"]} == {"random_mask"}  # existence questions -> the rule map
    assert all(0 < r["beta"] <= 0.5 for r in by_method["selfaug"])  # SAT's beta = sigmoid(-tau H) in (0, 0.5]
    tuning = json.loads((data / "runs/tuning.json").read_text())["seed_0"]  # chosen on dev, per method
    assert set(tuning) == METHODS and tuning["greedy"]["chosen"] == {}
    assert {len(tuning[m]["dev_grid"]) for m in METHODS - {"greedy"}} == {2}  # the same effort for each
    assert set(tuning["selfaug"]["chosen"]) == {"alpha", "tau"} and set(tuning["vcd"]["chosen"]) == {"alpha", "beta"}
    caps = read_jsonl(data / "runs/captions.jsonl")
    assert {r["method"] for r in caps} == METHODS and all(r["n_hallucinated"] <= r["n_mentions"] for r in caps)
    check_smoke_claims(project / "reports/selfaug-decoding/claims.json", ["C1", "C2", "C3", "C4"])
    check_smoke_report(project, "selfaug-decoding", section="POPE", plots={"pope.csv": "method,split,f1"})
    assert_fan_out_matches_local(project, "selfaug-decoding", "decode", "data/selfaug-decoding/runs")
