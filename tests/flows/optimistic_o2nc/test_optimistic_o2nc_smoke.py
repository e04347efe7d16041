"""The real `paperline run optimistic-o2nc --profile smoke`: runs.jsonl and its GX checks, claims, report."""

from __future__ import annotations

import json
import re

import pytest

from components.io import read_jsonl
from tests.claims_checks import check_smoke_claims
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

    doc = check_smoke_claims(project / "reports/optimistic-o2nc/claims.json", ["C1", "C2", "C3"])
    c1, c2, c3 = doc["claims"]
    assert c1["rule"] == c3["rule"] == "composite" and c2["rule"] == "standard"
    assert [q["id"] for q in c3["parts"]] == ["C3/success", "C3/monotone", "C3/sigma0"]
    assert c2["n_seeds"] == 3 and c2["details"]["strata"] == ["robust-synthetic"]

    html = (project / "reports/optimistic-o2nc/report.html").read_text()
    assert not re.search(r"""(src|href)=["']https?://""", html)
    assert "data:image/png;base64," in html
    assert (project / "reports/optimistic-o2nc/metrics.json").exists()
    assert (project / "reports/optimistic-o2nc/plots/calls_vs_eps.csv").exists()
