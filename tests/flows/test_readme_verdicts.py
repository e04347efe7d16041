"""The README's papers table is generated from recorded default-profile claims, never typed by hand."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from components.errors import DataError
from components.evaluation import claims as CL
from flows import verdicts as V
from tests.conftest import ROOT


def test_committed_readme_table_matches_the_records():
    assert (ROOT / "README.md").read_text(encoding="utf-8") == V.render_readme(ROOT), (
        "README.md's papers table is out of date: run `paperline verdicts --write`"
    )


def _claims_doc(profile: str) -> dict:
    rng = np.random.default_rng(0)
    b = rng.normal(0, 1, 100)
    c = CL.evaluate_standard(
        "C1",
        "s",
        method_values=b + 3 + rng.normal(0, 0.1, 100),  # paired differences that vary: a testable comparison
        baseline_values=b,
        clusters=np.repeat(range(4), 25),
        direction="greater",
        delta=0.5,
        metric="m",
        method="m",
        baseline="b",
        unit="items",
        seed=0,
        n_resamples=500,
    )
    return CL.claims_document(
        "icql", profile, [c], extra={"provenance": {"date": "2026-12-01 10:00 UTC", "git_commit": "abcdef123"}}
    )


@pytest.fixture
def checkout(tmp_path):
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    (tmp_path / "reports" / "icql").mkdir(parents=True)
    return tmp_path


def test_a_recorded_default_run_appears_in_the_table(checkout):
    (checkout / "reports/icql/claims.json").write_text(json.dumps(_claims_doc("default")))
    V.record(checkout, "icql")
    row = next(line for line in V.table(checkout).splitlines() if "flows/icql" in line)
    assert "C1 reproduced" in row and "2026-12-01, abcdef1" in row


def test_smoke_runs_and_hand_edited_verdicts_are_not_recorded(checkout):
    (checkout / "reports/icql/claims.json").write_text(json.dumps(_claims_doc("smoke")))
    with pytest.raises(DataError, match="only default-profile verdicts"):
        V.record(checkout, "icql")
    doc = _claims_doc("default")
    doc["claims"][0]["verdict"] = "not reproduced"
    doc["summary"] = {"reproduced": 0, "not reproduced": 1, "inconclusive": 0}
    (checkout / "reports/icql/claims.json").write_text(json.dumps(doc))
    with pytest.raises(DataError, match="verdict"):
        V.record(checkout, "icql")


def test_a_default_run_with_set_overrides_is_not_recorded(checkout):
    from flows.registry import get_paper
    from flows.runtime.pipeline import resolve_owner_params
    from flows.runtime.report_stage import params_hash
    from flows.runtime.settings import Paths

    shutil.copy(ROOT / "params.yaml", checkout / "params.yaml")
    shutil.copy(ROOT / "dvc.yaml", checkout / "dvc.yaml")
    paper = get_paper("icql")
    doc = _claims_doc("default")
    doc["provenance"]["params_hash"] = params_hash(
        resolve_owner_params(paper, Paths(checkout), "default", ["icql.train.steps=12"])
    )
    (checkout / "reports/icql/claims.json").write_text(json.dumps(doc))
    with pytest.raises(DataError, match="params other than params.yaml's default"):
        V.record(checkout, "icql")
    doc["provenance"]["params_hash"] = params_hash(resolve_owner_params(paper, Paths(checkout), "default", []))
    (checkout / "reports/icql/claims.json").write_text(json.dumps(doc))
    assert V.record(checkout, "icql").is_file()
