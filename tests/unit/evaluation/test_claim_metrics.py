"""Each claim's numbers as metrics: the verdict coding, absent and non-finite numbers left out, MLflow-safe keys."""

from __future__ import annotations

import math

from components.evaluation.claim_metrics import (
    VERDICT_CODES,
    claim_numbers,
    flat_claim_metrics,
    metric_key,
)


def record(cid: str, verdict: str, **numbers) -> dict:
    return {"id": cid, "verdict": verdict, "testability": [], "details": {}, **numbers}


def test_verdict_codes_order_the_verdicts():
    assert VERDICT_CODES == {"reproduced": 1, "inconclusive": 0, "not reproduced": -1}


def test_claim_numbers_carry_effect_ci_and_codes():
    claims = [
        record("C1", "reproduced", effect=0.25, ci_low=0.1, ci_high=0.4),
        record("C2", "not reproduced", effect=-0.5, ci_low=-0.75, ci_high=-0.25),
        record("C3", "inconclusive", effect=0.0, ci_low=-0.1, ci_high=0.1),
    ]
    out = claim_numbers(claims)
    assert out["C1"] == {"effect": 0.25, "ci_low": 0.1, "ci_high": 0.4, "verdict_code": 1, "testable": 1}
    assert out["C2"]["verdict_code"] == -1 and out["C3"]["verdict_code"] == 0
    assert list(out) == ["C1", "C2", "C3"]


def test_absent_and_non_finite_numbers_are_left_out():
    claims = [
        record("C1", "inconclusive", effect=None, ci_low=None, ci_high=None),  # a composite without one effect
        record("C2", "inconclusive", effect=float("nan"), ci_low=float("-inf"), ci_high=1.0),
        record("C3", "reproduced", effect=True, ci_low=0.1, ci_high=0.2),  # a bool is not a number
    ]
    out = claim_numbers(claims)
    assert out["C1"] == {"verdict_code": 0, "testable": 1}
    assert out["C2"] == {"ci_high": 1.0, "verdict_code": 0, "testable": 1}
    assert "effect" not in out["C3"]
    assert all(math.isfinite(v) for v in flat_claim_metrics(claims).values())


def test_not_testable_claims_are_inconclusive_with_testable_zero():
    failed = record("C1", "inconclusive", effect=0.0, testability=[{"name": "floor", "passed": False, "detail": ""}])
    no_ci = record("C2", "inconclusive", details={"not_applicable": "one seed"})
    passed = record("C3", "inconclusive", testability=[{"name": "floor", "passed": True, "detail": ""}])
    out = claim_numbers([failed, no_ci, passed])
    assert [out[c]["testable"] for c in ("C1", "C2", "C3")] == [0, 0, 1]
    assert {out[c]["verdict_code"] for c in out} == {0}


def test_mlflow_keys_are_flat_and_sanitised():
    flat = flat_claim_metrics([record("C1", "reproduced", effect=0.5, ci_low=0.25, ci_high=0.75)])
    assert flat == {
        "claim.C1.effect": 0.5,
        "claim.C1.ci_low": 0.25,
        "claim.C1.ci_high": 0.75,
        "claim.C1.verdict_code": 1.0,
        "claim.C1.testable": 1.0,
    }
    assert metric_key("C2@x:y", "effect") == "claim.C2_x_y.effect"
    assert metric_key("C3/part-a b", "ci_low") == "claim.C3/part-a b.ci_low"
