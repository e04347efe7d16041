"""Read and check ``claims.json`` documents, and turn claims into display strings.

Both the per-paper report and the cross-paper index show claims the same way,
so the checking and the formatting live here once. Formatting returns plain
text; escaping for Markdown or HTML is the caller's job.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from components.errors import DataError
from components.evaluation.claims import VERDICTS  # one list of verdicts for the rule and the reports
from components.io import read_json

REQUIRED_FIELDS: tuple[str, ...] = ("id", "statement", "verdict")
NUMERIC_FIELDS: tuple[str, ...] = (
    "threshold", "delta", "effect", "ci_low", "ci_high", "ci_level", "n_seeds", "n_units",
)
MISSING = "n/a"


def check_claims_doc(doc: Any, source: str = "claims.json") -> list[dict]:
    """Return the claims of a claims document, or raise DataError naming the bad field.

    ``source`` (a file name) prefixes every message so a user knows what to fix.
    Numbers may be null; a verdict must be one of :data:`VERDICTS`.
    """
    if not isinstance(doc, Mapping):
        raise DataError(f"{source}: expected a JSON object, got {type(doc).__name__}")
    claims = doc.get("claims")
    if not isinstance(claims, list):
        raise DataError(f"{source}: field 'claims' must be a list")
    for i, claim in enumerate(claims):
        where = f"{source}: claims[{i}]"
        if not isinstance(claim, Mapping):
            raise DataError(f"{where}: expected an object, got {type(claim).__name__}")
        missing = [f for f in REQUIRED_FIELDS if f not in claim]
        if missing:
            raise DataError(f"{where}: missing field(s) {', '.join(map(repr, missing))}")
        if claim["verdict"] not in VERDICTS:
            raise DataError(f"{where}.verdict: {claim['verdict']!r} is not one of {', '.join(VERDICTS)}")
        for field in NUMERIC_FIELDS:
            value = claim.get(field)
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
                raise DataError(f"{where}.{field}: expected a number or null, got {value!r}")
    return [dict(c) for c in claims]


def load_claims_doc(path: str | os.PathLike) -> tuple[dict, list[dict]]:
    """Read ``path`` and return (document, checked claims); DataError names the file."""
    path = Path(path)
    doc = read_json(path)
    return doc, check_claims_doc(doc, str(path))


def summarize(claims: list[dict]) -> dict[str, int]:
    """Count claims per verdict, every verdict present (zero when absent)."""
    counts = {v: 0 for v in VERDICTS}
    for claim in claims:
        counts[claim["verdict"]] += 1
    return counts


def fmt_num(value: Any, *, signed: bool = False, digits: int = 4) -> str:
    """A number in ``digits`` significant figures; null or NaN as ``n/a``."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalars
    if value is None or isinstance(value, bool):
        return MISSING if value is None else str(value)
    if isinstance(value, int):
        return f"{value:+d}" if signed else str(value)
    if not isinstance(value, float):
        return str(value)
    if math.isnan(value):
        return MISSING
    return f"{value:+.{digits}g}" if signed else f"{value:.{digits}g}"


def fmt_ci_level(level: Any) -> str:
    """``0.95`` or ``95`` as ``95%``; unknown as ``CI``."""
    if not isinstance(level, (int, float)) or isinstance(level, bool):
        return "CI"
    pct = level * 100 if level <= 1 else level
    return f"{pct:g}% CI"


def fmt_effect(claim: Mapping) -> str:
    """Effect with its interval, e.g. ``+0.042 [+0.012, +0.071]``."""
    effect = claim.get("effect")
    text = fmt_num(effect, signed=True)
    lo, hi = claim.get("ci_low"), claim.get("ci_high")
    if lo is not None or hi is not None:
        text += f" [{fmt_num(lo, signed=True)}, {fmt_num(hi, signed=True)}]"
    return text


def fmt_n(claim: Mapping) -> str:
    """Sample sizes, e.g. ``3 seeds · 2000 refits``; ``n/a`` when none is given."""
    parts = []
    if claim.get("n_seeds") is not None:
        n = claim["n_seeds"]
        parts.append(f"{_fmt_count(n)} seed{'s' if n != 1 else ''}")
    if claim.get("n_units") is not None:
        parts.append(f"{_fmt_count(claim['n_units'])} {claim.get('unit') or 'units'}")
    return " · ".join(parts) or MISSING


def _fmt_count(n: float) -> str:
    return f"{int(n):,}" if float(n).is_integer() else fmt_num(n)


def fmt_comparison(claim: Mapping) -> str:
    """``method vs baseline``, or whichever of the two is given."""
    method, baseline = claim.get("method"), claim.get("baseline")
    if method and baseline:
        return f"{method} vs {baseline}"
    return str(method or baseline or MISSING)


def fmt_rule(claim: Mapping) -> str:
    """The decision rule; built from direction and threshold when ``rule`` is empty."""
    if claim.get("rule"):
        return str(claim["rule"])
    direction, threshold = claim.get("direction"), claim.get("threshold")
    if direction is None and threshold is None:
        return MISSING
    return " ".join(s for s in (str(direction or ""), fmt_num(threshold) if threshold is not None else "") if s)


def claim_row(claim: Mapping) -> dict[str, str]:
    """One claim as display strings keyed by column name (see :data:`CLAIM_COLUMNS`)."""
    return {
        "id": str(claim["id"]),
        "statement": str(claim["statement"]),
        "comparison": fmt_comparison(claim),
        "metric": str(claim.get("metric") or ""),
        "effect": fmt_effect(claim),
        "ci_level": fmt_ci_level(claim.get("ci_level")),
        "n": fmt_n(claim),
        "rule": fmt_rule(claim),
        "verdict": str(claim["verdict"]),
        "scale_note": str(claim.get("scale_note") or ""),
    }


def flatten_metrics(metrics: Mapping, prefix: str = "") -> dict[str, Any]:
    """Flatten a nested metrics dict to dotted key paths, preserving order."""
    flat: dict[str, Any] = {}
    for key, value in metrics.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            flat.update(flatten_metrics(value, path))
        else:
            flat[path] = value
    return flat
