"""Each claim's numbers as metrics: what ``metrics.json`` (so ``dvc exp show`` and ``dvc metrics diff``) and the
MLflow parent run carry, so two runs' effects and CIs can be compared side by side.

Per top-level claim of a ``claims.json`` (a composite's parts stay in ``claims.json``):

- ``effect``, ``ci_low``, ``ci_high``: the record's own numbers; a value the record lacks (no CI computed, a
  composite without a single effect, a non-finite number) is left out, never written as NaN.
- ``verdict_code``: :data:`VERDICT_CODES`, reproduced = 1, inconclusive = 0, not reproduced = -1 (higher is
  better for the paper, and a mean over claims stays readable).
- ``testable``: 1, or 0 where the claim was not testable here (a failed testability check, or no CI could be
  computed: ``details.not_applicable``); such a claim is inconclusive (``verdict_code`` 0), and ``testable``
  tells it apart from an inconclusive CI.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from components.evaluation.rules import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED

VERDICT_CODES: dict[str, int] = {REPRODUCED: 1, INCONCLUSIVE: 0, NOT_REPRODUCED: -1}
NUMBERS = ("effect", "ci_low", "ci_high")
PREFIX = "claim"  # metrics.json's top-level key, and the first part of every MLflow key: claim.<id>.<name>


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def testable(record: Mapping[str, Any]) -> bool:
    """False where the claim was not testable here: a failed testability check, or no CI could be computed."""
    failed = any(not t.get("passed") for t in record.get("testability") or [])
    return not failed and not (record.get("details") or {}).get("not_applicable")


def claim_numbers(claims: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float | int]]:
    """``{claim id: {"effect", "ci_low", "ci_high", "verdict_code", "testable"}}`` for the top-level records of
    a claims document (absent or non-finite numbers left out)."""
    out: dict[str, dict[str, float | int]] = {}
    for record in claims:
        numbers: dict[str, float | int] = {}
        for name in NUMBERS:
            value = _finite(record.get(name))
            if value is not None:
                numbers[name] = value
        numbers["verdict_code"] = VERDICT_CODES[str(record["verdict"])]
        numbers["testable"] = int(testable(record))
        out[str(record["id"])] = numbers
    return out


_NOT_MLFLOW = re.compile(r"[^A-Za-z0-9_\-. /]")  # MLflow metric names: alphanumerics, _ - . space /


def metric_key(claim_id: str, name: str) -> str:
    """``claim.<id>.<name>``, with any character MLflow refuses in a metric name replaced by ``_``."""
    return _NOT_MLFLOW.sub("_", f"{PREFIX}.{claim_id}.{name}")


def flat_claim_metrics(claims: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The same numbers as flat MLflow metric keys: ``{"claim.C1.effect": 0.12, ...}``."""
    return {
        metric_key(cid, name): float(value)
        for cid, numbers in claim_numbers(claims).items()
        for name, value in numbers.items()
    }
