"""The real `paperline run optimistic-o2nc --profile smoke`: runs.jsonl and its GX checks, claims, report."""

from __future__ import annotations

import json
import re

import pytest

from components.evaluation.claims import validate_claims_document
from components.io import read_jsonl
from tests.conftest import paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project):
    proc = paperline("run", "optimistic-o2nc", "--profile", "smoke", cwd=project)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    runs = project / "data/optimistic-o2nc/runs"
    rows = read_jsonl(runs / "runs.jsonl")
    assert rows and all(isinstance(r["calls"], int) and r["calls"] >= 0 for r in rows)
    assert not any(r["reached"] and r["diverged"] for r in rows)
    assert {r["grid"] for r in rows} == {"det", "stoch"}
    assert json.loads((runs / "_checks/runs.json").read_text())["success"] is True

    doc = json.loads((project / "reports/optimistic-o2nc/claims.json").read_text())
    validate_claims_document(doc)
    assert doc["profile"] == "smoke"
    assert [c["id"] for c in doc["claims"]] == ["C1", "C2", "C3"]
    for claim in doc["claims"]:
        assert claim["verdict"] in ("reproduced", "not reproduced", "inconclusive")
        assert claim["details"]

    html = (project / "reports/optimistic-o2nc/report.html").read_text()
    assert not re.search(r"""(src|href)=["']https?://""", html)
    assert "data:image/png;base64," in html
    assert (project / "reports/optimistic-o2nc/metrics.json").exists()
    assert (project / "reports/optimistic-o2nc/plots/calls_vs_eps.csv").exists()
