"""The real `paperline run implicit-planning --profile smoke`: a bad value exits 2 with one line and writes
nothing; then data and GX checks, the control models, steering in them, claims C1-C4 (the SmolLM2 claims not
testable: the smoke profile runs the control models only), the report."""

from __future__ import annotations

import json

import pytest

from components.io import read_jsonl
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke
from tests.conftest import error_line, paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project):
    bad = paperline("run", "implicit-planning", "--profile", "smoke", "--set", "steer.position=middle", cwd=project)
    assert bad.returncode == 2 and "steer.position" in error_line(bad)
    assert not (project / "data/implicit-planning").exists()
    run_smoke(project, "implicit-planning")
    data = project / "data/implicit-planning"
    assert json.loads((data / "data/_checks/control_lines.json").read_text())["success"] is True
    models = read_jsonl(data / "controls/models.jsonl")
    assert {(m["language"], m["seed"]) for m in models} == {(x, s) for x in ("positive", "negative") for s in (0, 1)}
    rows = read_jsonl(data / "steer/generations.jsonl")
    assert {r["condition"] for r in rows} == {"unsteered", "steered", "random"}
    assert {r["model"] for r in rows} == {"control-positive", "control-negative"}
    doc = check_smoke_claims(project / "reports/implicit-planning/claims.json", ["C1", "C2", "C3", "C4"])
    c2 = next(c for c in doc["claims"] if c["id"] == "C2")
    assert c2["verdict"] == "inconclusive" and not c2["testability"][0]["passed"]
    check_smoke_report(project, "implicit-planning", section="Rates", plots={"rates.csv": "condition,rf2_rate"})
