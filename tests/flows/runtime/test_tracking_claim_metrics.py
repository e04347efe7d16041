"""A report's claims as MLflow parent-run metrics (``claim.<id>.effect``, CI bounds, verdict code) beside the
``verdict.<id>`` tags; absent numbers are not logged."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow  # MLflow's SQLite store set-up: ~10 s here
def test_log_report_logs_each_claims_numbers_as_metrics(tracker, tmp_path):
    claims = [
        {"id": "C1", "verdict": "reproduced", "effect": 0.25, "ci_low": 0.125, "ci_high": 0.375, "testability": []},
        {"id": "C2", "verdict": "not reproduced", "effect": -0.5, "ci_low": -0.75, "ci_high": -0.25},
        {"id": "C3", "verdict": "inconclusive", "effect": None, "ci_low": None, "ci_high": None},
    ]
    path = tmp_path / "report" / "claims.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"paper": "toy", "claims": claims, "summary": {"reproduced": 1}}))

    assert tracker.log_report([path]) == {"C1": "reproduced", "C2": "not reproduced", "C3": "inconclusive"}
    run = tracker.client.get_run(tracker.run_id)
    claim_metrics = {k: v for k, v in run.data.metrics.items() if k.startswith("claim.")}
    assert claim_metrics == {
        "claim.C1.effect": 0.25,
        "claim.C1.ci_low": 0.125,
        "claim.C1.ci_high": 0.375,
        "claim.C1.verdict_code": 1.0,
        "claim.C1.testable": 1.0,
        "claim.C2.effect": -0.5,
        "claim.C2.ci_low": -0.75,
        "claim.C2.ci_high": -0.25,
        "claim.C2.verdict_code": -1.0,
        "claim.C2.testable": 1.0,
        "claim.C3.verdict_code": 0.0,  # no effect or CI: nothing logged for them (no NaN)
        "claim.C3.testable": 1.0,
    }
    assert run.data.tags["verdict.C2"] == "not reproduced"
