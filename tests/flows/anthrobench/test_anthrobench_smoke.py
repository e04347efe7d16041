"""The real `paperline run anthrobench --profile smoke`: first turns, simulator dialogues, judges, claims, report."""

from __future__ import annotations

import json

import pytest

from components.io import read_jsonl
from tests.claims_checks import check_smoke_claims, check_smoke_report, run_smoke

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_smoke_profile_end_to_end(project):
    run_smoke(project, "anthrobench")
    data = project / "data/anthrobench"
    for check in ("data/_checks/first_turns.json", "dialogues/_checks/dialogues.json", "labels/_checks/labels.json"):
        assert json.loads((data / check).read_text())["success"] is True
    dialogues = read_jsonl(data / "dialogues/dialogues.jsonl")
    assert len(dialogues) == 100 and all(len(d["turns"]) == 5 for d in dialogues)
    labels = read_jsonl(data / "labels/labels.jsonl")
    assert len(labels) == 500 and not any(r["in_j3_train"] for r in labels)
    doc = check_smoke_claims(project / "reports/anthrobench/claims.json", ["C1", "C2", "C3", "C4"])
    c4 = doc["claims"][3]
    assert c4["details"]["best_single"] in {"J1_lexicon", "J2_centroid", "J3_logreg"}
    plots = {"turn_profile.csv": "turn,behaviour,prevalence"}
    check_smoke_report(project, "anthrobench", section="Judges", plots=plots)
