"""The real `paperline run cdra --profile smoke`: data and GX checks, both estimators, claim C1, report."""

from __future__ import annotations

import json

import pytest

from components.io import read_jsonl
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.fanout_checks import assert_fan_out_matches_local

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project):
    run_smoke(project, "cdra")
    data = project / "data/cdra"
    assert json.loads((data / "data/_checks/samples.json").read_text())["success"] is True
    rows = read_jsonl(data / "runs/errors.jsonl")
    assert {r["seed"] for r in rows} == {0, 1, 2} and all(r["method_error"] >= 0 for r in rows)
    check_smoke_claims(project / "reports/cdra/claims.json", ["C1"])
    check_smoke_report(project, "cdra", section="Errors", plots={"errors.csv": "seed,estimator,error"})
    # the fanned-out stage again on a process pool: the same outputs as the local runner's
    assert_fan_out_matches_local(project, "cdra", "evaluate", "data/cdra/runs")
