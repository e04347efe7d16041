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
from components.evaluation.explain import rule_text, verdict_text
from components.io import read_json

REQUIRED_FIELDS: tuple[str, ...] = ("id", "statement", "verdict")
NUMERIC_FIELDS: tuple[str, ...] = (
    "threshold",
    "delta",
    "effect",
    "ci_low",
    "ci_high",
    "ci_level",
    "n_seeds",
    "n_units",
    "n_censored",
)
SMOKE_BANNER = "Smoke profile: a wiring check at tiny scale, not a verdict about the paper."
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
    """Sample sizes, e.g. ``5 seeds · 2,000 items · 3 censored``; ``n/a`` when none is given."""
    parts = []
    if claim.get("n_seeds") is not None:
        n = claim["n_seeds"]
        unit = claim.get("cluster_unit") or "seed"
        parts.append(f"{_fmt_count(n)} {unit}{'s' if n != 1 else ''}")
    if claim.get("n_units") is not None:
        parts.append(f"{_fmt_count(claim['n_units'])} {claim.get('unit') or 'units'}")
    if claim.get("n_censored"):
        parts.append(f"{_fmt_count(claim['n_censored'])} censored")
    return " · ".join(parts) or MISSING


def fmt_signs(claim: Mapping) -> str:
    """Per-seed signs of the effect, e.g. ``4+ 1− (+ + − + +)``; empty when not recorded."""
    signs = claim.get("per_seed_signs")
    if not signs:
        return ""
    sym = {1: "+", -1: "−", 0: "0"}
    counts = " ".join(f"{sum(s == k for s in signs)}{sym[k]}" for k in (1, -1, 0) if k in signs)
    return f"{counts} ({' '.join(sym[s] for s in signs)})" if len(signs) <= 12 else counts


def fmt_delta(claim: Mapping) -> str:
    """The no-effect band (``±0.01 around 0``) or a non-inferiority margin; empty when the rule has none."""
    if claim.get("rule") == "non-inferiority" and claim.get("threshold") is not None:
        return f"margin {fmt_num(abs(claim['threshold']))}"
    if claim.get("delta") is None:
        return ""
    return f"±{fmt_num(claim['delta'])} around {fmt_num(claim.get('null') or 0.0)}"


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
    """One claim as display strings keyed by column name."""
    return {
        "id": str(claim["id"]),
        "statement": str(claim["statement"]),
        "comparison": fmt_comparison(claim),
        "metric": str(claim.get("metric") or ""),
        "paper": str(claim.get("paper_value") or ""),
        "effect": fmt_effect(claim),
        "ci_level": fmt_ci_level(claim.get("ci_level")),
        "delta": fmt_delta(claim),
        "n": fmt_n(claim),
        "signs": fmt_signs(claim),
        "rule": fmt_rule(claim),
        "rule_text": rule_text(claim) if claim.get("rule") else "",
        "verdict": verdict_text(claim),  # with its labels: "reproduced (weak)", "inconclusive: not testable here"
        "verdict_key": str(claim["verdict"]),
        "reason": str(claim.get("reason") or ""),
        "scale_note": str(claim.get("scale_note") or ""),
    }


def part_rows(claim: Mapping, depth: int = 0) -> list[dict[str, str]]:
    """Display rows of a composite's preconditions and parts (recursively, ``depth`` levels indented)."""
    rows = []
    for kind in ("preconditions", "parts"):
        for sub in claim.get(kind) or []:
            row = claim_row(sub)
            row["id"] = "  " * depth + ("precondition " if kind == "preconditions" else "") + row["id"]
            rows.append(row)
            rows += part_rows(sub, depth + 1)
    return rows


def fmt_provenance(prov: Mapping) -> list[str]:
    """The report footer's facts, one string each: commit, date, profile, params hash, MLflow run, stage times."""
    if not prov:
        return []
    dirty = {"true": " (dirty tree)", "false": ""}.get(str(prov.get("git_dirty")), " (tree state unknown)")
    out = [
        f"git commit {str(prov.get('git_commit', 'none'))[:12]}{dirty}",
        f"date {prov.get('date', MISSING)}",
        f"profile {prov.get('profile', MISSING)}",
        f"params hash {str(prov.get('params_hash', MISSING))[:12]}",
        f"MLflow run {prov.get('mlflow_run_id') or 'none (tracking off)'}",
    ]
    stages = prov.get("stages") or {}
    times = [
        f"{name} {fmt_num(t.get('wall_s'))} s wall / {fmt_num(t.get('cpu_s'))} s CPU" for name, t in stages.items()
    ]
    if times:
        out.append("stages: " + "; ".join(times))
    return out


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
